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

"""Span NER windows of a real LitBank excerpt (unit tier).

The committed excerpt (tests/fixtures/litbank_excerpt.tsv) with the unit
tier's cased vocab excerpt: its words split into up to 12 wordpieces and its
first sentence into 380, so windows of 128 cut at sentence ends and, in that
sentence, at word ends.
"""

import numpy as np
import pytest

from conftest import FIXTURES
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import span_ner
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.tasks import span_ner as span_ner_task

SEQ = 128


@pytest.fixture(scope="module")
def doc():
  return litbank_tsv.read_file(f"{FIXTURES}/litbank_excerpt.tsv")


@pytest.fixture(scope="module")
def windows(doc, small_vocab):
  tokenizer = tokenization.WordpieceTokenizer(small_vocab)
  return span_ner.encode_documents([doc], tokenizer, SEQ)


def test_windows_cut_at_sentence_ends_and_map_back_to_words(doc, windows):
  sentence_of = [s for s, sent in enumerate(doc.sentences) for _ in sent]
  words = []
  for w in windows:
    assert len(w.input_word_ids) <= SEQ
    assert w.words[0] == w.words[-1] == -1 and w.sentence_ids[0] == -1
    content = w.words[1:-1]
    words += content
    # A window ends at a sentence end unless its sentence outgrows a window.
    last = content[-1]
    if last + 1 < len(sentence_of):
      sentence_end = sentence_of[last + 1] != sentence_of[last]
      assert sentence_end or sentence_of[content[0]] == sentence_of[last]
      assert w.word_end[-2] == 1  # always at a word end
    # Sentence ids count from the window's first sentence.
    assert [s for s in w.sentence_ids[1:-1]] == [
        sentence_of[i] - sentence_of[content[0]] for i in content]
  # Every wordpiece once, in order; the 380-wordpiece sentence is cut.
  assert words == sorted(words) and sorted(set(words)) == list(
      range(len(doc.words)))
  assert len(windows) == 10 and len({w.words[1] for w in windows}) == 10
  in_windows = set()
  for w in windows:
    for s, e, label in w.entities:
      assert w.word_start[s] == 1 and w.word_end[e] == 1
      in_windows.add(litbank_tsv.Entity(
          w.words[s], w.words[e], span_ner.ENTITY_TYPES[label - 1]).key)
  gold = {e.key for e in doc.entities}
  assert in_windows <= gold
  # The cuts inside the two sentences longer than a window (at the last
  # basic word that fits, as served windows cut) split 7 of their entities.
  long = {s for w, v in zip(windows, windows[1:])
          for s in [sentence_of[w.words[-2]]] if sentence_of[v.words[1]] == s}
  assert long == {0, 3}
  split = gold - in_windows
  assert len(split) == 7 and all(sentence_of[s] in long for s, _, _ in split)


def test_bio_labels_are_the_outermost_entities(doc, windows):
  found = {e.key for w in windows for e in span_ner_task.flat_entities(
      w, np.maximum(np.asarray(w.bio_labels), 0))}
  outer = {e.key for e in litbank_tsv.outermost(doc.entities)}
  in_windows = {(w.words[s], w.words[e], span_ner.ENTITY_TYPES[k - 1])
                for w in windows for s, e, k in w.entities}
  assert found == outer & in_windows
  nested = {e.key for e in doc.entities} - outer
  assert nested and not found & nested


def test_coverage_counts_what_candidates_can_reach(doc, windows):
  cover = span_ner.coverage([doc], windows, max_span_width=24)
  assert (cover["gold"], cover["in_windows"]) == (60, 53)
  widths = [e - s + 1 for w in windows for s, e, _ in w.entities]
  assert cover["candidates"] == sum(x <= 24 for x in widths)
  assert cover["candidate_recall"] == pytest.approx(
      100 * cover["candidates"] / 60)


def test_dataset_pads_batches_and_numbers_windows(windows):
  ds = span_ner.dataset(windows, SEQ, 4, is_training=False)
  batches = list(ds)
  assert [int(f["input_word_ids"].shape[0]) for f, _ in batches] == [4, 4, 2]
  features, labels = batches[0]
  assert set(features) == set(span_ner.FEATURES)
  assert set(labels) == set(span_ner.LABELS)
  assert labels["window_index"].numpy().tolist() == [0, 1, 2, 3]
  w = windows[1]
  n = len(w.input_word_ids)
  np.testing.assert_array_equal(features["input_word_ids"][1, :n],
                                w.input_word_ids)
  assert int(features["input_mask"][1].numpy().sum()) == n
  assert (features["sentence_ids"][1, n:].numpy() == -1).all()
  k = len(w.entities)
  assert [tuple(x) for x in zip(labels["gold_starts"][1, :k].numpy(),
                                labels["gold_ends"][1, :k].numpy(),
                                labels["gold_labels"][1, :k].numpy())] == (
                                    w.entities)
  assert (labels["gold_labels"][1, k:].numpy() == 0).all()
  train = span_ner.dataset(windows, SEQ, 4, is_training=True, seed=1,
                           features=span_ner.ENCODER_FEATURES)
  seen = [int(i) for f, l in train.take(5) for i in l["window_index"]]
  assert len(seen) == 20 and set(seen) == set(range(10))
  assert set(next(iter(train))[0]) == set(span_ner.ENCODER_FEATURES)


def test_words_are_the_basic_words_served_text_has(doc, windows):
  """`Mrs.` and `pinky-white` are several words, as they are in natural
  text sent to extract_entities; entities still start and end on tokens."""
  for w in windows:
    for pos in range(1, len(w.words) - 1):
      token = doc.words[w.words[pos]]
      if w.word_start[pos] and w.words[pos - 1] == w.words[pos]:
        # A word start inside a token: at its punctuation or after it.
        assert any(not c.isalnum() for c in token), token
    for s, e, _ in w.entities:
      assert w.words[s - 1] != w.words[s] and w.words[e] != w.words[e + 1]
  split = {doc.words[w.words[p]] for w in windows
           for p in range(1, len(w.words) - 1)
           if w.word_start[p] and w.words[p - 1] == w.words[p]}
  assert {"Mrs.", "pinky-white", "St."} <= split, split
  basic = [b for w in windows for b in w.basic_words[1:-1]]
  assert basic == sorted(basic) and basic[-1] + 1 == sum(
      w.word_start.count(1) for w in windows)
