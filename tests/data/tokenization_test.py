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


# ----------------------------------------------------------------------------
# Character offsets into the original text (issue 45): an oracle that uses
# only `tokenize` on substrings of the text.

ODD_TEXTS = [
    "Anna moved from Zürich to Bonn.",
    "Zu\u0308rich and cafe\u0301 (combining marks)",
    "\ufb01ne \ufb02ow: ligatures",
    "\uff21\uff4e\uff4e\uff41 full-width",
    "a family \U0001F468\u200D\U0001F469\u200D\U0001F467 and \U0001F600!",
    "zero\u200bwidth non\u200cjoiner soft\u00adhyphen",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd and \u0645\u0631\u062d\u0628\u0627",
    "Note\x00 The letter was written by Elizabeth Bennet\x00.",
    "\ufeffByte order mark, \x01control\x1f chars\x7f",
    "Altpreußische Infanterie; İstanbul; ὀξύς oxys, KELVIN \u212a",
    "line\u2028separator\u2029paragraph\u00a0nbsp\u3000ideographic",
    "", "   ", "\u200d",
]


def assert_offsets_exact(tok, texts):
  """Every word's character span tokenizes, alone, to that word's pieces;
  what lies between words tokenizes to nothing; spans are in order."""
  ids, begin, end = tok.tokenize_words_with_offsets(tf.constant(texts))
  flat_ids, _ = tok.tokenize(tf.constant(texts))
  words, gaps, spans = [], [], []  # ((start, end), ids), substrings
  for text, w_ids, b, e, all_ids in zip(texts, ids.to_list(), begin.to_list(),
                                        end.to_list(), flat_ids.to_list()):
    assert [i for w in w_ids for i in w] == all_ids  # the ids of tokenize
    cursor = 0
    for word, wb, we in zip(w_ids, b, e):
      start, stop = wb[0], we[-1]
      assert start < stop <= len(text), (text, start, stop)
      assert all(start <= x < y <= stop for x, y in zip(wb, we))
      assert wb == sorted(wb) and we == sorted(we)
      if start < cursor:
        # One character that folds to several words (U+2033 -> two primes
        # under NFKC): those words are checked as one.
        assert words[-1][0][0] <= start, (text, start, cursor)
        (first, _), ids_so_far = words[-1]
        words[-1] = ((first, stop), ids_so_far + word)
      else:
        gaps.append(text[cursor:start])
        words.append(((start, stop), word))
      cursor = stop
    gaps.append(text[cursor:])
    spans.extend(text[a:z] for (a, z), _ in words[len(spans):])
  alone = tok.tokenize(tf.constant(spans))[0].to_list()
  for span, (_, expected), got in zip(spans, words, alone):
    assert got == expected, (span, got, expected)
  between = tok.tokenize(tf.constant(gaps))[0].to_list()
  assert not any(between), [g for g, x in zip(gaps, between) if x][:5]
  return len(words)


@pytest.mark.parametrize("lower_case", [False, True])
def test_offsets_are_exact_on_odd_strings(small_vocab, uncased_vocab,
                                          lower_case):
  tok = _tok(uncased_vocab if lower_case else small_vocab, lower_case)
  assert assert_offsets_exact(tok, ODD_TEXTS) > 40


def test_uncased_offsets_index_the_original_text(uncased_vocab):
  tok = _tok(uncased_vocab, lower_case=True)
  text = "Anna moved from Zürich to Bonn. Zu\u0308rich, \ufb01ne, Altpreußische"
  ids, begin, end = tok.tokenize_with_offsets(tf.constant([text]))
  spans = [text[b:e] for b, e in zip(begin.to_list()[0], end.to_list()[0])]
  assert spans[:7] == ["Anna", "moved", "from", "Zürich", "to", "Bonn", "."]
  # The combining mark belongs to the piece before it; ligatures stay whole.
  assert "Zu\u0308rich" in spans and "\ufb01ne" in spans
  assert "".join(spans[-4:]) == "Altpreußische"
  _, b_bytes, e_bytes = tok.tokenize_with_offsets(tf.constant([text]),
                                                  unit="BYTE")
  raw = text.encode("utf-8")
  assert [raw[b:e].decode("utf-8") for b, e in zip(
      b_bytes.to_list()[0], e_bytes.to_list()[0])] == spans
  assert ids.to_list() == tok.tokenize(tf.constant([text]))[0].to_list()


def test_nul_is_whitespace_and_does_not_cut_the_text(small_vocab):
  tok = _tok(small_vocab)
  with_nul = tok.tokenize(tf.constant(["Note\x00 The letter"]))[0].to_list()
  with_space = tok.tokenize(tf.constant(["Note  The letter"]))[0].to_list()
  assert with_nul == with_space and len(with_nul[0]) >= 3


def _accented_contexts(n):
  import json  # pylint: disable=g-import-not-at-top
  with open(data_path("squad", "dev-v1.1.json"), encoding="utf-8") as f:
    data = json.load(f)["data"]
  contexts = [p["context"] for a in data for p in a["paragraphs"]
              if any(ord(c) > 127 for c in p["context"])]
  return contexts[:n]


@pytest.mark.parametrize("lower_case", [False, True])
def test_offsets_are_exact_on_real_accented_text(cased_vocab, uncased_vocab,
                                                 lower_case):
  tok = _tok(uncased_vocab if lower_case else cased_vocab, lower_case)
  texts = _accented_contexts(150)
  with open(data_path("coref", "litbank", "conll",
                      "1064_the_masque_of_the_red_death_brat.conll"),
            encoding="utf-8") as f:
    words = [line.split("\t")[3] for line in f
             if line.strip() and not line.startswith("#")]
  texts.append(" ".join(words))
  assert assert_offsets_exact(tok, texts) > 15000


THAI = "ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน"[:35]  # 105 bytes
LONG_WORDS = [
    f"The answer is {THAI} here.",
    "ACGT" * 30,
    f"Mr. Bennet {THAI}, London.",
    "x" * 120 + " y",
    "see https://example.org/" + "a1b2" * 30 + " now",
    "カタカナ" * 9 + "。",
]


@pytest.mark.parametrize("lower_case", [False, True])
def test_an_unk_covers_its_whole_word(cased_vocab, uncased_vocab, lower_case):
  """A word over 100 bytes (Thai, DNA, an identifier, a kana run) is one
  [UNK] whose offsets are the whole word, not its first 5 characters."""
  tok = _tok(uncased_vocab if lower_case else cased_vocab, lower_case)
  ids, begin, end = tok.tokenize_with_offsets(tf.constant(LONG_WORDS))
  unks = [[text[b:e] for i, b, e in zip(row_ids, row_b, row_e)
           if i == tok.vocab.unk_id]
          for text, row_ids, row_b, row_e in zip(
              LONG_WORDS, ids.to_list(), begin.to_list(), end.to_list())]
  assert unks == [[THAI], ["ACGT" * 30], [THAI], ["x" * 120],
                  ["a1b2" * 30], ["カタカナ" * 9]]
  # The words next to one keep theirs: "Bennet" and "," around the Thai run.
  text = LONG_WORDS[2]
  spans = [text[b:e] for b, e in zip(begin[2].numpy(), end[2].numpy())]
  assert "".join(spans) == text.replace(" ", "")
  assert assert_offsets_exact(tok, LONG_WORDS) >= 25
