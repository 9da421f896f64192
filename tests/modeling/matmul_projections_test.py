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

"""modeling/matmul_projections.py: the encoder's EinsumDense projections as
reshape + MatMul give the same float32 outputs, and leave no Einsum op in
the projections of the traced graph."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import matmul_projections


@pytest.mark.parametrize("equation,plan", [
    ("abc,cde->abde", (2, 1)), ("abcd,cde->abe", (2, 2)),
    ("abc,cd->abd", (2, 1)), ("ab,bc->ac", (1, 1)),
    ("abc,dc->abd", None), ("acbe,aecd->abcd", None), ("...b,bc->...c", None)])
def test_matmul_plan(equation, plan):
  assert matmul_projections.matmul_plan(equation) == plan


def _op_counts(fn, inputs):
  graph = fn.get_concrete_function(inputs).graph
  counts = {}
  for op in graph.get_operations():
    counts[op.type] = counts.get(op.type, 0) + 1
  return counts


def test_projections_as_matmul_give_the_einsum_outputs():
  tf_keras.utils.set_random_seed(5)
  encoder = networks.BertEncoderV2(vocab_size=100, hidden_size=64,
                                   num_layers=2, num_attention_heads=4,
                                   inner_dim=128, max_sequence_length=48)
  rng = np.random.default_rng(0)
  mask = np.ones((3, 40), np.int32)
  mask[1, 25:] = 0
  inputs = dict(
      input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)), tf.int32),
      input_mask=tf.constant(mask),
      input_type_ids=tf.constant(rng.integers(0, 2, (3, 40)), tf.int32))
  before = encoder(inputs, training=False)["sequence_output"].numpy()
  attention_layout.use_matmul_attention(encoder)
  names = sorted(v.name for v in encoder.variables)
  # Per layer: query, key, value, attention output, intermediate, output.
  assert matmul_projections.use_matmul_projections(encoder) == 2 * 6
  assert sorted(v.name for v in encoder.variables) == names
  served = tf.function(lambda x: encoder(x, training=False)["sequence_output"])
  np.testing.assert_allclose(served(inputs).numpy(), before, atol=1e-5,
                             rtol=0)
  counts = _op_counts(served, inputs)
  # Only the attention's probabilities @ values stay an Einsum (one a layer).
  assert counts.get("Einsum", 0) == 2, counts
  assert counts["MatMul"] >= 2 * 6, counts
  assert matmul_projections.use_matmul_projections(encoder) == 0
