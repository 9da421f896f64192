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

"""MRQA files read as SQuAD (data/finetuning/mrqa.py, issue 46 item 6)."""

import gzip
import json
import subprocess
import sys

import pytest

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import mrqa
from official_spanbert.data.finetuning import squad
from official_spanbert.metrics import squad_evaluate
from conftest import data_path
import test_squad as squad_tests

QUESTIONS = 600


@pytest.fixture(scope="module")
def both(tmp_path_factory):
  d = tmp_path_factory.mktemp("mrqa")
  squad_json = squad_tests._slice_json(  # pylint: disable=protected-access
      data_path("squad", "dev-v1.1.json"), str(d / "dev.json"), QUESTIONS)
  with open(squad_json, encoding="utf-8") as f:
    data = json.load(f)["data"]
  mrqa_file = str(d / "SQuAD-dev.jsonl.gz")
  mrqa.write_from_squad(data, mrqa_file)
  return {"squad": squad_json, "mrqa": mrqa_file, "data": data, "dir": d}


@pytest.mark.parametrize("is_training", [False, True])
def test_mrqa_form_gives_the_squad_features(both, cased_vocab, is_training):
  tokenizer = tokenization.WordpieceTokenizer(cased_vocab)
  features = []
  for path in (both["squad"], both["mrqa"]):
    examples = squad.read_examples(path, is_training=is_training)
    features.append([(f.input_ids, f.segment_ids, f.token_to_chars,
                      f.start_position, f.end_position)
                     for f in squad.convert_examples(
                         examples, tokenizer, max_seq_length=128,
                         doc_stride=64, is_training=is_training)])
  assert len(features[0]) >= QUESTIONS and features[0] == features[1]


def test_mrqa_metric_equals_the_squad_metric(both, tmp_path):
  qas = [qa for a in both["data"] for p in a["paragraphs"] for qa in p["qas"]]
  # A mix: right, partly right, wrong and missing answers.
  predictions = {}
  for i, qa in enumerate(qas):
    gold = qa["answers"][i % len(qa["answers"])]["text"]
    if i % 4 == 0:
      predictions[qa["id"]] = gold
    elif i % 4 == 1:
      predictions[qa["id"]] = "the " + gold.split()[0] + " was"
    elif i % 4 == 2:
      predictions[qa["id"]] = "nothing of the sort"
  expected = squad_evaluate.evaluate_v1(both["data"], predictions)
  assert 20 < expected["f1"] < 80
  assert mrqa.evaluate_file(both["mrqa"], predictions) == expected
  pred_file = tmp_path / "predictions.json"
  pred_file.write_text(json.dumps(predictions), encoding="utf-8")
  out = subprocess.run(
      [sys.executable, "-m", "official_spanbert.data.finetuning.mrqa",
       f"--gold_file={both['mrqa']}", f"--prediction_file={pred_file}"],
      capture_output=True, text=True, check=True)
  assert json.loads(out.stdout) == pytest.approx(expected)


@pytest.mark.parametrize("lines, match", [
    (['{"header": {}}', "{bad json"], r"x\.jsonl:2: invalid JSON"),
    (['{"header": {}}', '{"context": "abc"}'], r"x\.jsonl:2: expected an MRQA"),
    (['{"context": "abc", "qas": [{"qid": "1", "question": "q", "answers": '
      '["b"], "detected_answers": [{"text": "b", "char_spans": [[1, 9]]}]}]}'],
     r"x\.jsonl:1: question 1: detected_answers need 'char_spans'"),
    (['{"header": {}}'], r"x\.jsonl: no MRQA lines"),
])
def test_malformed_mrqa_names_file_and_line(tmp_path, lines, match):
  path = tmp_path / "x.jsonl"
  path.write_text("\n".join(lines) + "\n", encoding="utf-8")
  with pytest.raises(squad.squad_examples.SquadFormatError, match=match):
    squad.read_examples(str(path), is_training=True)


def test_a_gz_name_on_plain_text_says_so(tmp_path):
  path = tmp_path / "x.jsonl.gz"
  path.write_text('{"header": {}}\n', encoding="utf-8")
  with pytest.raises(squad.squad_examples.SquadFormatError,
                     match="not a gzip file.*name it .jsonl"):
    squad.read_examples(str(path), is_training=False)
  path.write_bytes(gzip.compress(b'{"header": {}}\n'))
  with pytest.raises(squad.squad_examples.SquadFormatError,
                     match="no MRQA lines"):
    squad.read_examples(str(path), is_training=False)
