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

"""modeling/bits_dropout.py: the integer-bits dropout drops `rate` of the
elements in every dtype, scales as Keras' does, has the mask times the scale
as its gradient, is the identity at inference, draws new masks every step
(in a tf.function, under a strategy) that repeat under a seed, and the
encoder it is swapped into gives the same outputs without dropout."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.nlp.modeling import networks
from official_spanbert.modeling import bits_dropout
from official_spanbert.utils import cpu_features

N = 1 << 22  # elements: the kept share's binomial sd is 1.5e-4 at rate 0.1


@pytest.mark.parametrize("dtype", [tf.float32, tf.bfloat16])
@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drops_the_rate_and_scales_the_rest(dtype, rate):
  layer = bits_dropout.BitsDropout(rate, seed=5, dtype=dtype)  # its compute dtype
  y = layer(tf.ones([4, N // 4], dtype), training=True).numpy().astype(
      np.float64)
  kept = np.count_nonzero(y) / y.size
  p = 1 - bits_dropout.threshold(rate) / bits_dropout.LEVELS
  assert abs(p - (1 - rate)) <= 2.0 ** -17
  # 5 binomial standard deviations (1 - 1e-6 two-sided).
  assert abs(kept - p) <= 5 * np.sqrt(p * (1 - p) / y.size), kept
  scale = float(tf.cast(1 / (1 - rate), dtype))  # as tf.nn.dropout rounds it
  np.testing.assert_array_equal(np.unique(y), [0.0, scale])


def test_keras_bfloat16_dropout_misses_the_rate_that_bits_keep():
  """Why: Keras' bfloat16 uniform drops about 10.16% at rate 0.1."""
  x = tf.ones([N], tf.bfloat16)
  tf.random.set_seed(1)
  keras = np.count_nonzero(tf_keras.layers.Dropout(0.1, dtype=tf.bfloat16)(
      x, training=True).numpy().astype(np.float32)) / N
  bits = np.count_nonzero(bits_dropout.BitsDropout(0.1, dtype=tf.bfloat16)(
      x, training=True).numpy().astype(np.float32)) / N
  sd = np.sqrt(0.09 / N)
  assert abs(bits - 0.9) < 5 * sd
  assert abs(keras - 0.9) > 5 * sd, keras


def test_gradient_is_mask_times_scale_and_inference_is_identity():
  layer = bits_dropout.BitsDropout(0.25, seed=3)
  x = tf.random.stateless_normal([8, 64, 33], seed=[1, 2])  # odd last axis
  dy = tf.random.stateless_normal(x.shape, seed=[3, 4])

  @tf.function
  def step(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = layer(x, training=True)
    return y, tape.gradient(y, x, output_gradients=dy)

  y, grad = step(x)
  mask = (y.numpy() != 0).astype(np.float32) * np.float32(1 / 0.75)
  np.testing.assert_allclose(y.numpy(), x.numpy() * mask, rtol=1e-6)
  np.testing.assert_allclose(grad.numpy(), dy.numpy() * mask, rtol=1e-6)
  assert 0.2 < 1 - np.count_nonzero(mask) / mask.size < 0.3
  for training in (False, None):
    np.testing.assert_array_equal(layer(x, training=training).numpy(), x)
  np.testing.assert_array_equal(
      bits_dropout.BitsDropout(0.0)(x, training=True).numpy(), x)


def _masks(layer, steps, strategy=None):
  x = tf.ones([64, 128])
  step = tf.function(lambda: layer(x, training=True))
  if strategy is not None:
    step = tf.function(lambda: strategy.run(lambda: layer(x, training=True)))
  return [step().numpy() != 0 for _ in range(steps)]


def test_masks_advance_every_step_and_repeat_under_a_seed():
  first = _masks(bits_dropout.BitsDropout(0.1, seed=11), 3)
  assert not np.array_equal(first[0], first[1])
  assert not np.array_equal(first[1], first[2])
  again = _masks(bits_dropout.BitsDropout(0.1, seed=11), 3)
  for a, b in zip(first, again):
    np.testing.assert_array_equal(a, b)
  assert not np.array_equal(first[0], _masks(
      bits_dropout.BitsDropout(0.1, seed=12), 1)[0])
  # The global seed, as for Keras' Dropout.
  tf.random.set_seed(4)
  one = _masks(bits_dropout.BitsDropout(0.1), 2)
  tf.random.set_seed(4)
  two = _masks(bits_dropout.BitsDropout(0.1), 2)
  assert not np.array_equal(one[0], one[1])
  np.testing.assert_array_equal(np.array(one), np.array(two))
  # Under a distribution strategy, and with tf.random.Generator's RNG.
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    under = _masks(bits_dropout.BitsDropout(0.1, seed=11), 2, strategy)
  assert not np.array_equal(under[0], under[1])
  generated = _masks(bits_dropout.BitsDropout(0.1, seed=11,
                                              rng_type="stateful"), 2)
  assert not np.array_equal(generated[0], generated[1])


def test_the_swapped_encoder_gives_the_original_outputs():
  tf_keras.utils.set_random_seed(3)
  encoder = networks.BertEncoderV2(
      vocab_size=100, hidden_size=32, num_layers=2, num_attention_heads=4,
      inner_dim=64, max_sequence_length=40, output_dropout=0.1,
      attention_dropout=0.1)
  rng = np.random.default_rng(0)
  inputs = dict(
      input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)), tf.int32),
      input_mask=tf.ones((3, 40), tf.int32),
      input_type_ids=tf.zeros((3, 40), tf.int32))
  before = encoder(inputs, training=False)["sequence_output"].numpy()
  # embedding + per layer: attention probabilities, attention output, FFN
  # output (inner_dropout is a Dropout at rate 0).
  assert bits_dropout.use_bits_dropout(encoder) == 1 + 2 * 4
  assert not any(type(m) is tf_keras.layers.Dropout  # pylint: disable=unidiomatic-typecheck
                 for m in encoder.submodules)
  np.testing.assert_array_equal(
      encoder(inputs, training=False)["sequence_output"].numpy(), before)
  trained = encoder(inputs, training=True)["sequence_output"].numpy()
  assert not np.allclose(trained, before)
  assert bits_dropout.use_bits_dropout(encoder) == 0


def test_auto_is_bits_where_bfloat16_is_native_and_keras_elsewhere():
  """auto: bits on AVX512-BF16 / AMX CPUs (measured faster there), keras on
  AVX2 CPUs (not resolved from noise) and with a GPU or TPU visible."""
  zen4 = cpu_features.parse("vendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                            "flags\t\t: avx2 fma avx512f avx512_bf16\n")
  avx2 = cpu_features.parse("vendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                            "flags\t\t: avx2 fma\n")
  amx = cpu_features.parse("flags\t\t: avx512f amx_bf16 amx_tile\n")
  assert bits_dropout.resolve("auto", False, zen4) == "bits"
  assert bits_dropout.resolve("auto", False, amx) == "bits"
  assert bits_dropout.resolve("auto", False, avx2) == "keras"
  assert bits_dropout.resolve("auto", True, zen4) == "keras"
  for mask in ("bits", "keras"):  # what is named runs, on any device
    assert bits_dropout.resolve(mask, True, avx2) == mask
    assert bits_dropout.resolve(mask, False, zen4) == mask
  with pytest.raises(ValueError, match="dropout_mask"):
    bits_dropout.resolve("uniform", False, zen4)
