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

r"""Throughput of the pretraining-records tool (tokenize + pack + write).

Runs `create_pretraining_records` (mode `single`, the SpanBERT layout) on one
corpus file N times and reports the median MB/s (input bytes) and tokens/s
(wordpieces written), as measured by the tool itself (`Stats.seconds` covers
reading, tf.text WordPiece tokenization, greedy packing, serialization and
writing; not building the tokenizer). Optionally also runs the whole corpus
folder once and prints its stats, to show that it finishes at the chosen
max_seq_length.

Output goes to a temporary directory that is removed afterwards.

  .venv/bin/python -m benchmarks.bench_pretraining_data            # defaults
  .venv/bin/python -m benchmarks.bench_pretraining_data --runs 5 --full_corpus
  .venv/bin/python -m benchmarks.bench_pretraining_data --smoke   # seconds
"""

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)

from official_spanbert.data.pretraining.records import pretraining_records as pr
from benchmarks.common import (  # pylint: disable=g-multiple-import
    DATA, SMOKE_CORPUS, SMOKE_VOCAB, machine, parse_args, report_rows)



_WAITED = [0.0]


def wait_for_load(max_load: float, max_wait: float):
  """Sleeps while the 1-minute load is above max_load, at most max_wait
  seconds over the whole run (other jobs share the machine)."""
  while os.getloadavg()[0] > max_load and _WAITED[0] < max_wait:
    print(f"  load {os.getloadavg()[0]:.2f} > {max_load}; waiting",
          flush=True)
    time.sleep(15)
    _WAITED[0] += 15


def run_once(inputs, vocab, out_dir, seq, shards, tag):
  prefix = os.path.join(out_dir, tag)
  t0, c0 = time.perf_counter(), time.process_time()
  stats = pr.create_pretraining_records(inputs, vocab, prefix,
                                        max_seq_length=seq,
                                        num_shards=shards, progress=False)
  wall, cpu = time.perf_counter() - t0, time.process_time() - c0
  size = sum(os.path.getsize(p) for p in glob.glob(prefix + "-*.tfrecord"))
  return stats, wall, size, cpu


# --smoke: add_run_args' arguments on the committed fixture, one run.
SMOKE_RUN = dict(input=SMOKE_CORPUS, vocab=SMOKE_VOCAB, max_seq_length=128,
                 runs=1)


def add_run_args(ap: argparse.ArgumentParser, corpus_file: str,
                 num_shards: int, runs: int):
  """--input (a file of the shared corpus), --vocab (the cased vocab),
  --max_seq_length, --num_shards and --runs (SMOKE_RUN for --smoke)."""
  ap.add_argument("--input", default=os.path.join(DATA, "corpus",
                                                  corpus_file))
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--max_seq_length", type=int, default=512)
  ap.add_argument("--num_shards", type=int, default=num_shards)
  ap.add_argument("--runs", type=int, default=runs)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  add_run_args(ap, "linux-doc.txt", num_shards=1, runs=3)
  ap.add_argument("--full_corpus", action=argparse.BooleanOptionalAction,
                  default=True,
                  help="also run the whole corpus folder once")
  ap.add_argument("--corpus_glob",
                  default=os.path.join(DATA, "corpus", "*.txt"))
  ap.add_argument("--max_load", type=float, default=1.5,
                  help="wait before each run until the 1-min load is below")
  ap.add_argument("--max_wait", type=float, default=300,
                  help="total seconds the run may spend waiting for the load")
  args = parse_args(ap, argv, smoke=dict(
      SMOKE_RUN, corpus_glob=SMOKE_CORPUS, max_wait=0))
  for path in (args.input, args.vocab):
    if not os.path.exists(path):
      sys.exit(f"missing {path} (set SPANBERT_DATA_DIR or place the shared "
               "data at ../shared/data)")

  print(f"machine: {machine()}")
  print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
  rows = []
  with tempfile.TemporaryDirectory(prefix="bench_records_") as tmp:
    for r in range(args.runs):
      wait_for_load(args.max_load, args.max_wait)
      stats, wall, size, cpu = run_once([args.input], args.vocab, tmp,
                                        args.max_seq_length, args.num_shards,
                                        f"run{r}")
      rows.append((stats, wall, size, os.getloadavg()[0], cpu))
      print(f"  run {r + 1}/{args.runs}: {stats.seconds:.2f} s, "
            f"{stats.mb_per_second:.3f} MB/s, "
            f"{stats.tokens_per_second:,.0f} tokens/s, CPU {cpu:.1f} s "
            f"(load {rows[-1][3]:.2f})", flush=True)
      for p in glob.glob(os.path.join(tmp, f"run{r}*")):
        os.remove(p)

    mbs = [s.mb_per_second for s, *_ in rows]
    tps = [s.tokens_per_second for s, *_ in rows]
    secs = [s.seconds for s, *_ in rows]
    s0 = rows[0][0]
    name = os.path.basename(args.input)
    print()
    print(f"### {name} at max_seq_length={args.max_seq_length} "
          f"({s0.bytes / 1e6:.1f} MB, {args.runs} runs)")
    print()
    print("| metric | median | min | max |")
    print("|---|---:|---:|---:|")
    print(f"| seconds (tokenize+pack+write) | {statistics.median(secs):.2f} "
          f"| {min(secs):.2f} | {max(secs):.2f} |")
    print(f"| MB/s (input bytes) | {statistics.median(mbs):.3f} | "
          f"{min(mbs):.3f} | {max(mbs):.3f} |")
    print(f"| tokens/s (wordpieces written) | {statistics.median(tps):,.0f} "
          f"| {min(tps):,.0f} | {max(tps):,.0f} |")
    cpus = [r[4] for r in rows]
    cmb = [s0.bytes / 1e6 / c for c in cpus]
    print(f"| CPU seconds (process, all threads; incl. tokenizer setup) | "
          f"{statistics.median(cpus):.2f} | {min(cpus):.2f} | "
          f"{max(cpus):.2f} |")
    print(f"| MB per CPU-second | {statistics.median(cmb):.3f} | "
          f"{min(cmb):.3f} | {max(cmb):.3f} |")
    print()
    print(f"documents {s0.documents:,}, lines {s0.lines:,}, blocks "
          f"{s0.blocks:,}, tokens {s0.tokens:,}, split_lines "
          f"{s0.split_lines:,}, padding_ratio {s0.padding_ratio:.4f}, "
          f"mean_block_tokens {s0.mean_block_tokens}, record bytes "
          f"{rows[0][2] / 1e6:.1f} MB")
    table = [dict(run=i, seconds=st.seconds, mb_per_second=st.mb_per_second,
                  tokens_per_second=st.tokens_per_second, cpu_seconds=c,
                  blocks=st.blocks, tokens=st.tokens, documents=st.documents)
             for i, (st, _, _, _, c) in enumerate(rows)]

    if args.full_corpus:
      files = sorted(glob.glob(args.corpus_glob))
      wait_for_load(args.max_load, args.max_wait)
      print()
      print(f"### whole corpus ({len(files)} files: "
            f"{', '.join(os.path.basename(f) for f in files)}) at "
            f"max_seq_length={args.max_seq_length}, 1 run")
      stats, wall, size, cpu = run_once(files, args.vocab, tmp,
                                   args.max_seq_length, args.num_shards,
                                   "full")
      print()
      print("| files | MB | documents | empty docs | lines | split_lines | "
            "blocks | tokens | mean block | padding_ratio | seconds | MB/s "
            "| tokens/s |")
      print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
            "|---:|")
      print(f"| {stats.files} | {stats.bytes / 1e6:.1f} | "
            f"{stats.documents:,} | {stats.empty_documents:,} | "
            f"{stats.lines:,} | {stats.split_lines:,} | {stats.blocks:,} | "
            f"{stats.tokens:,} | {stats.mean_block_tokens} | "
            f"{stats.padding_ratio:.4f} | {stats.seconds:.1f} | "
            f"{stats.mb_per_second:.3f} | {stats.tokens_per_second:,.0f} |")
      print(f"(wall incl. tokenizer setup {wall:.1f} s, CPU {cpu:.1f} s; "
            f"records "
            f"{size / 1e6:.1f} MB; load at end {os.getloadavg()[0]:.2f})")
  print(f"\nwaited {_WAITED[0]:.0f} s in all for the load to drop")
  report_rows(table, positive=["seconds", "mb_per_second",
                               "tokens_per_second", "cpu_seconds", "blocks",
                               "tokens", "documents"])


if __name__ == "__main__":
  main()
