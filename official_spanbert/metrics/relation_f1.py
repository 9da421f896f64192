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

"""Relation extraction scores: TACRED's micro-F1 and SemEval-2010's macro-F1.

They are different numbers: `tacred_scores` is the micro-F1 over the
directed relations (the negative class left out); `semeval_macro_f1` is the
official SemEval-2010 Task 8 score (scorer v1.2, "(9+1)-way evaluation with
directionality"): the mean over the relation *types* (direction removed from
the name) of each type's F1, where a prediction counts only if it equals the
gold label, direction included, and `Other` / `no_relation` is never a type.

Example:
  semeval_macro_f1(["Cause-Effect(e1,e2)", "Other"],
                   ["Cause-Effect(e2,e1)", "Other"])   # 0.0: wrong direction
"""

import re
from typing import Dict, Sequence

import numpy as np

# SemEval's negative class and TACRED's name for it (the records' id 0).
NEGATIVE_LABELS = frozenset(["Other", "no_relation"])
_DIRECTION = re.compile(r"\((e[12]),(e[12])\)$")


def relation_type(label: str) -> str:
  """The label without its direction: `Cause-Effect(e2,e1)` -> `Cause-Effect`."""
  return _DIRECTION.sub("", label)


def tacred_scores(predictions: Sequence[int], labels: Sequence[int],
                  negative_label_id: int = 0) -> Dict[str, float]:
  """Micro precision, recall and F1 ignoring the negative label (TACRED).

  As TACRED's scorer: a prediction counts as guessed unless negative, as
  correct if it also equals a non-negative gold label; precision is 1 when
  nothing is guessed.

  Args:
    predictions: predicted label ids.
    labels: gold label ids.
    negative_label_id: the `no_relation` id.

  Returns:
    {"precision", "recall", "f1"}, fractions in [0, 1].
  """
  predictions, labels = np.asarray(predictions), np.asarray(labels)
  guessed = predictions != negative_label_id
  gold = labels != negative_label_id
  correct = int(np.sum(guessed & (predictions == labels)))
  precision = correct / guessed.sum() if guessed.any() else 1.0
  recall = correct / gold.sum() if gold.any() else 0.0
  f1 = (2 * precision * recall / (precision + recall)
        if precision + recall > 0 else 0.0)
  return {"precision": float(precision), "recall": float(recall),
          "f1": float(f1)}


def semeval_scores(gold: Sequence[str], predicted: Sequence[str]
                   ) -> Dict[str, object]:
  """SemEval-2010 Task 8's official score and its per-type parts.

  For each relation type T of the gold labels (the negative class excluded):
  TP = examples of gold type T predicted with exactly the gold label; P =
  TP / predictions of type T (either direction); R = TP / gold examples of
  type T; F1 = 2PR / (P + R) (0 when P + R = 0). The score is the mean of
  the per-type F1s.

  Args:
    gold, predicted: label names, one per example (directions written as
      `Type(e1,e2)`; `Other` or `no_relation` for the negative class).

  Returns:
    {"macro_f1": fraction in [0, 1], "per_type": {type: {"precision",
    "recall", "f1", "gold", "predicted", "tp"}}}.

  Raises:
    ValueError: the two lists differ in length, or gold has no relation.
  """
  if len(gold) != len(predicted):
    raise ValueError(f"{len(gold)} gold labels but {len(predicted)} "
                     "predictions")
  types = sorted({relation_type(g) for g in gold} -
                 {relation_type(n) for n in NEGATIVE_LABELS})
  if not types:
    raise ValueError("the gold labels hold no relation (only the negative "
                     "class): the SemEval score is undefined")
  gold_types = [relation_type(g) for g in gold]
  pred_types = [relation_type(p) for p in predicted]
  per_type = {}
  for t in types:
    tp = sum(g == p and gt == t
             for g, p, gt in zip(gold, predicted, gold_types))
    n_pred = sum(pt == t for pt in pred_types)
    n_gold = sum(gt == t for gt in gold_types)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = (2 * precision * recall / (precision + recall)
          if precision + recall else 0.0)
    per_type[t] = {"precision": precision, "recall": recall, "f1": f1,
                   "gold": n_gold, "predicted": n_pred, "tp": tp}
  macro = sum(v["f1"] for v in per_type.values()) / len(per_type)
  return {"macro_f1": macro, "per_type": per_type}


def semeval_macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
  """The official SemEval-2010 Task 8 score as a fraction (x100 for the
  scorer's percent); see semeval_scores."""
  return semeval_scores(gold, predicted)["macro_f1"]
