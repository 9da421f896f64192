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

"""WordPiece tokenization with tf.text, usable in tf.data and in SavedModels."""

import dataclasses
import hashlib
from typing import Dict, List, Tuple

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops import bert_tokenizer

# Tokens every vocab used here must contain.
REQUIRED_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# Read as " " before tokenizing: space separators (BERT's whitespace, not
# tf.text's cased tokenizer's), the line and paragraph separators (Python's
# whitespace, the words of SQuAD's contexts) and NUL.
SPACE_LIKE = r"[\p{Zs}\x{2028}\x{2029}\x00]"


class VocabError(ValueError):
  """A vocabulary file that cannot be used."""


@dataclasses.dataclass(frozen=True)
class Vocab:
  """The contents of a WordPiece vocab file.

  Attributes:
    path: the file it was read from.
    tokens: one token per id.
    special_ids: id of each of REQUIRED_SPECIAL_TOKENS.
  """
  path: str
  tokens: Tuple[str, ...]
  special_ids: Dict[str, int]

  @property
  def size(self) -> int:
    return len(self.tokens)

  @property
  def pad_id(self) -> int:
    return self.special_ids["[PAD]"]

  @property
  def unk_id(self) -> int:
    return self.special_ids["[UNK]"]

  @property
  def cls_id(self) -> int:
    return self.special_ids["[CLS]"]

  @property
  def sep_id(self) -> int:
    return self.special_ids["[SEP]"]

  @property
  def mask_id(self) -> int:
    return self.special_ids["[MASK]"]

  @property
  def fingerprint(self) -> str:
    """16 hex digits of the sha256 of the tokens in id order."""
    digest = hashlib.sha256("\n".join(self.tokens).encode("utf-8"))
    return digest.hexdigest()[:16]

  def ordinary_ids(self) -> List[int]:
    """Ids a random replacement may draw: no [..] specials, no [unusedN]."""
    return [i for i, t in enumerate(self.tokens)
            if not (t.startswith("[") and t.endswith("]"))]


def load_vocab(path: str) -> Vocab:
  """Reads and validates a vocab file (one token per line, id = line number).

  Args:
    path: the vocab file.

  Returns:
    The Vocab.

  Raises:
    VocabError: the file is missing, empty, has duplicate tokens or lacks one
      of REQUIRED_SPECIAL_TOKENS.
  """
  if not tf.io.gfile.exists(path):
    raise VocabError(f"vocab file {path} does not exist")
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    line = raw[:e.start].count(b"\n") + 1
    raise VocabError(f"{path}:{line}: vocab is not valid UTF-8") from None
  tokens = text.split("\n")
  if tokens and tokens[-1] == "":
    tokens.pop()
  tokens = [t.rstrip("\r") for t in tokens]
  if not tokens:
    raise VocabError(f"vocab file {path} is empty")
  seen = {}
  for i, t in enumerate(tokens):
    if t in seen:
      raise VocabError(f"{path}:{i + 1}: token {t!r} already on line "
                       f"{seen[t] + 1}; each token must appear once")
    seen[t] = i
  missing = [t for t in REQUIRED_SPECIAL_TOKENS if t not in seen]
  if missing:
    raise VocabError(
        f"vocab file {path} lacks the special token(s) {', '.join(missing)}; "
        "add them (tools/build_vocab.py reserves them) or use another vocab")
  return Vocab(path=path, tokens=tuple(tokens),
               special_ids={t: seen[t] for t in REQUIRED_SPECIAL_TOKENS})


def merge_words(first: tf.RaggedTensor, *alike: tf.RaggedTensor
                ) -> Tuple[tf.RaggedTensor, ...]:
  """[batch, (words), (pieces)] tensors of one partition (a tokenization's
  ids, offsets, flags) as [batch, (pieces)], merged once: each merge_dims
  adds its own checks of the splits to a traced graph.

  Example:
    ids, begin, end = merge_words(*tokenizer.tokenize_words_with_offsets(t))
  """
  merged = first.merge_dims(-2, -1)
  return (merged,) + tuple(merged.with_flat_values(x.flat_values)
                           for x in alike)


class WordpieceTokenizer(tf.Module):
  """BERT tokenization (basic split + WordPiece) with word-start flags.

  Basic tokenization follows BERT: whitespace and control characters split and
  are dropped, punctuation and CJK characters become tokens of their own. With
  `lower_case=False` (the cased SpanBERT vocab) text is neither lower-cased nor
  stripped of accents; with `lower_case=True` it is case-folded (NFKC),
  NFD-normalised and stripped of accents, like BERT's uncased models.
  `tokenize_with_offsets` gives offsets into the original text for both.

  Example:
    tokenizer = WordpieceTokenizer("vocab.txt", lower_case=True)
    ids, begin, end = tokenizer.tokenize_with_offsets(
        tf.constant(["Anna moved to Zürich."]))
    # begin/end: character offsets of each wordpiece in the original text.

  Args:
    vocab_file: WordPiece vocab, one token per line.
    lower_case: whether to use uncased tokenization.
  """

  def __init__(self, vocab_file: str, lower_case: bool = False):
    super().__init__(name="wordpiece_tokenizer")
    self.vocab = load_vocab(vocab_file)
    self.lower_case = lower_case
    initializer = tf.lookup.KeyValueTensorInitializer(
        keys=tf.constant(self.vocab.tokens),
        values=tf.range(self.vocab.size, dtype=tf.int64))
    self._table = tf.lookup.StaticHashTable(initializer, default_value=-1)
    self._bert = tf_text.BertTokenizer(
        self._table, lower_case=lower_case, token_out_type=tf.int64,
        unknown_token="[UNK]")
    # The two steps of a cased BertTokenizer, run apart on text this class
    # has normalized itself (normalize_chars): the basic split (the words,
    # whose extent an [UNK] takes) and WordPiece on its words.
    self._basic_on_normalized = bert_tokenizer.BasicTokenizer(
        lower_case=False)
    self._wordpiece = tf_text.WordpieceTokenizer(
        self._table, token_out_type=tf.int64, unknown_token="[UNK]")

  def tokenize(self, strings: tf.Tensor) -> Tuple[tf.RaggedTensor,
                                                   tf.RaggedTensor]:
    """Tokenizes a batch of strings.

    Args:
      strings: a 1-D string Tensor.

    Returns:
      (ids, word_starts): int64 RaggedTensors of shape [batch, (pieces)];
      word_starts is 1 where a wordpiece starts a word (is not a `##`
      continuation) and 0 elsewhere.
    """
    strings = tf.strings.regex_replace(strings, SPACE_LIKE, " ")
    pieces = self._bert.tokenize(strings)  # [batch, words, pieces]
    per_word = pieces.values  # [total words, (pieces)]
    word_starts = tf.cast(
        tf.equal(tf.ragged.range(per_word.row_lengths()), 0), tf.int64)
    return merge_words(pieces, pieces.with_values(word_starts))

  def normalize_chars(self, chars: tf.Tensor) -> tf.Tensor:
    """Each character (a string of one) as the tf.text tokenizer reads it.

    The steps and their order are tf.text's BasicTokenizer's (case folding
    with NFKC, NFD, dropping combining marks, then control and format
    characters -> " "), applied to one character at a time so that every
    byte of the result knows the character it came from. Space separators,
    U+2028/U+2029 (whitespace to Python, not to tf.text) and NUL become " ".
    """
    chars = tf.strings.regex_replace(chars, SPACE_LIKE, " ")
    if self.lower_case:
      chars = tf_text.case_fold_utf8(chars)
      chars = tf_text.normalize_utf8(chars, "NFD")
      chars = tf.strings.regex_replace(chars, r"\p{Mn}", "")
    return tf.strings.regex_replace(chars, r"\p{Cc}|\p{Cf}", " ")

  def tokenize_words_with_offsets(self, strings: tf.Tensor, unit: str = "CHAR"
                                  ) -> Tuple[tf.RaggedTensor, tf.RaggedTensor,
                                             tf.RaggedTensor]:
    """(ids, begin, end), each [batch, (words), (pieces)], offsets exact.

    Offsets index the original `strings` for every tokenizer setting:
    lower-casing, accent stripping, ligatures or full-width letters that
    fold to other lengths, and characters the tokenizer drops (soft hyphens,
    zero-width joiners, NUL) no longer shift them. A piece ends after its
    last character and the combining marks that follow it. Ids equal
    `tokenize`'s. An [UNK] covers its whole word (a word over 100 bytes
    is one [UNK]).

    Args:
      strings: a 1-D string Tensor (invalid UTF-8 reads as U+FFFD).
      unit: "CHAR" (Unicode characters) or "BYTE" (UTF-8 bytes).
    """
    if unit not in ("CHAR", "BYTE"):
      raise ValueError(f"unit must be CHAR or BYTE, not {unit!r}")
    chars = tf.strings.unicode_split(strings, "UTF-8", errors="replace")
    normal = self.normalize_chars(chars.flat_values)  # [chars]
    normal_bytes = tf.cast(tf.strings.length(normal), tf.int64)
    text = tf.strings.reduce_join(chars.with_flat_values(normal), axis=1)
    # BertTokenizer.tokenize_with_offsets in its two steps, the basic split
    # run once (its words' offsets are needed below too) and the pieces'
    # offsets within their word moved by the word's start with one gather
    # (BertTokenizer broadcasts a ragged add: a third of the trace of a QA
    # export's `answer`, all of it for the same values).
    words, word_begin, word_end = (
        self._basic_on_normalized.tokenize_with_offsets(text))
    ids, begin, end = self._wordpiece.tokenize_with_offsets(words)
    per_word = begin.values  # [words, (pieces)]
    word = per_word.value_rowids()
    word_start = tf.gather(word_begin.flat_values, word)
    # A word's first piece begins where the word does, its last ends where
    # the word does: tf.text ends the [UNK] of a word over 100 bytes (Thai,
    # DNA, URLs) 5 bytes after its start (len("[UNK]")); it stands for the
    # whole word.
    index = tf.ragged.range(per_word.row_lengths()).flat_values
    begin = begin.with_flat_values(tf.where(
        tf.equal(index, 0), word_start, begin.flat_values + word_start))
    end = end.with_flat_values(tf.where(
        tf.equal(index, tf.gather(per_word.row_lengths(), word) - 1),
        tf.gather(word_end.flat_values, word), end.flat_values + word_start))
    # Each byte of the normalized batch -> its character (batch-global).
    source = tf.repeat(tf.range(tf.size(normal, tf.int64)), normal_bytes)
    text_start = tf.cumsum(tf.cast(tf.strings.length(text), tf.int64), exclusive=True)
    row = tf.gather(begin.value_rowids(), per_word.value_rowids())
    first = tf.gather(text_start, row)
    begin_char = tf.gather(source, begin.flat_values + first)
    last_char = tf.gather(source, end.flat_values - 1 + first)
    # End after the last character and the dropped marks that follow it:
    # the next character with bytes of its own (or the end of the row).
    kept = tf.cumsum(tf.cast(normal_bytes > 0, tf.int64))
    end_char = tf.searchsorted(kept[tf.newaxis],
                               tf.gather(kept, last_char)[tf.newaxis] + 1,
                               out_type=tf.int64)[0]
    end_char = tf.minimum(end_char, tf.gather(chars.row_limits(), row))
    if unit == "CHAR":
      row_first = tf.gather(chars.row_starts(), row)
      begin_at, end_at = begin_char - row_first, end_char - row_first
    else:
      char_bytes = tf.cast(tf.strings.length(chars.flat_values), tf.int64)
      byte_at = tf.concat([[0], tf.cumsum(char_bytes)], 0)
      row_first = tf.gather(byte_at, tf.gather(chars.row_starts(), row))
      begin_at = tf.gather(byte_at, begin_char) - row_first
      end_at = tf.gather(byte_at, end_char) - row_first
    return ids, begin.with_flat_values(begin_at), end.with_flat_values(end_at)

  def tokenize_words(self, strings: tf.Tensor) -> tf.RaggedTensor:
    """[batch, (words), (pieces)] int64 ids: the basic words (split at
    whitespace, at each punctuation character and around CJK characters)
    that tokenize_words_with_offsets serves, for data built offline."""
    return self.tokenize_words_with_offsets(strings)[0]

  def tokenize_with_offsets(self, strings: tf.Tensor, unit: str = "CHAR"
                            ) -> Tuple[tf.RaggedTensor, tf.RaggedTensor,
                                       tf.RaggedTensor]:
    """(ids, begin, end): [batch, (pieces)], offsets of each wordpiece into
    the original `strings` (see tokenize_words_with_offsets)."""
    return merge_words(*self.tokenize_words_with_offsets(strings, unit))

  def detokenize_ids(self, ids: tf.Tensor) -> tf.Tensor:
    """Maps ids to their token strings (no joining)."""
    return tf.gather(tf.constant(self.vocab.tokens), ids)
