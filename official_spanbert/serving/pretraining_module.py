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

"""SavedModel signatures for TF Serving: text in, encodings and span fills out.

Unlike Model Garden's serving_modules.MaskedLM (which returns only the NSP
output and feeds word ids as type ids), `fill_spans` returns the MLM and SBO
predictions for every [MASK] and type ids come from the packer.
"""

from typing import Dict

import tensorflow as tf

from official_spanbert.data.pretraining.masking import masking
from official_spanbert.serving import limits
from official_spanbert.serving import span_encoder_module
from official_spanbert.serving import text_preprocessor as tp

_TEXT = tf.TensorSpec([None], tf.string, name="text")


def checked_encoder_inputs(inputs: Dict[str, tf.Tensor], vocab_size: int,
                           type_vocab_size: int, max_positions: int
                           ) -> Dict[str, tf.Tensor]:
  """The encoder inputs, after asserting their shapes and value ranges.

  Out-of-range type ids would otherwise select no type embedding (one-hot
  of zeros) and return garbage, and on GPU so would word ids; more positions
  than the position embeddings fail with a reshape error naming no input.
  Used by encode_ids and the TF Hub encoder (tfhub_export.py).
  """
  shape = tf.shape(inputs["input_word_ids"])
  checks = [tf.debugging.assert_equal(
      tf.shape(inputs[name]), shape,
      message=f"{name} must have the shape of input_word_ids")
            for name in ("input_mask", "input_type_ids")]
  checks.append(tf.debugging.Assert(shape[1] <= max_positions, [
      f"input_word_ids must have at most {max_positions} positions "
      "(max_position_embeddings); got", shape[1]]))
  for name, limit in (("input_word_ids", vocab_size),
                      ("input_mask", 2),
                      ("input_type_ids", type_vocab_size)):
    low, high = tf.reduce_min(inputs[name]), tf.reduce_max(inputs[name])
    checks.append(tf.debugging.Assert(
        (low >= 0) & (high < limit),
        [f"{name} must be in [0, {limit}); got min and max:", low, high]))
  with tf.control_dependencies(checks):
    # Identities without the static shape: a caller tracing with a concrete
    # length beyond max_positions reaches the check at run time instead of
    # failing shape inference in the position embedding.
    return {k: tf.compat.v1.placeholder_with_default(v, [None] * v.shape.rank)
            for k, v in inputs.items()}


class SpanBertServingModule(tf.Module):
  """Signatures of an exported SpanBERT.

  * `serving_default(text)`: sequence_output, pooled_output, input_word_ids,
    input_mask.
  * `encode_pair(text, text_pair)`: the same for two-segment inputs (batches
    of different sizes are an InvalidArgumentError).
  * `encode_ids(input_word_ids, input_mask, input_type_ids)`: for clients that
    tokenize themselves; ids outside [0, vocab_size), type ids outside
    [0, type_vocab_size), mask values other than 0/1 and more positions
    than max_position_embeddings are InvalidArgumentErrors.
  * `fill_spans(text)`: for each [MASK] (up to max_masks), the MLM head's top-k
    tokens and log-probabilities, the SBO head's top-k from the span's
    boundaries (when the model has one), and the text filled greedily.
  * `encode_spans(text, span_starts, span_ends)`: the encoder's span
    embeddings [x_start, x_end, mean] of character spans
    (span_encoder_module.py; windows of seq_length, no truncation).

  Args:
    model: a SpanBertPretrainer.
    preprocessor: a TextPreprocessor.
    top_k: candidates returned per masked position.
    max_masks: most [MASK] tokens predicted per text.
  """

  def __init__(self, model, preprocessor: tp.TextPreprocessor,
               top_k: int = limits.FILL_SPANS_TOP_K,
               max_masks: int = limits.FILL_SPANS_MAX_MASKS):
    super().__init__(name="spanbert_serving")
    self.model = model
    self.preprocessor = preprocessor
    self.top_k = top_k
    self.max_masks = max_masks
    self.has_sbo = getattr(model, "span_boundary", None) is not None
    config = model.encoder_network.get_config()
    self.vocab_size = config["vocab_size"]
    self.type_vocab_size = config["type_vocab_size"]
    self.max_positions = config["max_sequence_length"]
    self.max_sbo_targets = (model.span_boundary.max_targets
                            if self.has_sbo else 0)
    self.span_encoder = span_encoder_module.SpanEncoderModule(
        model.encoder_network, preprocessor.vocab.path,
        preprocessor.tokenizer.lower_case, preprocessor.seq_length)

  # One graph of the encoder for the 4 signatures (traced once, not 4 times).
  @tf.function(autograph=False, input_signature=[{
      k: tf.TensorSpec([None, None], tf.int32)
      for k in ("input_word_ids", "input_mask", "input_type_ids")}])
  def _encoder(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    return self.model.encoder_network(inputs, training=False)

  def _encode(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    out = self._encoder(inputs)
    return {"sequence_output": out["sequence_output"],
            "pooled_output": out["pooled_output"]}

  @tf.function(autograph=False, input_signature=[_TEXT])
  def serve_text(self, text):
    inputs = self.preprocessor(text)
    out = self._encode(inputs)
    out.update(input_word_ids=inputs["input_word_ids"],
               input_mask=inputs["input_mask"])
    return out

  @tf.function(autograph=False, input_signature=[
      _TEXT, tf.TensorSpec([None], tf.string, name="text_pair")])
  def serve_text_pair(self, text, text_pair):
    inputs = self.preprocessor(text, text_pair)
    out = self._encode(inputs)
    out.update(input_word_ids=inputs["input_word_ids"],
               input_mask=inputs["input_mask"],
               input_type_ids=inputs["input_type_ids"])
    return out

  @tf.function(autograph=False, input_signature=[
      tf.TensorSpec([None, None], tf.int32, name="input_word_ids"),
      tf.TensorSpec([None, None], tf.int32, name="input_mask"),
      tf.TensorSpec([None, None], tf.int32, name="input_type_ids")])
  def serve_ids(self, input_word_ids, input_mask, input_type_ids):
    inputs = {"input_word_ids": input_word_ids, "input_mask": input_mask,
              "input_type_ids": input_type_ids}
    return self._encode(self._checked(inputs))

  def _checked(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    return checked_encoder_inputs(inputs, self.vocab_size,
                                  self.type_vocab_size, self.max_positions)

  def _top_k(self, logits, prefix, slots, batch):
    """Top-k of [n, 1, vocab] logits laid out at `slots` (row, slot) of
    [batch, max_masks, top_k]; empty slots: id -1, token "", score 0."""
    log_probs = tf.nn.log_softmax(tf.cast(logits[:, 0], tf.float32))
    scores, ids = tf.math.top_k(log_probs, k=self.top_k)
    shape = tf.stack([batch, self.max_masks, self.top_k])

    filled = tf.scatter_nd(slots, tf.ones_like(ids, tf.bool), shape)

    def laid_out(values, empty):
      return tf.where(filled, tf.scatter_nd(slots, values, shape), empty)

    ids = laid_out(ids, -1)
    tokens = tf.gather(self.preprocessor.vocab_tokens, tf.maximum(ids, 0))
    return {f"{prefix}_top_k_ids": ids,
            f"{prefix}_top_k_tokens": tf.where(ids >= 0, tokens, ""),
            f"{prefix}_top_k_scores": laid_out(scores, 0.0)}

  @tf.function(autograph=False, input_signature=[_TEXT])
  def fill_spans(self, text):
    inputs = self.preprocessor(text)
    ids = inputs["input_word_ids"]
    batch = tf.shape(ids)[0]
    sequence_output = self._encoder(inputs)["sequence_output"]
    is_mask = tf.equal(ids, self.preprocessor.vocab.mask_id)
    where, first, last, _ = masking.masked_runs(is_mask)
    rows = where[:, 0]
    row_starts = tf.math.cumsum(tf.math.bincount(rows, minlength=batch),
                                exclusive=True)
    index_in_row = tf.range(tf.shape(rows)[0]) - tf.gather(row_starts, rows)
    # The heads run on the predicted [MASK]s only (at most max_masks a
    # text), not on max_masks slots of every text.
    predicted = tf.where(index_in_row < self.max_masks)[:, 0]
    where, first, last, slot = (tf.gather(v, predicted) for v in (
        where, first, last, index_in_row))
    rows, cols = where[:, 0], where[:, 1]

    def dense(values):
      return masking.rows_to_dense(values, rows, batch, self.max_masks)

    def at(positions):  # [n, 1, H]: the outputs at (row, position)
      return tf.gather_nd(sequence_output,
                          tf.stack([rows, positions], 1))[:, tf.newaxis]

    slots = tf.stack([rows, slot], 1)
    out = {"masked_positions": dense(cols),
           "masked_weights": dense(tf.ones_like(cols))}
    at_zero = tf.zeros_like(cols)[:, tf.newaxis]
    out.update(self._top_k(self.model.masked_lm(at(cols), at_zero), "mlm",
                           slots, batch))
    if self.has_sbo:
      rel = tf.minimum(cols - first, self.max_sbo_targets - 1)
      boundaries = tf.concat([at(first - 1), at(last + 1)], 1)  # [n, 2, H]
      out.update(self._top_k(self.model.span_boundary(
          boundaries, at_zero, at_zero + 1, rel[:, tf.newaxis]), "sbo",
                             slots, batch))
    # Greedy fill: every predicted [MASK] takes the MLM's top token.
    best = tf.gather_nd(out["mlm_top_k_ids"][:, :, 0], slots)
    filled = tf.tensor_scatter_nd_update(ids, where, best)
    out["filled_text"] = self.preprocessor.detokenize(filled,
                                                      inputs["input_mask"])
    return out

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    return {
        "serving_default": self.serve_text.get_concrete_function(),
        "encode_pair": self.serve_text_pair.get_concrete_function(),
        "encode_ids": self.serve_ids.get_concrete_function(),
        "fill_spans": self.fill_spans.get_concrete_function(),
        "encode_spans": self.span_encoder.encode_spans.get_concrete_function(),
    }


class PreprocessingModule(tf.Module):
  """The text -> encoder inputs SavedModel (like TF Hub's BERT preprocess).

  Signatures: `serving_default(text)` and `encode_pair(text, text_pair)`, each
  returning input_word_ids, input_mask, input_type_ids.
  """

  def __init__(self, preprocessor: tp.TextPreprocessor):
    super().__init__(name="spanbert_preprocessing")
    self.preprocessor = preprocessor

  @tf.function(autograph=False, input_signature=[_TEXT])
  def serve_text(self, text):
    return self.preprocessor(text)

  @tf.function(autograph=False, input_signature=[
      _TEXT, tf.TensorSpec([None], tf.string, name="text_pair")])
  def serve_text_pair(self, text, text_pair):
    return self.preprocessor(text, text_pair)

  def signatures(self):
    return {"serving_default": self.serve_text.get_concrete_function(),
            "encode_pair": self.serve_text_pair.get_concrete_function()}
