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

"""Attention scores by one batched matmul instead of Keras' einsum (issue 45).

`use_matmul_attention(model)` makes every built attention layer compute
q @ k^T on [batch, heads, seq, head_size]: the same outputs, several times
faster on CPU. The serving modules use it; training keeps Keras' layer.
Measured in benchmarks/RESULTS.md, "The encoder alone".
"""

import math

import tensorflow as tf
import tf_keras

# Keras' equation for attention over axis 1 of rank-4 projections.
EINSUM = "aecd,abcd->acbe"


class MatmulMultiHeadAttention(tf_keras.layers.MultiHeadAttention):
  """Keras MultiHeadAttention whose scores are one batched matmul. Same
  variables, same outputs."""

  def _compute_attention(self, query, key, value, attention_mask=None,
                         training=None):
    if self._dot_product_equation != EINSUM:  # other attention axes
      return super()._compute_attention(query, key, value, attention_mask,
                                        training)
    query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
    # [B, T, N, H] -> [B, N, T, H]; scores [B, N, T (query), S (key)].
    scores = tf.matmul(tf.transpose(query, [0, 2, 1, 3]),
                       tf.transpose(key, [0, 2, 1, 3]), transpose_b=True)
    scores = self._masked_softmax(scores, attention_mask)
    dropped = self._dropout_layer(scores, training=training)
    return tf.einsum(self._combine_equation, dropped, value), scores


def use_matmul_attention(model: tf.Module) -> int:
  """Makes every Keras MultiHeadAttention layer of `model` (exactly that
  class: subclasses such as the clamped one keep theirs) a
  MatmulMultiHeadAttention, in place. Returns how many changed."""
  changed = 0
  for module in model.submodules:
    if type(module) is tf_keras.layers.MultiHeadAttention:  # pylint: disable=unidiomatic-typecheck
      module.__class__ = MatmulMultiHeadAttention
      changed += 1
  return changed
