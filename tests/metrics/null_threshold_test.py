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

"""null_threshold.json as the SQuAD 2.0 export reads it (issue 55, 5 and 7).

A threshold of NaN switched every answer off without a word; `{}`, an
empty file or `"abc"` gave a KeyError / JSONDecodeError naming no file; and
the export of `best_ckpt` took the last evaluation's threshold, whatever its
step.
"""

import json
import os
import re

import pytest
import tensorflow as tf

from official.core import exp_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.metrics import null_threshold
from official_spanbert.serving import qa_module
from official_spanbert.serving import serving_module


def _write(d, text):
  path = os.path.join(d, null_threshold.FILE)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return path


@pytest.mark.parametrize("text,message", [
    ('{"best_f1_thresh": NaN, "best_exact_thresh": NaN, "step": 30}',
     r": the threshold of step 30 is nan, not a finite number \(the "
     r"evaluation's scores were not finite\); evaluate the exported "
     r"checkpoint \(spanbert-train --mode=eval\) or pass "
     r"--null_score_diff_threshold$"),
    ('{"best_f1_thresh": Infinity}', r": best_f1_thresh is inf, not a "),
    ("{}", r" has no best_f1_thresh \(it holds '\{\}'\); evaluate "),
    ("", r" is not JSON \(Expecting value: line 1 column 1 \(char 0\)\); "),
    ('"abc"', r" has no best_f1_thresh \(it holds '\"abc\"'\)"),
    ("abc", r" is not JSON \("),
    ('{"best_f1_thresh": "abc"}', r": best_f1_thresh must be a number, got "
     r"'abc'; "),
], ids=["nan", "inf", "empty_object", "empty_file", "string", "not_json",
        "string_value"])
def test_an_unusable_file_is_one_error_naming_it(tmp_path, text, message):
  path = _write(tmp_path, text)
  with pytest.raises(null_threshold.ThresholdFileError) as e:
    null_threshold.for_step(path, 30)
  assert str(e.value).startswith(path), str(e.value)
  assert "\n" not in str(e.value)
  assert re.search(message, str(e.value)), str(e.value)


def test_each_evaluation_keeps_the_thresholds_of_earlier_steps(tmp_path):
  for step, thresh in ((10, -1.0), (20, -2.0), (30, -3.0)):
    null_threshold.record(str(tmp_path), {"best_f1_thresh": thresh,
                                          "best_exact_thresh": 0.5}, step)
  path = str(tmp_path / null_threshold.FILE)
  with open(path, encoding="utf-8") as f:
    d = json.load(f)
  assert d["best_f1_thresh"] == -3.0 and d["step"] == 30
  assert d["by_step"] == {"10": -1.0, "20": -2.0, "30": -3.0}
  assert null_threshold.for_step(path, 20) == -2.0
  assert null_threshold.for_step(path, 30) == -3.0
  with pytest.raises(null_threshold.ThresholdFileError, match=(
      r"holds the thresholds of the evaluations at step\(s\) 10, 20, 30, "
      r"not at the exported checkpoint's step 25; evaluate")):
    null_threshold.for_step(path, 25)


def test_a_file_of_an_earlier_format_is_read(tmp_path):
  """Files written before "by_step": the step of the one evaluation."""
  path = _write(tmp_path, json.dumps(
      {"best_f1_thresh": -1.5, "best_exact_thresh": -1.0, "step": 30}))
  assert null_threshold.for_step(path, 30) == -1.5
  assert null_threshold.for_step(path, None) == -1.5
  with pytest.raises(null_threshold.ThresholdFileError, match="step 20"):
    null_threshold.for_step(path, 20)


def _params(predictions_dir):
  params = exp_factory.get_exp_config("spanbert/squad_v2")
  params.task.predictions_dir = str(predictions_dir)
  return params


def _checkpoint(d, step):
  prefix = os.path.join(d, f"ckpt-{step}")
  tf.train.Checkpoint(global_step=tf.Variable(step, dtype=tf.int64)).write(
      prefix)
  return prefix


def test_the_export_takes_the_threshold_of_the_checkpoints_step(tmp_path):
  """The documented `--checkpoint_path=<run>/best_ckpt` export took the last
  evaluation's threshold (step 30) for the best checkpoint (step 20)."""
  for step, thresh in ((20, -2.0), (30, -3.0)):
    null_threshold.record(str(tmp_path), {"best_f1_thresh": thresh,
                                          "best_exact_thresh": 0.0}, step)
  params = _params(tmp_path)
  best = _checkpoint(str(tmp_path), 20)
  run = lambda checkpoint: serving_module.Run(  # pylint: disable=unnecessary-lambda-assignment
      params, checkpoint_path=checkpoint)
  assert qa_module.null_threshold(run(best)) == -2.0
  assert qa_module.null_threshold(run(_checkpoint(str(tmp_path), 30))) == -3.0
  with pytest.raises(ValueError, match=r"step 40; evaluate the exported"):
    qa_module.null_threshold(run(_checkpoint(str(tmp_path), 40)))
  assert qa_module.null_threshold(run(best), -0.5) == -0.5
  with pytest.raises(ValueError, match=(
      r"^--null_score_diff_threshold must be a finite number, got nan$")):
    qa_module.null_threshold(run(best), float("nan"))


def test_a_nan_threshold_is_refused_at_export(tmp_path):
  _write(tmp_path, '{"best_f1_thresh": NaN, "best_exact_thresh": NaN, '
         '"step": 20}')
  with pytest.raises(ValueError, match=r"null_threshold\.json: the threshold "
                     r"of step 20 is nan, not a finite number"):
    qa_module.null_threshold(serving_module.Run(
        _params(tmp_path), checkpoint_path=_checkpoint(str(tmp_path), 20)))
