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

"""Span representations of Lee et al. (2017), shared by the span tasks.

g = [x_start, x_end, attention head, width embedding] over candidate spans of
up to max_width tokens inside one sentence, word start to word end.

Example:
  embedding = SpanEmbedding(max_width=30, feature_size=20)
  starts, ends, keep = candidate_spans(sentence_map, word_start, word_end,
                                       max_width=30)
  g = embedding(x, tf.boolean_mask(starts, keep), tf.boolean_mask(ends, keep))
"""

from typing import Optional, Tuple

import tensorflow as tf
import tf_keras


def candidate_spans(sentence_map: tf.Tensor, word_start: tf.Tensor,
                    word_end: tf.Tensor, max_width: int
                    ) -> Tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
  """Every (start, start + w) for w < max_width, and which are candidates.

  Args:
    sentence_map, word_start, word_end: [n] int per token: its sentence, and
      1 where a word starts / ends.

  Returns:
    starts, ends: [n * max_width] int32, the grid in (start, width) order
      (ends clipped to n - 1); keep: [n * max_width] bool, the spans inside
      the tokens and one sentence, on word boundaries.
  """
  n = tf.shape(sentence_map)[0]
  starts = tf.repeat(tf.range(n), max_width)
  ends = starts + tf.tile(tf.range(max_width), [n])
  inside = ends < n
  ends = tf.minimum(ends, n - 1)
  keep = (inside &
          tf.equal(tf.gather(sentence_map, starts),
                   tf.gather(sentence_map, ends)) &
          tf.equal(tf.gather(word_start, starts), 1) &
          tf.equal(tf.gather(word_end, ends), 1))
  return starts, ends, keep


def span_heads(x: tf.Tensor, token_scores: tf.Tensor, starts: tf.Tensor,
               ends: tf.Tensor, max_width: int) -> tf.Tensor:
  """Softmax(token_scores)-weighted sums of x over each [start, end].

  An online softmax along the width: at offset w every start's running max,
  normaliser and weighted sum take in token start + w, and a span reads its
  start's values at w = end - start (< max_width). Each span is normalised
  by its own max, so any range of scores is exact up to float32 rounding
  (prefix sums over the document cancel catastrophically once one token's
  score is ~36 above a span's), and memory is [max_width, tokens, H], not
  [spans, max_width, H].
  """
  dtype = x.dtype
  x = tf.cast(x, tf.float32)
  scores = tf.cast(token_scores, tf.float32)
  n = tf.shape(x)[0]
  positions = tf.range(n)
  run_max, total, weighted = scores, tf.ones_like(scores), x
  heads = [weighted]
  for w in range(1, max_width):
    inside = positions + w < n
    j = tf.minimum(positions + w, n - 1)
    s = tf.gather(scores, j)
    new_max = tf.where(inside, tf.maximum(run_max, s), run_max)
    decay = tf.exp(run_max - new_max)
    add = tf.where(inside, tf.exp(s - new_max), 0.0)
    total = total * decay + add
    weighted = weighted * decay[:, None] + add[:, None] * tf.gather(x, j)
    run_max = new_max
    heads.append(weighted / total[:, None])
  heads = tf.stack(heads)  # [max_width, n, H]
  return tf.cast(tf.gather_nd(heads, tf.stack([ends - starts, starts], 1)),
                 dtype)


class SpanEmbedding(tf_keras.layers.Layer):
  """g = [x_start, x_end, head, width embedding] of spans of x [n, H].

  Args:
    max_width: spans are at most this many tokens (the width embedding's
      rows).
    feature_size: width embedding size.
    initializer_range: stddev of the truncated-normal initializer.

  Example:
    embedding = SpanEmbedding(max_width=30, feature_size=20)
    scores = embedding.token_scores(x)          # once per document
    g = embedding(x, starts, ends, scores)      # [spans, 3 H + 20]
  """

  def __init__(self, max_width: int, feature_size: int = 20,
               initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.max_width = max_width

    def init():
      return tf_keras.initializers.TruncatedNormal(stddev=initializer_range)

    self.width_embedding = tf_keras.layers.Embedding(
        max_width, feature_size, embeddings_initializer=init(),
        name="span_width_embedding")
    self.head_scorer = tf_keras.layers.Dense(1, kernel_initializer=init(),
                                             name="head_scores")

  def output_size(self, hidden_size: int) -> int:
    return 3 * hidden_size + self.width_embedding.output_dim

  def token_scores(self, x: tf.Tensor) -> tf.Tensor:
    """[n] attention scores of the tokens of x [n, H]."""
    return tf.squeeze(self.head_scorer(x), -1)

  def parts(self, x, starts, ends, token_scores=None):
    """(x_start, x_end, head, width embedding), each [spans, ...]."""
    if token_scores is None:
      token_scores = self.token_scores(x)
    return (tf.gather(x, starts), tf.gather(x, ends),
            span_heads(x, token_scores, starts, ends, self.max_width),
            self.width_embedding(ends - starts))

  def call(self, x: tf.Tensor, starts: tf.Tensor, ends: tf.Tensor,
           token_scores: Optional[tf.Tensor] = None) -> tf.Tensor:
    """g of the spans [starts, ends] (inclusive, < max_width tokens)."""
    return tf.concat(self.parts(x, starts, ends, token_scores), axis=-1)
