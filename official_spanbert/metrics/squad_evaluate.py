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

"""The official SQuAD v1.1 and v2.0 evaluation (EM / F1), as functions.

Percentages as papers report them; an unanswered question scores 0 in both
versions, and v2.0's best null thresholds are searched with na_probs. The
answer scoring is Model Garden's; why the loop over the dataset is not:
docs/finetuning.md, "SQuAD".
"""

from typing import Dict, List, Mapping, Optional

from absl import logging
from official.nlp.tools import squad_evaluate_v1_1 as mg_v1
from official.nlp.tools import squad_evaluate_v2_0 as mg_v2

# pylint: disable=protected-access
# Lower case, drop punctuation, articles and extra whitespace.
normalize_answer = mg_v2._normalize_answer


def exact_match(prediction: str, gold: str) -> float:
  return float(mg_v1._exact_match_score(prediction, gold))


def f1_v1(prediction: str, gold: str) -> float:
  """v1.1 token F1 (0 when nothing overlaps, also for empty strings)."""
  return float(mg_v1._f1_score(prediction, gold))


def f1_v2(prediction: str, gold: str) -> float:
  """v2.0 token F1: an empty prediction or gold scores 1 only if both are."""
  return float(mg_v2._compute_f1(gold, prediction))
# pylint: enable=protected-access


def _questions(dataset: List[dict]):
  for article in dataset:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        yield qa


def evaluate_v1(dataset: List[dict], predictions: Mapping[str, str]
                ) -> Dict[str, float]:
  """Official SQuAD v1.1 EM and F1 (percent).

  Args:
    dataset: the JSON file's "data" list.
    predictions: question id -> answer text.
  """
  em = f1 = total = 0.0
  missing = 0
  for qa in _questions(dataset):
    total += 1
    if qa["id"] not in predictions:
      missing += 1
      continue
    # MRQA files read as SQuAD (data/finetuning/mrqa.py) keep their gold
    # texts apart from the detected spans: the MRQA metric scores those.
    golds = qa.get("gold_texts", [a["text"] for a in qa["answers"]]) or [""]
    pred = predictions[qa["id"]]
    em += max(exact_match(pred, g) for g in golds)
    f1 += max(f1_v1(pred, g) for g in golds)
  if missing:
    logging.warning("%d questions have no prediction and score 0", missing)
  return {"exact_match": 100.0 * em / total, "f1": 100.0 * f1 / total}


def _best_threshold(predictions, scores, na_probs, has_answer):
  """The official best-threshold search; unanswered questions score 0."""
  answered = [q for q in scores if q in predictions]
  num_no_answer = sum(1 for q in answered if not has_answer[q])
  current = best = float(num_no_answer)
  best_thresh = 0.0
  for qid in sorted(answered, key=lambda k: na_probs[k]):
    if has_answer[qid]:
      diff = scores[qid]
    else:
      diff = -1.0 if predictions[qid] else 0.0
    current += diff
    if current > best:
      best, best_thresh = current, na_probs[qid]
  return 100.0 * best / len(scores), best_thresh


def evaluate_v2(dataset: List[dict], predictions: Mapping[str, str],
                na_probs: Optional[Mapping[str, float]] = None,
                na_prob_thresh: float = 1.0) -> Dict[str, float]:
  """Official SQuAD v2.0 metrics (percent).

  Args:
    dataset: the JSON file's "data" list.
    predictions: question id -> answer text ("" = no answer).
    na_probs: question id -> no-answer score (our null_odds) of every
      predicted question; None: all 0, and no best-threshold search.
    na_prob_thresh: a question counts as answered "" when its na_prob is
      above this.

  Raises:
    ValueError: no prediction matches a question of the dataset, or na_probs
      lacks some predicted question.
  """
  has_answer = {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}
  answered = [q for q in has_answer if q in predictions]
  if not answered:
    raise ValueError("no prediction matches a question id of the dataset")
  if na_probs is not None:
    lacking = [q for q in answered if q not in na_probs]
    if lacking:
      raise ValueError(
          f"na_probs has no score for {len(lacking)} of the {len(answered)} "
          f"predicted questions (e.g. {', '.join(lacking[:3])}); write one "
          "no-answer score per predicted question id")
  missing = len(has_answer) - len(answered)
  if missing:
    logging.warning("%d of %d questions have no prediction and score 0",
                    missing, len(has_answer))
  exact_raw, f1_raw = {}, {}
  for qa in _questions(dataset):
    qid = qa["id"]
    if qid not in predictions:
      exact_raw[qid] = f1_raw[qid] = 0.0
      continue
    golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])]
    golds = golds or [""]
    pred = predictions[qid]
    exact_raw[qid] = max(exact_match(pred, g) for g in golds)
    f1_raw[qid] = max(f1_v2(pred, g) for g in golds)
  probs = na_probs if na_probs is not None else {}

  def thresholded(scores):
    return {q: (float(not has_answer[q])
                if probs.get(q, 0.0) > na_prob_thresh and q in predictions
                else s)
            for q, s in scores.items()}

  exact, f1 = thresholded(exact_raw), thresholded(f1_raw)

  def summary(qids, prefix=""):
    n = len(qids)
    return {prefix + "exact": 100.0 * sum(exact[q] for q in qids) / n,
            prefix + "f1": 100.0 * sum(f1[q] for q in qids) / n,
            prefix + "total": n}

  out = summary(list(exact))
  has = [q for q in exact if has_answer[q]]
  no = [q for q in exact if not has_answer[q]]
  if has:
    out.update(summary(has, "HasAns_"))
  if no:
    out.update(summary(no, "NoAns_"))
  if na_probs is not None:
    out["best_exact"], out["best_exact_thresh"] = _best_threshold(
        predictions, exact_raw, na_probs, has_answer)
    out["best_f1"], out["best_f1_thresh"] = _best_threshold(
        predictions, f1_raw, na_probs, has_answer)
  return out
