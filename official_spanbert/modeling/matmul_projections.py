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

"""Dense projections as reshape + MatMul instead of Keras' EinsumDense.

Model Garden's encoder projects with `EinsumDense` (an `Einsum` op), which
int8 quantizers (Intel Neural Compressor's TensorFlow backend) do not match;
`use_matmul_projections(model)` makes every such layer whose equation is a
plain matrix product ("abc,cde->abde", "abcd,cde->abe", "abc,cd->abd")
compute `reshape(x, [-1, K]) @ reshape(kernel, [K, N])`, reshaped back: the
same variables and float32 outputs (tests/modeling/matmul_projections_test.py).
The int8 export uses it (serving/quantization.py); training keeps Keras'.
`use_fused_projections(model)` is the float32 / bfloat16 exports' form:
bias and the feed-forward GELU on the 2-D product, which oneDNN runs as one
fused kernel (attention_layout.serving_layout).

Example:
  changed = matmul_projections.use_matmul_projections(classifier)
"""

import math
from typing import Dict, Optional, Tuple

import tensorflow as tf
import tf_keras


def matmul_plan(equation: str) -> Optional[Tuple[int, int]]:
  """(batch axes, contracted axes) of an EinsumDense equation that is a
  matrix product: the input's last axes are the kernel's first ones, and
  the output is the input's other axes then the kernel's other axes. None
  for any other equation."""
  if "." in equation or "->" not in equation:
    return None
  lhs, _, out = equation.partition("->")
  x, _, kernel = lhs.partition(",")
  contract = "".join(c for c in x if c in kernel)
  if not contract or not (x.endswith(contract) and kernel.startswith(contract)):
    return None
  batch = x[:len(x) - len(contract)]
  if out != batch + kernel[len(contract):] or set(batch) & set(kernel):
    return None
  return len(batch), len(contract)


class MatmulEinsumDense(tf_keras.layers.EinsumDense):
  """EinsumDense computed by one MatMul (same variables, same outputs).

  With `fused_2d` set (use_fused_projections), the bias and the activation
  apply to the 2-D product before it is reshaped back, so that TensorFlow's
  remapper fuses MatMul + BiasAdd (+ GELU) into one oneDNN kernel.
  """

  fused_2d = False

  def call(self, inputs):
    plan = matmul_plan(self.equation)
    if plan is None:
      return super().call(inputs)
    n_batch, n_contract = plan
    shape = self.kernel.shape.as_list()
    k = math.prod(shape[:n_contract])
    free = shape[n_contract:]
    flat = tf.matmul(tf.reshape(inputs, [-1, k]),
                     tf.reshape(self.kernel, [k, math.prod(free)]))
    if self.fused_2d:
      if self.bias is not None:
        flat = tf.nn.bias_add(flat, tf.reshape(self.bias, [-1]))
      if self.activation is not None:
        flat = self.activation(flat)
    ret = tf.reshape(flat, tf.concat(
        [tf.shape(inputs)[:n_batch], tf.constant(free, tf.int32)], 0))
    if self.fused_2d:
      return ret
    if self.bias is not None:
      ret += self.bias
    if self.activation is not None:
      ret = self.activation(ret)
    return ret


def use_matmul_projections(model: tf.Module, fused_2d: bool = False) -> int:
  """Makes every Keras EinsumDense layer of `model` (exactly that class)
  whose equation is a matrix product a MatmulEinsumDense, in place (call
  the model once first: attention layers create theirs when built); with
  `fused_2d`, the bias and activation apply to the 2-D product.
  Returns how many changed."""
  changed = 0
  for module in model.submodules:
    if (type(module) is tf_keras.layers.EinsumDense  # pylint: disable=unidiomatic-typecheck
        and matmul_plan(module.equation) is not None):
      module.__class__ = MatmulEinsumDense
      module.fused_2d = fused_2d
      changed += 1
  return changed


def fuse_feed_forward(model: tf.Module) -> int:
  """Moves the activation of every Model Garden transformer block's
  feed-forward layer into its (fused MatmulEinsumDense) first projection,
  computed in that projection's dtype: the block's Activation layer (float32
  under mixed_bfloat16, for training's sake) becomes the identity, so a
  bfloat16 graph casts to float32 and back no more. Returns how many
  blocks changed."""
  changed = 0
  for block in model.submodules:
    dense = getattr(block, "_intermediate_dense", None)
    act = getattr(block, "_intermediate_activation_layer", None)
    if (isinstance(dense, MatmulEinsumDense) and dense.fused_2d and
        isinstance(act, tf_keras.layers.Activation) and
        dense.activation in (None, tf_keras.activations.linear)):
      dense.activation = act.activation
      act.activation = tf_keras.activations.linear
      act._set_dtype_policy(dense.dtype_policy)  # pylint: disable=protected-access
      changed += 1
  return changed


def use_fused_projections(model: tf.Module) -> Dict[str, int]:
  """The serving layout of `model`'s projections (call the model once
  first): MatMul + BiasAdd (+ the feed-forward's GELU) that oneDNN fuses.
  Same variables; float32 outputs within 1e-6 of Keras' (GELU moves into
  the projection's dtype, so bfloat16 ones round differently).

  Returns:
    {"projections": layers made MatMuls, "feed_forward": blocks whose
    GELU moved into the projection}.
  """
  return {"projections": use_matmul_projections(model, fused_2d=True),
          "feed_forward": fuse_feed_forward(model)}
