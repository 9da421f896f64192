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

"""Start/end logits of SQuAD features -> answer texts, n-best lists, null odds.

BERT's run_squad post-processing over all windows of an example; an answer is
the passage's own substring, and for SQuAD 2.0 the question is answered ""
when null score - best span score > null_score_diff_threshold.
"""

import collections
import dataclasses
import json
import math
import os
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np
import tensorflow as tf
from official.nlp.data import squad_lib

from official_spanbert.data.finetuning import squad
from official_spanbert.utils import atomic_io


@dataclasses.dataclass
class Predictions:
  """Post-processed predictions.

  Attributes:
    answers: question id -> answer text ("" for no answer).
    nbest: question id -> list of {text, probability, start_logit,
      end_logit}, best first.
    null_odds: question id -> null score - best span score (SQuAD 2.0; the
      official script's na_probs).
  """
  answers: Dict[str, str]
  nbest: Dict[str, List[dict]]
  null_odds: Dict[str, float]


def _top(logits: np.ndarray, n: int) -> np.ndarray:
  return np.argsort(-logits, kind="stable")[:n]


def _softmax(scores: Sequence[float]) -> List[float]:
  if not scores:
    return []
  m = max(scores)
  exp = [math.exp(s - m) for s in scores]
  total = sum(exp)
  return [e / total for e in exp]


def _span_text(example: squad.SquadExample, f: squad.SquadFeature, s: int,
               e: int, lower_case: bool) -> str:
  """The text of tokens s..e of feature f: the context's substring."""
  if example.context and f.token_to_chars:
    return example.context[f.token_to_chars[s][0]:f.token_to_chars[e][1]]
  pieces = f.tokens[s:e + 1]
  tok_text = " ".join(pieces).replace(" ##", "").replace("##", "")
  tok_text = " ".join(tok_text.strip().split())
  orig_text = " ".join(example.words[f.token_to_word[s]:f.token_to_word[e] + 1])
  return squad_lib.get_final_text(tok_text, orig_text, lower_case)


def postprocess(examples: Sequence[squad.SquadExample],
                features: Sequence[squad.SquadFeature],
                logits: Mapping[int, Tuple[np.ndarray, np.ndarray]],
                n_best_size: int = 20, max_answer_length: int = 30,
                lower_case: bool = False,
                version_2_with_negative: bool = False,
                null_score_diff_threshold: float = 0.0) -> Predictions:
  """Chooses each example's answer from the logits of its features.

  Args:
    examples: the evaluation examples.
    features: their features (squad.convert_examples).
    logits: unique_id -> (start_logits, end_logits) over positions; features
      without logits (e.g. lost to an interrupted run) are skipped.
    n_best_size: candidates kept per example.
    max_answer_length: longest answer in tokens.
    lower_case: whether the tokenizer lower-cases (for text projection).
    version_2_with_negative: allow the null answer.
    null_score_diff_threshold: answer "" when null - best > this.

  Returns:
    Predictions for every example (examples without features get "").
  """
  by_example = collections.defaultdict(list)
  for f in features:
    by_example[f.example_index].append(f)
  answers, nbest, null_odds = {}, {}, {}
  for index, example in enumerate(examples):
    candidates = []
    null_score = None
    for f in by_example[index]:
      if f.unique_id not in logits:
        continue
      # Padding positions are no candidates (the served graph pads each
      # call to its longest window, not to max_seq_length).
      real = int(np.sum(f.input_mask))
      start_logits, end_logits = (np.asarray(x, np.float64)[:real]
                                  for x in logits[f.unique_id])
      if version_2_with_negative:
        score = start_logits[0] + end_logits[0]
        if null_score is None or score < null_score:
          null_score = score
      for s in _top(start_logits, n_best_size):
        if s not in f.token_to_word or not f.token_is_max_context.get(s):
          continue
        for e in _top(end_logits, n_best_size):
          if e not in f.token_to_word or e < s or (
              e - s + 1 > max_answer_length):
            continue
          candidates.append((start_logits[s] + end_logits[e], f, int(s),
                             int(e), float(start_logits[s]),
                             float(end_logits[e])))
    candidates.sort(key=lambda c: -c[0])
    entries, seen = [], set()
    for score, f, s, e, sl, el in candidates:
      if len(entries) >= n_best_size:
        break
      text = _span_text(example, f, s, e, lower_case)
      if text in seen:
        continue
      seen.add(text)
      entries.append({"text": text, "start_logit": sl, "end_logit": el,
                      "score": score})
    if version_2_with_negative and null_score is not None:
      entries.append({"text": "", "start_logit": null_score / 2,
                      "end_logit": null_score / 2, "score": null_score})
    if not entries:
      entries.append({"text": "", "start_logit": 0.0, "end_logit": 0.0,
                      "score": 0.0})
    entries.sort(key=lambda x: -x["score"])
    probs = _softmax([x["score"] for x in entries])
    nbest[example.qas_id] = [
        {"text": x["text"], "probability": p, "start_logit": x["start_logit"],
         "end_logit": x["end_logit"]} for x, p in zip(entries, probs)]
    best_span = next((x for x in entries if x["text"]), None)
    if not version_2_with_negative:
      answers[example.qas_id] = best_span["text"] if best_span else ""
    else:
      if best_span is None or null_score is None:
        diff = 1e9  # no span to offer: the null answer
      else:
        diff = float(null_score - best_span["score"])
      null_odds[example.qas_id] = diff
      answers[example.qas_id] = ("" if best_span is None or
                                 diff > null_score_diff_threshold
                                 else best_span["text"])
  return Predictions(answers=answers, nbest=nbest, null_odds=null_odds)


def apply_threshold(predictions: Predictions, threshold: float
                    ) -> Dict[str, str]:
  """SQuAD 2.0 answers for another null-score threshold."""
  out = {}
  for qid, entries in predictions.nbest.items():
    best_span = next((x for x in entries if x["text"]), None)
    null = predictions.null_odds.get(qid, 0.0)
    out[qid] = "" if best_span is None or null > threshold else (
        best_span["text"])
  return out


def write_json(obj, path: str):
  """Writes JSON atomically (path.incomplete, then rename)."""
  tf.io.gfile.makedirs(os.path.dirname(path) or ".")
  with atomic_io.writing(path) as tmp:
    with tf.io.gfile.GFile(tmp, "w") as f:
      json.dump(obj, f, indent=1, ensure_ascii=False)
