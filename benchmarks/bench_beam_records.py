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

r"""Records tool: single process vs the Beam DirectRunner, side by side.

Runs `spanbert-create-pretraining-data` (tools/create_pretraining_data.py,
mode single) on corpus files, alternating the single-process path and
`--runner=DirectRunner --direct_num_workers=N` in the multi_processing and
multi_threading modes, and prints per run the wall time of the whole command
(Python and TF start-up, the Beam workers' start-up included), the tool's
own `seconds` and the CPU seconds of the command and its children (user +
sys: less sensitive to other jobs on the machine), then the medians in MB/s
of input. Checks that all wrote the same multiset of blocks. Output goes to
a temporary directory that is removed afterwards.

  .venv/bin/python -m benchmarks.bench_beam_records --runs 2 --workers 2 \
      --input '../shared/data/corpus/*.txt'
  .venv/bin/python -m benchmarks.bench_beam_records --smoke   # seconds
"""

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)

from benchmarks.bench_pretraining_data import SMOKE_RUN, add_run_args
from benchmarks.common import machine, parse_args, report_rows
from official_spanbert.data.pretraining.records import record_format

TOOL = "official_spanbert.tools.create_pretraining_data"
MODES = ["multi_processing", "multi_threading"]


def run_tool(args, prefix):
  """(wall seconds, CPU seconds, stats) of one run of the tool."""
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.time()
  proc = subprocess.run([sys.executable, "-m", TOOL,
                         f"--output_prefix={prefix}",
                         "--noprogress"] + args, capture_output=True,
                        text=True, check=False)
  wall = time.time() - start
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  if proc.returncode:
    # A crash's first lines say which (Python's "Fatal Python error: ..." and
    # the crashing thread); its last list the extension modules loaded.
    err = proc.stderr
    sys.exit(f"{TOOL} exited {proc.returncode}:\n" + (
        err if len(err) <= 6000 else err[:4000] + "\n...\n" + err[-2000:]))
  with open(prefix + ".stats.json") as f:
    return wall, cpu, json.load(f)


def blocks(prefix):
  return record_format.block_multiset(prefix)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  add_run_args(ap, "austen.txt", num_shards=4, runs=3)
  ap.add_argument("--workers", type=int, default=2)
  ap.add_argument("--modes", nargs="+", default=MODES, choices=MODES,
                  help="DirectRunner running modes beside the single process")
  # Smoke: threads only. On the fixture multi_processing x2 took 33.8 s of
  # CPU (each worker process starts TF), multi_threading x2 9.4 s.
  args = parse_args(ap, argv, smoke=dict(SMOKE_RUN, num_shards=2,
                                         modes=["multi_threading"]))
  print(f"machine: {machine()}")
  size = sum(os.path.getsize(f) for f in glob.glob(args.input))
  print(f"input: {args.input} ({size / 1e6:.2f} MB)")
  common = [f"--input_file={args.input}", f"--vocab_file={args.vocab}",
            f"--max_seq_length={args.max_seq_length}",
            f"--num_shards={args.num_shards}"]
  paths = {"single process": []}
  for mode in args.modes:
    paths[f"DirectRunner {mode} x{args.workers}"] = [
        "--runner=DirectRunner", f"--direct_num_workers={args.workers}",
        f"--direct_running_mode={mode}"]
  walls = {k: [] for k in paths}
  with tempfile.TemporaryDirectory() as tmp:
    for r in range(args.runs):
      for name, extra in paths.items():
        prefix = os.path.join(tmp, f"{list(paths).index(name)}-{r}")
        wall, cpu, stats = run_tool(common + extra, prefix)
        walls[name].append((wall, stats["seconds"], cpu))
        print(f"run {r + 1} {name}: wall {wall:.1f} s, tool seconds "
              f"{stats['seconds']}, CPU {cpu:.1f} s, {stats['blocks']} "
              f"blocks, {stats['tokens']} tokens, load "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    want = blocks(os.path.join(tmp, "0-0"))
    same = all(blocks(os.path.join(tmp, f"{i}-0")) == want
               for i in range(1, len(paths)))
  print(f"same multiset of blocks in every output: {same}")
  rows = []
  for name, runs in walls.items():
    wall, tool, cpu = (statistics.median(x) for x in zip(*runs))
    rows.append(dict(path=name, wall_s=wall, tool_s=tool, cpu_s=cpu,
                     blocks=stats["blocks"], tokens=stats["tokens"]))
    print(f"{name}: median wall {wall:.1f} s ({size / 1e6 / wall:.3f} MB/s), "
          f"tool {tool:.1f} s ({size / 1e6 / tool:.3f} MB/s, "
          f"{stats['tokens'] / tool:,.0f} tokens/s), CPU {cpu:.1f} s")
  report_rows(rows, positive=["wall_s", "tool_s", "cpu_s"],
              same_blocks=same)


if __name__ == "__main__":
  main()
