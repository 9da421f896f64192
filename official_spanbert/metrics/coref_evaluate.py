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

r"""Coreference metrics: MUC, B-cubed, CEAF-e and the CoNLL average.

The CoNLL-2012 reference scorer's definitions (v8, Pradhan et al. 2014) on
exact word spans, summed over a file's documents, as percentages; also a
command. The definitions and pairing rules: docs/coreference.md.

  python -m official_spanbert.metrics.coref_evaluate \
    --gold_file=G.conll --prediction_file=P.conll
"""

import argparse
import json
import sys
from typing import Dict, Hashable, List, Optional, Sequence

import numpy as np
from scipy import optimize

from official_spanbert.data.finetuning import conll2012

METRICS = ("muc", "b_cubed", "ceafe")
Entity = Sequence[Hashable]


def _f1(p: float, r: float) -> float:
  return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _mention_to_entity(entities: Sequence[Entity]) -> Dict[Hashable, int]:
  out = {}
  for i, entity in enumerate(entities):
    for m in entity:
      out.setdefault(m, i)
  return out


def muc_counts(key: Sequence[Entity], response: Sequence[Entity]
               ) -> List[float]:
  """[recall numerator, denominator, precision numerator, denominator]."""

  def side(entities, other):
    where = _mention_to_entity(other)
    num = den = 0
    for entity in entities:
      entity = set(entity)
      parts = {where[m] for m in entity if m in where}
      parts = len(parts) + sum(m not in where for m in entity)
      num += len(entity) - parts
      den += len(entity) - 1
    return num, den

  return [*side(key, response), *side(response, key)]


def b_cubed_counts(key: Sequence[Entity], response: Sequence[Entity]
                   ) -> List[float]:
  """[recall numerator, denominator, precision numerator, denominator]."""

  def side(entities, other):
    where = _mention_to_entity(other)
    num, den = 0.0, 0
    for entity in entities:
      entity = set(entity)
      overlap = {}
      for m in entity:
        if m in where:
          overlap[where[m]] = overlap.get(where[m], 0) + 1
      num += sum(c * c for c in overlap.values()) / len(entity)
      den += len(entity)
    return num, den

  return [*side(key, response), *side(response, key)]


def ceafe_counts(key: Sequence[Entity], response: Sequence[Entity]
                 ) -> List[float]:
  """[similarity, key entities, similarity, response entities]."""
  key_sets = [set(e) for e in key if e]
  resp_sets = [set(e) for e in response if e]
  total = 0.0
  if key_sets and resp_sets:
    phi = np.zeros((len(key_sets), len(resp_sets)))
    where = _mention_to_entity(resp_sets)
    for i, k in enumerate(key_sets):
      for m in k:
        if m in where:
          phi[i, where[m]] += 1
    sizes = (np.array([len(k) for k in key_sets])[:, None] +
             np.array([len(r) for r in resp_sets])[None, :])
    phi = 2 * phi / sizes
    rows, cols = optimize.linear_sum_assignment(phi, maximize=True)
    total = float(phi[rows, cols].sum())
  return [total, len(key_sets), total, len(resp_sets)]


_COUNTS = {"muc": muc_counts, "b_cubed": b_cubed_counts,
           "ceafe": ceafe_counts}


class CorefEvaluator:
  """Sums each metric's numerators and denominators over documents."""

  def __init__(self):
    self.counts = {m: np.zeros(4) for m in METRICS}
    self.documents = 0

  def update(self, key: Sequence[Entity], response: Sequence[Entity]):
    """Adds one document's gold (key) and predicted (response) entities."""
    for name, counts in _COUNTS.items():
      self.counts[name] += counts(key, response)
    self.documents += 1

  def metric(self, name: str) -> Dict[str, float]:
    """{"p", "r", "f1"} of one metric, as percentages."""
    r_num, r_den, p_num, p_den = self.counts[name]
    r = float(r_num / r_den) if r_den else 0.0
    p = float(p_num / p_den) if p_den else 0.0
    return {"p": 100 * p, "r": 100 * r, "f1": 100 * _f1(p, r)}

  def result(self) -> Dict[str, object]:
    """{"muc", "b_cubed", "ceafe": {"p", "r", "f1"}, "conll_f1"}."""
    out = {name: self.metric(name) for name in METRICS}
    out["conll_f1"] = float(np.mean([out[m]["f1"] for m in METRICS]))
    return out


def evaluate(key_docs: Sequence[Sequence[Entity]],
             response_docs: Sequence[Sequence[Entity]]) -> Dict[str, object]:
  """Scores paired documents (each a list of entities)."""
  if len(key_docs) != len(response_docs):
    raise ValueError(f"{len(key_docs)} gold documents but "
                     f"{len(response_docs)} predicted")
  evaluator = CorefEvaluator()
  for key, response in zip(key_docs, response_docs):
    evaluator.update(key, response)
  return evaluator.result()


def evaluate_files(gold_file: str, prediction_file: str,
                   warn=None) -> Dict[str, object]:
  """Scores a CoNLL-2012 prediction file against a gold file.

  Raises:
    conll2012.ConllError: a malformed file, or a predicted document whose
      words differ from the gold one's.
  """
  gold = conll2012.read_file(gold_file)
  predicted = {d.key: d for d in conll2012.read_file(prediction_file)}
  keys, responses, missing = [], [], []
  for doc in gold:
    pred = predicted.get(doc.key)
    if pred is None:
      missing.append(doc.key)
      responses.append([])
    else:
      if pred.words != doc.words:
        raise conll2012.ConllError(
            f"{prediction_file}: document {doc.key!r} has other words than in "
            f"{gold_file} ({_first_difference(pred.words, doc.words)})")
      responses.append(pred.clusters)
    keys.append(doc.clusters)
  extra = [k for k in predicted if k not in {d.key for d in gold}]
  if missing and warn is not None:
    warn(f"{len(missing)} gold document(s) not in {prediction_file} scored "
         f"as empty: {', '.join(missing[:3])}")
  if extra and warn is not None:
    warn(f"{len(extra)} predicted document(s) not in {gold_file} ignored: "
         f"{', '.join(extra[:3])}")
  return evaluate(keys, responses)


def _first_difference(predicted: Sequence[str], gold: Sequence[str]) -> str:
  """Where two word lists differ, e.g. "word 17 is 'She', in gold 'He'"."""
  for i, (p, g) in enumerate(zip(predicted, gold)):
    if p != g:
      return f"word {i + 1} is {p!r}, in gold {g!r}"
  return f"{len(predicted)} words, in gold {len(gold)}"


def main(argv: Optional[Sequence[str]] = None) -> int:
  parser = argparse.ArgumentParser(
      prog="coref_evaluate",
      description="MUC, B3, CEAF-e and CoNLL F1 of a CoNLL-2012 prediction "
                  "file (one JSON line, percentages).")
  parser.add_argument("--gold_file", required=True)
  parser.add_argument("--prediction_file", required=True)
  args = parser.parse_args(argv)
  try:
    result = evaluate_files(
        args.gold_file, args.prediction_file,
        warn=lambda m: sys.stderr.write(f"coref_evaluate: warning: {m}\n"))
  except (conll2012.ConllError, OSError) as e:
    sys.stderr.write(f"coref_evaluate: error: {e}\n")
    return 1
  print(json.dumps(result))
  return 0


if __name__ == "__main__":
  sys.exit(main())
