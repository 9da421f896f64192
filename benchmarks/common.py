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
"""

import os
import platform
import subprocess

# Whole documents from the start of a corpus file (stdlib only, no TF).
from official_spanbert.data.pretraining.corpus import copy_head as first_bytes  # noqa: F401
from official_spanbert.utils import cpu_features

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("SPANBERT_DATA_DIR",
                      os.path.join(REPO, os.pardir, "shared", "data"))


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

