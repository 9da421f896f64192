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

r"""Training-step throughput: spanbert/pretraining vs Model Garden bert/pretraining.

For each encoder size (configs/models/{tiny,base}.yaml, cased vocab 28,996) and
sequence length (128, 512) this builds, side by side in one process:

  * `spanbert/pretraining`  our SpanBertPretrainTask (MLM + SBO head),
  * `spanbert/no_sbo`       the same task with use_sbo=False (MLM only),
  * `bert/pretraining`      Model Garden's MaskedLMTask + BertPretrainerV2 with
                            cls_heads=[] (no NSP), i.e. single-segment MLM,

each with the same encoder config (the same yaml is applied to all three), its
experiment's own optimizer (train_utils.create_optimizer: AdamW + clip-norm 1.0
for both) and its task's own `train_step` wrapped in `tf.function` (no XLA:
Model Garden only jit-compiles train steps on GPU). All three are fed one fixed
batch made by our loader (`SpanBertPretrainDataLoader`, span masking, the
longest of its first 64 blocks, i.e. full ones) from records of a real corpus
file (austen.txt); Model Garden's model gets the features it uses
(input_word_ids, input_mask, input_type_ids, masked_lm_positions/ids/weights).
max_predictions_per_seq is 20 at seq 128 and 80 at seq 512. Batch 8 at seq
128 and 4 at seq 512. float32, TF's default thread pools.

Each variant is warmed up (`--warmup` steps, the tracing step included), then
timed in interleaved rounds: every round runs `--*_steps` steps of each
variant in turn (the order rotates from round to round), so that load changes
on a shared machine hit all variants alike. Each round records wall time and
process CPU time (all threads; it does not grow while the process waits for a
core, so it is less disturbed by other load). Reported per variant: median
s/step over the rounds and examples/s = batch / that; ratios are computed per
round (paired) and their median [min .. max] over rounds is reported:

  SBO share  = (t_spanbert - t_no_sbo) / t_spanbert
  vs MG      = t_spanbert / t_bert   (> 1: ours is slower)

Because a single base-size step on a loaded 2-core machine varies by +-20%,
the step difference cannot resolve a few percent. So the SBO head is also
timed alone: forward + backward of the MLM head vs the MLM + SBO heads on a
fixed encoder output of the batch's shape (gradients w.r.t. that output and
the heads' variables, the tied embedding table included), paired and
interleaved over `--head_rounds` rounds; its median difference divided by the
spanbert/pretraining step time is the SBO share without the encoder's noise
(it leaves out the AdamW update of the head's own ~2M parameters, ~2% of the
model's). In the same rounds the heads are also timed called as layers
(MaskedLM, then SpanBoundaryHead), which gives what head_logits saves as
paired ratios. (Until SpanBoundaryHead took the same transposed projection,
this was the pretrainer before head_logits; now only MaskedLM keeps the
slower form, so the column shows less than the whole saving.)

Target (issue): SBO costs <= 5% of the step at base size.

`--padding` measures instead what `length_buckets` saves (issue 58 item 2):
`--blocks` blocks drawn at random (fixed seed) from records of `--corpus`
(all of it by default) go through the loader's own transform twice, as
batches padded to seq_length and as `--length_buckets` bucketed batches cut
to their bucket's width (the same blocks, so the same real tokens; the last
batch of each bucket may be short). One spanbert/pretraining model (its
weights do not change the time of a step), its train step traced once a side
over the dataset's element_spec as the trainer does (the sequence axis
dynamic when bucketed). After a warm-up step
of each batch shape, rounds alternate a pass of each side; reported per side:
real (input_mask) tokens and computed positions per CPU-second (median over
rounds) and their paired ratio. `--threads N` limits TensorFlow's pools.

  .venv/bin/python -m benchmarks.bench_pretraining_step --padding \
      --encoders demo --seqs 512 --corpus $SPANBERT_DATA_DIR/corpus/linux-doc.txt

`--dropout` measures what `task.model.dropout_mask: bits`
(modeling/bits_dropout.py) saves: first the dropout op alone (Keras' Dropout
and BitsDropout at `--dropout_rate`, forward and forward + backward in a
tf.function, on attention-probability shapes [4, 12, 512, 512] and
[16, 12, 128, 128], float32 and bfloat16), then the spanbert/pretraining train
step of each `--encoders` yaml with its dropout rates set to `--dropout_rate`,
built twice (dropout_mask keras / bits, under `--precision`), on the same
batch. Rounds alternate the sides (A B B A ...); CPU-s is process CPU time,
median over rounds, and the bits / keras ratio is paired per round.

  .venv/bin/python -m benchmarks.bench_pretraining_step --dropout \
      --encoders demo --seqs 512,128 --threads 1

  .venv/bin/python -m benchmarks.bench_pretraining_step            # defaults
  .venv/bin/python -m benchmarks.bench_pretraining_step --warmup 1  # RESULTS.md
  .venv/bin/python -m benchmarks.bench_pretraining_step --encoders tiny \
      --seqs 128 --tiny_rounds 3
  .venv/bin/python -m benchmarks.bench_pretraining_step --smoke   # seconds
"""

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras


from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official.modeling import performance
from official.modeling.hyperparams import params_dict
from official.nlp.configs import pretraining_experiments  # noqa: F401
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.data.pretraining import pretrain_dataloader
from official_spanbert.data.pretraining.records import pretraining_records as pr

from benchmarks.common import (  # pylint: disable=g-multiple-import
    DATA, SMOKE_CORPUS, SMOKE_VOCAB, first_bytes, load_avg, machine,
    parse_args, report_rows)

VARIANTS = ("spanbert/pretraining", "spanbert/no_sbo", "bert/pretraining")
MG_FEATURES = ("input_word_ids", "input_mask", "input_type_ids",
               "masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def max_predictions(seq: int) -> int:
  return 20 if seq <= 128 else 80


def make_records(corpus: str, vocab: str, seq: int, out_dir: str,
                 max_bytes: int) -> str:
  """Pretraining records of the first ~max_bytes of a real corpus file."""
  part = first_bytes(corpus, max_bytes, os.path.join(out_dir, "corpus.txt"))
  prefix = os.path.join(out_dir, f"r{seq}")
  pr.create_pretraining_records([part], vocab, prefix, max_seq_length=seq,
                                progress=False)
  return prefix + "-*.tfrecord"


def make_batch(records: str, vocab: str, seq: int, batch: int,
               pool: int = 64):
  """One masked batch (span masking, fixed seed) from our loader.

  The loader's first `pool` blocks are masked and the `batch` longest kept
  (full blocks, as most are in pretraining; the corpus file's last block of a
  document is shorter).
  """
  params = pretrain_dataloader.SpanBertPretrainDataConfig(
      input_path=records, vocab_file=vocab, seq_length=seq,
      max_predictions_per_seq=max_predictions(seq), global_batch_size=pool,
      is_training=False, seed=1, masking_scheme="span")
  loader = pretrain_dataloader.SpanBertPretrainDataLoader(params)
  features = next(iter(loader.load()))
  lengths = tf.reduce_sum(features["input_mask"], axis=1)
  keep = tf.argsort(lengths, direction="DESCENDING", stable=True)[:batch]
  return {k: tf.gather(v, keep) for k, v in features.items()}


def experiment_params(name: str, model_yaml: str, num_layers: int = 0,
                      model=None):
  """The registered experiment with the encoder of `model_yaml` (with
  `num_layers` layers instead of the yaml's, if given, and `model`'s
  overrides of task.model)."""
  if name == "bert/pretraining":
    params = exp_factory.get_exp_config("bert/pretraining")
    params = params_dict.override_params_dict(params, model_yaml,
                                              is_strict=True)
    params.task.model.cls_heads = []            # no NSP: single-segment MLM
    params.task.train_data.use_next_sentence_label = False
    # The registered config leaves these unset (Model Garden's yamls set them).
    opt = params.trainer.optimizer_config
    opt.learning_rate.polynomial.decay_steps = params.trainer.train_steps
    opt.warmup.polynomial.warmup_steps = 10_000
  else:
    params = exp_factory.get_exp_config(name)
    params = params_dict.override_params_dict(params, model_yaml,
                                              is_strict=True)
  if num_layers:
    params.task.model.encoder.bert_v2.num_layers = num_layers
  if model:
    params.task.model.override(model, is_strict=True)
  return params


class Variant:
  """A task, its model and optimizer and a tf.function train step."""

  def __init__(self, name: str, model_yaml: str, num_layers: int = 0,
               model=None, precision: str = "float32"):
    self.name = name
    self.params = experiment_params(name, model_yaml, num_layers, model)
    self.task = task_factory.get_task(self.params.task)
    performance.set_mixed_precision_policy(tf.as_dtype(precision))
    try:
      self.model = self.task.build_model()
      self.optimizer = train_utils.create_optimizer(self.task, self.params)
    finally:
      performance.set_mixed_precision_policy(tf.float32)
    self.metrics = self.task.build_metrics(training=True)
    self.step_fn = tf.function(lambda x: self.task.train_step(
        x, self.model, self.optimizer, self.metrics))
    self.num_params = sum(int(tf.size(v)) for v in
                          self.model.trainable_variables)

  def inputs(self, batch):
    if self.name == "bert/pretraining":
      out = {k: batch[k] for k in MG_FEATURES}
      out["masked_lm_weights"] = tf.cast(out["masked_lm_weights"], tf.float32)
      return out
    return batch

  def run(self, batch, steps: int):
    """(wall, process CPU) seconds for `steps` steps, ending when the last
    loss is on the host."""
    return timed(lambda: self.step_fn(batch)[self.task.loss], steps)


def timed(fn, steps: int):
  """(wall, process CPU) seconds of `steps` calls of fn (result fetched)."""
  w0, c0 = time.perf_counter(), time.process_time()
  for _ in range(steps):
    out = fn()
  float(out)
  return time.perf_counter() - w0, time.process_time() - c0


def heads_fns(model, batch, fast=True):
  """tf.functions: forward + backward of the MLM head, and of MLM + SBO.

  Both take a fixed random sequence_output and return the loss plus sums of
  the gradients w.r.t. sequence_output (what flows into the encoder) and the
  heads' variables (the tied embedding table included), so that their
  difference is the SBO head's share of a train step, without the encoder.
  fast=True computes the logits as SpanBertPretrainer.call does
  (head_logits); fast=False calls the layers (MaskedLM, SpanBoundaryHead)
  one after the other.
  """
  from official_spanbert.tasks import pretraining  # pylint: disable=g-import-not-at-top
  width = model.encoder_network.get_embedding_table().shape[-1]
  shape = batch["input_word_ids"].shape
  x = tf.random.stateless_normal([shape[0], shape[1], width], seed=[1, 2])
  sbo_inputs = (batch["sbo_left_positions"], batch["sbo_right_positions"],
                batch["sbo_relative_positions"])

  def logits(with_sbo):
    if fast and with_sbo:
      return model.head_logits(x, batch["masked_lm_positions"], *sbo_inputs)
    if fast:
      return model.head_logits(x, batch["masked_lm_positions"]), None
    mlm = model.masked_lm(x, masked_positions=batch["masked_lm_positions"])
    return mlm, model.span_boundary(x, *sbo_inputs) if with_sbo else None

  def make(with_sbo):
    @tf.function
    def fn():
      with tf.GradientTape() as tape:
        tape.watch(x)
        variables = list(model.masked_lm.trainable_variables)
        mlm_logits, sbo_logits = logits(with_sbo)
        loss = pretraining.weighted_cross_entropy(
            batch["masked_lm_ids"], mlm_logits, batch["masked_lm_weights"])
        if with_sbo:
          loss += pretraining.weighted_cross_entropy(
              batch["masked_lm_ids"], sbo_logits, batch["sbo_weights"])
          seen = {id(v) for v in variables}
          variables += [v for v in model.span_boundary.trainable_variables
                        if id(v) not in seen]
      grads = tape.gradient(loss, [x] + variables)
      return loss + tf.add_n([tf.reduce_sum(g) for g in grads
                              if g is not None]) * 0.0
    return fn
  return make(False), make(True)


def bench(encoder: str, seqs, batches, rounds, steps, warmup, records, vocab,
          head_rounds, head_reps, num_layers=0):
  model_yaml = yaml_files.path(f"models/{encoder}.yaml")
  t0 = time.perf_counter()
  variants = [Variant(name, model_yaml, num_layers) for name in VARIANTS]
  layers = variants[0].params.task.model.encoder.bert_v2.num_layers
  print(f"[{encoder}] built {len(variants)} models ({layers}-layer encoder) "
        f"in {time.perf_counter() - t0:.1f}s; trainable params: " + ", ".join(
            f"{v.name} {v.num_params / 1e6:.2f}M" for v in variants),
        flush=True)
  results = []
  for seq in seqs:
    batch_size = batches[seq]
    batch = make_batch(records[seq], vocab, seq, batch_size)
    feeds = [v.inputs(batch) for v in variants]
    n_pred = float(tf.reduce_sum(batch["masked_lm_weights"]))
    n_sbo = float(tf.reduce_sum(batch["sbo_weights"]))
    length = float(tf.reduce_sum(batch["input_mask"])) / batch_size
    for v, feed in zip(variants, feeds):
      trace, _ = v.run(feed, 1)                  # trace + warm-up step 1
      if warmup > 1:
        v.run(feed, warmup - 1)
      print(f"[{encoder} seq {seq}] {v.name}: trace + 1st step {trace:.1f}s",
            flush=True)
    n_rounds, n_steps = rounds[(encoder, seq)], steps[(encoder, seq)]
    wall = {v.name: [] for v in variants}
    cpu = {v.name: [] for v in variants}
    loads = [os.getloadavg()[0]]
    for r in range(n_rounds):
      order = variants[r % 3:] + variants[:r % 3]
      for v in order:
        w, c = v.run(feeds[variants.index(v)], n_steps)
        wall[v.name].append(w / n_steps)
        cpu[v.name].append(c / n_steps)
      loads.append(os.getloadavg()[0])
      print(f"[{encoder} seq {seq}] round {r + 1}/{n_rounds}: " + ", ".join(
          f"{k} {wall[k][-1]:.3f}s (cpu {cpu[k][-1]:.3f}s)" for k in wall)
            + f"  (load {loads[-1]:.2f})", flush=True)
    # The SBO head alone (MLM head vs MLM + SBO heads on a fixed encoder
    # output), interleaved, many repetitions: a low-noise numerator.
    # Also the layers called one by one, in the same rounds: what
    # head_logits saves, as a paired ratio.
    fns = (heads_fns(variants[0].model, batch) +
           heads_fns(variants[0].model, batch, fast=False))
    for fn in fns:
      timed(fn, 1)
    head_w, head_c, heads_cpu = [], [], []
    for r in range(head_rounds):
      t = [None] * 4
      for i in range(4):
        i = (i + r) % 4
        t[i] = timed(fns[i], head_reps)
      head_w.append((t[1][0] - t[0][0]) / head_reps)
      head_c.append((t[1][1] - t[0][1]) / head_reps)
      heads_cpu.append([c / head_reps for _, c in t])
    loads.append(os.getloadavg()[0])
    layers_sbo = statistics.median(c[3] - c[2] for c in heads_cpu)
    print(f"[{encoder} seq {seq}] SBO head fwd+bwd alone: "
          f"{1e3 * statistics.median(head_w):.1f} ms wall, "
          f"{1e3 * statistics.median(head_c):.1f} ms cpu per step "
          f"({head_rounds} x {head_reps} paired reps); called as layers: "
          f"{1e3 * layers_sbo:.1f} ms cpu", flush=True)
    sb, ns, mg = (wall[k] for k in VARIANTS)
    results.append(dict(
        encoder=encoder, seq=seq, batch=batch_size, rounds=n_rounds,
        steps=n_steps, masked=n_pred / batch_size, sbo=n_sbo / batch_size,
        length=length,
        t={k: statistics.median(t) for k, t in wall.items()},
        tc={k: statistics.median(t) for k, t in cpu.items()},
        share=[(a - b) / a for a, b in zip(sb, ns)],
        share_cpu=[(a - b) / a for a, b in zip(*(cpu[k] for k in VARIANTS[:2]))],
        vs_mg=[a / c for a, c in zip(sb, mg)],
        vs_mg_cpu=[a / c for a, c in zip(cpu[VARIANTS[0]], cpu[VARIANTS[2]])],
        nosbo_vs_mg_cpu=[b / c for b, c in zip(cpu[VARIANTS[1]],
                                               cpu[VARIANTS[2]])],
        head=statistics.median(head_w), head_cpu=statistics.median(head_c),
        layers_head_cpu=layers_sbo,
        heads_cpu=[statistics.median(c[i] for c in heads_cpu)
                   for i in range(4)],
        fast_vs_layers=[c[1] / c[3] for c in heads_cpu],
        load=(min(loads), max(loads))))
  del variants
  gc.collect()
  tf_keras.backend.clear_session()
  return results


def dropout_op_fns(layer, shape, dtype):
  """tf.functions of `layer` in training: forward, and forward + backward
  (the gradient w.r.t. the input of a fixed upstream gradient)."""
  x = tf.cast(tf.random.stateless_normal(shape, seed=[1, 2]), dtype)
  dy = tf.cast(tf.random.stateless_normal(shape, seed=[3, 4]), dtype)

  @tf.function
  def forward():
    return (layer(x, training=True),)

  @tf.function
  def backward():
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = layer(x, training=True)
    return y, tape.gradient(y, x, output_gradients=dy)

  def first(fn):  # the outputs whole, then one element of each on the host
    return lambda: sum(float(tf.reshape(t, [-1])[0]) for t in fn())

  return first(forward), first(backward)


def bench_dropout_op(shape, dtype, rate, rounds, reps):
  """Rows (forward, forward + backward) of Keras' Dropout vs BitsDropout on
  one tensor: median CPU-s a call over alternating rounds."""
  from official_spanbert.modeling import bits_dropout  # pylint: disable=g-import-not-at-top
  layers = {"keras": tf_keras.layers.Dropout(rate, dtype=dtype),
            "bits": bits_dropout.BitsDropout(rate, dtype=dtype)}
  rows = []
  for i, part in enumerate(("forward", "forward + backward")):
    fns = {k: dropout_op_fns(layer, shape, dtype)[i]
           for k, layer in layers.items()}
    for fn in fns.values():
      fn()
    cpu = {k: [] for k in fns}
    for r in range(rounds):
      for k in (("keras", "bits") if r % 2 == 0 else ("bits", "keras")):
        cpu[k].append(timed(fns[k], reps)[1] / reps)
    ratios = [b / k for b, k in zip(cpu["bits"], cpu["keras"])]
    rows.append(dict(shape="x".join(map(str, shape)), dtype=tf.as_dtype(
        dtype).name, part=part, keras_cpu_s=med(cpu["keras"]),
                     bits_cpu_s=med(cpu["bits"]), bits_vs_keras=med(ratios),
                     range=[min(ratios), max(ratios)], rounds=rounds,
                     load=load_avg()))
    print(f"[dropout op {rows[-1]['shape']} {rows[-1]['dtype']} {part}] "
          f"keras {1e3 * rows[-1]['keras_cpu_s']:.1f} ms, bits "
          f"{1e3 * rows[-1]['bits_cpu_s']:.1f} ms CPU: "
          f"{spread(ratios, False)}", flush=True)
  return rows


def bench_dropout_step(encoder, seq, batch, rate, precision, rounds, steps,
                       warmup, records, vocab, num_layers=0):
  """One row: the train step with Keras' dropout vs BitsDropout."""
  model_yaml = yaml_files.path(f"models/{encoder}.yaml")
  rates = dict(dropout_rate=rate, attention_dropout_rate=rate)
  sides = {mask: Variant("spanbert/pretraining", model_yaml, num_layers,
                         model=dict(dropout_mask=mask,
                                    encoder=dict(bert_v2=rates)),
                         precision=precision)
           for mask in ("keras", "bits")}
  from official_spanbert.modeling import bits_dropout  # pylint: disable=g-import-not-at-top
  swapped = {k: sum(isinstance(m, bits_dropout.BitsDropout)
                    for m in v.model.submodules) for k, v in sides.items()}
  if swapped["keras"] or not swapped["bits"]:
    raise RuntimeError(f"BitsDropout layers per side: {swapped}")
  feed = make_batch(records[seq], vocab, seq, batch)
  for v in sides.values():
    v.run(feed, warmup)
  cpu = {k: [] for k in sides}
  loads = [os.getloadavg()[0]]
  for r in range(rounds):
    for k in (("keras", "bits") if r % 2 == 0 else ("bits", "keras")):
      cpu[k].append(sides[k].run(feed, steps)[1] / steps)
    loads.append(os.getloadavg()[0])
    print(f"[dropout step {encoder} seq {seq} x {batch} {precision}] round "
          f"{r + 1}/{rounds}: keras {cpu['keras'][-1]:.3f}, bits "
          f"{cpu['bits'][-1]:.3f} CPU-s a step (load {loads[-1]:.2f})",
          flush=True)
  ratios = [b / k for b, k in zip(cpu["bits"], cpu["keras"])]
  del sides
  gc.collect()
  tf_keras.backend.clear_session()
  return dict(encoder=encoder, seq=seq, batch=batch, precision=precision,
              dropout_rate=rate, bits_layers=swapped["bits"], keras_cpu_s=med(cpu["keras"]),
              bits_cpu_s=med(cpu["bits"]), bits_vs_keras=med(ratios),
              range=[min(ratios), max(ratios)], rounds=rounds, steps=steps,
              load=[min(loads), max(loads)])


def main_dropout(args, encoders, seqs, batches):
  """--dropout: Keras' Dropout vs BitsDropout, the op alone and the step."""
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  print(f"processor: {cpu_features.read().describe()}; threads "
        f"{args.threads or 'TF default'}", flush=True)
  ops = []
  for shape in filter(None, args.dropout_shapes.split(",")):
    for dtype in (tf.float32, tf.bfloat16):
      ops += bench_dropout_op([int(d) for d in shape.split("x")], dtype,
                              args.dropout_rate, args.dropout_rounds,
                              args.dropout_reps)
  steps = []
  with tempfile.TemporaryDirectory() as tmp:
    for seq in seqs:
      d = os.path.join(tmp, str(seq))
      os.makedirs(d)
      records = {seq: make_records(args.corpus, args.vocab, seq, d,
                                   max_bytes=100_000 * max(1, seq // 128))}
      for e in encoders:
        steps.append(bench_dropout_step(
            e, seq, batches[seq], args.dropout_rate, args.precision,
            args.dropout_rounds, args.dropout_steps, args.warmup, records,
            args.vocab, args.num_layers))
  print("\n| dropout op | dtype | part | Keras Dropout, CPU ms | BitsDropout, "
        "CPU ms | bits / keras, paired [min .. max] | load 1-min |")
  print("|---|---|---|---:|---:|---|---|")
  for r in ops:
    print(f"| [{r['shape'].replace('x', ', ')}] | {r['dtype']} | {r['part']} "
          f"| {1e3 * r['keras_cpu_s']:.1f} | {1e3 * r['bits_cpu_s']:.1f} | "
          f"{r['bits_vs_keras']:.2f} [{r['range'][0]:.2f} .. "
          f"{r['range'][1]:.2f}] | {r['load']} |")
  print("\n| train step | seq x batch | precision | dropout | keras, CPU-s a "
        "step | bits, CPU-s a step | bits / keras, paired [min .. max] | "
        "rounds x steps | load 1-min |")
  print("|---|---|---|---:|---:|---:|---|---|---|")
  for r in steps:
    print(f"| {r['encoder']} | {r['seq']} x {r['batch']} | {r['precision']} "
          f"| {r['dropout_rate']} | {r['keras_cpu_s']:.3f} | "
          f"{r['bits_cpu_s']:.3f} | {r['bits_vs_keras']:.2f} "
          f"[{r['range'][0]:.2f} .. {r['range'][1]:.2f}] | {r['rounds']} x "
          f"{r['steps']} | {r['load'][0]:.1f}-{r['load'][1]:.1f} |")
  report_rows(ops + steps, positive=["keras_cpu_s", "bits_cpu_s",
                                     "bits_vs_keras"])


def sampled_blocks(records: str, blocks: int, seed: int = 0):
  """`blocks` serialized records drawn at random (fixed seed), in the order
  drawn."""
  files = sorted(tf.io.gfile.glob(records))
  every = list(tf.data.TFRecordDataset(files).as_numpy_iterator())
  return random.Random(seed).sample(every, min(blocks, len(every)))


def padding_stream(records, vocab, seq, batch, buckets, blocks):
  """(batches, element_spec): `blocks` through the loader's transform."""
  params = pretrain_dataloader.SpanBertPretrainDataConfig(
      input_path=records, vocab_file=vocab, seq_length=seq,
      max_predictions_per_seq=max_predictions(seq), global_batch_size=batch,
      is_training=False, drop_remainder=False, seed=1, masking_scheme="span",
      length_buckets=buckets)
  loader = pretrain_dataloader.SpanBertPretrainDataLoader(params)
  dataset = loader.transform_and_batch(
      tf.data.Dataset.from_tensor_slices(blocks))
  return list(dataset), dataset.element_spec


def bench_padding(encoder, seq, batch, buckets, rounds, records, vocab,
                  blocks, num_layers=0):
  """One row a side (padded, bucketed) of what the cut saves."""
  model_yaml = yaml_files.path(f"models/{encoder}.yaml")
  picked = sampled_blocks(records, blocks)
  # One model and optimizer for both sides (the time of a step does not
  # depend on the weights), each side's train step a function of its own.
  v = Variant("spanbert/pretraining", model_yaml, num_layers)
  sides = {}
  for name, n in (("padded", 0), ("bucketed", buckets)):
    batches, spec = padding_stream(records, vocab, seq, batch, n, picked)
    step_fn = tf.function(
        lambda x: v.task.train_step(x, v.model, v.optimizer, v.metrics),
        input_signature=[spec])
    real = sum(int(tf.reduce_sum(b["input_mask"])) for b in batches)
    computed = sum(int(tf.size(b["input_mask"])) for b in batches)
    shapes = sorted({(b["input_word_ids"].shape[1],
                      b["masked_lm_ids"].shape[1]) for b in batches})
    t0 = time.process_time()
    firsts = {tuple(b["input_word_ids"].shape): b for b in batches}
    for b in firsts.values():  # the trace, and each shape's first step
      float(step_fn(b)[v.task.loss])
    print(f"[{encoder} seq {seq} {name}] {len(batches)} batches, {real} real "
          f"of {computed} positions, (width, predictions) {shapes}; "
          f"warm-up {time.process_time() - t0:.1f} CPU-s", flush=True)
    sides[name] = dict(step_fn=step_fn, batches=batches, real=real,
                       computed=computed, shapes=shapes, cpu=[], wall=[])
  loads = [os.getloadavg()[0]]
  for r in range(rounds):
    for name in (("padded", "bucketed") if r % 2 == 0 else
                 ("bucketed", "padded")):
      side = sides[name]
      w0, c0 = time.perf_counter(), time.process_time()
      for b in side["batches"]:
        out = side["step_fn"](b)
      float(out[v.task.loss])
      side["wall"].append(time.perf_counter() - w0)
      side["cpu"].append(time.process_time() - c0)
    loads.append(os.getloadavg()[0])
    print(f"[{encoder} seq {seq}] round {r + 1}/{rounds}: " + ", ".join(
        f"{k} {s['cpu'][-1]:.2f} CPU-s ({s['real'] / s['cpu'][-1]:.0f} real "
        "tokens/CPU-s)" for k, s in sides.items())
          + f" (load {loads[-1]:.2f})", flush=True)
  pad, buck = sides["padded"], sides["bucketed"]
  ratios = [p / b for p, b in zip(pad["cpu"], buck["cpu"])]
  rows = []
  for name, side in sides.items():
    cpu = med(side["cpu"])
    rows.append(dict(
        encoder=encoder, seq=seq, batch=batch, side=name,
        length_buckets=buckets if name == "bucketed" else 0,
        batches=len(side["batches"]), shapes=len(side["shapes"]),
        real_tokens=side["real"], computed_positions=side["computed"],
        padding_share=1 - side["real"] / side["computed"],
        cpu_s_per_pass=cpu, wall_s_per_pass=med(side["wall"]),
        real_tokens_per_cpu_s=side["real"] / cpu,
        positions_per_cpu_s=side["computed"] / cpu,
        speedup=med(ratios) if name == "bucketed" else 1.0,
        speedup_range=[min(ratios), max(ratios)] if name == "bucketed"
        else [1.0, 1.0],
        rounds=rounds, load=[min(loads), max(loads)]))
  del sides, v
  gc.collect()
  tf_keras.backend.clear_session()
  return rows


def report_padding(rows):
  print("\n| encoder | seq x batch | batches | shapes | real / computed "
        "positions (padding) | CPU-s a pass | real tokens / CPU-s | computed "
        "positions / CPU-s | vs padded, paired [min .. max] | load 1-min |")
  print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
  for r in rows:
    side = ("padded" if r["side"] == "padded" else
            f"{r['length_buckets']} buckets")
    print(f"| {r['encoder']}, {side} | {r['seq']} x {r['batch']} | "
          f"{r['batches']} | {r['shapes']} | {r['real_tokens']:,} / "
          f"{r['computed_positions']:,} ({100 * r['padding_share']:.0f}%) | "
          f"{r['cpu_s_per_pass']:.2f} | {r['real_tokens_per_cpu_s']:,.0f} | "
          f"{r['positions_per_cpu_s']:,.0f} | {r['speedup']:.2f}x "
          f"[{r['speedup_range'][0]:.2f} .. {r['speedup_range'][1]:.2f}] | "
          f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |")
  report_rows(rows, positive=["real_tokens", "cpu_s_per_pass",
                              "real_tokens_per_cpu_s", "speedup"])


def med(xs) -> float:
  return statistics.median(xs)


def spread(xs, pct=True):
  f = (lambda x: f"{100 * x:+.1f}%") if pct else (lambda x: f"{x:.2f}")
  return f"{f(med(xs))} [{f(min(xs))} .. {f(max(xs))}]"


def report(results):
  print("\nExamples/s = batch / median wall s/step over rounds (median "
        "process CPU s/step in brackets):")
  print("\n| encoder | seq | batch | rounds x steps | real tokens / masked / "
        "SBO targets per seq | spanbert/pretraining | spanbert/no_sbo | "
        "bert/pretraining (MG) | spanbert / MG step time, wall | load 1-min |")
  print("|---|---|---|---|---|---|---|---|---|---|")
  for r in results:
    t = r["t"]
    print(f"| {r['encoder']} | {r['seq']} | {r['batch']} | "
          f"{r['rounds']} x {r['steps']} | {r['length']:.0f} / "
          f"{r['masked']:.1f} / {r['sbo']:.1f} | "
          + " | ".join(f"{r['batch'] / t[k]:.2f} ex/s ({t[k]:.3f} s; cpu "
                       f"{r['tc'][k]:.3f} s)" for k in VARIANTS)
          + f" | {spread(r['vs_mg'], False)} | "
          f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |")
  print("\nSBO share of the spanbert/pretraining step, three ways (median "
        "[min .. max] over paired rounds):")
  print("\n| encoder | seq | (sbo - no_sbo) / sbo, wall | same, process CPU "
        "time | SBO head alone / sbo step, wall | same, CPU | spanbert / MG, "
        "CPU | no_sbo / MG, CPU |")
  print("|---|---|---|---|---|---|---|---|")
  for r in results:
    print(f"| {r['encoder']} | {r['seq']} | {spread(r['share'])} | "
          f"{spread(r['share_cpu'])} | "
          f"{100 * r['head'] / r['t'][VARIANTS[0]]:.1f}% "
          f"({1e3 * r['head']:.0f} ms) | "
          f"{100 * r['head_cpu'] / r['tc'][VARIANTS[0]]:.1f}% "
          f"({1e3 * r['head_cpu']:.0f} ms) | {spread(r['vs_mg_cpu'], False)} | "
          f"{spread(r['nosbo_vs_mg_cpu'], False)} |")
  print("\nBoth heads' forward + backward on a fixed encoder output, CPU "
        "ms: as SpanBertPretrainer computes them (head_logits) vs the layers "
        "called one by one (MaskedLM, then SpanBoundaryHead):")
  print("\n| encoder | seq | MLM, head_logits | MLM + SBO, head_logits | "
        "MLM, layers | MLM + SBO, layers | SBO head alone, head_logits / "
        "layers | MLM + SBO, head_logits / layers |")
  print("|---|---|---|---|---|---|---|---|")
  for r in results:
    h = r["heads_cpu"]
    # The step as it was with the layers: longer by the heads' difference.
    layers_step = r["tc"][VARIANTS[0]] + h[3] - h[1]
    print(f"| {r['encoder']} | {r['seq']} | " + " | ".join(
        f"{1e3 * c:.0f}" for c in h) + f" | {1e3 * r['head_cpu']:.0f} / "
          f"{1e3 * r['layers_head_cpu']:.0f} ms = "
          f"{100 * r['head_cpu'] / r['tc'][VARIANTS[0]]:.1f}% / "
          f"{100 * r['layers_head_cpu'] / layers_step:.1f}% of the step | "
          f"{spread(r['fast_vs_layers'], False)} |")
  report_rows([dict(encoder=r["encoder"], seq=r["seq"], batch=r["batch"],
                    masked=r["masked"], sbo_targets=r["sbo"],
                    **{f"step_s {k}": r["t"][k] for k in VARIANTS},
                    **{f"step_cpu_s {k}": r["tc"][k] for k in VARIANTS},
                    sbo_head_s=r["head"], sbo_head_cpu_s=r["head_cpu"],
                    heads_cpu_s=r["heads_cpu"]) for r in results],
              positive=[f"step_s {k}" for k in VARIANTS] +
              [f"step_cpu_s {k}" for k in VARIANTS] +
              ["masked", "sbo_targets", "sbo_head_s", "sbo_head_cpu_s"])
  base = [r for r in results if r["encoder"] == "base"]
  if base:
    print("\nTarget SBO <= 5% of step time at base size: " + "; ".join(
        f"seq {r['seq']}: step difference {100 * med(r['share']):.1f}% wall "
        f"/ {100 * med(r['share_cpu']):.1f}% CPU, head alone "
        f"{100 * r['head'] / r['t'][VARIANTS[0]]:.1f}% wall / "
        f"{100 * r['head_cpu'] / r['tc'][VARIANTS[0]]:.1f}% CPU"
        for r in base))


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--encoders", default="tiny,base")
  ap.add_argument("--num_layers", type=int, default=0,
                  help="encoder layers instead of the yamls' (0: theirs)")
  ap.add_argument("--seqs", default="128,512")
  ap.add_argument("--batch_128", type=int, default=8)
  ap.add_argument("--batch_512", type=int, default=4)
  ap.add_argument("--warmup", type=int, default=2,
                  help="untimed steps per variant, the tracing step included")
  ap.add_argument("--head_rounds", type=int, default=10,
                  help="paired rounds of the SBO-head-alone measurement")
  ap.add_argument("--tiny_head_reps", type=int, default=5)
  ap.add_argument("--tiny_rounds", type=int, default=5)
  ap.add_argument("--tiny_steps", type=int, default=3)
  ap.add_argument("--base_rounds_128", type=int, default=4)
  ap.add_argument("--base_rounds_512", type=int, default=3)
  ap.add_argument("--base_steps", type=int, default=1)
  ap.add_argument("--corpus", default=os.path.join(DATA, "corpus",
                                                   "austen.txt"))
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--padding", action="store_true",
                  help="padded vs length_buckets batches (module docstring)")
  ap.add_argument("--length_buckets", type=int, default=8)
  ap.add_argument("--blocks", type=int, default=256,
                  help="--padding: blocks drawn from the records")
  ap.add_argument("--corpus_bytes", type=int, default=0,
                  help="--padding: records of the corpus's first bytes "
                  "(0: all of it)")
  ap.add_argument("--padding_rounds", type=int, default=3)
  ap.add_argument("--dropout", action="store_true",
                  help="Keras' Dropout vs BitsDropout: the op alone and the "
                  "train step (module docstring)")
  ap.add_argument("--dropout_rate", type=float, default=0.1,
                  help="--dropout: the encoder's dropout rates")
  ap.add_argument("--dropout_shapes", default="4x12x512x512,16x12x128x128",
                  help="--dropout: tensors of the op alone ('': none)")
  ap.add_argument("--dropout_rounds", type=int, default=6,
                  help="--dropout: alternating rounds (op and step)")
  ap.add_argument("--dropout_steps", type=int, default=2,
                  help="--dropout: train steps a side a round")
  ap.add_argument("--dropout_reps", type=int, default=3,
                  help="--dropout: calls of the op a round")
  ap.add_argument("--precision", default="float32",
                  choices=["float32", "bfloat16"],
                  help="--dropout: the step's mixed precision")
  ap.add_argument("--threads", type=int, default=0,
                  help="TensorFlow intra- and inter-op threads (0: TF's)")
  # Smoke: tiny with 1 of its 2 layers (fewer ops for the three train steps
  # and four head functions to trace), one step of each. The SBO head's
  # time is a difference of two timings of a few ms: 3 rounds of 4 paired
  # calls (one call's difference went below zero under load).
  args = parse_args(ap, argv, smoke=dict(
      encoders="tiny", num_layers=1, seqs="64", batch_128=4, warmup=1,
      head_rounds=3, tiny_head_reps=4, tiny_rounds=1, tiny_steps=1,
      corpus=SMOKE_CORPUS, vocab=SMOKE_VOCAB, length_buckets=4,
      padding_rounds=1, blocks=32, dropout_shapes="2x4x64x64",
      dropout_rounds=2, dropout_steps=1, dropout_reps=1))
  for path in (args.corpus, args.vocab):
    if not os.path.exists(path):
      sys.exit(f"missing {path} (set SPANBERT_DATA_DIR)")
  if args.threads:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  encoders = args.encoders.split(",")
  seqs = [int(s) for s in args.seqs.split(",")]
  batches = {s: args.batch_128 if s <= 128 else args.batch_512 for s in seqs}
  rounds, steps = {}, {}
  for e in encoders:
    for s in seqs:
      rounds[(e, s)] = (args.tiny_rounds if e == "tiny" else
                        args.base_rounds_128 if s <= 128 else
                        args.base_rounds_512)
      steps[(e, s)] = args.tiny_steps if e == "tiny" else args.base_steps
  print(f"machine: {machine()}; TF intra-op threads "
        f"{tf.config.threading.get_intra_op_parallelism_threads()} "
        "(0 = one per core)")
  print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
  print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}", flush=True)
  start = time.perf_counter()
  results = []
  if args.padding:
    main_padding(args, encoders, seqs, batches)
    return
  if args.dropout:
    main_dropout(args, encoders, seqs, batches)
    return
  with tempfile.TemporaryDirectory() as tmp:
    records = {}
    for s in seqs:
      d = os.path.join(tmp, str(s))
      os.makedirs(d)
      records[s] = make_records(args.corpus, args.vocab, s, d,
                                max_bytes=100_000 * max(1, s // 128))
    for e in encoders:
      results += bench(e, seqs, batches, rounds, steps, args.warmup, records,
                       args.vocab, args.head_rounds,
                       args.tiny_head_reps if e == "tiny" else 1,
                       args.num_layers)
  print(f"\ntotal {time.perf_counter() - start:.0f}s; load at end {load_avg()}")
  report(results)


def main_padding(args, encoders, seqs, batches):
  """--padding: padded vs bucketed batches of the same blocks."""
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  print(f"processor: {cpu_features.read().describe()}; threads "
        f"{args.threads or 'TF default'}", flush=True)
  start = time.perf_counter()
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    for seq in seqs:
      d = os.path.join(tmp, str(seq))
      os.makedirs(d)
      t0 = time.perf_counter()
      records = make_records(args.corpus, args.vocab, seq, d,
                             max_bytes=args.corpus_bytes or 2**62)
      print(f"records of {args.corpus} at seq {seq} in "
            f"{time.perf_counter() - t0:.0f}s", flush=True)
      for e in encoders:
        rows += bench_padding(e, seq, batches[seq], args.length_buckets,
                              args.padding_rounds, records, args.vocab,
                              args.blocks, args.num_layers)
  print(f"\ntotal {time.perf_counter() - start:.0f}s; load at end "
        f"{load_avg()}")
  report_padding(rows)


if __name__ == "__main__":
  main()
