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

r"""Serving's encoder call with and without XLA (issue 37 item 2).

The text-in signatures hold tf.text ops, which XLA cannot compile; the part
the graph allows is the encoder on ids padded to a fixed length, what
`encode_ids` runs. This times, in one process and interleaved round by
round, the pretrainer's encoder (random weights; --size demo or base)
called through `tf.function` with and without `jit_compile=True`, on ids of
real text (the shared corpus) padded to 128, at batch 1 and 16, and checks
that both give the same sequence output (max abs difference printed).
Reported: median wall ms per call and process CPU ms per call, and the ratio.

  .venv/bin/python -m benchmarks.bench_serving_xla --size base --rounds 5
  .venv/bin/python -m benchmarks.bench_serving_xla --smoke   # seconds
"""

import argparse
import statistics
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.data import tokenization
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from official_spanbert.utils import cpu_features
from benchmarks.common import (  # pylint: disable=g-multiple-import
    SMOKE_CORPUS, SMOKE_VOCAB, data_path, load_avg, parse_args, report_rows)

SEQ = 128


def encoder(size: str):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, yaml_files.path(f"models/{size}.yaml"), is_strict=True)
  return pretraining_module.build_pretrainer(
      serving_module.Run(params)).encoder_network


def real_ids(batch: int, vocab_file: str, corpus: str) -> dict:
  """[batch, SEQ] ids of consecutive corpus lines (cut / padded to SEQ)."""
  tokenizer = tokenization.WordpieceTokenizer(vocab_file)
  with open(corpus, encoding="utf-8") as f:
    lines = [line.strip() for line in f if len(line.split()) > 8][:batch]
  ids = tokenizer.tokenize(tf.constant(lines))[0][:, :SEQ - 2]
  vocab = tokenizer.vocab
  n = tf.shape(ids.row_lengths())[0]
  ids = tf.concat([tf.fill([n, 1], tf.constant(vocab.cls_id, tf.int64)), ids,
                   tf.fill([n, 1], tf.constant(vocab.sep_id, tf.int64))], 1)
  word = tf.cast(ids.to_tensor(vocab.pad_id, shape=[None, SEQ]), tf.int32)
  return {"input_word_ids": word,
          "input_mask": tf.cast(tf.not_equal(word, vocab.pad_id), tf.int32),
          "input_type_ids": tf.zeros_like(word)}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--size", default="base", choices=["tiny", "demo", "base"])
  ap.add_argument("--rounds", type=int, default=5)
  ap.add_argument("--calls", type=int, default=10, help="calls per round")
  ap.add_argument("--corpus", default=data_path("corpus", "austen.txt"))
  ap.add_argument("--vocab",
                  default=data_path("vocab", "bert-base-cased-vocab.txt"))
  args = parse_args(ap, argv, smoke=dict(size="tiny", rounds=1, calls=1,
                                         corpus=SMOKE_CORPUS,
                                         vocab=SMOKE_VOCAB))
  print(cpu_features.read().describe(), f"| load {load_avg()}", flush=True)
  net = encoder(args.size)
  plain = tf.function(lambda x: net(x, training=False)["sequence_output"])
  xla = tf.function(lambda x: net(x, training=False)["sequence_output"],
                    jit_compile=True)
  variants = {"tf.function": plain, "tf.function + XLA": xla}
  rows = []
  for batch in (1, 16):
    inputs = real_ids(batch, args.vocab, args.corpus)
    outs = {name: fn(inputs).numpy() for name, fn in variants.items()}
    diff = float(np.max(np.abs(outs["tf.function"] -
                               outs["tf.function + XLA"])))
    wall = {name: [] for name in variants}
    cpu = {name: [] for name in variants}
    for r in range(args.rounds):
      order = list(variants) if r % 2 == 0 else list(variants)[::-1]
      for name in order:
        t, c = time.perf_counter(), time.process_time()
        for _ in range(args.calls):
          variants[name](inputs).numpy()
        wall[name].append((time.perf_counter() - t) / args.calls * 1e3)
        cpu[name].append((time.process_time() - c) / args.calls * 1e3)
    base_wall = statistics.median(wall["tf.function"])
    print(f"\n{args.size}, batch {batch} x {SEQ} (max abs diff XLA vs plain "
          f"{diff:.2e}; load {load_avg()})")
    print("| variant | wall ms / call | CPU ms / call | speed vs plain (wall) |")
    print("|---|---:|---:|---:|")
    for name in variants:
      w = statistics.median(wall[name])
      print(f"| {name} | {w:.1f} | {statistics.median(cpu[name]):.1f} | "
            f"{base_wall / w:.2f} |")
      rows.append(dict(batch=batch, variant=name, wall_ms=w,
                       cpu_ms=statistics.median(cpu[name]),
                       speed_vs_plain=base_wall / w,
                       max_abs_diff_vs_plain=diff))
  report_rows(rows, positive=["wall_ms", "cpu_ms", "speed_vs_plain"])


if __name__ == "__main__":
  main()
