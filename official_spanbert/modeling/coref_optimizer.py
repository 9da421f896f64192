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

"""Two learning rates: the encoder's and the task layers' (coreference).

SplitLearningRateOptimizer holds two optimizers from one OptimizationConfig,
the task layers' at `head_multiplier` times the encoder's schedule; gradients
are clipped by their global norm over all variables first.
"""

import copy
from typing import Callable, Iterable, Tuple

import tensorflow as tf
import tf_keras

from official.modeling import optimization


class ScaledSchedule(tf_keras.optimizers.schedules.LearningRateSchedule):
  """A learning-rate schedule times a constant factor."""

  def __init__(self, schedule, factor: float):
    super().__init__()
    self.schedule = schedule
    self.factor = factor

  def __call__(self, step):
    base = self.schedule(step) if callable(self.schedule) else self.schedule
    return base * self.factor

  def get_config(self):
    return {"schedule": self.schedule, "factor": self.factor}


# Global-norm clipping fields of Model Garden's optimizer configs (AdamW's
# own, the Keras optimizers' global_clipnorm).
_CLIP_FIELDS = ("gradient_clip_norm", "global_clipnorm")


def _clip_norm(optimizer_config: optimization.OptimizationConfig) -> float:
  inner = optimizer_config.optimizer.get()
  return max(float(getattr(inner, f, 0.0) or 0.0) for f in _CLIP_FIELDS)


def unclipped_factory(optimizer_config: optimization.OptimizationConfig
                      ) -> Tuple[optimization.OptimizerFactory, float]:
  """Model Garden's factory of the config with its clipping removed, and
  that global clip norm (0: none): for an optimizer of several inner ones
  that clips the gradients of all variables together, once."""
  unclipped = copy.deepcopy(optimizer_config)
  inner = unclipped.optimizer.get()
  if getattr(inner, "gradient_clip_norm", None) is not None:
    inner.gradient_clip_norm = 0.0
  if getattr(inner, "global_clipnorm", None) is not None:
    inner.global_clipnorm = None
  return (optimization.OptimizerFactory(unclipped),
          _clip_norm(optimizer_config))


class SplitLearningRateOptimizer(tf.Module):
  """Applies the encoder's gradients and the others' with two optimizers.

  Args:
    optimizer_config: Model Garden's optimization config (the encoder's
      learning rate and schedule).
    head_multiplier: task-layer learning rate / encoder learning rate.
    encoder_variables: returns the encoder's variables (called when
      gradients are applied, so the model may be built later).
  """

  def __init__(self, optimizer_config: optimization.OptimizationConfig,
               head_multiplier: float,
               encoder_variables: Callable[[], Iterable[tf.Variable]]):
    super().__init__(name="split_learning_rate_optimizer")
    factory, self.clip_norm = unclipped_factory(optimizer_config)
    schedule = factory.build_learning_rate()
    self.encoder_optimizer = factory.build_optimizer(schedule)
    self.head_optimizer = factory.build_optimizer(
        ScaledSchedule(schedule, head_multiplier))
    self._encoder_variables = encoder_variables

  @property
  def iterations(self) -> tf.Variable:
    return self.encoder_optimizer.iterations

  @property
  def learning_rate(self):
    """The encoder's learning rate (the trainer logs it)."""
    return self.encoder_optimizer.learning_rate

  def _create_all_weights(self, var_list):
    """Both optimizers' slots for their variables (training/trainer.py
    creates them before the first step)."""
    encoder = {v.ref() for v in self._encoder_variables()}
    # pylint: disable=protected-access
    self.encoder_optimizer._create_all_weights(
        [v for v in var_list if v.ref() in encoder])
    self.head_optimizer._create_all_weights(
        [v for v in var_list if v.ref() not in encoder])

  def apply_gradients(self, grads_and_vars: Iterable[Tuple[tf.Tensor,
                                                           tf.Variable]]):
    pairs = [(g, v) for g, v in grads_and_vars if g is not None]
    grads = [g for g, _ in pairs]
    if self.clip_norm > 0:
      grads, _ = tf.clip_by_global_norm(grads, self.clip_norm)
    encoder = {v.ref() for v in self._encoder_variables()}
    enc = [(g, v) for g, (_, v) in zip(grads, pairs) if v.ref() in encoder]
    head = [(g, v) for g, (_, v) in zip(grads, pairs)
            if v.ref() not in encoder]
    if enc:
      self.encoder_optimizer.apply_gradients(enc)
    if head:
      self.head_optimizer.apply_gradients(head)
