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

"""Exact-match span P/R/F1 against hand and independent counts.

The integration test scores real LitBank files against themselves with
layers removed, and checks each score against counts taken from the raw tag
columns with string operations only (no reader, no scorer).
"""

import collections
import json
import os
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, data_path
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.metrics import span_f1


def test_counts_by_hand():
  scorer = span_f1.SpanF1()
  # [[Mr.] Bennet]: two gold entities; the outer found, a LOC wrong.
  scorer.update([(0, 1, "PER"), (0, 0, "PER"), (5, 5, "GPE")],
                [(0, 1, "PER"), (5, 5, "LOC"), (5, 5, "GPE")])
  scorer.update([], [(2, 3, "PER")])  # a document with no gold entity
  result = scorer.result()
  assert (result["correct"], result["predicted"], result["gold"]) == (2, 4, 3)
  assert result["precision"] == pytest.approx(50.0)
  assert result["recall"] == pytest.approx(200 / 3)
  assert result["f1"] == pytest.approx(100 * 2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
  per = result["per_type"]
  assert per["PER"] == pytest.approx({"precision": 50.0, "recall": 50.0,
                                      "f1": 50.0})
  assert per["GPE"]["f1"] == 100.0 and per["LOC"]["precision"] == 0.0
  assert per["VEH"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
  assert list(per)[:6] == list(litbank_tsv.ENTITY_TYPES)


def test_a_listed_twice_entity_counts_once():
  scorer = span_f1.SpanF1()
  scorer.update([(0, 0, "PER")], [(0, 0, "PER"), (0, 0, "PER")])
  assert scorer.result()["f1"] == 100.0


def _write(path, doc, entities):
  litbank_tsv.write_file(str(path), doc.sentences, entities)


def test_the_cli_scores_files_by_name(tmp_path):
  doc = litbank_tsv.read_file(os.path.join(FIXTURES, "litbank_excerpt.tsv"))
  (tmp_path / "gold").mkdir()
  (tmp_path / "pred").mkdir()
  _write(tmp_path / "gold" / "a.tsv", doc, doc.entities)
  _write(tmp_path / "pred" / "a.tsv", doc, litbank_tsv.outermost(doc.entities))
  run = subprocess.run(
      [sys.executable, "-m", "official_spanbert.metrics.span_f1",
       f"--gold_file={tmp_path / 'gold'}",
       f"--prediction_file={tmp_path / 'pred'}"],
      capture_output=True, text=True, cwd=REPO, check=True)
  result = json.loads(run.stdout)
  assert result["precision"] == 100.0
  assert result["recall"] == pytest.approx(100 * 37 / 60)
  assert (result["documents"], result["unscored"]) == (1, 0)
  # A gold file without a prediction is not scored; the reverse is an error.
  _write(tmp_path / "gold" / "c.tsv", doc, doc.entities)
  assert span_f1.evaluate_files(str(tmp_path / "gold"),
                                str(tmp_path / "pred"))["unscored"] == 1
  (tmp_path / "pred" / "b.tsv").write_text("x\tO\t\n", encoding="utf-8")
  run = subprocess.run(
      [sys.executable, "-m", "official_spanbert.metrics.span_f1",
       f"--gold_file={tmp_path / 'gold'}",
       f"--prediction_file={tmp_path / 'pred'}"],
      capture_output=True, text=True, cwd=REPO)
  assert run.returncode == 1
  assert "1 predicted files have no gold file of the same name" in run.stderr


def _column_counts(path):
  """B- tags per type in all layers and in layer 1, from the raw columns
  (LitBank never gives one span the same type twice, so a set of entities
  and a count of tags agree)."""
  all_layers, layer1 = collections.Counter(), collections.Counter()
  with open(path, encoding="utf-8") as f:
    for line in f:
      tags = line.rstrip("\n").split("\t")[1:]
      for layer, tag in enumerate(tags):
        if tag.startswith("B-"):
          all_layers[tag[2:]] += 1
          if layer == 0:
            layer1[tag[2:]] += 1
  return all_layers, layer1


def test_recall_of_the_innermost_layer_matches_raw_counts():
  """Predicting layer 1 only: precision 100, recall = layer-1 B- tags /
  all B- tags, per type and micro, counted from the text of 10 real files."""
  root = data_path("ner", "litbank")
  with open(os.path.join(root, "splits", "0", "test.txt"),
            encoding="utf-8") as f:
    names = f.read().split()
  scorer = span_f1.SpanF1()
  gold_counts, layer1_counts = collections.Counter(), collections.Counter()
  for name in names:
    path = os.path.join(root, "tsv", f"{name}.tsv")
    doc = litbank_tsv.read_file(path)
    scorer.update([e.key for e in doc.entities],
                  [e.key for e in doc.entities if e.layer == 1])
    a, b = _column_counts(path)
    gold_counts += a
    layer1_counts += b
  result = scorer.result()
  assert result["gold"] == sum(gold_counts.values()) > 1000
  assert result["correct"] == result["predicted"] == sum(
      layer1_counts.values())
  assert result["precision"] == 100.0
  assert result["recall"] == pytest.approx(
      100 * sum(layer1_counts.values()) / sum(gold_counts.values()))
  for kind, gold in gold_counts.items():
    assert result["per_type"][kind]["recall"] == pytest.approx(
        100 * layer1_counts[kind] / gold), kind
