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

"""The float graph that the int8 export quantizes (serving/quantization.py).

Intel Neural Compressor makes int8 the MatMuls it finds; what stays float
should cost little. `int8_layout(model, core_dtype)`, in place:
  * every projection a MatMul (matmul_projections.use_matmul_projections),
    for the quantizer to match;
  * the attention's scores, softmax and context as batched matmuls, in
    `core_dtype` (bfloat16 where the CPU has it natively: no quantizer here
    makes TensorFlow's BatchMatMul int8);
  * the feed-forward's exact GELU, which follows an int8 MatMul and so no
    kernel fuses, written with erf instead of erfc (activations.gelu_by_erf,
    twice as fast, same values within 1e-6).
Same variables. The feed-forward's output projection is int8 too, with its
input's outlier channels computed apart first (modeling/ffn_outliers.py,
called by quantization.quantize_model).

Example:
  counts = int8_layout.int8_layout(encoder, tf.bfloat16)
"""

from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from official_spanbert.modeling import activations
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import matmul_projections


def int8_layout(model: tf.Module, core_dtype: Optional[tf.DType] = None,
                inputs=None) -> Dict[str, int]:
  """Lays `model` (the encoder's dict inputs) out for int8 quantization;
  `core_dtype` (None: the layers' own) is what the attention's core computes
  in. The model is called once on `inputs` (default: 4 tokens) first, so
  that its attention layers exist.

  Returns:
    {"attention", "projections", "attention_cores", "gelus"}: how many
    layers changed.
  """
  attention_layout.call_once(model, inputs)
  out = {"attention": attention_layout.use_matmul_attention(model),
         "projections": matmul_projections.use_matmul_projections(model),
         "attention_cores": 0, "gelus": 0}
  for module in model.submodules:
    if (core_dtype is not None and
        isinstance(module, attention_layout.MatmulMultiHeadAttention)):
      module.compute_core_in(core_dtype)
      out["attention_cores"] += 1
    act = getattr(module, "_intermediate_activation_layer", None)
    if (isinstance(act, tf_keras.layers.Activation) and
        act.activation is activations.gelu_exact):
      act.activation = activations.gelu_by_erf
      out["gelus"] += 1
  return out
