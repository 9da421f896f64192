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

"""The `extract_entities` signature: raw text in, nested entities out.

What the span NER task's evaluation does (tasks/span_ner.py) runs in the
graph: the text's windows (serving/span_windows.py), the SpanNerModel's label
for every candidate span, the task's greedy decoding (nested spans stay) and
character offsets of the entities. The module serves `encode_spans` too
(serving/span_encoder_module.py). See docs/serving.md.

Example:
  module = SpanNerServingModule(ner_model, "vocab.txt", seq_length=256)
  module.extract_entities(tf.constant(["Mr. Bennet went to London."]))
"""

from typing import Dict, Optional

import tensorflow as tf

from official.core import task_factory
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.serving import qa_module
from official_spanbert.serving import serving_module
from official_spanbert.serving import span_encoder_module
from official_spanbert.serving import span_windows

OUTPUT_KEYS = ("entity_start", "entity_end", "entity_type", "entity_score")


def greedy_nested(starts: tf.Tensor, ends: tf.Tensor,
                  groups: Optional[tf.Tensor] = None) -> tf.Tensor:
  """[k] whether each span is kept, spans in decoding order (best first):
  span_ner_model.decode's rule (no crossing a kept span, no repeat).

  Spans of different `groups` (windows: no span runs over a window cut, so
  none crosses or repeats one of another window) are decoded apart, all
  groups at once: each step keeps, in every group, the first span still
  open and closes every open span of the group that crosses it or has its
  boundaries (itself included). Steps: the most spans one group keeps (at
  most 2 x its positions, nested spans included), each O(k); one group is
  the same result as taking the spans in order.
  """
  k = tf.size(starts)
  index = tf.range(k)
  if groups is None:
    groups = tf.zeros([k], tf.int32)
  groups = tf.cast(groups, tf.int32)
  num_groups = tf.reduce_max(tf.concat([groups, [-1]], 0)) + 1

  def body(open_, kept):
    # Each span's group's first open span (k: none left).
    first = tf.math.unsorted_segment_min(tf.where(open_, index, k), groups,
                                         num_groups)
    i = tf.minimum(tf.gather(first, groups), k)
    chosen = i < k
    s = tf.gather(starts, tf.minimum(i, k - 1))
    e = tf.gather(ends, tf.minimum(i, k - 1))
    conflict = chosen & (((starts < s) & (s <= ends) & (ends < e)) |
                         ((s < starts) & (starts <= e) & (e < ends)) |
                         (tf.equal(starts, s) & tf.equal(ends, e)))
    return open_ & ~conflict, kept | tf.equal(index, i)

  _, kept = tf.while_loop(lambda open_, _: tf.reduce_any(open_), body,
                          (tf.ones([k], tf.bool), tf.zeros([k], tf.bool)))
  return kept


def _stable_order(*keys: tf.Tensor) -> tf.Tensor:
  """Indices sorting by keys[0], then keys[1], ... (ascending, stable)."""
  order = tf.range(tf.size(keys[0]))
  for key in reversed(keys):
    order = tf.gather(order, tf.argsort(tf.gather(key, order), stable=True))
  return order


class SpanNerServingModule(span_encoder_module.SpanEncoderModule):
  """SavedModel signatures `extract_entities(text)` and `encode_spans` of a
  span NER model (see the module docstring).

  Args:
    model: a modeling/span_ner_model.SpanNerModel with weights.
    vocab_file, lower_case, seq_length: the run's tokenizer and windows.
    max_wordpieces: see SpanEncoderModule.Params.

  Example:
    module = SpanNerServingModule(model, "vocab.txt", seq_length=256)
    tf.saved_model.save(module, "/models/ner/1", module.signatures())
  """

  Params = span_encoder_module.SpanEncoderModule.Params
  SIGNATURES = ("extract_entities", "encode_spans")
  WHAT = "span NER model"
  WARMUP_TEXTS = ("Mr. Bennet walked to the house in Meryton.\nHe smiled.",
                  "")

  @classmethod
  def from_run(cls, run: serving_module.Run,
               params: Params) -> "SpanNerServingModule":
    """The module of a spanbert/span_ner run with the tokenizer and windows
    of its validation data.

    Raises:
      ValueError: the run's head is `flat` (a BIO tagger has no spans).
    """
    if run.params.task.model.head != "span":
      raise ValueError(
          f"extract_entities serves the span head; this run's "
          f"task.model.head is {run.params.task.model.head!r}")
    data = run.params.task.validation_data
    model = run.restore(task_factory.get_task(run.params.task).build_model())
    return cls(model, run.vocab(params.vocab_file),
               lower_case=data.do_lower_case, seq_length=data.seq_length,
               max_wordpieces=params.max_wordpieces)

  def use_encoder(self, encoder) -> None:
    """Makes the model and encode_spans call `encoder`."""
    self.model.encoder = encoder
    super().use_encoder(encoder)

  def warmup_inputs(self):
    texts = list(self.WARMUP_TEXTS)
    return {
        "extract_entities": {"text": texts},
        "encode_spans": {"text": texts, "span_starts": [[0, 4], [-1, -1]],
                         "span_ends": [[10, 10], [-1, -1]]},
        "serving_default": {"text": texts},
    }

  def __init__(self, model, vocab_file: str, lower_case: bool = False,
               seq_length: int = 256,
               max_wordpieces: int = Params.max_wordpieces):
    super().__init__(model.encoder, vocab_file, lower_case, seq_length,
                     span_embedding=model.span_embedding,
                     max_wordpieces=max_wordpieces, name="spanbert_span_ner")
    self._layers.value = (model.encoder, model.span_embedding, model)
    self.num_labels = model.num_labels

  @property
  def model(self):
    return self._layers.value[2]

  def _span_logits(self, features: Dict[str, tf.Tensor]
                   ) -> Dict[str, tf.Tensor]:
    out = self.model(features, training=False)
    return {"span_logits": tf.cast(out["span_logits"], tf.float32),
            "span_mask": out["span_mask"]}

  @tf.function(autograph=False, input_signature=[
      tf.TensorSpec([None], tf.string, name="text")])
  def extract_entities(self, text):
    """Nested entities of each text (OUTPUT_KEYS, [batch, n])."""
    text = qa_module.valid_utf8(text)
    w = self.checked_windows(text)
    chunk, width = span_windows.MODEL_BATCH_WINDOWS, self.max_span_width
    out = span_windows.in_chunks(self._span_logits, w.features, {
        "span_logits": tf.TensorSpec(
            [chunk, self.seq_length, width, self.num_labels], tf.float32),
        "span_mask": tf.TensorSpec([chunk, self.seq_length, width],
                                   tf.bool)})
    # The offline candidates(): float64 softmax, best label a type.
    logits = tf.cast(out["span_logits"], tf.float64)
    exp = tf.exp(logits - tf.reduce_max(logits, -1, keepdims=True))
    probs = exp / tf.reduce_sum(exp, -1, keepdims=True)
    best = tf.argmax(probs, -1, output_type=tf.int32)
    found = tf.where(out["span_mask"] & (best > 0))  # [k, (window, t, w)]
    label = tf.gather_nd(best, found)
    prob = tf.gather_nd(tf.reduce_max(probs, -1), found)
    # Batch-global pieces: word order within a text, texts apart.
    start = tf.gather(w.window_first, found[:, 0]) + found[:, 1] - 1
    end = start + found[:, 2]
    order = _stable_order(-prob, start, end)
    start, end = tf.gather(start, order), tf.gather(end, order)
    label, prob = tf.gather(label, order), tf.gather(prob, order)
    window = tf.gather(found[:, 0], order)
    kept = tf.where(greedy_nested(start, end, window))[:, 0]
    start, end = tf.gather(start, kept), tf.gather(end, kept)
    label, prob = tf.gather(label, kept), tf.gather(prob, kept)
    order = _stable_order(start, end)
    start, end = tf.gather(start, order), tf.gather(end, order)
    label, prob = tf.gather(label, order), tf.gather(prob, order)
    rows = tf.gather(w.piece_row, start)
    batch = tf.shape(text, tf.int64)[0]

    def dense(values, pad):
      return tf.RaggedTensor.from_value_rowids(values, rows, batch).to_tensor(
          pad)

    return {
        "entity_start": dense(tf.cast(tf.gather(w.piece_begin, start),
                                      tf.int32), -1),
        "entity_end": dense(tf.cast(tf.gather(w.piece_end, end), tf.int32),
                            -1),
        "entity_type": dense(tf.gather(
            tf.constant(span_ner_data.ENTITY_TYPES), label - 1), ""),
        "entity_score": dense(tf.cast(prob, tf.float32), -1.0),
    }

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    entities = self.extract_entities.get_concrete_function()
    spans = self.encode_spans.get_concrete_function()
    self.track_variables()
    return {"extract_entities": entities, "encode_spans": spans,
            "serving_default": entities}
