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

r"""The pretraining step with `task.model.encoder_layout` keras vs matmul.

Issue 58 item 1. Builds the `spanbert/pretraining` model of each `--encoders`
yaml twice (encoder_layout keras: Model Garden's Einsum layers; matmul:
MatMul + BiasAdd projections and batched-matmul attention), under
`--precision`, and times their train steps on the same span-masked batch of
a real corpus's records, rounds alternating the order: median CPU-s a step
and the paired keras / matmul ratio (above 1: matmul is faster). The two
compute the same math (tests/modeling/builder_test.py compares outputs and
gradients); their weights and dropout draws differ here.

  .venv/bin/python -m benchmarks.bench_encoder_layout --encoders base \
      --seqs 128 512 --precision bfloat16 --threads 1
  .venv/bin/python -m benchmarks.bench_encoder_layout --smoke   # seconds
"""

import argparse
import os
import statistics
import tempfile

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf

from benchmarks import bench_pretraining_step as bps
from benchmarks.common import SMOKE_CORPUS, SMOKE_VOCAB, data_path
from benchmarks.common import load_avg, parse_args, report_rows
from official_spanbert.configs import yaml_files
from official_spanbert.utils import cpu_features

LAYOUTS = ("keras", "matmul")
BATCH = {128: 16, 512: 4}


def paired(encoder, seq, batch, precision, rounds, steps, records, vocab,
           num_layers):
  """One row: CPU-s a step of both layouts on one batch."""
  model_yaml = yaml_files.path(f"models/{encoder}.yaml")
  sides = {k: bps.Variant("spanbert/pretraining", model_yaml, num_layers,
                          model=dict(encoder_layout=k), precision=precision)
           for k in LAYOUTS}
  feed = bps.make_batch(records, vocab, seq, batch)
  for v in sides.values():
    v.run(feed, 1)  # traced and warmed up
  cpu = {k: [] for k in LAYOUTS}
  for r in range(rounds):
    for k in (LAYOUTS if r % 2 == 0 else LAYOUTS[::-1]):
      cpu[k].append(sides[k].run(feed, steps)[1] / steps)
    print(f"[{encoder} {seq} x {batch} {precision}] round {r + 1}/{rounds}: "
          + ", ".join(f"{k} {cpu[k][-1]:.3f}" for k in LAYOUTS)
          + f" CPU-s a step (load {load_avg()})", flush=True)
  ratios = [a / b for a, b in zip(cpu["keras"], cpu["matmul"])]
  return dict(encoder=encoder, seq=seq, batch=batch, precision=precision,
              keras_cpu_s=statistics.median(cpu["keras"]),
              matmul_cpu_s=statistics.median(cpu["matmul"]),
              keras_over_matmul=statistics.median(ratios),
              range=[min(ratios), max(ratios)],
              rounds=rounds, steps=steps)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--encoders", nargs="+", default=["base"])
  ap.add_argument("--num_layers", type=int, default=0,
                  help="override the yaml's layer count (0: keep)")
  ap.add_argument("--seqs", nargs="+", type=int, default=[128, 512])
  ap.add_argument("--precision", default="bfloat16",
                  choices=["float32", "bfloat16"])
  ap.add_argument("--threads", type=int, default=1)
  ap.add_argument("--rounds", type=int, default=4)
  ap.add_argument("--steps", type=int, default=2, help="steps a round")
  ap.add_argument("--corpus", default=data_path("corpus", "linux-doc.txt"))
  ap.add_argument("--vocab", default=data_path(
      "vocab", "bert-base-cased-vocab.txt"))
  args = parse_args(ap, argv, smoke=dict(
      encoders=["tiny"], seqs=[64], rounds=2, steps=1, precision="float32",
      corpus=SMOKE_CORPUS, vocab=SMOKE_VOCAB))
  try:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
  except RuntimeError:  # TF already running (the smoke test's process)
    pass
  cpu = cpu_features.read()
  print(f"processor: {cpu.describe()}; {args.threads} thread(s); load "
        f"{load_avg()}", flush=True)
  rows = []
  with tempfile.TemporaryDirectory() as tmp:
    for seq in args.seqs:
      d = os.path.join(tmp, str(seq))
      os.makedirs(d)
      records = bps.make_records(args.corpus, args.vocab, seq, d,
                                 max_bytes=100_000 * max(1, seq // 128))
      for e in args.encoders:
        rows.append(paired(e, seq, BATCH.get(seq, 8), args.precision,
                           args.rounds, args.steps, records, args.vocab,
                           args.num_layers))
  print("\n| encoder | seq x batch | precision | keras, CPU-s a step | "
        "matmul, CPU-s a step | keras / matmul, paired [min .. max] |")
  print("|---|---|---|---:|---:|---|")
  for r in rows:
    print(f"| {r['encoder']} | {r['seq']} x {r['batch']} | {r['precision']} "
          f"| {r['keras_cpu_s']:.3f} | {r['matmul_cpu_s']:.3f} | "
          f"{r['keras_over_matmul']:.3f} [{r['range'][0]:.3f} .. "
          f"{r['range'][1]:.3f}] |")
  report_rows(rows, positive=["keras_cpu_s", "matmul_cpu_s",
                              "keras_over_matmul"], processor=cpu.describe())


if __name__ == "__main__":
  main()
