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

r"""Exact-match span precision, recall and F1, micro and per type.

An entity is correct when the gold has the same first word, last word and
type; nested entities count as themselves. Also a command over paired files
(docs/finetuning.md, "Nested NER").

Example:
  scorer = SpanF1()
  scorer.update([(0, 1, "PER"), (0, 0, "PER")], [(0, 1, "PER")])
  scorer.result()["f1"]   # 66.67 (P 100, R 50)
"""

import argparse
import collections
import glob
import json
import os
import sys
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from official_spanbert.data.finetuning import litbank_tsv

Span = Tuple[int, int, str]  # first word, last word (inclusive), type


def prf(correct: int, predicted: int, gold: int) -> Dict[str, float]:
  """Precision, recall and F1 (percent) of the counts."""
  precision = correct / predicted if predicted else 0.0
  recall = correct / gold if gold else 0.0
  f1 = (2 * precision * recall / (precision + recall)
        if precision + recall else 0.0)
  return {"precision": 100 * precision, "recall": 100 * recall,
          "f1": 100 * f1}


class SpanF1:
  """Accumulates exact-match counts over documents.

  Args:
    types: the types reported one by one (default LitBank's six; a type
      seen in the data but not listed is counted in the micro scores and
      reported too).

  Example:
    scorer = SpanF1()
    for gold, predicted in documents:   # iterables of (start, end, type)
      scorer.update(gold, predicted)
    scores = scorer.result()  # precision, recall, f1, per_type, counts
  """

  def __init__(self, types: Sequence[str] = litbank_tsv.ENTITY_TYPES):
    self.types = tuple(types)
    self.counts = collections.defaultdict(lambda: [0, 0, 0])

  def update(self, gold: Iterable[Span], predicted: Iterable[Span]) -> None:
    """One document's gold and predicted entities."""
    gold, predicted = set(map(tuple, gold)), set(map(tuple, predicted))
    for spans, column in ((gold & predicted, 0), (predicted, 1), (gold, 2)):
      for span in spans:
        self.counts[span[2]][column] += 1

  def result(self) -> Dict[str, object]:
    """precision, recall, f1 (micro, percent); per_type {type: the same};
    correct, predicted, gold (counts)."""
    totals = [sum(c[i] for c in self.counts.values()) for i in range(3)]
    out: Dict[str, object] = prf(*totals)
    out.update(correct=totals[0], predicted=totals[1], gold=totals[2])
    types = list(self.types) + sorted(set(self.counts) - set(self.types))
    out["per_type"] = {t: prf(*self.counts[t]) for t in types}
    return out


def _spans(doc: litbank_tsv.TsvDocument) -> List[Span]:
  return [e.key for e in doc.entities]


def _files(pattern: str) -> List[str]:
  if os.path.isdir(pattern):
    pattern = os.path.join(pattern, "*.tsv")
  return sorted(glob.glob(pattern))


def evaluate_files(gold_pattern: str, prediction_pattern: str,
                   types: Sequence[str] = litbank_tsv.ENTITY_TYPES
                   ) -> Dict[str, object]:
  """Scores the predicted tsv files against the gold ones of the same name.

  Returns:
    SpanF1.result() and `documents` (scored), `unscored` (gold files without
    a prediction).

  Raises:
    litbank_tsv.TsvError: a file cannot be read or has other tokens than its
      gold file, or a prediction has no gold file.
  """
  gold = {os.path.basename(f): f for f in _files(gold_pattern)}
  predicted = {os.path.basename(f): f for f in _files(prediction_pattern)}
  if len(gold) == 1 and len(predicted) == 1:
    predicted = {next(iter(gold)): next(iter(predicted.values()))}
  if not predicted:
    raise litbank_tsv.TsvError(f"{prediction_pattern}: matches no predicted "
                               "file")
  extra = sorted(set(predicted) - set(gold))
  if extra:
    raise litbank_tsv.TsvError(
        f"{len(extra)} predicted files have no gold file of the same name in "
        f"{gold_pattern}, e.g. {extra[0]!r}")
  scorer = SpanF1(types)
  for name in sorted(predicted):
    g, p = (litbank_tsv.read_file(d[name]) for d in (gold, predicted))
    if g.words != p.words:
      raise litbank_tsv.TsvError(f"{predicted[name]}: its tokens differ "
                                 f"from those of {gold[name]}")
    scorer.update(_spans(g), _spans(p))
  result = scorer.result()
  result.update(documents=len(predicted), unscored=len(gold) - len(predicted))
  return result


def main(argv: Optional[Sequence[str]] = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--gold_file", required=True,
                      help="a gold tsv file, a glob or a directory")
  parser.add_argument("--prediction_file", required=True,
                      help="the predicted tsv files, named as the gold ones")
  args = parser.parse_args(argv)
  try:
    result = evaluate_files(args.gold_file, args.prediction_file)
  except litbank_tsv.TsvError as e:
    print(f"span_f1: error: {e}", file=sys.stderr)
    return 1
  if result["unscored"]:
    print(f"span_f1: {result['unscored']} gold files have no prediction and "
          "were not scored", file=sys.stderr)
  print(json.dumps(result))
  return 0


if __name__ == "__main__":
  sys.exit(main())
