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

"""Named entities and noun phrases of a corpus, as spans of wordpieces.

For the `named_entity` and `noun_phrase` masking schemes (the paper's Table 6):
spaCy tags each line, and each span is mapped to whole-word wordpiece offsets
in document coordinates until the records writer cuts blocks (`block_spans`).
Needs `pip install 'official-spanbert[linguistic]'`.
"""

import collections
import time
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple

import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining import spacy_pool
from official_spanbert.data import tokenization

# What --tag_spans may name, and the record feature prefix of each.
KINDS = ("entities", "noun_phrases")
FEATURE_PREFIX = {"entities": "entity", "noun_phrases": "noun_phrase"}
# The masking scheme that reads each kind.
SCHEME_KIND = {"named_entity": "entities", "noun_phrase": "noun_phrases"}
MODEL = spacy_pool.MODEL
INSTALL = spacy_pool.INSTALL
TaggingUnavailableError = spacy_pool.TaggingUnavailableError
load_pipeline = spacy_pool.load_pipeline
# Unicode space separators (category Zs): the tokenizer maps each to " ".
_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
          "\u2008\u2009\u200a\u202f\u205f\u3000"
_TO_SPACE = str.maketrans(_SPACES, " " * len(_SPACES))


def parse_kinds(value) -> Tuple[str, ...]:
  """The kinds of a --tag_spans value ("entities,noun_phrases" or a list).

  Raises:
    ValueError: an unknown kind.
  """
  names = value.split(",") if isinstance(value, str) else list(value)
  names = {n.strip() for n in names if n.strip()}
  unknown = sorted(names - set(KINDS))
  if unknown:
    raise ValueError(f"tag_spans: unknown kind(s) {', '.join(unknown)}; "
                     f"choose from {', '.join(KINDS)}")
  return tuple(k for k in KINDS if k in names)


def span_features(kinds: Sequence[str]) -> List[str]:
  """Record feature names of the spans of `kinds` (starts, then ends)."""
  return [f"{FEATURE_PREFIX[k]}_{side}" for k in kinds
          for side in ("starts", "ends")]


class WordpieceOffsets(tokenization.WordpieceTokenizer):
  """The tokenizer, also giving each wordpiece's byte offsets in its line."""

  def offsets(self, strings: tf.Tensor
              ) -> Tuple[tf.RaggedTensor, tf.RaggedTensor, tf.RaggedTensor]:
    """(word_starts, start, end) of each wordpiece, [batch, (pieces)].

    Offsets are in bytes of the line with its space separators made " ", as
    `tokenize` sees it; the wordpieces are those of `tokenize`.
    """
    strings = tf.strings.regex_replace(strings, r"\p{Zs}", " ")
    pieces, starts, ends = self._bert.tokenize_with_offsets(strings)
    first = tf.equal(tf.ragged.range(pieces.values.row_lengths()), 0)
    # The last piece of a word ends where the word does: tf.text ends the
    # [UNK] of a word over 100 bytes 5 bytes after its start (len("[UNK]")),
    # so a span starting later in such a word matched no wordpiece.
    _, _, word_end = self._bert._basic_tokenizer.tokenize_with_offsets(  # pylint: disable=protected-access
        strings)
    last = tf.equal(tf.ragged.range(pieces.values.row_lengths()),
                    tf.expand_dims(pieces.values.row_lengths() - 1, -1))
    ends = ends.with_flat_values(tf.where(
        last.flat_values,
        tf.gather(word_end.flat_values, ends.values.value_rowids()),
        ends.flat_values))
    return (pieces.with_values(tf.cast(first, tf.int64)).merge_dims(-2, -1),
            starts.merge_dims(-2, -1), ends.merge_dims(-2, -1))


def align(line: str, char_spans: Sequence[Tuple[int, int]],
          byte_starts: np.ndarray, byte_ends: np.ndarray,
          word_starts: np.ndarray) -> np.ndarray:
  """Character spans of a line -> whole-word wordpiece spans of the line.

  Args:
    line: the line.
    char_spans: (start, end) character offsets, end exclusive.
    byte_starts, byte_ends: each wordpiece's byte offsets (WordpieceOffsets).
    word_starts: 1 where a wordpiece starts a word.

  Returns:
    int64 [k, 2] (start, end) wordpiece spans, end exclusive, sorted and
    distinct; a span overlapping no wordpiece (only spaces or dropped
    characters) is left out.
  """
  n = len(word_starts)
  if not len(char_spans) or not n:
    return np.zeros([0, 2], np.int64)
  raw = np.frombuffer(line.translate(_TO_SPACE).encode("utf-8"), np.uint8)
  # Character index at each byte offset (UTF-8 continuation bytes: 10xxxxxx).
  char_at = np.concatenate([[0], np.cumsum((raw & 0xC0) != 0x80)])
  starts = char_at[np.minimum(byte_starts, len(raw))]
  ends = char_at[np.minimum(byte_ends, len(raw))]
  spans = np.asarray(char_spans, np.int64).reshape([-1, 2])
  first = np.searchsorted(ends, spans[:, 0], side="right")
  last = np.searchsorted(starts, spans[:, 1], side="left") - 1
  keep = first <= last
  first, last = first[keep], last[keep]
  positions = np.arange(n)
  word_start = np.maximum.accumulate(np.where(word_starts > 0, positions, 0))
  starts_at = np.append(np.flatnonzero(word_starts > 0), n)
  word_end = starts_at[np.searchsorted(starts_at, last, side="right")]
  out = np.stack([word_start[first], word_end], axis=1)
  return np.unique(out, axis=0) if len(out) else np.zeros([0, 2], np.int64)


def block_spans(spans: np.ndarray, start: int, end: int
                ) -> Tuple[np.ndarray, int]:
  """The spans inside the block [start, end), in block coordinates.

  Returns:
    (spans [k, 2], number of spans that start in the block but end past it,
    which are dropped: over consecutive blocks each cut span counts once).
  """
  starts_here = (spans[:, 0] >= start) & (spans[:, 0] < end)
  inside = starts_here & (spans[:, 1] <= end)
  return spans[inside] - start, int(np.sum(starts_here & ~inside))


class SpanTagger:
  """Tags documents with spaCy and maps the spans to wordpieces.

  Args:
    kinds: subset of KINDS.
    vocab_file, lower_case: the tokenizer of the records.
    n_process: spaCy worker processes (2 uses both cores here; spawned, not
      forked, see spacy_pool).
    batch_size: lines per spaCy batch.

  Raises:
    TaggingUnavailableError: spaCy or its pipeline is missing.
    spacy_pool.TaggingWorkerError (from tag): a worker died.
  """

  def __init__(self, kinds: Sequence[str], vocab_file: str,
               lower_case: bool = False, n_process: int = 2,
               batch_size: int = 64):
    self.kinds = parse_kinds(kinds)
    if not self.kinds:
      raise ValueError(f"tag_spans: name at least one of {', '.join(KINDS)}")
    # One process tags with a pipeline loaded here; spawned workers load
    # their own, so then this process only checks that it is installed
    # (loading it too cost ~0.6 CPU-s and its memory for nothing).
    self._nlp = None
    if n_process <= 1:
      self._nlp = load_pipeline()
    else:
      spacy_pool.import_pipeline_package()
    self._tokenizer = WordpieceOffsets(vocab_file, lower_case)
    self._offsets = tf.function(  # not converted: see tokenize_documents
        self._tokenizer.offsets,
        input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    self._n_process = n_process
    self._batch_size = batch_size
    self.words = 0  # whitespace-separated words tagged so far
    self.seconds = 0.0  # time spent in tag()

  def _wordpiece_spans(self, lines: Sequence[str],
                       char_spans: Sequence[Dict[str, List[Tuple[int, int]]]]
                       ) -> Tuple[Dict[str, np.ndarray], int]:
    """A document's spans in document wordpiece coordinates (+ its length)."""
    word_starts, starts, ends = (
        x.numpy() for x in self._offsets(tf.constant(lines)))
    out = {k: [] for k in self.kinds}
    offset = 0
    for i, line in enumerate(lines):
      ws, s, e = word_starts[i], starts[i], ends[i]
      for kind in self.kinds:
        out[kind].append(align(line, char_spans[i][kind], s, e, ws) + offset)
      offset += len(ws)
    return {k: np.concatenate(v) for k, v in out.items()}, offset

  def tag(self, documents: Iterable[corpus_lib.Document]
          ) -> Iterator[Tuple[Dict[str, np.ndarray], int]]:
    """Per document, in order: ({kind: [k, 2] spans}, its wordpieces).

    The spans are in the document's wordpiece coordinates (its lines
    tokenized and concatenated, as in pretraining_records), end exclusive.
    """
    pending = collections.deque()

    def lines():
      for doc in documents:
        pending.append(doc)
        self.words += sum(len(line.split()) for line in doc.lines)
        yield from doc.lines

    start = time.time()
    parsed_lines = []
    for spans in spacy_pool.char_spans(
        lines(), self.kinds, self._n_process, self._batch_size,
        nlp=self._nlp):
      parsed_lines.append(spans)
      if len(parsed_lines) == len(pending[0].lines):
        result = self._wordpiece_spans(pending.popleft().lines, parsed_lines)
        parsed_lines = []
        self.seconds += time.time() - start
        yield result
        start = time.time()
    self.seconds += time.time() - start
