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

"""LitBank's entity tsv: reading nested BIO layers, writing them back.

Unit tier: the committed excerpt of a real file (tests/fixtures/
litbank_excerpt.tsv: five tag columns, entities four deep) and malformed
rows. Integration tier: all 100 files of the shared data, checked against
counts taken from the raw tag columns without the reader.
"""

import collections
import glob
import os
import re

import pytest

from conftest import FIXTURES, data_path
from official_spanbert.data.finetuning import split_lists
from official_spanbert.data.finetuning import litbank_tsv

EXCERPT = os.path.join(FIXTURES, "litbank_excerpt.tsv")


def _raw_counts(paths):
  """(layer, type) -> number of B- tags, from the columns as text."""
  counts = collections.Counter()
  for path in paths:
    with open(path, encoding="utf-8") as f:
      for line in f:
        for layer, tag in enumerate(line.rstrip("\n").split("\t")[1:], 1):
          if tag.startswith("B-"):
            counts[layer, tag[2:]] += 1
  return counts


def test_reads_the_nested_layers_of_a_real_excerpt():
  doc = litbank_tsv.read_file(EXCERPT)
  assert doc.name == "litbank_excerpt"
  assert len(doc.sentences) == 8 and doc.num_layers == 5
  counts = collections.Counter((e.layer, e.type) for e in doc.entities)
  assert counts == _raw_counts([EXCERPT])
  words = doc.words

  def text(e):
    return " ".join(words[e.start:e.end + 1])

  # The four-deep nest of sentence 3, innermost first.
  nest = [e for e in doc.entities if e.start >= 35 and e.end <= 50]
  assert [(text(e), e.type, e.layer) for e in sorted(
      nest, key=lambda e: e.layer)] == [
          ("Cuthbert", "PER", 1), ("the old Cuthbert place", "FAC", 2),
          ("the woods of the old Cuthbert place", "LOC", 3),
          ("a brook that had its source away back in the woods of the old "
           "Cuthbert place", "LOC", 4)]
  assert litbank_tsv.Entity(2, 4, "PER", 2) in doc.entities  # Mrs. R. Lynde
  assert litbank_tsv.Entity(2, 2, "PER", 1) in doc.entities  # Mrs.


def test_writes_the_excerpt_back_byte_for_byte(tmp_path):
  doc = litbank_tsv.read_file(EXCERPT)
  out = tmp_path / "out.tsv"
  litbank_tsv.write_file(str(out), doc.sentences, doc.entities,
                         doc.num_layers)
  with open(EXCERPT, "rb") as f:
    assert out.read_bytes() == f.read()
  # Layers come from the nesting, not from the entities' own.
  stripped = [litbank_tsv.Entity(e.start, e.end, e.type)
              for e in reversed(doc.entities)]
  assert sorted(litbank_tsv.assign_layers(stripped)) == doc.entities


def test_outermost_entities_are_a_flat_tagging():
  doc = litbank_tsv.read_file(EXCERPT)
  top = litbank_tsv.outermost(doc.entities)
  assert len(top) == 37 and len(doc.entities) == 60
  assert all(a.end < b.start for a, b in zip(top, top[1:]))
  assert litbank_tsv.Entity(35, 50, "LOC", 4) in top
  # Two types on one span: the higher layer is the outer one.
  same = [litbank_tsv.Entity(0, 0, "ORG", 1), litbank_tsv.Entity(0, 0, "PER", 2)]
  assert litbank_tsv.outermost(same) == same[1:]


def test_bio_spans_strict_and_as_a_tagger_is_read():
  tags = ["B-PER", "I-PER", "O", "I-LOC", "I-LOC", "B-GPE", "B-GPE", "I-GPE"]
  assert litbank_tsv.bio_spans(tags, strict=False) == [
      (0, 1, "PER"), (3, 4, "LOC"), (5, 5, "GPE"), (6, 7, "GPE")]
  with pytest.raises(litbank_tsv.TsvError, match="token 4: I-LOC continues "
                     "no LOC entity"):
    litbank_tsv.bio_spans(tags)


def test_crossing_entities_cannot_be_written(tmp_path):
  with pytest.raises(ValueError, match="cross"):
    litbank_tsv.write_file(str(tmp_path / "x.tsv"), [["a", "b", "c"]], [
        litbank_tsv.Entity(0, 1, "PER"), litbank_tsv.Entity(1, 2, "LOC")])
  with pytest.raises(ValueError, match="outside the document's 3 words"):
    litbank_tsv.write_file(str(tmp_path / "x.tsv"), [["a", "b", "c"]],
                           [litbank_tsv.Entity(2, 3, "PER")])


def test_four_columns_without_the_trailing_tab(tmp_path):
  path = tmp_path / "four.tsv"
  path.write_text("Mr.\tB-PER\tB-PER\tO\tO\nBennet\tO\tI-PER\tO\tO\n\n"
                  "Longbourn\tB-GPE\tO\tO\tO\n", encoding="utf-8")
  doc = litbank_tsv.read_file(str(path))
  assert doc.num_layers == 4 and doc.sentences == [["Mr.", "Bennet"],
                                                   ["Longbourn"]]
  assert [e.key for e in doc.entities] == [(0, 0, "PER"), (0, 1, "PER"),
                                           (2, 2, "GPE")]


@pytest.mark.parametrize("rows, line, message", [
    (["Mr.\tB-PER\tO\tO\tO\t", "Bennet\tI-PRE\tO\tO\tO\t"], 2,
     "layer 1: unknown tag 'I-PRE'"),
    (["Mr.\tO\tO\tO\tO\t", "Bennet\tI-PER\tO\tO\tO\t"], 2,
     "layer 1: I-PER continues no PER entity (it follows O)"),
    (["Mr.\tB-LOC\tO\tO\tO\t", "Bennet\tO\tI-PER\tO\tO\t"], 2,
     "layer 2: I-PER continues no PER entity (it follows O)"),
    (["Mr.\tB-LOC\tO\tO\tO\t", "Bennet\tI-PER\tO\tO\tO\t"], 2,
     "layer 1: I-PER continues no PER entity (it follows B-LOC)"),
    (["Mr.\tB-PER\tO\tO\tO\t", "", "Bennet\tI-PER\tO\tO\tO\t"], 3,
     "I-PER continues no PER entity (it follows the sentence start)"),
    (["Mr.\tB-PER\tO\tO\tO\t", "Bennet\tO\tO\tO\t"], 2,
     "3 tag columns, but the file's first row has 4"),
    (["Mr.\tB-PER\tO\tO\tO\t", "\tO\tO\tO\tO\t"], 2, "empty token"),
    (["Mr.\tB-PER\tO\tO\tO\t", "Bennet"], 2, "no tag columns"),
])
def test_malformed_rows_name_the_file_line_and_the_fault(tmp_path, rows, line,
                                                         message):
  path = tmp_path / "bad.tsv"
  path.write_text("\n".join(["Chapter\tO\tO\tO\tO\t", ""] + rows) + "\n",
                  encoding="utf-8")
  with pytest.raises(litbank_tsv.TsvError) as error:
    litbank_tsv.read_file(str(path))
  assert str(error.value).startswith(f"{path}:{line + 2}: ")
  assert message in str(error.value)


def test_a_file_that_is_not_utf8(tmp_path):
  path = tmp_path / "latin1.tsv"
  path.write_bytes("Bront\xeb\tB-PER\tO\tO\tO\t\n".encode("latin-1"))
  with pytest.raises(litbank_tsv.TsvError,
                     match=re.escape(f"{path}: not UTF-8")):
    litbank_tsv.read_file(str(path))


def test_split_lists_name_files_in_a_sibling_folder(tmp_path):
  (tmp_path / "splits" / "0").mkdir(parents=True)
  (tmp_path / "tsv").mkdir()
  (tmp_path / "tsv" / "b.tsv").write_text("x\tO\t\n", encoding="utf-8")
  lst = tmp_path / "splits" / "0" / "dev.txt"
  lst.write_text("b\n\na\n", encoding="utf-8")
  assert split_lists.document_files(str(lst), "tsv", ".tsv") == [
      str(tmp_path / "tsv" / "b.tsv"), str(tmp_path / "tsv" / "a.tsv")]
  assert split_lists.document_files(str(tmp_path / "tsv" / "*.tsv"), "tsv",
                                    ".tsv") == [str(tmp_path / "tsv" / "b.tsv")]
  with pytest.raises(litbank_tsv.TsvError, match="matches no file"):
    split_lists.document_files(str(tmp_path / "none*.tsv"), "tsv", ".tsv",
                               litbank_tsv.TsvError)


def test_every_litbank_file_reads_and_writes_back(tmp_path):
  root = data_path("ner", "litbank")
  paths = sorted(glob.glob(os.path.join(root, "tsv", "*.tsv")))
  assert len(paths) == 100
  docs = [litbank_tsv.read_file(p) for p in paths]
  counts = collections.Counter((e.layer, e.type) for d in docs
                               for e in d.entities)
  raw = _raw_counts(paths)
  assert counts == raw
  # The dataset's README: 13,912 entities, 210,532 tokens; four layers,
  # a fifth column of O in some files.
  assert sum(counts.values()) == 13_912
  assert sum(len(d.words) for d in docs) == 210_532
  assert {layer for layer, _ in counts} == {1, 2, 3, 4}
  assert {d.num_layers for d in docs} == {4, 5}
  for path, doc in zip(paths, docs):
    out = tmp_path / os.path.basename(path)
    litbank_tsv.write_file(str(out), doc.sentences, doc.entities,
                           doc.num_layers)
    with open(path, "rb") as f:
      assert out.read_bytes() == f.read(), path
  for part, size in (("train", 80), ("dev", 10), ("test", 10)):
    files = split_lists.document_files(
        os.path.join(root, "splits", "0", f"{part}.txt"), "tsv", ".tsv")
    assert len(files) == size and all(os.path.exists(f) for f in files)
