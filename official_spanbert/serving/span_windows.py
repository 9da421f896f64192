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

"""Raw text -> windows of wordpieces with character offsets, in the graph.

What data/finetuning/span_ner.py does to a LitBank document, for a batch of
texts: whitespace words split into wordpieces with exact character offsets,
a line break ends a sentence, and windows of at most seq_length positions
are cut at the last sentence end that fits, else the last word end
(coref_module.segment_ends, the offline cut). See docs/serving.md.

Example:
  windows = TextWindows(tokenizer, seq_length=256)
  w = windows(tf.constant(["Mr. Bennet smiled.\\nShe laughed."]))
  w.features["input_word_ids"]   # [windows, 256]
"""

from typing import Callable, Dict, NamedTuple

import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.serving import coref_module

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK_PATTERN = "[" + "".join(
    f"\\x{{{ord(c):04x}}}" for c in LINE_BREAKS) + "]"
# Windows the model takes at once; more run in chunks of this many.
MODEL_BATCH_WINDOWS = 8


class Windows(NamedTuple):
  """The windows of a batch of texts (pieces laid end to end).

  Attributes:
    features: the model's inputs, each [windows, seq_length] int32.
    window_row: [windows] the text of each window.
    window_first: [windows] its first piece (its position 1).
    piece_row: [pieces] the text of each piece.
    piece_begin, piece_end: [pieces] its characters in its text.
    piece_window: [pieces] its window.
    row_pieces: [batch + 1] where each text's pieces start (and end).
  """
  features: Dict[str, tf.Tensor]
  window_row: tf.Tensor
  window_first: tf.Tensor
  piece_row: tf.Tensor
  piece_begin: tf.Tensor
  piece_end: tf.Tensor
  piece_window: tf.Tensor
  row_pieces: tf.Tensor


def _gaps_with(chars: tf.RaggedTensor, pattern: str, before: tf.Tensor,
               after: tf.Tensor) -> tf.Tensor:
  """Whether characters [before, after) (batch-global indices) hold one
  matching `pattern`."""
  hits = tf.cast(tf.strings.regex_full_match(chars.flat_values, pattern),
                 tf.int64)
  count = tf.concat([[0], tf.cumsum(hits)], 0)
  return tf.gather(count, after) > tf.gather(count, before)


class TextWindows(tf.Module):
  """Cuts texts into the span NER task's windows (see the module docstring).

  Args:
    tokenizer: a tokenization.WordpieceTokenizer (the run's).
    seq_length: positions per window, [CLS] and [SEP] included.

  Example:
    windows = TextWindows(tokenizer, seq_length=128)(tf.constant([text]))
  """

  def __init__(self, tokenizer: tokenization.WordpieceTokenizer,
               seq_length: int):
    super().__init__(name="text_windows")
    if seq_length < 3:
      raise ValueError(f"seq_length {seq_length} leaves no room for a "
                       "wordpiece beside [CLS] and [SEP]")
    self.tokenizer = tokenizer
    self.seq_length = seq_length

  # One graph for every signature that windows text (tokenizing is most of
  # a trace).
  @tf.function(autograph=False,
               input_signature=[tf.TensorSpec([None], tf.string)])
  def __call__(self, text: tf.Tensor) -> Windows:
    vocab = self.tokenizer.vocab
    words, begin, end = self.tokenizer.tokenize_words_with_offsets(text)
    # [batch, (pieces)]; a piece starts a word where it is the first of a
    # basic word (training's words: span_ner.basic_word_pieces).
    starts_word = words.with_flat_values(tf.equal(
        tf.ragged.range(words.values.row_lengths()).flat_values, 0))
    ids, begin, end, starts_word = tokenization.merge_words(
        words, begin, end, starts_word)
    chars = tf.strings.unicode_split(text, "UTF-8", errors="replace")
    n = tf.size(ids.flat_values, tf.int64)
    row = ids.value_rowids()
    first_char = tf.gather(chars.row_starts(), row)
    g_begin, g_end = begin.flat_values + first_char, end.flat_values + (
        first_char)
    index = tf.range(n)
    row_first = tf.equal(index, tf.gather(ids.row_starts(), row))
    prev_end = tf.concat([[0], g_end], 0)[:n]
    new_word = row_first | starts_word.flat_values
    new_sentence = row_first | _gaps_with(chars, LINE_BREAK_PATTERN,
                                          prev_end, g_begin)
    # A row's first piece starts a word and a sentence, so its last piece
    # ends both. [:n]: no flag at all when the batch has no piece.
    word_end = tf.concat([new_word[1:], [True]], 0)[:n]
    sentence_end = tf.concat([new_sentence[1:], [True]], 0)[:n]
    sentence = tf.cumsum(tf.cast(new_sentence, tf.int32)) - 1
    cuts = tf.cast(coref_module.segment_ends(
        sentence_end, word_end, self.seq_length - 2,
        ids.row_limits()), tf.int64)
    content = tf.RaggedTensor.from_row_limits(
        tf.cast(ids.flat_values, tf.int32), cuts)
    w_first = content.row_starts()
    piece_window = content.value_rowids()
    rows = content.nrows()

    def framed(values: tf.RaggedTensor, edge: int) -> tf.Tensor:
      edges = tf.fill([rows, 1], tf.constant(edge, values.dtype))
      return tf.concat([edges, values, edges], 1).to_tensor(
          edge if edge < 0 else 0, shape=[None, self.seq_length])

    flags = lambda x: content.with_flat_values(tf.cast(x, tf.int32))  # pylint: disable=unnecessary-lambda-assignment
    window_sentence = tf.gather(sentence, w_first)
    relative = sentence - tf.gather(window_sentence, piece_window)
    features = {
        "input_word_ids": framed(content, 0) + self._edges(
            rows, vocab.cls_id, vocab.sep_id, content.row_lengths()),
        "input_mask": framed(flags(tf.ones_like(relative)), 1),
        "input_type_ids": tf.zeros([rows, self.seq_length], tf.int32),
        "word_start": framed(flags(new_word), 0),
        "word_end": framed(flags(word_end), 0),
        "sentence_ids": framed(flags(relative), -1),
    }
    return Windows(features, tf.gather(row, w_first), w_first, row,
                   begin.flat_values, end.flat_values, piece_window,
                   ids.row_splits)

  def _edges(self, rows, cls_id: int, sep_id: int, lengths) -> tf.Tensor:
    """[CLS] at position 0 and [SEP] after each window's pieces."""
    positions = tf.range(self.seq_length, dtype=tf.int64)[tf.newaxis]
    sep = tf.equal(positions, lengths[:, tf.newaxis] + 1)
    cls = tf.equal(positions, 0) & tf.ones([rows, 1], tf.bool)
    return (tf.cast(cls, tf.int32) * cls_id + tf.cast(sep, tf.int32) * sep_id)


def in_chunks(fn: Callable[[Dict[str, tf.Tensor]], Dict[str, tf.Tensor]],
              features: Dict[str, tf.Tensor], signature: Dict[str,
                                                              tf.TensorSpec],
              chunk: int = MODEL_BATCH_WINDOWS) -> Dict[str, tf.Tensor]:
  """fn(features) on at most `chunk` windows at a time (bounded memory);
  `signature` is fn's output for `chunk` windows. No window (a request
  whose texts hold no wordpiece) runs no model and gives empty outputs."""
  n = tf.shape(features["input_word_ids"])[0]

  def chunked():
    chunks = (n + chunk - 1) // chunk
    shaped = {k: tf.reshape(tf.pad(v, [[0, chunks * chunk - n], [0, 0]]),
                            [chunks, chunk, -1])
              for k, v in features.items()}
    out = tf.map_fn(fn, shaped, fn_output_signature=signature,
                    parallel_iterations=1)
    return {k: tf.reshape(v, tf.concat([[chunks * chunk], tf.shape(v)[2:]],
                                       0))[:n]
            for k, v in out.items()}

  def nothing():  # a request with no wordpiece: no window, no model call
    return {k: tf.zeros([0] + spec.shape[1:].as_list(), spec.dtype)
            for k, spec in signature.items()}

  return tf.cond(tf.equal(n, 0), nothing, lambda: tf.cond(
      n <= chunk, lambda: fn(features), chunked))
