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

"""The reference's attention-score clamp (`--clamp-attention`), as an option.

Clamps the scaled scores to [-1e4, 1e4] before the softmax, as the reference's
BertSelfAttention, so that float16 cannot overflow them. Off by default; see
docs/interop.md, "The attention-score clamp".
"""

import tensorflow as tf
import tf_keras

LIMIT = 1e4  # the reference's bound


class ClampedMultiHeadAttention(tf_keras.layers.MultiHeadAttention):
  """Keras MultiHeadAttention whose scaled scores are clamped to +-LIMIT
  before the mask and softmax, as the reference does. Same variables."""

  def _masked_softmax(self, attention_scores, attention_mask=None):
    limit = tf.cast(LIMIT, attention_scores.dtype)
    return super()._masked_softmax(
        tf.clip_by_value(attention_scores, -limit, limit), attention_mask)


def clamp_attention_scores(encoder) -> int:
  """Makes every built Keras attention layer of `encoder` clamp its scores.

  The layers keep their variables and checkpoint names (the class of each
  attention layer becomes ClampedMultiHeadAttention, which only changes the
  softmax's input). Call after the encoder is built.

  Returns:
    The number of attention layers changed.

  Raises:
    ValueError: the encoder has no built Keras attention layer.
  """
  changed = 0
  for layer in getattr(encoder, "transformer_layers", []):
    attention = getattr(layer, "_attention_layer", None)
    if type(attention) is tf_keras.layers.MultiHeadAttention:  # pylint: disable=unidiomatic-typecheck
      attention.__class__ = ClampedMultiHeadAttention
      changed += 1
    elif isinstance(attention, ClampedMultiHeadAttention):
      changed += 1
  if not changed:
    raise ValueError("clamp_attention: the encoder has no built Keras "
                     "MultiHeadAttention layers (only bert_v2 encoders "
                     "support it)")
  return changed
