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

r"""Pretraining parity, `--mode=speed`: one training step, side by side.

On one fixed masked batch of the demo's data (token masking, seq 128), at
each of --sizes (demo: 2 layers, hidden 256; base: 12 layers, hidden 768),
every --variants entry is warmed up and then timed in interleaved rounds (the
order rotates each round, so a load change hits all alike):

  package_fp32   bert/token_single's task.train_step in tf.function
  package_xla    the same step compiled with XLA (runtime.enable_xla)
  package_bf16   the same step under mixed bfloat16
  hf_fp32        HF BertForMaskedLM (torch) with the package's weights, AdamW
                 and clip-norm (pretraining_torch.TorchSide: logits at the
                 masked positions only, as the package's MLM head)
  hf_bf16        the same, forward and loss under torch.autocast(bfloat16),
                 HF's best precision on a CPU with native bf16
  mg_fp32        Model Garden's bert/pretraining (MaskedLMTask,
                 BertPretrainerV2 without NSP) train step in tf.function

Reported per variant: median CPU-seconds and seconds a step (CPU time does
not grow while the process waits for a core on a loaded machine, so with
--threads 1 it is the fair figure), CPU-s per example, the ratio to the
package's float32 and to HF per example, and MFU: model FLOPs of the step
(pretraining_speed.model_flops) over CPU-s x one core's peak, the peak
computed from this CPU's flags and clock (utils/cpu_features.py). The first
line names the processor, its flags and the peaks. All variants start from
the same seed; their losses on the batch are printed beside the times.

  .venv/bin/python -m experiments.pretraining_parity --mode=speed \
      --work_dir /tmp/pp --sizes demo base --threads 1 --output_json F
"""

import argparse
import json
import os
import statistics
import time

from experiments import pretraining_common as common
from experiments.pretraining_common import MAX_PREDICTIONS, SEQ_LENGTH

SHAPES = {"demo": dict(hidden_size=256, num_layers=2, num_attention_heads=4,
                       intermediate_size=1024),
          "base": dict(hidden_size=768, num_layers=12, num_attention_heads=12,
                       intermediate_size=3072)}
VARIANTS = ("package_fp32", "package_xla", "package_bf16", "hf_fp32",
            "hf_bf16", "mg_fp32")


def model_flops(layers: int, hidden: int, intermediate: int, seq: int,
                batch: int, predictions: int, vocab: int) -> float:
  """Training FLOPs of one step (3 x the forward matmuls; 2 FLOPs a MAC)."""
  per_token = layers * (4 * hidden**2 + 2 * hidden * intermediate +
                        2 * seq * hidden)
  head = predictions * (hidden**2 + hidden * vocab)
  return 3 * 2 * (batch * seq * per_token + batch * head)


def package_step(data, size: str, batch_size: int, dtype: str = "float32",
                 xla: bool = False, encoder=None, reshape=None):
  """(step function returning the loss, model, params, batch).

  encoder: bert_v2 fields beside the size's shape (e.g. dropout_rate);
  reshape: a function of the batch read that returns the batch to step on.
  """
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.modeling import performance  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  params = common.package_params(data, "token", 1000, batch_size=batch_size)
  params.task.model.encoder.bert_v2.override(dict(SHAPES[size],
                                                  **(encoder or {})))
  performance.set_mixed_precision_policy(
      tf.bfloat16 if dtype == "bfloat16" else tf.float32)
  try:
    tf_keras.utils.set_random_seed(1)
    task = task_factory.get_task(params.task)
    model = task.build_model()
    opt = task.create_optimizer(params.trainer.optimizer_config,
                                params.runtime)
  finally:
    performance.set_mixed_precision_policy(tf.float32)
  batch = next(iter(task.build_inputs(params.task.train_data)))
  batch = reshape(batch) if reshape else batch
  fn = tf.function(lambda b: task.train_step(b, model, opt, metrics=[])[
      task.loss], jit_compile=xla)
  return (lambda: float(fn(batch))), model, params, batch


def mg_step(data, size: str, batch):
  """Model Garden's bert/pretraining step on the same batch and shape."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  from benchmarks import bench_pretraining_step as bench  # pylint: disable=g-import-not-at-top
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top
  params = bench.experiment_params("bert/pretraining",
                                   yaml_files.path("models/demo.yaml"))
  params.task.model.encoder.bert_v2.override(dict(SHAPES[size],
                                                  vocab_size=data.vocab.size))
  tf_keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  opt = train_utils.create_optimizer(task, params)
  feed = {k: batch[k] for k in bench.MG_FEATURES}
  feed["masked_lm_weights"] = tf.cast(feed["masked_lm_weights"], tf.float32)
  metrics = task.build_metrics(training=True)  # its step updates them
  fn = tf.function(lambda b: task.train_step(b, model, opt, metrics=metrics)[
      task.loss])
  return lambda: float(fn(feed))


def build(data, size: str, batch_size: int, variants):
  """{variant: step function returning the loss}."""
  from experiments.pretraining_torch import TorchSide, torch_batch  # pylint: disable=g-import-not-at-top
  fp32, model, params, batch = package_step(data, size, batch_size)
  steps = {"package_fp32": fp32}
  if "package_xla" in variants:
    steps["package_xla"] = package_step(data, size, batch_size, xla=True)[0]
  if "package_bf16" in variants:
    steps["package_bf16"] = package_step(data, size, batch_size,
                                         dtype="bfloat16")[0]
  if "hf_fp32" in variants or "hf_bf16" in variants:
    import torch  # pylint: disable=g-import-not-at-top
    tb = torch_batch(batch)
    for name, dtype in (("hf_fp32", None), ("hf_bf16", torch.bfloat16)):
      if name in variants:  # each its own copy of the weights and optimizer
        side = TorchSide(model, params, "token")
        steps[name] = lambda side=side, dtype=dtype: side.step(tb, dtype)[0]
  if "mg_fp32" in variants:
    steps["mg_fp32"] = mg_step(data, size, batch)
  return {k: steps[k] for k in VARIANTS if k in steps and k in variants}


def time_rounds(steps, rounds: int, round_steps: int, warmup: int):
  """{variant: [(wall s/step, CPU s/step) per round]}, interleaved rounds;
  and {variant: [losses of the warm-up steps]}."""
  losses = {}
  for name, fn in steps.items():
    t0 = time.process_time()
    losses[name] = [fn() for _ in range(warmup)]
    print(f"{name}: {warmup} warm-up step(s) in {time.process_time() - t0:.1f}"
          f" CPU-s, losses {losses[name]}", flush=True)
  times = {k: [] for k in steps}
  names = list(steps)
  for r in range(rounds):
    for name in names[r % len(names):] + names[:r % len(names)]:
      c0, t0 = time.process_time(), time.time()
      for _ in range(round_steps):
        steps[name]()
      times[name].append(((time.time() - t0) / round_steps,
                          (time.process_time() - c0) / round_steps))
    print(f"round {r + 1}/{rounds}: " + ", ".join(
        f"{k} {v[-1][1]:.3f}" for k, v in times.items()) +
          f" CPU-s/step (load {os.getloadavg()[0]:.2f})", flush=True)
  return times, losses


def speed(args):
  """Rows of the side-by-side table, with the processor's description."""
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  cpu = cpu_features.read()
  print(f"processor: {cpu.describe()}; threads {common.threads()}",
        flush=True)
  data = common.prepare(args.work_dir)
  rows, load_before = [], os.getloadavg()
  for size in args.sizes:
    steps = build(data, size, args.batch_size, args.variants)
    times, losses = time_rounds(steps, args.rounds, args.round_steps,
                                args.warmup)
    enc = SHAPES[size]
    flops = model_flops(enc["num_layers"], enc["hidden_size"],
                        enc["intermediate_size"], SEQ_LENGTH, args.batch_size,
                        MAX_PREDICTIONS, data.vocab.size)
    cpu_s = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    for name in steps:
      dtype = "bfloat16" if name.endswith("bf16") else "float32"
      peak = cpu.peak_flops_per_cycle(dtype) * (cpu.mhz or 0) * 1e6
      row = dict(size=size, variant=name, batch_size=args.batch_size,
                 s_per_step=round(statistics.median(
                     t for t, _ in times[name]), 4),
                 cpu_s_per_step=round(cpu_s[name], 4),
                 cpu_ms_per_example=round(1e3 * cpu_s[name] / args.batch_size,
                                          2),
                 vs_package_fp32=round(cpu_s["package_fp32"] / cpu_s[name],
                                       3),
                 model_gflops_per_step=round(flops / 1e9, 2),
                 mfu_per_core=round(flops / cpu_s[name] / peak, 4)
                 if peak else None,
                 warmup_losses=[round(x, 5) for x in losses[name]],
                 rounds_cpu_s=[round(c, 4) for _, c in times[name]])
      for hf in ("hf_fp32", "hf_bf16"):
        if hf in cpu_s:
          row["vs_" + hf] = round(cpu_s[hf] / cpu_s[name], 3)
      rows.append(row)
      print(json.dumps({k: v for k, v in row.items()
                        if k != "rounds_cpu_s"}), flush=True)
  return dict(rows=rows, processor=cpu.describe(), threads=common.threads(),
              seq_length=SEQ_LENGTH, rounds=args.rounds,
              round_steps=args.round_steps,
              load_before=[round(x, 2) for x in load_before],
              load_after=[round(x, 2) for x in os.getloadavg()],
              finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


LABELS = {"package_fp32": "package float32",
          "package_xla": "package float32 + XLA (jit_compile)",
          "package_bf16": "package mixed bfloat16",
          "hf_fp32": "HF BertForMaskedLM float32 (torch)",
          "hf_bf16": "HF BertForMaskedLM, torch.autocast bfloat16",
          "mg_fp32": "Model Garden bert/pretraining float32"}


def table(out) -> str:
  """The Markdown table of a speed run's output (one row per variant)."""
  lines = ["| size, batch x 128 | variant | s/step | CPU-s/step | CPU-ms / "
           "example | vs package float32 | vs HF | vs HF bf16 | MFU (CPU-s) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
  for r in out["rows"]:
    mfu = r.get("mfu_per_core")
    lines.append(
        f"| {r['size']}, {r['batch_size']} | {LABELS[r['variant']]} | "
        f"{r['s_per_step']:.3f} | {r['cpu_s_per_step']:.3f} | "
        f"{r['cpu_ms_per_example']:.1f} | {r['vs_package_fp32']:.2f} | "
        f"{r.get('vs_hf_fp32', float('nan')):.2f} | "
        f"{r.get('vs_hf_bf16', float('nan')):.2f} | "
        f"{'' if mfu is None else f'{100 * mfu:.0f}%'} |")
  return "\n".join(lines)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  common.add_common_args(ap, ("speed",))
  ap.add_argument("--sizes", nargs="+", default=["demo", "base"],
                  choices=list(SHAPES))
  ap.add_argument("--variants", nargs="+", default=list(VARIANTS),
                  choices=VARIANTS)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--rounds", type=int, default=5)
  ap.add_argument("--round_steps", type=int, default=3)
  ap.add_argument("--warmup", type=int, default=2,
                  help="steps before timing (the first traces/compiles)")
  common.run_mode(ap, argv, speed, table)


if __name__ == "__main__":
  main()
