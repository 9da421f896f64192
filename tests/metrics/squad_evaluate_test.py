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

"""SQuAD v2.0 scoring of incomplete prediction files (issue 11, fault 9).

The official v2.0 script skips questions without a prediction, so a file
that answers 1 question in 10 scores exact 100.0; and a na_probs file that
lacks predicted ids raised a bare KeyError. Here a missing prediction scores
0 with a warning giving the count (as v1.1 does), and a missing na_prob is a
ValueError that says what is missing.
"""

from absl import logging
import pytest

from official_spanbert.metrics import squad_evaluate


def _dataset(n):
  qas = [{"id": f"q{i}", "question": "q?",
          "answers": [{"text": "Paris", "answer_start": 0}]} for i in range(n)]
  qas.append({"id": "null", "question": "q?", "answers": []})
  return [{"paragraphs": [{"context": "Paris", "qas": qas}]}]


def test_v2_missing_predictions_score_zero_with_a_warning(monkeypatch):
  warnings = []
  monkeypatch.setattr(logging, "warning",
                      lambda msg, *args: warnings.append(msg % args))
  data = _dataset(9)  # 9 answerable + 1 no-answer question
  got = squad_evaluate.evaluate_v2(data, {"q0": "Paris"})
  # Before: exact 100.0, total 1, no warning.
  assert got["total"] == 10
  assert got["exact"] == pytest.approx(10.0)
  assert got["f1"] == pytest.approx(10.0)
  assert got["HasAns_total"] == 9 and got["NoAns_total"] == 1
  # The unanswered no-answer question is wrong too, not a free "".
  assert got["NoAns_exact"] == 0.0
  assert warnings == ["9 of 10 questions have no prediction and score 0"]


def test_v2_best_threshold_gives_no_credit_to_missing_questions():
  data = _dataset(3)
  preds = {"q0": "Paris", "q1": "London"}
  got = squad_evaluate.evaluate_v2(data, preds, {"q0": -1.0, "q1": 5.0})
  # Answered: q0 right (+1); q1 wrong: predicting null there gains nothing.
  # q2 and "null" are missing and score 0 at every threshold.
  assert got["best_exact"] == pytest.approx(25.0)
  assert got["exact"] == pytest.approx(25.0)


def test_v2_complete_predictions_unchanged():
  data = _dataset(2)
  preds = {"q0": "Paris", "q1": "Rome", "null": ""}
  got = squad_evaluate.evaluate_v2(data, preds, {"q0": 0.0, "q1": 1.0,
                                                  "null": 2.0})
  assert got["exact"] == pytest.approx(200 / 3)
  assert got["best_exact"] == pytest.approx(200 / 3)


def test_v2_na_probs_missing_ids_is_a_clear_error():
  data = _dataset(3)
  preds = {"q0": "Paris", "q1": "Paris", "q2": "x"}
  with pytest.raises(ValueError, match=r"no score for 2 of the 3 predicted "
                     r"questions \(e\.g\. q1, q2\)"):
    squad_evaluate.evaluate_v2(data, preds, {"q0": 0.5})
