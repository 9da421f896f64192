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

"""metrics/relation_f1: SemEval-2010 Task 8's official score and TACRED's.

The oracle is the reference function of the SemEval data's README (checked
there against the Perl scorer v1.2), copied unchanged; it is compared with
`semeval_macro_f1` on hand-made cases (wrong direction, Other, a type never
predicted) and on noisy predictions over the real test labels.
"""

import json
import random
import re

import pytest

from official_spanbert.metrics import relation_f1
from conftest import data_path


def reference_macro_f1(gold, pred):
  """Official SemEval-2010 Task 8 score, in percent; labels as in these files."""
  base = lambda l: re.sub(r"\(e[12],e[12]\)$", "", l)  # pylint: disable=unnecessary-lambda-assignment
  types = sorted({base(g) for g in gold} - {"Other", "no_relation"})
  f1s = []
  for t in types:
    tp = sum(g == p and base(g) == t for g, p in zip(gold, pred))
    n_pred = sum(base(p) == t for p in pred)
    n_gold = sum(base(g) == t for g in gold)
    prec = tp / n_pred if n_pred else 0.0
    rec = tp / n_gold if n_gold else 0.0
    f1s.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
  return 100 * sum(f1s) / len(f1s)


CE12, CE21 = "Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)"
MT12 = "Message-Topic(e1,e2)"


def test_wrong_direction_is_an_error_in_precision_and_recall():
  gold = [CE12, CE12, MT12, "Other"]
  pred = [CE21, CE12, MT12, "Other"]
  scores = relation_f1.semeval_scores(gold, pred)
  ce = scores["per_type"]["Cause-Effect"]
  # 2 predictions of the type (either direction), 1 right; 2 gold.
  assert (ce["tp"], ce["predicted"], ce["gold"]) == (1, 2, 2)
  assert ce["precision"] == ce["recall"] == ce["f1"] == 0.5
  assert scores["per_type"]["Message-Topic"]["f1"] == 1.0
  assert set(scores["per_type"]) == {"Cause-Effect", "Message-Topic"}
  assert scores["macro_f1"] == pytest.approx(0.75)
  assert 100 * relation_f1.semeval_macro_f1(gold, pred) == pytest.approx(
      reference_macro_f1(gold, pred))


def test_other_is_never_a_type_but_costs_recall():
  gold = [CE12, CE12, "no_relation"]
  pred = ["no_relation", CE12, CE12]
  ce = relation_f1.semeval_scores(gold, pred)["per_type"]["Cause-Effect"]
  assert (ce["precision"], ce["recall"]) == (0.5, 0.5)
  # Only the negative class in gold: the score is undefined, said so.
  with pytest.raises(ValueError, match="no relation"):
    relation_f1.semeval_macro_f1(["Other"], ["Other"])
  with pytest.raises(ValueError, match="2 gold labels but 1"):
    relation_f1.semeval_macro_f1([CE12, CE21], [CE12])


def test_a_type_never_predicted_scores_zero_and_counts_in_the_mean():
  gold = [CE12, MT12]
  pred = [CE12, "Other"]
  assert relation_f1.semeval_macro_f1(gold, pred) == pytest.approx(0.5)


def test_tacred_micro_f1_differs_from_the_semeval_score():
  gold = [1, 1, 2, 0]
  pred = [2, 1, 2, 0]  # ids: 1 = CE12, 2 = CE21, 0 = no_relation
  tacred = relation_f1.tacred_scores(pred, gold)
  assert tacred["precision"] == pytest.approx(2 / 3)
  assert tacred["recall"] == pytest.approx(2 / 3)
  names = ["no_relation", CE12, CE21]
  semeval = relation_f1.semeval_macro_f1([names[i] for i in gold],
                                         [names[i] for i in pred])
  assert semeval == pytest.approx(2 / 3)  # one type: its P = R = 2/3
  assert relation_f1.tacred_scores([0, 0], [1, 0]) == {
      "precision": 1.0, "recall": 0.0, "f1": 0.0}


def test_matches_the_reference_on_noisy_predictions_of_the_test_labels():
  with open(data_path("relation", "semeval2010", "test.json"),
            encoding="utf-8") as f:
    gold = [r["relation"] for r in json.load(f)]
  labels = sorted(set(gold))
  rng = random.Random(0)
  for noise in (0.0, 0.1, 0.3, 0.6, 1.0):
    pred = []
    for g in gold:
      if rng.random() >= noise:
        pred.append(g)
      elif rng.random() < 0.3:  # the right type, the other direction
        swapped = g.replace("(e1,e2)", "(x)").replace(
            "(e2,e1)", "(e1,e2)").replace("(x)", "(e2,e1)")
        pred.append(swapped)
      else:
        pred.append(rng.choice(labels))
    ours = 100 * relation_f1.semeval_macro_f1(gold, pred)
    assert ours == pytest.approx(reference_macro_f1(gold, pred), abs=1e-9)
  assert 100 * relation_f1.semeval_macro_f1(gold, gold) == 100.0
