# Copyright 2026 The official_spanbert Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

r"""Real tokens per CPU-second of bf16 pretraining: the package against HF.

Issue 58 item 3. `--blocks` blocks drawn at random (fixed seed) from the
records of `--corpus` (all of it) go through the package loader's transform
(span masking) and are stepped, side by side in one process, by:

  package_padded    spanbert/pretraining (MLM + SBO) under mixed bfloat16
                    (its default dropout mask), batches padded to seq_length
  package_bucketed  the same model with `length_buckets` batches, each cut
                    to its bucket's width (the train step traced once over
                    the dataset's element spec, the sequence axis dynamic)
  hf_collator       HF BertForMaskedLM + the reference SBO head
                    (pretraining_torch.TorchSide, the package's weights,
                    AdamW and clip-norm) under torch.autocast(bfloat16), fed
                    as HF users feed it: the padded side's batches (the same
                    blocks, order and masks) re-collated by transformers'
                    DataCollatorForTokenClassification (padding="longest":
                    each batch padded to its longest block; labels -100
                    outside the masked positions), HF's own MLM loss (logits
                    at every position) plus the SBO loss
  hf_gathered       the same batches, logits only at the masked positions
                    (TorchSide.step, as the package's heads)

The input pipelines are not timed (every batch is made before the rounds).
After one warm-up step of every batch shape a side, rounds run one pass of
every side over its batches (the order rotating each round, so that a load
change on a shared machine hits all alike). Reported per side: real
(attention-mask) tokens and computed positions, median CPU-s and wall-s a
pass, real tokens per CPU-second and per second, model FLOPs on the real
tokens (each block's own length: encoder matmuls and attention, the MLM and
SBO heads at its masked positions; 3 x forward, 2 FLOPs a MAC) per CPU-s and
as a share of the bf16 peak (utils/cpu_features: FLOPs/cycle x the cpuinfo
clock; per CPU-s against one core's, per wall-s against `--threads` cores'),
and paired per-round ratios to hf_collator and to package_padded
(median [min .. max]; of CPU-s in the table, of wall-s too in the JSON). `--threads N` sets TensorFlow's intra/inter-op pools
and torch.set_num_threads.

  nice -n 10 .venv/bin/python -m benchmarks.bench_pretraining_tokens \
      --encoder base --seq 512 --batch 8 --blocks 16 --rounds 3 --threads 1 \
      --corpus $SPANBERT_DATA_DIR/corpus/linux-doc.txt --output_json F
  .venv/bin/python -m benchmarks.bench_pretraining_tokens --smoke  # seconds
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf

from official_spanbert.configs import yaml_files
from official_spanbert.utils import cpu_features

from benchmarks import bench_pretraining_step as step_bench
from benchmarks.common import (  # pylint: disable=g-multiple-import
    DATA, SMOKE_CORPUS, SMOKE_VOCAB, load_avg, machine, parse_args,
    report_rows)

SIDES = ("package_padded", "package_bucketed", "hf_collator", "hf_gathered")
SBO = ("sbo_left_positions", "sbo_right_positions", "sbo_relative_positions",
       "sbo_weights", "masked_lm_ids")


def block_flops(length: int, predictions: int, enc, sbo_position: int
                ) -> float:
  """Model FLOPs of one block's training step (3 x the forward matmuls).

  The encoder on its `length` real tokens (attention over them only) and
  the MLM and SBO heads at its `predictions` masked positions.
  """
  h, v = enc.hidden_size, enc.vocab_size
  encoder = enc.num_layers * length * (4 * h * h + 2 * h * enc.intermediate_size
                                       + 2 * length * h)
  mlm = predictions * (h * h + h * v)
  sbo = predictions * ((2 * h + sbo_position) * h + h * h + h * v)
  return 3 * 2 * (encoder + mlm + sbo)


def collated(batch, collator, sbo=True):
  """A padded package batch as HF users' collator makes it (torch)."""
  import torch  # pylint: disable=g-import-not-at-top
  b = {k: v.numpy() for k, v in batch.items()}
  features = []
  for i, length in enumerate(b["input_mask"].sum(axis=1)):
    labels = [-100] * int(length)
    for pos, label, w in zip(b["masked_lm_positions"][i],
                             b["masked_lm_ids"][i], b["masked_lm_weights"][i]):
      if w > 0:
        labels[int(pos)] = int(label)
    features.append(dict(
        input_ids=b["input_word_ids"][i, :length].tolist(),
        token_type_ids=b["input_type_ids"][i, :length].tolist(),
        attention_mask=[1] * int(length), labels=labels))
  out = dict(collator(features))
  if sbo:
    for k in SBO:
      out[k] = torch.tensor(b[k], dtype=torch.float32 if k == "sbo_weights"
                            else torch.long)
  return out


def cut_to_longest(batch):
  """The padded batch with its sequence axis cut to its longest block."""
  width = int(tf.reduce_max(tf.reduce_sum(batch["input_mask"], axis=1)))
  return {k: v[:, :width] if k in ("input_word_ids", "input_mask",
                                   "input_type_ids") else v
          for k, v in batch.items()}


def build_sides(args, records, picked):
  """{side: dict(step=fn(batch) -> loss, batches=[...], ...)} and the
  FLOPs of the blocks."""
  model_yaml = yaml_files.path(f"models/{args.encoder}.yaml")
  v = step_bench.Variant("spanbert/pretraining", model_yaml, args.num_layers,
                         precision="bfloat16")
  sides = {}
  padded = None
  for name, n in (("package_padded", 0),
                  ("package_bucketed", args.length_buckets)):
    if name not in args.sides and not (name == "package_padded" and
                                       set(args.sides) & {"hf_collator",
                                                          "hf_gathered"}):
      continue
    batches, spec = step_bench.padding_stream(records, args.vocab, args.seq,
                                              args.batch, n, picked)
    if name == "package_padded":
      padded = batches
    if name not in args.sides:
      continue
    fn = tf.function(
        lambda x: v.task.train_step(x, v.model, v.optimizer, v.metrics),
        input_signature=[spec])
    sides[name] = dict(batches=batches,
                       step=lambda b, fn=fn: fn(b)[v.task.loss])
  enc = v.params.task.model.encoder.bert_v2
  sbo_position = int(v.model.span_boundary.position_embeddings.shape[-1])
  blocks = [(int(l), int(p)) for b in padded for l, p in zip(
      tf.reduce_sum(b["input_mask"], axis=1).numpy(),
      tf.reduce_sum(tf.cast(b["masked_lm_weights"] > 0, tf.int32),
                    axis=1).numpy())]
  flops = sum(block_flops(l, p, enc, sbo_position) for l, p in blocks)
  if set(args.sides) & {"hf_collator", "hf_gathered"}:
    import torch  # pylint: disable=g-import-not-at-top
    import transformers  # pylint: disable=g-import-not-at-top
    from experiments.pretraining_torch import TorchSide, torch_batch  # pylint: disable=g-import-not-at-top
    tokenizer = transformers.BertTokenizerFast(vocab_file=args.vocab,
                                               do_lower_case=False)
    collator = transformers.DataCollatorForTokenClassification(
        tokenizer, padding="longest", return_tensors="pt")
    for name in ("hf_collator", "hf_gathered"):
      if name not in args.sides:
        continue
      side = TorchSide(v.model, v.params, "span_sbo")  # its own copy
      if name == "hf_collator":
        feeds = [collated(b, collator) for b in padded]
        step = lambda b, side=side: side.step_labels(b, torch.bfloat16)[0]
      else:
        feeds = [torch_batch(cut_to_longest(b)) for b in padded]
        step = lambda b, side=side: side.step(b, torch.bfloat16)[0]
      sides[name] = dict(batches=feeds, step=step)
  for name, side in sides.items():
    key, mask = (("input_ids", "attention_mask") if name == "hf_collator"
                 else ("input_word_ids", "input_mask"))
    side["real"] = sum(int(np.asarray(b[mask]).sum())
                       for b in side["batches"])
    side["computed"] = sum(int(b[key].shape[0] * b[key].shape[1])
                           for b in side["batches"])
    side["widths"] = sorted({int(b[key].shape[1]) for b in side["batches"]})
  return {k: sides[k] for k in SIDES if k in sides}, flops, v


def run(args, records, picked):
  """Rows of one encoder / seq / threads setting."""
  cpu = cpu_features.read()
  peak_core = cpu.peak_flops_per_cycle("bfloat16") * (cpu.mhz or 0) * 1e6
  threads = args.threads or cpu_features.usable_cores()
  t0 = time.process_time()
  sides, flops, _ = build_sides(args, records, picked)
  print(f"built {list(sides)} in {time.process_time() - t0:.1f} CPU-s; "
        f"model {flops / 1e9:.1f} GFLOPs a pass", flush=True)
  for name, side in sides.items():
    t0 = time.process_time()
    firsts = {}
    key = "input_ids" if name == "hf_collator" else "input_word_ids"
    for b in side["batches"]:  # each shape's first step (TF: the trace)
      firsts.setdefault(tuple(b[key].shape), b)
    side["losses"] = [round(float(side["step"](b)), 4)
                      for b in firsts.values()]
    side.update(cpu=[], wall=[])
    print(f"[{name}] {len(side['batches'])} batches, {side['real']} real of "
          f"{side['computed']} positions, widths {side['widths']}; warm-up "
          f"{time.process_time() - t0:.1f} CPU-s, losses {side['losses']}",
          flush=True)
  names, loads = list(sides), [os.getloadavg()[0]]
  for r in range(args.rounds):
    for name in names[r % len(names):] + names[:r % len(names)]:
      side = sides[name]
      w0, c0 = time.perf_counter(), time.process_time()
      for b in side["batches"]:
        loss = side["step"](b)
      float(loss)
      side["wall"].append(time.perf_counter() - w0)
      side["cpu"].append(time.process_time() - c0)
    loads.append(os.getloadavg()[0])
    print(f"round {r + 1}/{args.rounds}: " + ", ".join(
        f"{k} {s['cpu'][-1]:.2f} CPU-s ({s['real'] / s['cpu'][-1]:.0f} "
        "tokens/CPU-s)" for k, s in sides.items()) +
          f" (load {loads[-1]:.2f})", flush=True)
  rows = []
  for name, side in sides.items():
    cpu_s, wall_s = statistics.median(side["cpu"]), statistics.median(
        side["wall"])
    row = dict(
        encoder=args.encoder, seq=args.seq, batch=args.batch,
        threads=threads, side=name, batches=len(side["batches"]),
        widths=side["widths"], real_tokens=side["real"],
        computed_positions=side["computed"],
        padding_share=1 - side["real"] / side["computed"],
        cpu_s_per_pass=cpu_s, wall_s_per_pass=wall_s,
        real_tokens_per_cpu_s=side["real"] / cpu_s,
        real_tokens_per_s=side["real"] / wall_s,
        model_gflops_per_pass=flops / 1e9,
        model_gflops_per_cpu_s=flops / cpu_s / 1e9,
        mfu_cpu=flops / cpu_s / peak_core if peak_core else None,
        mfu_wall=flops / wall_s / (threads * peak_core) if peak_core
        else None,
        warmup_losses=side["losses"], rounds_cpu_s=side["cpu"],
        rounds_wall_s=side["wall"],
        rounds=args.rounds, load=[min(loads), max(loads)])
    for ref in ("hf_collator", "package_padded"):
      if ref in sides and ref != name:
        ratios = [a / b for a, b in zip(sides[ref]["cpu"], side["cpu"])]
        row["vs_" + ref] = statistics.median(ratios)
        row["vs_" + ref + "_range"] = [min(ratios), max(ratios)]
        walls = [a / b for a, b in zip(sides[ref]["wall"], side["wall"])]
        row["vs_" + ref + "_wall"] = statistics.median(walls)
        row["vs_" + ref + "_wall_range"] = [min(walls), max(walls)]
    rows.append(row)
  return rows


LABELS = {"package_padded": "package mixed bf16, padded to seq_length",
          "package_bucketed": "package mixed bf16, length_buckets",
          "hf_collator": "HF autocast bf16, collator (pad to longest)",
          "hf_gathered": "HF autocast bf16, collator, logits at masked only"}


def ratio(row, ref):
  if "vs_" + ref not in row:
    return ""
  lo, hi = row["vs_" + ref + "_range"]
  return f"**{row['vs_' + ref]:.2f}x** [{lo:.2f} .. {hi:.2f}]"


def table(rows) -> str:
  """The Markdown table of rows (one per side)."""
  lines = ["| seq x batch, threads | side | batches (widths) | real / computed "
           "positions (padding) | CPU-s a pass | real tokens / CPU-s | real "
           "tokens / s | model GFLOP/s a CPU-s | of bf16 peak (CPU-s / wall) "
           "| vs HF collator, paired [min .. max] | vs package padded | "
           "load 1-min |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|"]
  for r in rows:
    widths = ",".join(map(str, r["widths"]))
    mfu = ("" if r["mfu_cpu"] is None else
           f"{100 * r['mfu_cpu']:.1f}% / {100 * r['mfu_wall']:.1f}%")
    lines.append(
        f"| {r['encoder']}, {r['seq']} x {r['batch']}, {r['threads']}t | "
        f"{LABELS[r['side']]} | {r['batches']} ({widths}) | "
        f"{r['real_tokens']:,} / {r['computed_positions']:,} "
        f"({100 * r['padding_share']:.0f}%) | {r['cpu_s_per_pass']:.1f} | "
        f"{r['real_tokens_per_cpu_s']:,.0f} | {r['real_tokens_per_s']:,.0f} | "
        f"{r['model_gflops_per_cpu_s']:.1f} | {mfu} | "
        f"{ratio(r, 'hf_collator')} | {ratio(r, 'package_padded')} | "
        f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |")
  return "\n".join(lines)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--encoder", default="base")
  ap.add_argument("--num_layers", type=int, default=0,
                  help="encoder layers instead of the yaml's (0: its own)")
  ap.add_argument("--seq", type=int, default=512)
  ap.add_argument("--batch", type=int, default=8)
  ap.add_argument("--blocks", type=int, default=16)
  ap.add_argument("--length_buckets", type=int, default=8)
  ap.add_argument("--rounds", type=int, default=3)
  ap.add_argument("--sides", nargs="+", default=list(SIDES), choices=SIDES)
  ap.add_argument("--threads", type=int, default=0,
                  help="TF intra/inter-op and torch threads (0: theirs)")
  ap.add_argument("--corpus", default=os.path.join(DATA, "corpus",
                                                   "linux-doc.txt"))
  ap.add_argument("--corpus_bytes", type=int, default=0,
                  help="records of the corpus's first bytes (0: all)")
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--output_json", default="")
  args = parse_args(ap, argv, smoke=dict(
      encoder="tiny", num_layers=1, seq=64, batch=4, blocks=8,
      length_buckets=2, rounds=1, corpus=SMOKE_CORPUS, vocab=SMOKE_VOCAB))
  for path in (args.corpus, args.vocab):
    if not os.path.exists(path):
      sys.exit(f"missing {path} (set SPANBERT_DATA_DIR)")
  try:
    import torch  # pylint: disable=g-import-not-at-top
    import transformers  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  except ImportError:
    torch = None
    args.sides = [s for s in args.sides if s.startswith("package")]
    print("torch or transformers is not installed: the package's sides only",
          flush=True)
  if args.threads:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    if torch is not None:
      torch.set_num_threads(args.threads)
  print(f"machine: {machine()}\nprocessor: {cpu_features.read().describe()}"
        f"; threads {args.threads or 'default'}")
  print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
  print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
        flush=True)
  start = time.perf_counter()
  with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    records = step_bench.make_records(args.corpus, args.vocab, args.seq, tmp,
                                      max_bytes=args.corpus_bytes or 2**62)
    picked = step_bench.sampled_blocks(records, args.blocks)
    print(f"records of {args.corpus} at seq {args.seq} in "
          f"{time.perf_counter() - t0:.0f}s; {len(picked)} blocks drawn",
          flush=True)
    rows = run(args, records, picked)
  print(f"\ntotal {time.perf_counter() - start:.0f}s; load at end "
        f"{load_avg()}\n")
  print(table(rows))
  facts = dict(processor=cpu_features.read().describe(),
               command=" ".join(["python"] + sys.argv),
               finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
  report_rows([{k: v for k, v in r.items() if not k.startswith("rounds_")}
               for r in rows],
              positive=["real_tokens", "cpu_s_per_pass",
                        "real_tokens_per_cpu_s", "model_gflops_per_cpu_s"],
              **facts)
  if args.output_json:
    with open(args.output_json, "w", encoding="utf-8") as f:
      json.dump(dict(rows=rows, **facts), f, indent=1)
      f.write("\n")


if __name__ == "__main__":
  main()
