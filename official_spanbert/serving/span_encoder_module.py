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

"""The `encode_spans` signature: text + character spans in, span vectors out.

The text is windowed as span NER windows it (serving/span_windows.py) and each
span's vector comes from the encoder outputs of the wordpieces inside it: a
span task's SpanEmbedding (modeling/span_embedding.py) when there is one,
else [x_start, x_end, mean of the span's x]. Bad spans are refused with one
InvalidArgumentError line naming the span. See docs/serving.md.

Example:
  module = SpanEncoderModule(encoder, "vocab.txt", seq_length=256)
  module.encode_spans(tf.constant(["Mr. Bennet smiled."]),
                      tf.constant([[0, 4]]), tf.constant([[10, 10]]))
"""

import dataclasses
from typing import Dict, Optional

import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.modeling import span_embedding as span_lib
from official_spanbert.serving import coref_module
from official_spanbert.serving import qa_module
from official_spanbert.serving import quantization
from official_spanbert.serving import serving_module
from official_spanbert.serving import span_windows

# encode_spans of a pretrained encoder (no span task to say it): the widest
# span, in wordpieces (coreference's max_span_width).
SPAN_MAX_WIDTH = 30
_PROBLEMS = (
    "",
    "is out of range: offsets are Unicode characters in [0, {}] (the text's "
    "length), or -1 and -1 for padding",
    "is empty or reversed: start must be less than end",
    "covers no wordpiece: widen it to a word",
    "covers {} wordpieces, more than max_span_width {}: split it",
)


class SpanEncoderModule(serving_module.ServingModule):
  """SavedModel signature `encode_spans` of an encoder (see the module doc).

  Args:
    encoder: a Model Garden BERT encoder (dict inputs, `sequence_output`).
    vocab_file, lower_case: its tokenizer.
    seq_length: window length, [CLS] and [SEP] included.
    span_embedding: a trained span_embedding.SpanEmbedding (None: boundary
      and mean pooling).
    max_span_width: the widest span in wordpieces (with span_embedding: its
      max_width).
    max_wordpieces: see Params.

  Example:
    module = SpanEncoderModule(ner_model.encoder, "vocab.txt",
                               span_embedding=ner_model.span_embedding)
    tf.saved_model.save(module, "/models/spans", module.signatures())
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The options of an export serving encode_spans (and span NER's).

    Attributes:
      max_wordpieces: a longer text is refused (0: no limit). Memory is
        linear in the length (the model reads span_windows'
        MODEL_BATCH_WINDOWS windows at a time).
    """
    max_wordpieces: int = 65536

  SIGNATURES = ("encode_spans",)

  def __init__(self, encoder, vocab_file: str, lower_case: bool = False,
               seq_length: int = 256,
               span_embedding: Optional[span_lib.SpanEmbedding] = None,
               max_span_width: int = SPAN_MAX_WIDTH,
               max_wordpieces: int = Params.max_wordpieces,
               name: str = "spanbert_span_encoder"):
    super().__init__(name=name)
    self._layers = coref_module._Untracked((encoder, span_embedding))  # pylint: disable=protected-access
    self.tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
    self.windows = span_windows.TextWindows(self.tokenizer, seq_length)
    self.seq_length = seq_length
    self.max_span_width = (span_embedding.max_width if span_embedding
                           else max_span_width)
    self.max_wordpieces = max_wordpieces
    self.hidden_size = encoder.get_config()["hidden_size"]

  @property
  def encoder(self):
    return self._layers.value[0]

  def use_encoder(self, encoder) -> None:
    """Makes encode_spans call `encoder` (e.g. the int8 graph of
    quantization.py) instead."""
    self._layers.value = (encoder,) + tuple(self._layers.value[1:])

  def encoder_part(self, run: serving_module.Run) -> quantization.EncoderPart:
    """int8: the encoder (the span embedding stays float32), calibrated on
    the run's own training data."""
    return quantization.EncoderPart(quantization.EncoderOutputs(self.encoder),
                                    self.use_encoder,
                                    quantization.loader_windows)

  @property
  def span_embedding(self) -> Optional[span_lib.SpanEmbedding]:
    return self._layers.value[1]

  @property
  def embedding_size(self) -> int:
    if self.span_embedding is None:
      return 3 * self.hidden_size
    return self.span_embedding.output_size(self.hidden_size)

  # Windows ------------------------------------------------------------------

  def checked_windows(self, text: tf.Tensor) -> span_windows.Windows:
    """The windows of valid-UTF-8 `text`, after refusing a text of more
    than max_wordpieces wordpieces."""
    w = self.windows(text)
    if not self.max_wordpieces:
      return w
    lengths = w.row_pieces[1:] - w.row_pieces[:-1]
    longest = tf.argmax(tf.concat([lengths, [0]], 0))
    fits = tf.debugging.Assert(
        tf.reduce_all(lengths <= self.max_wordpieces), [tf.strings.format(
            "text {} of the request has {} wordpieces, more than the {} this "
            "model was exported for (max_wordpieces): split the text or "
            "re-export with a larger --ner_max_wordpieces",
            (longest, tf.reduce_max(lengths), self.max_wordpieces))])
    with tf.control_dependencies([fits]):
      features = {k: tf.identity(v) for k, v in w.features.items()}
    return w._replace(features=features)

  def _sequence_output(self, features: Dict[str, tf.Tensor]
                       ) -> Dict[str, tf.Tensor]:
    out = self.encoder({k: features[k] for k in (
        "input_word_ids", "input_mask", "input_type_ids")}, training=False)
    return {"x": tf.cast(out["sequence_output"], tf.float32)}

  def piece_outputs(self, w: span_windows.Windows,
                    pieces: tf.Tensor) -> tf.Tensor:
    """[len(pieces), H] encoder outputs of (batch-global) wordpieces."""
    x = span_windows.in_chunks(self._sequence_output, w.features, {
        "x": tf.TensorSpec([span_windows.MODEL_BATCH_WINDOWS,
                            self.seq_length, self.hidden_size],
                           tf.float32)})["x"]
    pieces = tf.cast(pieces, tf.int64)
    window = tf.gather(w.piece_window, pieces)
    position = pieces - tf.gather(w.window_first, window) + 1
    return tf.gather_nd(x, tf.stack([window, position], 1))

  # Spans --------------------------------------------------------------------

  def _embed(self, x: tf.Tensor, starts: tf.Tensor, ends: tf.Tensor
             ) -> tf.Tensor:
    """g of spans [starts, ends] (inclusive) of x."""
    if self.span_embedding is not None:
      return tf.cast(self.span_embedding(x, starts, ends), tf.float32)
    head = span_lib.span_heads(x, tf.zeros_like(x[:, 0]), starts, ends,
                               self.max_span_width)
    return tf.concat([tf.gather(x, starts), tf.gather(x, ends), head], -1)

  @tf.function(autograph=False, input_signature=[
      tf.TensorSpec([None], tf.string, name="text"),
      tf.TensorSpec([None, None], tf.int32, name="span_starts"),
      tf.TensorSpec([None, None], tf.int32, name="span_ends")])
  def encode_spans(self, text, span_starts, span_ends):
    """span_embeddings [batch, n, embedding_size] (zeros for padding)."""
    shapes = tf.debugging.Assert(
        tf.reduce_all(tf.equal(tf.shape(span_starts), tf.shape(span_ends))) &
        tf.equal(tf.shape(span_starts)[0], tf.shape(text)[0]),
        [tf.strings.format(
            "span_starts {} and span_ends {} must both be [batch, n] with the "
            "batch of text {}", (tf.shape(span_starts), tf.shape(span_ends),
                                 tf.shape(text)))])
    with tf.control_dependencies([shapes]):
      text = qa_module.valid_utf8(text)
    # No span (a batch of 0, or [batch, 0] spans): nothing to encode.
    return tf.cond(
        tf.equal(tf.size(span_starts), 0),
        lambda: {"span_embeddings": tf.zeros(tf.concat(
            [tf.shape(span_starts), [self.embedding_size]], 0))},
        lambda: self._encode_spans(text, span_starts, span_ends))

  def _encode_spans(self, text, span_starts, span_ends):
    """encode_spans of at least one span."""
    w = self.checked_windows(text)
    length = tf.cast(tf.strings.length(text, unit="UTF8_CHAR"), tf.int64)
    # Batch-global character positions: one search for every span.
    row_char = tf.concat([[0], tf.cumsum(length)], 0)
    piece_char = tf.gather(row_char, w.piece_row)
    begin, end = w.piece_begin + piece_char, w.piece_end + piece_char
    s, e = tf.cast(span_starts, tf.int64), tf.cast(span_ends, tf.int64)
    pad = tf.equal(s, -1) & tf.equal(e, -1)
    text_length = length[:, tf.newaxis]
    in_range = (s >= 0) & (e >= 0) & (s <= text_length) & (e <= text_length)
    ordered = s < e
    offset = row_char[:-1, tf.newaxis]
    first = tf.searchsorted(begin[tf.newaxis],
                            tf.reshape(s + offset, [1, -1]))[0]
    last = tf.searchsorted(end[tf.newaxis], tf.reshape(e + offset, [1, -1]),
                           side="right")[0] - 1
    first, last = (tf.reshape(v, tf.shape(s)) for v in (first, last))
    width = last - first + 1
    code = tf.where(pad, 0, tf.where(~in_range, 1, tf.where(
        ~ordered, 2, tf.where(width < 1, 3, tf.where(
            width > self.max_span_width, 4, 0)))))
    code = self._refuse(code, s, e, width, length)
    real = tf.where(tf.equal(code, 0) & ~pad)
    pieces = tf.ragged.range(tf.gather_nd(first, real),
                             tf.gather_nd(last, real) + 1)
    x = self.piece_outputs(w, pieces.flat_values)
    g = self._embed(x, tf.cast(pieces.row_starts(), tf.int32),
                    tf.cast(pieces.row_limits() - 1, tf.int32))
    shape = tf.concat([tf.shape(s, tf.int64), [self.embedding_size]], 0)
    return {"span_embeddings": tf.scatter_nd(real, g, shape)}

  def _refuse(self, code, s, e, width, length):
    """InvalidArgumentError naming the first bad span, if there is one."""
    bad = tf.reshape(code > 0, [-1])
    i = tf.argmax(tf.cast(bad, tf.int32))
    n = tf.cast(tf.maximum(tf.shape(code)[1], 1), tf.int64)
    b, j = i // n, i % n
    flat = lambda v: tf.gather(tf.reshape(v, [-1]), i)  # pylint: disable=unnecessary-lambda-assignment
    reasons = tf.stack([
        tf.constant(_PROBLEMS[0]),
        tf.strings.format(_PROBLEMS[1], tf.gather(length, b)),
        tf.constant(_PROBLEMS[2]), tf.constant(_PROBLEMS[3]),
        tf.strings.format(_PROBLEMS[4], (flat(width), self.max_span_width))])
    message = tf.strings.join([tf.strings.format(
        "span {} of text {} (characters [{}, {})) ",
        (j, b, flat(s), flat(e))), tf.gather(reasons, flat(code))])
    ok = tf.debugging.Assert(~tf.reduce_any(bad), [message])
    with tf.control_dependencies([ok]):
      return tf.identity(code)

  def track_variables(self):
    """Tracks the layers' variables (call after tracing, which builds
    them): the SavedModel holds them, not the Keras objects."""
    unique = {id(v): v for layer in self._layers.value if layer is not None
              for v in layer.variables}
    self.layer_variables = list(unique.values())

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    fn = self.encode_spans.get_concrete_function()
    self.track_variables()
    return {"encode_spans": fn, "serving_default": fn}
