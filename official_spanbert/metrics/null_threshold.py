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

"""SQuAD 2.0's null_threshold.json: the best-F1 threshold of each evaluation.

Every evaluation writes its thresholds and step, and keeps those of earlier
steps under "by_step", so the export of `best_ckpt` takes the threshold of
its own step, not the last evaluation's. A file that is not JSON, lacks a
number or holds NaN is refused naming it.

Example:
  record("/runs/squad2/predictions", {"best_f1_thresh": -1.5,
                                      "best_exact_thresh": -1.2}, step=300)
  for_step("/runs/squad2/predictions/null_threshold.json", 300)  # -1.5
"""

import json
import math
import os
from typing import Dict, Mapping, Optional

from absl import logging
import tensorflow as tf

from official_spanbert.utils import atomic_io

FILE = "null_threshold.json"


class ThresholdFileError(ValueError):
  """A null_threshold.json that is unusable (named in the message)."""


_WHAT_TO_DO = ("evaluate the exported checkpoint (spanbert-train --mode=eval) "
               "or pass --null_score_diff_threshold")


def _number(path: str, value, what: str) -> float:
  if isinstance(value, bool) or not isinstance(value, (int, float)):
    raise ThresholdFileError(
        f"{path}: {what} must be a number, got {value!r}; {_WHAT_TO_DO}")
  if not math.isfinite(value):
    raise ThresholdFileError(
        f"{path}: {what} is {value}, not a finite number (the evaluation's "
        f"scores were not finite); {_WHAT_TO_DO}")
  return float(value)


def read(path: str) -> Dict[Optional[int], float]:
  """{step (None if unknown): best-F1 threshold} of a null_threshold.json.

  Raises:
    ThresholdFileError: not a JSON object with a best_f1_thresh.
  """
  with tf.io.gfile.GFile(path) as f:
    text = f.read()
  try:
    d = json.loads(text)
  except ValueError as e:
    raise ThresholdFileError(
        f"{path} is not JSON ({e}); {_WHAT_TO_DO}") from None
  if not isinstance(d, dict) or "best_f1_thresh" not in d:
    raise ThresholdFileError(
        f"{path} has no best_f1_thresh (it holds {text.strip()[:40]!r}); "
        f"{_WHAT_TO_DO}")
  by_step = d.get("by_step")
  out = {int(s): v for s, v in (
      by_step.items() if isinstance(by_step, dict) else ()) if
         str(s).isdigit()}
  step = d.get("step")
  out[step if isinstance(step, int) and not isinstance(step, bool)
      else None] = d["best_f1_thresh"]
  return out


def for_step(path: str, step: Optional[int]) -> float:
  """The best-F1 threshold of the evaluation at `step` (the checkpoint to
  export); with `step` None (unknown) or a file of unknown steps, the last
  evaluation's, with a warning.

  Raises:
    ThresholdFileError: unusable (not JSON, not a finite number), or it has
      no evaluation at `step`.
  """
  thresholds = read(path)
  if step in thresholds:
    return _number(path, thresholds[step], f"the threshold of step {step}")
  known = sorted(s for s in thresholds if s is not None)
  if step is None or not known:
    last = _number(path, thresholds[max(known)] if known else
                   thresholds[None], "best_f1_thresh")
    logging.warning("Using the null-score threshold %s of %s without "
                    "knowing that it is of the exported checkpoint's step",
                    last, path)
    return last
  raise ThresholdFileError(
      f"{path} holds the thresholds of the evaluations at step(s) "
      f"{', '.join(map(str, known))}, not at the exported checkpoint's step "
      f"{step}; {_WHAT_TO_DO}")


def record(out_dir: str, metrics: Mapping[str, float],
           step: Optional[int]) -> None:
  """Writes <out_dir>/null_threshold.json for the evaluation at `step`,
  keeping earlier steps' best-F1 thresholds (an unusable earlier file is
  replaced, with a warning)."""
  path = os.path.join(out_dir, FILE)
  by_step = {}
  if tf.io.gfile.exists(path):
    try:
      by_step = {str(s): v for s, v in read(path).items() if s is not None}
    except ThresholdFileError as e:
      logging.warning("Replacing an unusable file: %s", e)
  if step is not None:
    by_step[str(int(step))] = metrics["best_f1_thresh"]
  tf.io.gfile.makedirs(out_dir)
  with atomic_io.writing(path) as tmp:
    with tf.io.gfile.GFile(tmp, "w") as f:
      json.dump({"best_f1_thresh": metrics["best_f1_thresh"],
                 "best_exact_thresh": metrics["best_exact_thresh"],
                 "step": None if step is None else int(step),
                 "by_step": by_step}, f, indent=1)
