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

"""Tests of the tf.text WordPiece tokenizer and vocab checks."""

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.data import tokenization
from conftest import data_path


def _tok(vocab, lower_case=False):
  return tokenization.WordpieceTokenizer(vocab, lower_case=lower_case)


def _pieces(tok, text):
  ids, starts = tok.tokenize(tf.constant([text]))
  return ([t.decode() for t in tok.detokenize_ids(ids.flat_values).numpy()],
          starts.flat_values.numpy().tolist())


def test_cased_basic_tokenization(cased_vocab):
  tok = _tok(cased_vocab)
  pieces, starts = _pieces(tok, "Héllo, world! naïve résumé")
  # Case and accents are kept; punctuation splits into its own words.
  assert pieces[:6] == ["H", "##é", "##llo", ",", "world", "!"]
  assert "##ï" in pieces or "na" in pieces
  for p, s in zip(pieces, starts):
    assert s == (0 if p.startswith("##") else 1)


def test_cjk_characters_are_split(cased_vocab):
  tok = _tok(cased_vocab)
  ids, starts = tok.tokenize(tf.constant(["日本"]))
  assert ids.row_lengths().numpy().tolist() == [2]
  assert starts.flat_values.numpy().tolist() == [1, 1]


def test_special_ids_of_cased_vocab(cased_vocab):
  vocab = tokenization.load_vocab(cased_vocab)
  assert vocab.size == 28996
  assert (vocab.pad_id, vocab.unk_id, vocab.cls_id, vocab.sep_id,
          vocab.mask_id) == (0, 100, 101, 102, 103)
  ordinary = vocab.ordinary_ids()
  assert 103 not in ordinary and 1 not in ordinary and 999 in ordinary


def test_uncased_flag_lowercases_and_strips_accents(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                              "hello", "cafe", "##s"]) + "\n")
  cased = _tok(str(vocab))
  uncased = _tok(str(vocab), lower_case=True)
  assert _pieces(uncased, "HELLO Cafés")[0] == ["hello", "cafe", "##s"]
  assert _pieces(cased, "HELLO Cafés")[0] == ["[UNK]", "[UNK]"]


def test_empty_and_whitespace_strings(cased_vocab):
  tok = _tok(cased_vocab)
  ids, starts = tok.tokenize(tf.constant(["", "   \t\n", "a"]))
  assert ids.row_lengths().numpy().tolist() == [0, 0, 1]
  assert starts.row_lengths().numpy().tolist() == [0, 0, 1]


def test_works_inside_tf_data(cased_vocab):
  tok = _tok(cased_vocab)
  ds = tf.data.Dataset.from_tensor_slices(["one two", "three"]).batch(2)
  ds = ds.map(lambda x: tok.tokenize(x)[0].row_lengths())
  assert next(iter(ds)).numpy().tolist() == [2, 1]


def test_word_starts_match_hash_rule_on_real_text(cased_vocab):
  tok = _tok(cased_vocab)
  with open(data_path("corpus", "austen.txt"), encoding="utf-8") as f:
    lines = [l for l in (next(f) for _ in range(400)) if l.strip()]
  ids, starts = tok.tokenize(tf.constant(lines))
  toks = tok.detokenize_ids(ids.flat_values).numpy()
  expect = np.array([0 if t.startswith(b"##") else 1 for t in toks])
  np.testing.assert_array_equal(starts.flat_values.numpy(), expect)
  assert len(toks) > 10000


@pytest.mark.parametrize("missing", ["[MASK]", "[CLS]"])
def test_vocab_missing_special_token(tmp_path, missing):
  tokens = [t for t in tokenization.REQUIRED_SPECIAL_TOKENS if t != missing]
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(tokens + ["a"]) + "\n")
  with pytest.raises(tokenization.VocabError, match=r"lacks .*" +
                     missing.replace("[", r"\[").replace("]", r"\]")):
    tokenization.load_vocab(str(vocab))


def test_vocab_errors(tmp_path):
  with pytest.raises(tokenization.VocabError, match="does not exist"):
    tokenization.load_vocab(str(tmp_path / "nope.txt"))
  dup = tmp_path / "dup.txt"
  dup.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\na\n")
  with pytest.raises(tokenization.VocabError, match=r"dup.txt:7: .*'a'"):
    tokenization.load_vocab(str(dup))


def test_unicode_space_separators_split_words(cased_vocab):
  tok = _tok(cased_vocab)
  for space in ("\u00a0", "\u3000", "\u2009"):
    pieces, starts = _pieces(tok, f"a{space}b")
    assert pieces == ["a", "b"] and starts == [1, 1]
