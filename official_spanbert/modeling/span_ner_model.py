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

"""Nested named-entity recognition by span classification on a BERT encoder.

Every candidate span of a window is embedded (span_embedding.py) and labelled
none or one of the six types by an FFNN; `decode` keeps the most probable
first, skipping crossing spans and keeping nested ones.

Example:
  model = SpanNerModel(encoder, max_span_width=24)
  outputs = model(features)   # span_logits [B, T, W, 7], span_mask [B, T, W]
  loss = span_loss(outputs, span_labels(gold_starts, gold_ends, gold_labels,
                                        outputs["span_mask"]))
"""

from typing import Dict, List, Tuple

import numpy as np
import tensorflow as tf
import tf_keras

from official_spanbert.modeling import ffnn
from official_spanbert.modeling import span_embedding

NUM_LABELS = 7  # no entity + LitBank's six types
# The flat baseline's tags: O, then B- and I- of each type (as
# data/finetuning/span_ner.py's BIO_TAGS, which its tests compare).
NUM_BIO_TAGS = 1 + 2 * (NUM_LABELS - 1)


class SpanNerModel(tf_keras.Model):
  """Labels every candidate span of a batch of windows.

  Args:
    encoder: a Model Garden BERT encoder (dict inputs, `sequence_output`).
    num_labels: labels, 0 for no entity.
    max_span_width: longest candidate span, in wordpieces.
    feature_size: width embedding size.
    ffnn_size, ffnn_depth: hidden layers of the label scorer.
    dropout_rate: dropout on span embeddings and in the scorer.
    initializer_range: stddev of the truncated-normal initializer.
    none_prior: the untrained model's probability of "no entity" for every
      candidate (its output biases start at the log priors, the others
      sharing the rest; Lin et al. 2017's prior initialisation): ~99% of
      LitBank's candidates are no entity, and from uniform biases the task
      layers' learning rate took hundreds of steps to learn just that.

  Example:
    model = SpanNerModel(encoder, max_span_width=24)
    outputs = model({"input_word_ids": ..., "input_mask": ...,
                     "word_start": ..., "word_end": ...,
                     "sentence_ids": ...})       # all [B, T]
  """

  def __init__(self, encoder: tf_keras.Model, num_labels: int = NUM_LABELS,
               max_span_width: int = 24, feature_size: int = 20,
               ffnn_size: int = 150, ffnn_depth: int = 1,
               dropout_rate: float = 0.1, initializer_range: float = 0.02,
               none_prior: float = 0.99, **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.num_labels = num_labels
    self.max_span_width = max_span_width
    self.span_embedding = span_embedding.SpanEmbedding(
        max_span_width, feature_size, initializer_range, name="span_embedding")
    priors = [none_prior] + [(1 - none_prior) / (num_labels - 1)] * (
        num_labels - 1)
    self.label_scorer = ffnn.FFNN(
        ffnn_size, ffnn_depth, num_labels, dropout_rate,
        lambda: tf_keras.initializers.TruncatedNormal(stddev=initializer_range),
        output_bias_initializer=tf_keras.initializers.Constant(
            np.log(priors).tolist()), name="span_labels")
    self.dropout = tf_keras.layers.Dropout(dropout_rate)

  @property
  def checkpoint_items(self) -> Dict[str, tf.Module]:
    return {"encoder": self.encoder}

  def call(self, inputs, training=None) -> Dict[str, tf.Tensor]:
    """span_logits [B, T, max_span_width, num_labels] (start position,
    width - 1) and span_mask [B, T, max_span_width] of the candidates."""
    ids = inputs["input_word_ids"]
    x = self.encoder(dict(input_word_ids=ids, input_mask=inputs["input_mask"],
                          input_type_ids=tf.zeros_like(ids)),
                     training=training)["sequence_output"]
    batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
    x = tf.reshape(x, [-1, x.shape[-1]])
    # Sentences told apart across the batch's windows, so no candidate runs
    # from one window into the next.
    sentences = inputs["sentence_ids"]
    sentences = tf.where(sentences >= 0,
                         sentences + length * tf.range(batch)[:, None], -1)
    starts, ends, keep = span_embedding.candidate_spans(
        tf.reshape(sentences, [-1]), tf.reshape(inputs["word_start"], [-1]),
        tf.reshape(inputs["word_end"], [-1]), self.max_span_width)
    g = self.span_embedding(x, tf.boolean_mask(starts, keep),
                            tf.boolean_mask(ends, keep))
    logits = self.label_scorer(self.dropout(g, training=training),
                               training=training)
    dense = tf.scatter_nd(tf.cast(tf.where(keep), tf.int32), logits,
                          tf.stack([tf.size(keep), self.num_labels]))
    shape = tf.stack([batch, length, self.max_span_width])
    return {"span_logits": tf.reshape(dense, tf.concat(
                [shape, [self.num_labels]], 0)),
            "span_mask": tf.reshape(keep, shape)}


def span_labels(gold_starts: tf.Tensor, gold_ends: tf.Tensor,
                gold_labels: tf.Tensor, span_mask: tf.Tensor) -> tf.Tensor:
  """[B, T, W] gold label of each (start, width) (0: no entity).

  Gold entities are [B, G] (label 0 pads); one wider than W has no cell. Of
  two on one span (one LitBank entity has two types) the larger label wins.
  """
  shape = tf.shape(span_mask)
  widths = gold_ends - gold_starts
  valid = (gold_labels > 0) & (gold_starts >= 0) & (widths < shape[2])
  rows = tf.broadcast_to(tf.range(shape[0])[:, None], tf.shape(gold_starts))
  index = tf.boolean_mask(tf.stack([rows, gold_starts, widths], -1), valid)
  return tf.tensor_scatter_nd_max(tf.zeros(shape, gold_labels.dtype), index,
                                  tf.boolean_mask(gold_labels, valid))


def span_loss(outputs: Dict[str, tf.Tensor], labels: tf.Tensor) -> tf.Tensor:
  """Mean cross-entropy of the candidates' labels."""
  logits = tf.cast(outputs["span_logits"], tf.float32)
  mask = tf.cast(outputs["span_mask"], tf.float32)
  loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
  return tf.reduce_sum(loss * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)


def candidates(span_logits: np.ndarray, span_mask: np.ndarray
               ) -> List[Tuple[int, int, int, float]]:
  """(start, end, label, probability) of one window's candidates whose
  best label is an entity (positions inclusive)."""
  logits = span_logits.astype(np.float64)
  probs = np.exp(logits - logits.max(-1, keepdims=True))
  probs /= probs.sum(-1, keepdims=True)
  best = probs.argmax(-1)
  starts, widths = np.nonzero(span_mask & (best > 0))
  return [(int(s), int(s + w), int(best[s, w]), float(probs[s, w, best[s, w]]))
          for s, w in zip(starts, widths)]


def decode(spans: List[Tuple[int, int, int, float]]
           ) -> List[Tuple[int, int, int]]:
  """(start, end, label) of the kept spans, sorted. Spans are taken most
  probable first; one that crosses a kept span, or has its boundaries, is
  skipped; nested spans stay."""
  kept: List[Tuple[int, int, int]] = []
  taken = set()
  # The kept spans' starts and ends as arrays: the crossing test of each
  # span against all kept ones in numpy, not a Python loop (a 2,000-word
  # document of 16k candidate spans, 3.7k kept: 1.25 -> 0.25 s).
  kept_starts = np.empty(len(spans), np.int64)
  kept_ends = np.empty(len(spans), np.int64)
  for s, e, label, _ in sorted(spans, key=lambda t: (-t[3], t[0], t[1])):
    if (s, e) in taken:
      continue
    a, b = kept_starts[:len(kept)], kept_ends[:len(kept)]
    if (((a < s) & (s <= b) & (b < e)) | ((s < a) & (a <= e) & (e < b))).any():
      continue
    kept_starts[len(kept)], kept_ends[len(kept)] = s, e
    kept.append((s, e, label))
    taken.add((s, e))
  return sorted(kept)
