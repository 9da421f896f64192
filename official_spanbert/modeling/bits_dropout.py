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

"""Dropout whose mask comes from integer random bits (issue 58 item 1).

Keras' `Dropout` draws a uniform float per element in the tensor's dtype
(`RandomUniform`), compares and selects: the largest part of the pretraining
step that is not a matmul. `BitsDropout` keeps an element when a 16-bit
random integer (two per 32-bit word of `StatelessRandomUniformFullInt`) is
at least round(rate * 65536), and multiplies by the mask times 1/(1-rate):
fewer random bytes, no float uniform, and a drop probability within 2**-17
of `rate` in every dtype (Keras' bfloat16 uniform drops 10.16% at rate 0.1).
Forward and backward cost less (benchmarks/RESULTS.md, "Dropout from
integer random bits"); the learning is the same in expectation, the masks
are other random draws.

Its random state is the layer's Keras `RandomGenerator`, as Keras' own:
by default (legacy stateful RNG) each call draws a fresh seed for the
stateless bits from a stateful op, so the masks advance step to step inside
a `tf.function` and under a distribution strategy and repeat under
`tf.random.set_seed` or the layer's `seed`; with `tf.random.Generator`
enabled its generator makes the seeds; `rng_type="stateless"` repeats one
mask, as Keras' does. At inference and at rate 0 the layer is the identity.
A rate that is not a Python number, a `noise_shape`, or a rate within
2**-17 of 0 or 1 falls back to Keras' Dropout.

Example:
  model = builder.build_pretrainer(config)      # Keras Dropout layers
  changed = bits_dropout.use_bits_dropout(model)
"""

import numbers
from typing import Optional

import tensorflow as tf
import tf_keras

from official_spanbert.utils import cpu_features

BITS = 16
LEVELS = 1 << BITS  # 65,536 values of a 16-bit draw
# task.model.dropout_mask's values (configs/spanbert.py).
MASKS = ("auto", "bits", "keras")


def resolve(mask: str, on_accelerator: bool,
            cpu: Optional[cpu_features.CpuFeatures] = None) -> str:
  """The dropout that runs, "bits" or "keras", for task.model.dropout_mask
  `mask`. "auto" is "bits" on a CPU with bfloat16 math in hardware
  (AVX512-BF16 or AMX, utils/cpu_features.py: the Zen 4 EPYC's train step
  took 0.88-0.91x Keras' CPU time in mixed bfloat16 at base size, seq 512,
  benchmarks/RESULTS.md), "keras" on other CPUs (AVX2: no step change
  resolved from the load's noise) and with a GPU or TPU visible (not
  measured there).

  Example:
    resolve("auto", on_accelerator=False)  # "bits" on a Zen 4 EPYC

  Raises:
    ValueError: a mask not in MASKS.
  """
  if mask not in MASKS:
    raise ValueError(f"task.model.dropout_mask must be 'auto', 'bits' or "
                     f"'keras', got {mask!r}")
  if mask != "auto":
    return mask
  if on_accelerator:
    return "keras"
  return "bits" if (cpu or cpu_features.read()).native_bf16 else "keras"


def threshold(rate: float) -> int:
  """The 16-bit level below which an element is dropped: round(rate *
  65536). The drop probability is threshold / 65536."""
  return int(round(rate * LEVELS))


def random_bits(shape, seed) -> tf.Tensor:
  """uint16 random bits of `shape` (a 1-D int tensor): half as many 32-bit
  full-range stateless draws, each split into two 16-bit halves."""
  n = tf.reduce_prod(tf.cast(shape, tf.int64))
  words = tf.random.stateless_uniform([(n + 1) // 2], seed=seed,
                                      dtype=tf.uint32, minval=None,
                                      maxval=None)
  halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])
  return tf.reshape(halves[:n], shape)  # the slice is free when n is even


def masked(x, keep, scale):
  """x * keep * scale, whose gradient dy * keep * scale recomputes the mask
  from the boolean `keep`: the backward pass holds one byte an element (as
  Keras' dropout does), not a float mask in x's dtype (4 bytes in float32:
  600 MB more at base size, seq 512 x 4)."""

  @tf.custom_gradient
  def forward(x):
    def grad(dy):
      return dy * (tf.cast(keep, dy.dtype) * scale)
    return x * (tf.cast(keep, x.dtype) * scale), grad

  return forward(x)


@tf_keras.utils.register_keras_serializable(package="spanbert")
class BitsDropout(tf_keras.layers.Dropout):
  """Keras Dropout with a mask of integer random bits (module docstring).

  Same arguments, config and scaling (1 / (1 - rate)) as Keras' Dropout;
  no variables.

  Example:
    layer = BitsDropout(0.1)
    y = layer(tf.ones([64, 128]), training=True)  # ~10% zeros, others 1 / 0.9
    assert abs(float(tf.reduce_mean(tf.cast(y == 0, tf.float32))) - 0.1) < 0.02
  """

  def _uses_bits(self) -> bool:
    return (isinstance(self.rate, numbers.Real) and self.noise_shape is None
            and 0 < threshold(self.rate) < LEVELS)

  def _stateless_seed(self):
    """A [2] seed for the stateless bits, new at every call of the op."""
    seed = self._random_generator.make_seed_for_stateless_op()
    if seed is None:  # legacy stateful RNG (Keras' default): a stateful draw
      seed = tf.random.uniform(
          [2], minval=tf.int64.min, maxval=tf.int64.max, dtype=tf.int64,
          seed=self._random_generator.make_legacy_seed())
    return seed

  def dropped(self, inputs):
    """inputs times the kept mask times 1 / (1 - rate): training's output."""
    keep = random_bits(tf.shape(inputs), self._stateless_seed()) >= tf.constant(
        threshold(self.rate), tf.uint16)
    return masked(inputs, keep, tf.cast(1.0 / (1.0 - self.rate), inputs.dtype))

  def call(self, inputs, training=None):
    if not self._uses_bits() or not inputs.dtype.is_floating:
      return super().call(inputs, training=training)
    if training is None:
      training = tf_keras.backend.learning_phase()
    return tf.__internal__.smart_cond.smart_cond(
        training, lambda: self.dropped(inputs), lambda: tf.identity(inputs))


def use_bits_dropout(model: tf.Module) -> int:
  """Makes every Keras Dropout layer of `model` (exactly that class: the
  encoder's embedding, attention-probability, attention-output and FFN
  dropouts, and the heads') a BitsDropout, in place. Call it once the model
  is built (Keras' attention layers create their dropout when built). The
  variables and checkpoints do not change. Returns how many changed."""
  keras = [m for m in model.submodules
           if type(m) is tf_keras.layers.Dropout]  # pylint: disable=unidiomatic-typecheck
  for layer in keras:
    layer.__class__ = BitsDropout
  return len(keras)
