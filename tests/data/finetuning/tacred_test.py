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

"""data/finetuning/tacred: the three entity modes, token by token."""

import pytest

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import classification_records
from official_spanbert.data.finetuning import tacred

EXAMPLE = tacred.RelationExample(
    "1", ("The", "author", "of", "a", "keygen", "uses", "a", "disassembler",
          "."), 1, 1, 7, 7, "ENTITY", "ENTITY", "Instrument-Agency(e2,e1)")
# The object comes first in the sentence here.
REVERSED = tacred.RelationExample(
    "2", ("Bennet", "wrote", "to", "Mr", ".", "Collins"), 3, 5, 0, 0,
    "PERSON", "PERSON", "per:other")


def _tokens(vocab, ids):
  return [vocab.tokens[i] for i in ids]


@pytest.fixture(name="marker_vocab", scope="module")
def _marker_vocab(small_vocab, tmp_path_factory):
  """The unit tier's vocab excerpt with [unused1..8] after [PAD] and the
  examples' words."""
  with open(small_vocab, encoding="utf-8") as f:
    tokens = f.read().split("\n")
  tokens = [t for t in tokens if t]
  words = {w for e in (EXAMPLE, REVERSED) for w in e.tokens} - set(tokens)
  tokens = tokens[:1] + [f"[unused{n}]" for n in range(1, 9)] + tokens[1:] + (
      sorted(words))
  path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
  path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
  return str(path)


@pytest.fixture(name="tokenizer", scope="module")
def _tokenizer(marker_vocab):
  return tokenization.WordpieceTokenizer(marker_vocab)


@pytest.mark.parametrize("mode,expected", [
    ("mask", ["[CLS]", "The", "[SUBJ-ENTITY]", "of", "a", "keygen", "uses",
              "a", "[OBJ-ENTITY]", ".", "[SEP]"]),
    ("marker", ["[CLS]", "The", "[E1]", "author", "[/E1]", "of", "a",
                "keygen", "uses", "a", "[E2]", "disassembler", "[/E2]", ".",
                "[SEP]"]),
    ("typed_marker", ["[CLS]", "The", "[SUBJ-ENTITY]", "author",
                      "[/SUBJ-ENTITY]", "of", "a", "keygen", "uses", "a",
                      "[OBJ-ENTITY]", "disassembler", "[/OBJ-ENTITY]", ".",
                      "[SEP]"]),
])
def test_modes_put_markers_around_or_in_place_of_the_words(tokenizer, mode,
                                                           expected):
  markers = tacred.entity_markers([EXAMPLE], tokenizer.vocab, mode)
  by_id = {i: name for name, i in markers.items()}
  ids, segments, cut = tacred.encode_relations(tokenizer, [EXAMPLE], markers,
                                               64, mode)
  words = [by_id.get(i) or tokenizer.vocab.tokens[i] for i in ids[0]]
  # Words are wordpieced: join ## continuations to compare with the tokens.
  joined = []
  for w in words:
    if w.startswith("##"):
      joined[-1] += w[2:]
    else:
      joined.append(w)
  assert joined == expected
  assert segments == [[0] * len(ids[0])] and cut == 0
  # Markers take [unused1], [unused2], ... in sorted order of their names.
  assert [tokenizer.vocab.tokens[markers[name]] for name in sorted(markers)
          ] == [f"[unused{n}]" for n in range(1, len(markers) + 1)]


def test_start_marker_ids_name_the_markers_that_open_each_entity(tokenizer):
  for mode in tacred.ENTITY_MODES:
    markers = tacred.entity_markers([EXAMPLE, REVERSED], tokenizer.vocab,
                                    mode)
    starts = tacred.start_marker_ids(markers, mode)
    names = {i: n for n, i in markers.items()}
    subject = sorted(names[i] for i in starts["subject"])
    obj = sorted(names[i] for i in starts["object"])
    if mode == "marker":
      assert (subject, obj) == (["[E1]"], ["[E2]"])
    else:
      assert subject == ["[SUBJ-ENTITY]", "[SUBJ-PERSON]"]
      assert obj == ["[OBJ-ENTITY]", "[OBJ-PERSON]"]


def test_an_object_before_the_subject_keeps_each_entitys_markers(tokenizer):
  markers = tacred.entity_markers([REVERSED], tokenizer.vocab, "marker")
  ids, _, _ = tacred.encode_relations(tokenizer, [REVERSED], markers, 64,
                                      "marker")
  by_id = {i: name for name, i in markers.items()}
  words = [by_id.get(i) or tokenizer.vocab.tokens[i] for i in ids[0]]
  assert words[:4] == ["[CLS]", "[E2]", "Bennet", "[/E2]"]
  assert words[-6:] == ["[E1]", "Mr", ".", "Collins", "[/E1]", "[SEP]"]


def test_unknown_mode_and_too_few_unused_entries_are_one_line(tokenizer,
                                                              tmp_path):
  with pytest.raises(tacred.DataError, match="entity mode 'tags' is not one"):
    tacred.entity_markers([EXAMPLE], tokenizer.vocab, "tags")
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(["[PAD]", "[unused1]", "[UNK]", "[CLS]", "[SEP]",
                              "[MASK]", "the"]) + "\n")
  small = tokenization.load_vocab(str(vocab))
  with pytest.raises(tacred.DataError, match=r"has no \[unused2\]: entity "
                     r"mode 'marker' needs 4 entries"):
    tacred.entity_markers([EXAMPLE], small, "marker")


def test_records_meta_names_the_mode_markers_and_start_ids(tmp_path,
                                                           marker_vocab):
  small_vocab = marker_vocab
  path = tmp_path / "train.json"
  path.write_text("""[{"id": "1", "token": ["The", "author", "of", "a", "keygen",
  "."], "subj_start": 1, "subj_end": 1, "obj_start": 4, "obj_end": 4,
  "subj_type": "ENTITY", "obj_type": "ENTITY", "relation": "no_relation"}]""")
  meta = classification_records.create_finetuning_data(
      "tacred", small_vocab, str(tmp_path / "out"), train_file=str(path),
      entity_mode="typed_marker")
  assert meta["entity_mode"] == "typed_marker"
  assert set(meta["entity_markers"]) == {"[SUBJ-ENTITY]", "[/SUBJ-ENTITY]",
                                         "[OBJ-ENTITY]", "[/OBJ-ENTITY]"}
  vocab = tokenization.load_vocab(small_vocab)
  ids = {t: i for i, t in enumerate(vocab.tokens)}
  assert meta["entity_start_ids"] == {
      "subject": [ids[meta["entity_markers"]["[SUBJ-ENTITY]"]]],
      "object": [ids[meta["entity_markers"]["[OBJ-ENTITY]"]]]}
  with pytest.raises(tacred.DataError, match="entity mode 'tags'"):
    classification_records.create_finetuning_data(
        "tacred", small_vocab, str(tmp_path / "out2"), train_file=str(path),
        entity_mode="tags")
  # Test records share the earlier records' labels and markers.
  again = classification_records.create_finetuning_data(
      "tacred", small_vocab, str(tmp_path / "out3"), eval_file=str(path),
      entity_mode="typed_marker", labels_from=meta)
  assert again["labels"] == meta["labels"]
  assert again["entity_markers"] == meta["entity_markers"]
  with pytest.raises(tacred.DataError, match="entity mode 'typed_marker', "
                     "not 'mask'"):
    classification_records.create_finetuning_data(
        "tacred", small_vocab, str(tmp_path / "out4"), eval_file=str(path),
        entity_mode="mask", labels_from=meta)
