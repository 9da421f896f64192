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

"""modeling/int8_layout.py (and activations.gelu_by_erf): the float graph the
int8 export quantizes gives the Keras layers' outputs, within 1e-5 with its
attention core in float32 and within bfloat16's rounding with it in
bfloat16, on padded and unpadded batches; every projection is a MatMul, the
attention's products are bfloat16 BatchMatMuls, and the exact GELU is
computed by erf."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks
from official_spanbert.modeling import activations
from official_spanbert.modeling import int8_layout


@pytest.mark.parametrize("x", [
    np.linspace(-8.0, 8.0, 1001, dtype=np.float32),
    np.random.default_rng(0).standard_normal(4096).astype(np.float32) * 3])
def test_gelu_by_erf_is_the_exact_gelu(x):
  np.testing.assert_allclose(activations.gelu_by_erf(tf.constant(x)).numpy(),
                             activations.gelu_exact(tf.constant(x)).numpy(),
                             atol=2e-6, rtol=0)


def _encoder():
  tf_keras.utils.set_random_seed(7)
  return networks.BertEncoderV2(
      vocab_size=100, hidden_size=64, num_layers=2, num_attention_heads=4,
      inner_dim=128, max_sequence_length=48,
      inner_activation=tf_keras.activations.get(activations.EXACT_GELU))


def _inputs(padded: bool):
  rng = np.random.default_rng(1)
  mask = np.ones((3, 40), np.int32)
  if padded:
    mask[1, 25:] = 0
    mask[2, 3:] = 0
  return dict(
      input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)), tf.int32),
      input_mask=tf.constant(mask),
      input_type_ids=tf.constant(rng.integers(0, 2, (3, 40)), tf.int32))


def _op_types(fn, inputs):
  return [(op.type, op.get_attr("T") if op.type == "BatchMatMulV2" else None)
          for op in fn.get_concrete_function(inputs).graph.get_operations()]


@pytest.mark.parametrize("core_dtype,atol", [(None, 1e-5),
                                             (tf.bfloat16, 0.05)])
def test_the_layout_gives_the_keras_outputs(core_dtype, atol):
  encoder = _encoder()
  before = {p: encoder(_inputs(p), training=False)["sequence_output"].numpy()
            for p in (True, False)}
  names = sorted(v.name for v in encoder.variables)
  counts = int8_layout.int8_layout(encoder, core_dtype)
  assert counts == {"attention": 2, "projections": 2 * 6,
                    "attention_cores": 0 if core_dtype is None else 2,
                    "gelus": 2}
  assert sorted(v.name for v in encoder.variables) == names
  served = tf.function(lambda x: encoder(x, training=False)["sequence_output"])
  for padded in (True, False):
    out = served(_inputs(padded)).numpy()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, before[padded], atol=atol, rtol=0)
    if core_dtype is not None:  # bf16 rounds: not the float32 outputs
      assert np.abs(out - before[padded]).max() > 1e-5
  ops = _op_types(served, _inputs(True))
  types = [t for t, _ in ops]
  assert "Einsum" not in types and types.count("MatMul") >= 2 * 6
  assert "Erf" in types and "Erfc" not in types
  # The scores and the context: two batched matmuls a layer, in core_dtype.
  bmm = [dtype for t, dtype in ops if t == "BatchMatMulV2"]
  assert bmm == [core_dtype or tf.float32] * (2 * 2), bmm
  # A second call changes nothing more.
  again = int8_layout.int8_layout(encoder, core_dtype)
  assert again["attention"] == again["projections"] == 0
  assert again["gelus"] == 0


def test_a_tanh_gelu_is_left_alone():
  tf_keras.utils.set_random_seed(7)
  encoder = networks.BertEncoderV2(
      vocab_size=100, hidden_size=32, num_layers=1, num_attention_heads=2,
      inner_dim=64, max_sequence_length=16, inner_activation="gelu")
  assert int8_layout.int8_layout(encoder)["gelus"] == 0
