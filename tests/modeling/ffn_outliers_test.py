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

"""modeling/ffn_outliers.py: the channels that a trained encoder's
feed-forward activation pushes far above the others are found (a random
encoder has none, so one is planted: a large bias on one channel of one
block's first projection), and the split output projection keeps the
model's outputs, clips the quantizer's input to the other channels' range
and zeroes the channels' rows in its MatMul weight."""

import numpy as np
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks
from official_spanbert.modeling import activations
from official_spanbert.modeling import ffn_outliers
from official_spanbert.modeling import int8_layout

PLANTED = 37  # a channel of the inner dimension (128)


def _encoder(plant: bool = True):
  tf_keras.utils.set_random_seed(7)
  encoder = networks.BertEncoderV2(
      vocab_size=100, hidden_size=64, num_layers=2, num_attention_heads=4,
      inner_dim=128, max_sequence_length=48,
      inner_activation=tf_keras.activations.get(activations.EXACT_GELU))
  encoder(_batch())
  if plant:
    dense = encoder.transformer_layers[1]._intermediate_dense  # pylint: disable=protected-access
    bias = dense.bias.numpy()
    bias[PLANTED] = 30.0
    dense.bias.assign(bias)
  return encoder


def _batch(seed: int = 1):
  rng = np.random.default_rng(seed)
  mask = np.ones((3, 24), np.int32)
  mask[2, 10:] = 0
  return dict(input_word_ids=rng.integers(1, 100, (3, 24)).astype(np.int32),
              input_mask=mask,
              input_type_ids=rng.integers(0, 2, (3, 24)).astype(np.int32))


def test_find_names_the_planted_channel_only():
  found = ffn_outliers.find(_encoder(), [_batch(1), _batch(2)])
  assert list(found) == ["transformer/layer_1"]
  assert found["transformer/layer_1"].channels == (PLANTED,)
  assert 0.0 < found["transformer/layer_1"].clip < 10.0


def test_find_keeps_the_largest_channels_only():
  encoder = _encoder()
  dense = encoder.transformer_layers[0]._intermediate_dense  # pylint: disable=protected-access
  bias = dense.bias.numpy()
  bias[[3, 9, 50]] = [20.0, 40.0, 30.0]
  dense.bias.assign(bias)
  found = ffn_outliers.find(encoder, [_batch(1)])
  # 1% of 128 channels rounds to one: the largest.
  assert found["transformer/layer_0"].channels == (9,)
  assert found["transformer/layer_1"].channels == (PLANTED,)


def test_find_names_none_in_a_random_encoder():
  assert not ffn_outliers.find(_encoder(plant=False), [_batch(1)])


def test_split_keeps_the_outputs_and_moves_the_channel_out_of_the_matmul():
  encoder = _encoder()
  batch = _batch(3)
  # On the windows it was found on (no other channel above the clip).
  found = ffn_outliers.find(encoder, [batch])
  int8_layout.int8_layout(encoder)
  before = encoder(batch)["sequence_output"].numpy()
  assert ffn_outliers.split(encoder, found) == 1
  after = encoder(batch)["sequence_output"].numpy()
  np.testing.assert_allclose(after, before, atol=2e-5, rtol=0)

  graph = tf.function(lambda b: encoder(b)["sequence_output"]).get_concrete_function(
      {k: tf.TensorSpec([None, None], tf.int32, name=k) for k in batch}).graph
  names = {op.name: op for op in graph.get_operations()}
  matmul = next(op for name, op in names.items()
                if "layer_1/output/MatMul" in name and op.type == "MatMul")
  assert matmul.inputs[0].op.type == "Minimum"
  assert any(op.type == "Einsum" and "layer_1/output" in name
             for name, op in names.items())
  # The clipped input's MatMul sees a weight with the channel's row zeroed.
  dense = encoder.transformer_layers[1]._output_dense  # pylint: disable=protected-access
  flat = tf.reshape(dense.kernel, [128, -1]).numpy()
  clip = found["transformer/layer_1"].clip
  x = np.abs(np.random.default_rng(4).standard_normal((5, 128))).astype(
      np.float32)
  x[:, PLANTED] = 50.0  # the channel's own product stays exact
  x[0, 3] = clip + 5.0  # another channel above the clip saturates
  y = dense(tf.constant(x[None])).numpy()[0]
  expect = np.minimum(x, clip) @ flat + dense.bias.numpy()
  expect += (x[:, PLANTED] - clip)[:, None] * flat[PLANTED]
  np.testing.assert_allclose(y, expect, rtol=1e-5, atol=1e-4)
  # Another block's projection is unchanged.
  assert type(encoder.transformer_layers[0]._output_dense) is not (  # pylint: disable=protected-access,unidiomatic-typecheck
      ffn_outliers.OutlierSplitDense)
