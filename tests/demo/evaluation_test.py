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

"""Unit tests of the demo's held-out split and sentence picking."""

from official_spanbert.demo import evaluation


def test_split_documents_keeps_every_nth_document_out(tmp_path):
  corpus = tmp_path / "c.txt"
  docs = [f"Document {i} line one.\nDocument {i} line two." for i in range(10)]
  corpus.write_text("\n\n".join(docs) + "\n", encoding="utf-8")
  train, heldout = tmp_path / "t.txt", tmp_path / "h.txt"
  counts = evaluation.split_documents(str(corpus), str(train), str(heldout),
                                      every=3)
  assert counts == {"train_documents": 7, "heldout_documents": 3}
  held = heldout.read_text(encoding="utf-8").strip().split("\n\n")
  kept = train.read_text(encoding="utf-8").strip().split("\n\n")
  assert held == [docs[2], docs[5], docs[8]]
  assert sorted(held + kept) == sorted(docs)


def test_pick_sentences_masks_one_in_vocab_word_per_document(tmp_path):
  heldout = tmp_path / "h.txt"
  heldout.write_text(
      "Short line.\nReturn the number of bytes written to the open file "
      "object. More text.\nAnother sentence from the same document that "
      "is long enough to pick.\n\nThis function copies files and whole "
      "directory trees to another place on disk.\n", encoding="utf-8")
  vocab = ["[PAD]", "number", "bytes", "written", "files", "whole",
           "directory", "copies"]
  picked = evaluation.pick_sentences(str(heldout), vocab, count=5)
  assert [p["word"] for p in picked] == ["written", "directory"]
  assert picked[0]["masked"] == ("Return the number of bytes [MASK] to the "
                                 "open file object.")
