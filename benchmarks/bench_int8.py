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

r"""The encoder of an int8 export vs its float32 and bfloat16 exports (issue 57).

Times, in one process, one intra-op thread and rounds interleaved (the side
order turns each round), the encoder network as each `precision` of the
export runs it, on the same ids: float32 as served (matmul attention,
EinsumDense projections), float32 with the projections as MatMul (the
rewrite int8 needs, modeling/matmul_projections.py), bfloat16 (if the CPU
has AVX512-BF16 or AMX) and int8 (serving/quantization.py: Intel Neural
Compressor, calibrated on the run's training records), beside the same int8
graph without the epilogues serving/int8_epilogues.py fuses into its
MatMuls (bias, GELU, the cast to bfloat16; paired CPU ratio per shape), and
the int8 graph made before the feed-forward outputs were int8 (those six
projections kept float, as the float parts compute; no outlier split,
modeling/ffn_outliers.py; paired CPU ratio per shape). With --run_dir, the
encoder of a trained classification / relation run (as ClassifyModule
builds it); --smoke: a 1-layer, hidden-32 encoder of random weights
calibrated on random ids. ONNX Runtime is not a side: no ONNX model of the
encoder can be made here without network access (no tf2onnx, onnx or
onnxruntime in the venv). Reported per shape: median wall and CPU ms per
call, speed vs float32 (wall), and each side's largest distance to
float32's sequence output on the first shape.

  python -m benchmarks.bench_int8 \
      --run_dir=/work/study-scratch/semeval/runs/typed_marker_seed1
  python -m benchmarks.bench_int8 --smoke   # seconds
"""

import argparse
import os
import statistics
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import matmul_projections
from official_spanbert.serving import classify_module
from official_spanbert.serving import export_precision
from official_spanbert.serving import int8_epilogues
from official_spanbert.serving import quantization
from official_spanbert.serving import registry
from official_spanbert.utils import cpu_features
from benchmarks.common import load_avg, parse_args, report_rows

FLOAT = "float32"
UNFUSED = "int8, epilogues unfused"
FFN_FLOAT = "int8, feed-forward outputs float"
SHAPES = "1x160,1x384,16x160,8x384"


class SequenceOutput(tf.Module):
  """An encoder network called as the task models are: dict in, its
  sequence output out."""

  def __init__(self, encoder):
    super().__init__(name="sequence_output")
    self.encoder = encoder

  def __call__(self, inputs, training=False):
    return self.encoder(inputs, training=training)["sequence_output"]


def run_encoder(run_dir: str, precision: str):
  """(the run's encoder as the `precision` export builds it, the run)."""
  run = registry.load_run(run_dir)
  best = tf.train.latest_checkpoint(os.path.join(run_dir, "best_ckpt"))
  run = registry.Run(run.params, run.experiment,
                     checkpoint_path=best or run_dir)
  with export_precision.scope("float32" if precision == "int8" else
                              precision):
    module = classify_module.ClassifyModule.from_run(
        run, classify_module.ClassifyModule.Params())
    encoder = module.model.checkpoint_items["encoder"]
    encoder(random_ids(1, 8, 2000, 0))  # Keras builds layers under the policy
  return encoder, run


def tiny_encoder(precision: str, weights=None):
  """A 1-layer, hidden-32 encoder of seeded random weights (or `weights`)."""
  with export_precision.scope("float32" if precision == "int8" else
                              precision):
    tf_keras.utils.set_random_seed(3)
    enc = networks.BertEncoderV2(vocab_size=2000, hidden_size=32,
                                 num_layers=1, num_attention_heads=2,
                                 inner_dim=64, max_sequence_length=512)
    attention_layout.use_matmul_attention(enc)
    enc(random_ids(1, 8, 2000, 0))  # built under the policy
  if weights is not None:
    enc.set_weights(weights)
  return enc


def random_ids(batch: int, seq: int, vocab: int, seed: int):
  rng = np.random.default_rng(seed)
  return {"input_word_ids": tf.constant(rng.integers(1000, vocab,
                                                     (batch, seq)), tf.int32),
          "input_mask": tf.ones((batch, seq), tf.int32),
          "input_type_ids": tf.zeros((batch, seq), tf.int32)}


def served(model):
  spec = [tf.TensorSpec([None, None], tf.int32, name=k)
          for k in quantization.INPUTS]
  return tf.function(
      lambda a, b, c: tf.cast(model(dict(zip(quantization.INPUTS, (a, b, c))),
                                    training=False), tf.float32),
      input_signature=spec)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--run_dir", default=None,
                  help="a classification/relation run (params.yaml, "
                  "best_ckpt/ or a checkpoint); none: a tiny random encoder")
  ap.add_argument("--shapes", default=SHAPES, help="batch x length, ...")
  ap.add_argument("--rounds", type=int, default=7)
  ap.add_argument("--calls", type=int, default=3, help="calls per round")
  ap.add_argument("--calibration_examples", type=int,
                  default=quantization.CALIBRATION_EXAMPLES)
  args = parse_args(ap, argv, smoke=dict(shapes="1x16,4x24", rounds=2,
                                         calls=1, calibration_examples=16))
  try:
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    threads = "1 intra-op, 1 inter-op"
  except RuntimeError:  # TF already running (the smoke test's process)
    threads = f"{tf.config.threading.get_intra_op_parallelism_threads()} " \
              "intra-op (TF was already initialized)"
  cpu = cpu_features.read()
  print(cpu.describe(), f"| {threads} | load {load_avg()}", flush=True)
  precisions = [FLOAT, "int8"]
  if cpu.native_bf16 and not cpu.isa_cap:
    precisions.insert(1, "bfloat16")
  if args.run_dir:
    encoders = {p: run_encoder(args.run_dir, p)[0] for p in precisions}
    run = run_encoder(args.run_dir, FLOAT)[1]
    vocab = run.params.task.model.encoder.bert_v2.vocab_size
    batches = quantization.calibration_batches(
        quantization.training_files(run.params),
        run.params.task.train_data.seq_length, args.calibration_examples)
    what = f"the encoder of {args.run_dir}"
  else:
    base = tiny_encoder(FLOAT)
    encoders = {p: tiny_encoder(p, base.get_weights()) for p in precisions}
    vocab = 2000
    batches = [{k: v.numpy() for k, v in random_ids(4, 16, vocab, s).items()}
               for s in range(max(1, args.calibration_examples // 4))]
    what = "a 1-layer, hidden-32 encoder of random weights"
  projected = SequenceOutput(run_encoder(args.run_dir, FLOAT)[0]
                             if args.run_dir else tiny_encoder(
                                 FLOAT, base.get_weights()))
  matmul_projections.use_matmul_projections(projected)
  t0 = time.time()
  int8 = quantization.quantize_model(SequenceOutput(encoders["int8"]),
                                     batches, unfused=True)
  quantize_s = time.time() - t0
  ffn_float = quantization.quantize_model(
      SequenceOutput(run_encoder(args.run_dir, "int8")[0] if args.run_dir
                     else tiny_encoder("int8", base.get_weights())),
      batches, config={"float_ops": [quantization.FFN_OUTPUT]},
      split_outliers=False)
  sides = {FLOAT: served(SequenceOutput(encoders[FLOAT])),
           "float32 + MatMul projections": served(projected)}
  if "bfloat16" in encoders:
    sides["bfloat16"] = served(SequenceOutput(encoders["bfloat16"]))
  sides[UNFUSED] = served(int8["unfused_model"])
  sides[FFN_FLOAT] = served(ffn_float["model"])
  sides["int8"] = served(int8["model"])
  int8_ops = int8_epilogues.int8_matmuls(int8["ops_after"])
  print(f"{what}; int8: {int8_ops} int8 MatMuls (Einsum before "
        f"{int8['ops_before'].get('Einsum', 0)}, after "
        f"{int8['ops_after'].get('Einsum', 0)}; feed-forward outlier "
        f"channels computed apart {int8['ffn_outliers']}), quantized in "
        f"{quantize_s:.0f} s on {sum(len(b['input_mask']) for b in batches)}"
        " training windows", flush=True)
  rows, diffs = [], {}
  for s, shape in enumerate(args.shapes.split(",")):
    batch, seq = (int(x) for x in shape.split("x"))
    inputs = random_ids(batch, seq, vocab, 1 + s)
    args_ = [inputs[k] for k in quantization.INPUTS]
    outs = {name: fn(*args_).numpy() for name, fn in sides.items()}
    if not diffs:
      scale = float(np.abs(outs[FLOAT]).max())
      diffs = {name: float(np.abs(out - outs[FLOAT]).max())
               for name, out in outs.items()}
      print(f"largest |side - float32| of the sequence output at {shape} "
            f"(float32's largest |value| {scale:.2f}): " + ", ".join(
                f"{n} {d:.3g}" for n, d in diffs.items()))
    wall = {name: [] for name in sides}
    cpu_ms = {name: [] for name in sides}
    names = list(sides)
    for r in range(args.rounds):
      for name in names[r % len(names):] + names[:r % len(names)]:
        t, c = time.perf_counter(), time.process_time()
        for _ in range(args.calls):
          sides[name](*args_).numpy()
        wall[name].append((time.perf_counter() - t) / args.calls * 1e3)
        cpu_ms[name].append((time.process_time() - c) / args.calls * 1e3)
    base_wall = statistics.median(wall[FLOAT])
    # int8 against the same graph without its fused epilogues, paired by
    # round (CPU time).
    fused_gain = statistics.median(u / f for u, f in zip(cpu_ms[UNFUSED],
                                                          cpu_ms["int8"]))
    ffn_gain = statistics.median(u / f for u, f in zip(cpu_ms[FFN_FLOAT],
                                                        cpu_ms["int8"]))
    print(f"\n[{batch},{seq}] ({args.rounds} rounds x {args.calls} calls, "
          f"load {load_avg()})")
    print("| side | wall ms / call (median) | CPU ms / call | speed vs "
          "float32 (wall) |")
    print("|---|---:|---:|---:|")
    for name in sides:
      w = statistics.median(wall[name])
      c = statistics.median(cpu_ms[name])
      print(f"| {name} | {w:.1f} | {c:.1f} | {base_wall / w:.2f}x |")
      rows.append(dict(shape=shape, side=name, wall_ms=w, cpu_ms=c,
                       speed_vs_float32=base_wall / w,
                       max_abs_diff_vs_float32=diffs[name]))
    rows[-1]["cpu_vs_unfused_paired"] = fused_gain
    rows[-1]["cpu_vs_ffn_float_paired"] = ffn_gain
    print(f"int8 vs {UNFUSED}: {fused_gain:.3f}x CPU (paired by round)")
    print(f"int8 vs {FFN_FLOAT}: {ffn_gain:.3f}x CPU (paired by round)")
  report_rows(rows, positive=["wall_ms", "speed_vs_float32"],
              sides=list(sides), int8_matmuls=int8_ops,
              einsum_after=int8["ops_after"].get("Einsum", 0),
              ffn_outliers=int8["ffn_outliers"],
              cpu=cpu.describe(), load=load_avg())


if __name__ == "__main__":
  main()
