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

"""What the benchmarks and experiments share: where things are, the machine.

Imports no TensorFlow until machine() is called (the parity scripts' PyTorch
workers import this too).

  REPO, DATA        the repository and the real data ($SPANBERT_DATA_DIR, by
                    default ../shared/data beside the repository)
  machine()         the machine line every script prints
  first_bytes()     whole documents from the start of a corpus file
  parse_args()      a script's arguments, with its --smoke defaults
  report_rows()     the rows a table reports, as one machine-readable line
  SMOKE_CORPUS, SMOKE_VOCAB   what --smoke reads: tests/fixtures/
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys

# Whole documents from the start of a corpus file (stdlib only, no TF).
from official_spanbert.data.pretraining.corpus import copy_head as first_bytes  # noqa: F401
from official_spanbert.utils import cpu_features

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("SPANBERT_DATA_DIR",
                      os.path.join(REPO, os.pardir, "shared", "data"))


# The unit tier's committed inputs (tests/fixtures/README.md): 52 lines (3
# documents) of austen.txt and the 1.6k-entry excerpt of the cased vocab that
# tokenizes them. --smoke runs on these instead of the shared data.
SMOKE_CORPUS = os.path.join(REPO, "tests", "fixtures", "austen_slice.txt")
SMOKE_VOCAB = os.path.join(REPO, "tests", "fixtures", "vocab_excerpt.txt")
SMOKE_HELP = ("smoke run (seconds): the committed tests/fixtures inputs, tiny "
              "models and few iterations through the same code and tables; "
              "flags given beside it still apply "
              "(tests/test_benchmarks_smoke.py runs it)")


def parse_args(ap: argparse.ArgumentParser, argv=None, smoke=None):
  """ap's arguments (argv, default sys.argv) plus --smoke.

  With --smoke, `smoke` ({dest: value}) replaces those defaults; a flag
  given on the command line still wins.
  """
  smoke = smoke or {}
  dests = {a.dest for a in ap._actions}  # pylint: disable=protected-access
  unknown = set(smoke) - dests
  assert not unknown, f"smoke defaults for no argument: {sorted(unknown)}"
  ap.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
  pre = argparse.ArgumentParser(add_help=False)
  pre.add_argument("--smoke", action="store_true")
  if pre.parse_known_args(sys.argv[1:] if argv is None else argv)[0].smoke:
    ap.set_defaults(**smoke)
  return ap.parse_args(argv)


def data_path(*parts: str) -> str:
  """A path inside the real data folder."""
  return os.path.join(DATA, *parts)


def cpu_model() -> str:
  """The CPU's model name from lscpu (platform.processor() without it)."""
  try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True,
                         check=False).stdout
    for line in out.splitlines():
      if line.startswith("Model name:"):
        return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "?"


def load_avg() -> str:
  """The 1/5/15-minute load averages, e.g. "1.42/1.60/1.55"."""
  return "/".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
  """Cores, CPU model, TF and Python versions and the load now."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return (f"{cpu_features.usable_cores()} cores ({cpu_model()}), TF {tf.__version__}, "
          f"Python {platform.python_version()}, load avg at start "
          f"{load_avg()}")



# The line report_rows prints starts so (tests/test_benchmarks_smoke.py
# reads it).
ROWS_PREFIX = "benchmark rows: "


def report_rows(rows, positive=(), **facts) -> dict:
  """Prints the rows a script's table reports as one JSON line.

  tests/test_benchmarks_smoke.py checks every script's line in --smoke mode:
  rows present, no NaN or infinite value, each `positive` field in some
  row and above zero in every row that has it, and the script's own checks
  on its rows and facts (a benchmark that compares two sides: that they
  agree).

  Args:
    rows: the table's rows, each a dict of JSON values.
    positive: names of the row fields that must be above zero (times,
      rates, sizes: a zero is a measurement that did not happen).
    **facts: other values the output states (JSON values).

  Example:
    report_rows([{"batch": 1, "p50_ms": 3.2}], positive=["p50_ms"],
                same_outputs=True)
  """
  report = {"rows": list(rows), "positive": list(positive), **facts}
  print(ROWS_PREFIX + json.dumps(report, default=_plain), flush=True)
  return report


def _plain(value):
  """numpy scalars and arrays as JSON values (NaN stays NaN)."""
  if hasattr(value, "tolist"):
    return value.tolist()
  raise TypeError(f"{type(value).__name__} is not a JSON value")


def finite(value) -> bool:
  """Whether every number in a JSON value is finite."""
  if isinstance(value, dict):
    return all(finite(v) for v in value.values())
  if isinstance(value, (list, tuple)):
    return all(finite(v) for v in value)
  if isinstance(value, float):
    return math.isfinite(value)
  return True
