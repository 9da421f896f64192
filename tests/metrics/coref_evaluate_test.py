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

"""Coreference metrics against hand-worked cases of their definitions.

The cases are the worked example of Pradhan et al. (2014), Figure 1 / Table 1,
and test cases of the CoNLL-2012 reference scorer's TestCases.README (TC-A-2:
missing mentions; TC3/TC4: false alarms), each worked out by hand below.
"""

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO
from official_spanbert.data.finetuning import conll2012
from official_spanbert.metrics import coref_evaluate as ce


def _p_r_f(result, metric):
  m = result[metric]
  return m["p"], m["r"], m["f1"]


def test_pradhan_2014_worked_example():
  # Key {a b c} {d e f g}; response {a b} {c d} {f g h i}.
  key = [list("abc"), list("defg")]
  response = [list("ab"), list("cd"), list("fghi")]
  result = ce.evaluate([key], [response])
  # MUC: R = ((3-2) + (4-3)) / (2 + 3); P = ((2-1) + (2-2) + (4-3)) / 5.
  assert _p_r_f(result, "muc") == pytest.approx((40, 40, 40))
  # B3: R = (4/3 + 1/3 + 1/4 + 4/4) / 7 = 35/84; P = (4/2 + 1/2 + 1/2 +
  # 4/4) / 8 = 1/2.
  r, p = 35 / 84, 0.5
  assert _p_r_f(result, "b_cubed") == pytest.approx(
      (100 * p, 100 * r, 100 * 2 * p * r / (p + r)))
  # CEAF-e: best alignment abc~ab (4/5) + defg~fghi (4/8) = 1.3.
  r, p = 1.3 / 2, 1.3 / 3
  assert _p_r_f(result, "ceafe") == pytest.approx(
      (100 * p, 100 * r, 100 * 2 * p * r / (p + r)))
  assert result["conll_f1"] == pytest.approx(
      (40 + result["b_cubed"]["f1"] + result["ceafe"]["f1"]) / 3)


def test_missing_mentions_and_singletons_tc_a_2():
  # Key {a} {b c} {d e f}; response {a} {d e}: b, c, f are missing.
  result = ce.evaluate([[["a"], list("bc"), list("def")]],
                       [[["a"], list("de")]])
  # MUC: singletons add nothing; R = (0 + (3-2)) / (1 + 2), P = 1/1.
  assert _p_r_f(result, "muc") == pytest.approx((100, 100 / 3, 50))
  # B3 keeps the singleton: R = (1 + 0 + 4/3) / 6 = 7/18, P = (1 + 2) / 3.
  r = 7 / 18
  assert _p_r_f(result, "b_cubed") == pytest.approx(
      (100, 100 * r, 100 * 2 * r / (1 + r)))
  # CEAF-e: a~a (1) + def~de (4/5); R = 1.8/3, P = 1.8/2.
  assert _p_r_f(result, "ceafe") == pytest.approx((90, 60, 72))


@pytest.mark.parametrize("response,recall,precision", [
    # TC3: false alarms x, y, z: a~a 1, bc~bcx 4/5, def~defy 6/7.
    ([["a"], list("bcx"), list("defy"), ["z"]],
     (1 + 4 / 5 + 6 / 7) / 3, (1 + 4 / 5 + 6 / 7) / 4),
    # TC4: missing e, f and false alarms: a~a 1, bc~bcx 4/5, def~dy 2/5.
    ([["a"], list("bcx"), list("dy"), ["z"]], 2.2 / 3, 2.2 / 4),
])
def test_ceafe_false_alarms_reference_cases(response, recall, precision):
  result = ce.evaluate([[["a"], list("bc"), list("def")]], [response])
  assert result["ceafe"]["r"] == pytest.approx(100 * recall)
  assert result["ceafe"]["p"] == pytest.approx(100 * precision)


def _partition(rng, mentions, parts):
  labels = rng.integers(0, parts, len(mentions))
  return [[m for m, l in zip(mentions, labels) if l == p]
          for p in range(parts) if (labels == p).any()]


def test_ceafe_alignment_is_the_best_of_all_one_to_one_maps():
  rng = np.random.default_rng(0)
  for _ in range(20):
    key = _partition(rng, list("abcdefghij"), 4)
    response = _partition(rng, list("abcdefxyz"), 4)
    phi = [[2 * len(set(k) & set(r)) / (len(k) + len(r)) for r in response]
           for k in key]
    small, large = ((phi, len(response)) if len(key) <= len(response) else
                    (list(map(list, zip(*phi))), len(key)))
    best = max(sum(row[j] for row, j in zip(small, perm))
               for perm in itertools.permutations(range(large), len(small)))
    result = ce.evaluate([key], [response])
    assert result["ceafe"]["r"] == pytest.approx(100 * best / len(key))
    assert result["ceafe"]["p"] == pytest.approx(100 * best / len(response))


def test_documents_sum_numerators_and_denominators():
  # Doc 1 is perfect with 1 MUC link; doc 2 has 3 key links, 0 found.
  doc1 = ([list("ab")], [list("ab")])
  doc2 = ([list("cdef")], [["c"], ["d"], ["e"], ["f"]])
  result = ce.evaluate([doc1[0], doc2[0]], [doc1[1], doc2[1]])
  # Summed: recall (1 + 0) / (1 + 3) = 25%; mean of the two would be 50%.
  assert result["muc"]["r"] == pytest.approx(25)
  assert result["muc"]["p"] == pytest.approx(100)
  # B3 recall: (2 + 4 * 1/4) / 6 mentions.
  assert result["b_cubed"]["r"] == pytest.approx(100 * 3 / 6)
  # CEAF-e: (1 + 2/5) over 2 key and 5 response entities.
  assert result["ceafe"]["r"] == pytest.approx(100 * 1.4 / 2)
  assert result["ceafe"]["p"] == pytest.approx(100 * 1.4 / 5)


def test_empty_response_scores_zero_not_nan():
  result = ce.evaluate([[list("ab"), ["c"]]], [[]])
  for metric in ce.METRICS:
    assert _p_r_f(result, metric) == (0, 0, 0)
  assert result["conll_f1"] == 0


GOLD = """#begin document (doc); part 0
doc 0 0 Mary - - - - - Sp1 - (0)
doc 0 1 saw - - - - - Sp1 - -
doc 0 2 her - - - - - Sp1 - (1|(0)
doc 0 3 own - - - - - Sp1 - -
doc 0 4 cat - - - - - Sp1 - 1)

doc 0 0 She - - - - - Sp2 - (0)
doc 0 1 left - - - - - Sp2 - -
doc 0 2 . - - - - - Sp2 - -
#end document
"""


def _write(path, text):
  path.write_text(text, encoding="utf-8")
  return str(path)


def test_reader_clusters_sentences_speakers_and_round_trip(tmp_path):
  doc, = conll2012.parse_lines(GOLD.splitlines())
  assert doc.name == "doc" and doc.key == "(doc); part 0"
  assert doc.sentences == [["Mary", "saw", "her", "own", "cat"],
                           ["She", "left", "."]]
  assert doc.speakers[1] == ["Sp2"] * 3
  # Mary, her, She; "her own cat" (words 2-4), a singleton.
  assert doc.clusters == [[(0, 0), (2, 2), (5, 5)], [(2, 4)]]
  path = tmp_path / "out.conll"
  conll2012.write_file(str(path), [doc], [[[(2, 4)], [(0, 0), (5, 5)]]])
  again, = conll2012.read_file(str(path))
  assert again.clusters == [[(0, 0), (5, 5)], [(2, 4)]]
  assert again.words == doc.words


@pytest.mark.parametrize("text,line,words", [
    (GOLD.replace("- 1)\n", "- -\n"), 4, "unclosed bracket"),
    (GOLD.replace("saw - - - - - Sp1 - -", "saw - - - - - Sp1 - 0)"), 3,
     "closed but not open"),
    (GOLD.replace("#end document\n", ""), 1, "no #end document"),
    (GOLD.replace("(1|(0)", "(1|0"), 4, "bad coreference bracket"),
])
def test_reader_errors_name_file_and_line(tmp_path, text, line, words):
  path = _write(tmp_path / "bad.conll", text)
  with pytest.raises(conll2012.ConllError, match=words) as info:
    conll2012.read_file(path)
  assert str(info.value).startswith(f"{path}:{line}: ")


def test_cli_prints_one_json_line(tmp_path):
  gold = _write(tmp_path / "gold.conll", GOLD)
  # The prediction misses "She" and links nothing else wrongly.
  pred = _write(tmp_path / "pred.conll",
                GOLD.replace("Sp2 - (0)", "Sp2 - -"))
  out = subprocess.run(
      [sys.executable, "-m", "official_spanbert.metrics.coref_evaluate",
       f"--gold_file={gold}", f"--prediction_file={pred}"],
      capture_output=True, text=True, check=True, cwd=REPO)
  lines = out.stdout.strip().splitlines()
  assert len(lines) == 1
  result = json.loads(lines[0])
  assert set(result) == {"muc", "b_cubed", "ceafe", "conll_f1"}
  # MUC: key links 2 (Mary-her-She), found 1; response links 1, correct.
  assert result["muc"] == pytest.approx({"p": 100, "r": 50,
                                         "f1": 100 * 2 / 3})
  assert result == ce.evaluate_files(gold, pred)


def test_cli_error_is_one_line(tmp_path):
  gold = _write(tmp_path / "gold.conll", GOLD)
  pred = _write(tmp_path / "pred.conll", GOLD.replace("Mary", "Anne"))
  out = subprocess.run(
      [sys.executable, "-m", "official_spanbert.metrics.coref_evaluate",
       f"--gold_file={gold}", f"--prediction_file={pred}"],
      capture_output=True, text=True, check=False, cwd=REPO)
  assert out.returncode == 1
  assert out.stderr.strip().startswith("coref_evaluate: error: ")
  assert "other words" in out.stderr


def test_word_mismatch_names_the_word_and_extra_documents_warn(tmp_path):
  """Issue 39, fault 9: "(2088 vs 2088)" named no difference, and predicted
  documents that are not in the gold file were ignored without a word."""
  gold = _write(tmp_path / "gold.conll", GOLD)
  pred = _write(tmp_path / "pred.conll", GOLD.replace("Mary", "Anne"))
  with pytest.raises(conll2012.ConllError, match=(
      r"has other words than in .*gold.conll \(word 1 is 'Anne', in gold "
      r"'Mary'\)$")):
    ce.evaluate_files(gold, pred)
  other = GOLD.replace("(doc); part 0", "(other); part 0")
  pred = _write(tmp_path / "pred2.conll", GOLD + other)
  warnings = []
  assert ce.evaluate_files(gold, pred, warn=warnings.append) == (
      ce.evaluate_files(gold, gold))
  assert warnings == [f"1 predicted document(s) not in {gold} ignored: "
                      "(other); part 0"]
