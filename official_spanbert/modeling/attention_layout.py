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
q @ k^T and the context on [batch, heads, seq, head_size]: the same outputs,
several times faster on CPU. `serving_layout(model)` adds the fused
projections; every export but int8 serves it (serving/registry.py), training
keeps Keras' layers. Measured in benchmarks/RESULTS.md, "The encoder alone"
and "bfloat16 serving at the CPU's speed".
"""

import math
from typing import Dict

import tensorflow as tf
import tf_keras

from official_spanbert.modeling import matmul_projections

# Keras' equation for attention over axis 1 of rank-4 projections.
EINSUM = "aecd,abcd->acbe"


class MatmulMultiHeadAttention(tf_keras.layers.MultiHeadAttention):
  """Keras MultiHeadAttention whose scores and context are batched matmuls,
  and whose softmax skips the mask when it masks nothing (a batch without
  padding). Same variables, same outputs (but see compute_core_in)."""

  core_dtype = None  # compute_core_in

  def compute_core_in(self, dtype) -> None:
    """Computes the scores, softmax and context in `dtype` (the int8
    layout's bfloat16), between projections of the layer's own dtype."""
    self.core_dtype = tf.as_dtype(dtype)
    policy = tf_keras.mixed_precision.Policy(
        "mixed_bfloat16" if self.core_dtype == tf.bfloat16 else
        self.core_dtype.name)
    for layer in (self._softmax, self._dropout_layer):
      layer._set_dtype_policy(policy)  # pylint: disable=protected-access

  def _compute_attention(self, query, key, value, attention_mask=None,
                         training=None):
    if self._dot_product_equation != EINSUM:  # other attention axes
      return super()._compute_attention(query, key, value, attention_mask,
                                        training)
    if self.core_dtype is not None and self.core_dtype != query.dtype:
      dtype = query.dtype
      context, probs = self._compute_attention(
          *(tf.cast(t, self.core_dtype) for t in (query, key, value)),
          attention_mask=attention_mask, training=training)
      return tf.cast(context, dtype), probs
    query = tf.multiply(query, 1.0 / math.sqrt(float(self._key_dim)))
    # [B, T, N, H] -> [B, N, T, H]; scores [B, N, T (query), S (key)].
    scores = tf.matmul(tf.transpose(query, [0, 2, 1, 3]),
                       tf.transpose(key, [0, 2, 1, 3]), transpose_b=True)
    if attention_mask is None:
      probs = self._masked_softmax(scores)
    else:
      probs = tf.cond(
          tf.reduce_all(tf.cast(attention_mask, tf.bool)),
          lambda: self._masked_softmax(scores),
          lambda: self._masked_softmax(scores, attention_mask))
    dropped = self._dropout_layer(probs, training=training)
    # [B, N, T, S] @ [B, N, S, H] -> [B, N, T, H] -> [B, T, N, H].
    context = tf.matmul(dropped, tf.transpose(value, [0, 2, 1, 3]))
    return tf.transpose(context, [0, 2, 1, 3]), probs


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


def call_once(model: tf.Module, inputs=None) -> None:
  """Calls `model` (on the encoder's dict inputs) once on `inputs`
  (default: 4 tokens), so that Keras builds the attention layers and their
  projections before a layout swaps their classes."""
  if inputs is None:
    ones = tf.ones([1, 4], tf.int32)
    inputs = {"input_word_ids": ones, "input_mask": ones,
              "input_type_ids": tf.zeros_like(ones)}
  model(inputs, training=False)


def serving_layout(model: tf.Module, inputs=None) -> Dict[str, int]:
  """The layout the float32 and bfloat16 exports serve: matmul attention
  and fused projections (matmul_projections.use_fused_projections), in
  place. `model` takes the encoder's dict inputs; it is called once on
  `inputs` (default: 4 tokens) first, so that its attention layers exist.

  Returns:
    {"attention": layers changed, "projections": ..., "feed_forward": ...}.
  """
  call_once(model, inputs)
  out = {"attention": use_matmul_attention(model)}
  out.update(matmul_projections.use_fused_projections(model))
  return out
