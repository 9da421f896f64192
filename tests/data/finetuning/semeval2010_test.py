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

"""data/finetuning/semeval2010: the release's files as raw sentences."""

import re

import pytest

from official_spanbert.data.finetuning import semeval2010
from official_spanbert.data.finetuning import tacred
from conftest import data_path

# The converter's tokenization (the data's README).
_TOKENS = re.compile(r"[A-Za-z0-9]+|\S")


def test_markers_removed_and_offsets_point_at_the_nominals():
  e = semeval2010.strip_markers(
      'The <e1>e-mail</e1> came from the <e2>U.S. embassy</e2>, "quickly".',
      "x")
  assert e.text == 'The e-mail came from the U.S. embassy, "quickly".'
  assert e.text[e.subj_start:e.subj_end] == "e-mail"
  assert e.text[e.obj_start:e.obj_end] == "U.S. embassy"


def test_a_missing_space_at_a_marker_is_put_back_between_letters_only():
  e = semeval2010.strip_markers("The<e1>staff</e1> met <e2>them</e2>.", "x")
  assert e.text == "The staff met them."
  assert e.text[e.subj_start:e.subj_end] == "staff"
  assert e.text[e.obj_end:] == "."


def test_malformed_examples_are_one_line_naming_the_line(tmp_path):
  with pytest.raises(semeval2010.DataError, match="found"):
    semeval2010.strip_markers("<e2>a</e2> and <e1>b</e1>", "f:1")
  path = tmp_path / "bad.txt"
  path.write_text('1\t"The <e1>a</e1> of <e2>b</e2>."\nOther\nComment:\n\n'
                  '2 no tab here\nOther\n')
  with pytest.raises(semeval2010.DataError, match=r"bad.txt:5: expected"):
    semeval2010.read_semeval(str(path))
  with pytest.raises(semeval2010.DataError, match="cannot read"):
    semeval2010.read_semeval(str(tmp_path / "missing.txt"))


def test_the_raw_test_file_gives_test_json_tokens_spans_and_labels():
  raw = semeval2010.read_semeval(data_path(
      "relation", "semeval2010", "raw", "TEST_FILE_FULL.TXT"))
  records = tacred.read_tacred(data_path("relation", "semeval2010",
                                         "test.json"))
  assert len(raw) == len(records) == 2717
  for a, b in zip(raw, records):
    assert (a.guid, a.label) == (b.guid, b.label)
    assert _TOKENS.findall(a.text) == list(b.tokens)
    assert _TOKENS.findall(a.text[a.subj_start:a.subj_end]) == list(
        b.tokens[b.subj_start:b.subj_end + 1])
    assert _TOKENS.findall(a.text[a.obj_start:a.obj_end]) == list(
        b.tokens[b.obj_start:b.obj_end + 1])
