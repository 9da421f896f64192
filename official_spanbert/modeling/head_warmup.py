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

"""Head warm-up: fresh heads learn alone first, then the encoder joins.

HeadWarmupOptimizer trains the heads only for `task.head_warmup_steps` steps,
then the encoder too, its learning rate ramped over
`task.encoder_warmup_steps`. How and why: docs/pretraining.md, "Continued
pretraining from a headless checkpoint".
"""

from typing import Callable, Iterable, List, Optional

import tensorflow as tf
import tf_keras

from official.modeling import optimization
from official_spanbert.modeling import coref_optimizer


class EncoderWarmupSchedule(
    tf_keras.optimizers.schedules.LearningRateSchedule):
  """The encoder's learning rate at the global step.

  0 before `start_step`; from it, `schedule`(step) (the heads' schedule,
  e.g. Model Garden's warm-up + polynomial decay) times a linear ramp
  min(1, (step - start_step + 1) / warmup_steps) (1 for warmup_steps 0): the
  encoder's first update, at start_step, has 1/warmup_steps of the rate.
  """

  def __init__(self, schedule, start_step: int, warmup_steps: int):
    super().__init__()
    self.schedule = schedule
    self.start_step = int(start_step)
    self.warmup_steps = int(warmup_steps)

  def __call__(self, step):
    step = tf.cast(step, tf.float32)
    base = tf.cast(self.schedule(step) if callable(self.schedule)
                   else self.schedule, tf.float32)
    ramp = 1.0
    if self.warmup_steps > 0:
      ramp = tf.clip_by_value(
          (step - self.start_step + 1.0) / self.warmup_steps, 0.0, 1.0)
    return tf.where(step < self.start_step, 0.0, base * ramp)

  def get_config(self):
    return {"schedule": self.schedule, "start_step": self.start_step,
            "warmup_steps": self.warmup_steps}


class HeadWarmupOptimizer(tf_keras.optimizers.legacy.Optimizer):
  """The heads' optimizer from step 0, the encoder's from head_warmup_steps.

  See the module docstring. `iterations` is the heads' optimizer's (the
  global step: a LossScaleOptimizer's skipped step counts it too);
  `learning_rate` is the heads' schedule (the trainer logs it);
  encoder_learning_rate() is the encoder's at the current step.

  Args:
    optimizer_config: Model Garden's OptimizationConfig, for both optimizers
      (its EMA is not supported).
    head_warmup_steps: N, the steps that train the heads only.
    encoder_warmup_steps: E, the encoder's linear learning-rate warm-up from
      step N (0: the config's schedule at once).
    encoder_variables: returns the encoder's variables (called when
      gradients are masked or applied, so the model may be built later);
      every other variable is a head's.
  """

  def __init__(self, optimizer_config: optimization.OptimizationConfig,
               head_warmup_steps: int, encoder_warmup_steps: int,
               encoder_variables: Callable[[], Iterable[tf.Variable]],
               name: str = "HeadWarmup"):
    super().__init__(name)
    if optimizer_config.ema is not None:
      raise ValueError("task.head_warmup_steps does not support "
                       "trainer.optimizer_config.ema")
    factory, self._clip_norm = coref_optimizer.unclipped_factory(
        optimizer_config)
    schedule = factory.build_learning_rate()
    self.head_warmup_steps = int(head_warmup_steps)
    self.encoder_schedule = EncoderWarmupSchedule(
        schedule, head_warmup_steps, encoder_warmup_steps)
    self.head_optimizer = factory.build_optimizer(schedule)
    # A callable learning rate: the legacy optimizers call it when they
    # prepare an update (it reads the global step before the heads'
    # optimizer increments it, see apply_gradients).
    self.encoder_optimizer = factory.build_optimizer(
        self.encoder_learning_rate)
    self._track_trackable(self.head_optimizer, "head")
    self._track_trackable(self.encoder_optimizer, "encoder")
    self._encoder_variables = encoder_variables
    # The step counters exist before any tf.function reads them (created
    # inside one, a MirroredStrategy's replicas cannot initialise them).
    with tf.init_scope():
      _ = self.head_optimizer.iterations, self.encoder_optimizer.iterations

  # The global step and what the trainer reads --------------------------

  @property
  def iterations(self):
    return self.head_optimizer.iterations

  @iterations.setter
  def iterations(self, variable):
    self.head_optimizer.iterations = variable

  @property
  def learning_rate(self):
    """The heads' schedule (Model Garden's trainer logs it)."""
    return self.head_optimizer.learning_rate

  @property
  def gradient_clip_norm(self) -> float:
    """The config's global clip norm; the task's train step clips."""
    return self._clip_norm

  def encoder_learning_rate(self) -> tf.Tensor:
    """The encoder's learning rate at the current global step."""
    return self.encoder_schedule(self.iterations)

  def training_encoder(self) -> tf.Tensor:
    """Whether this step updates the encoder (step >= head_warmup_steps)."""
    return self.iterations >= self.head_warmup_steps

  # Gradients -------------------------------------------------------------

  def _is_encoder(self) -> Callable[[tf.Variable], bool]:
    refs = {v.ref() for v in self._encoder_variables()}
    return lambda v: v.ref() in refs

  def mask_gradients(self, grads: List[Optional[tf.Tensor]],
                     variables: List[tf.Variable]) -> List:
    """`grads` with the encoder's replaced by zeros before step N.

    One tf.cond picks the encoder's gradients as they are or zeros of the
    same kind: no NaN or Inf there can leak into the encoder's Adam moments,
    and from step N the gradients pass through without a copy.
    """
    if self.head_warmup_steps <= 0:
      return list(grads)
    is_encoder = self._is_encoder()
    picked = [i for i, (g, v) in enumerate(zip(grads, variables))
              if g is not None and is_encoder(v)]
    if not picked:
      return list(grads)
    kept = tf.cond(
        self.training_encoder(), lambda: [grads[i] for i in picked],
        lambda: [_zeros_like(grads[i], variables[i]) for i in picked],
        name="head_warmup_mask")
    out = list(grads)
    for i, g in zip(picked, kept):
      out[i] = g
    return out

  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: List[tf.Variable]) -> List:
    """`tape.gradient(loss, variables)`, the encoder's zeros before step N.

    In a tf.function the encoder's backward pass does not run before step N:
    a tf.cond takes the heads' gradients only (the encoder's are zeros of the
    same kind), so a warm-up step costs the forward pass and the heads'
    backward, not a whole step (`tape` must be persistent: each branch asks
    it). Eagerly, the gradients are computed and then masked.

      with tf.GradientTape(persistent=True) as tape:
        loss = ...
      grads = optimizer.gradients(tape, loss, model.trainable_variables)
    """
    if self.head_warmup_steps <= 0 or tf.executing_eagerly():
      return self.mask_gradients(tape.gradient(loss, variables), variables)
    is_encoder = self._is_encoder()
    traced = {}

    def everything():
      grads = tape.gradient(loss, variables)
      traced["grads"] = grads  # which exist, and their kinds, for the other
      return [g for g in grads if g is not None]

    def heads_only():
      # cond traces the true branch first; if not, the gradients are traced
      # here only to be read (a function runs only what its outputs need).
      if "grads" not in traced:
        traced["grads"] = tape.gradient(loss, variables)
      grads = traced["grads"]
      wanted = [v for g, v in zip(grads, variables)
                if g is not None and not is_encoder(v)]
      heads = iter(tape.gradient(loss, wanted))
      return [_zeros_like(g, v) if is_encoder(v) else next(heads)
              for g, v in zip(grads, variables) if g is not None]

    kept = iter(tf.cond(self.training_encoder(), everything, heads_only,
                        name="head_warmup_gradients"))
    return [None if g is None else next(kept) for g in traced["grads"]]

  def _split(self, grads_and_vars):
    pairs = [(g, v) for g, v in grads_and_vars if g is not None]
    grads = self.mask_gradients([g for g, _ in pairs], [v for _, v in pairs])
    is_encoder = self._is_encoder()
    encoder = [(g, v) for g, (_, v) in zip(grads, pairs) if is_encoder(v)]
    heads = [(g, v) for g, (_, v) in zip(grads, pairs) if not is_encoder(v)]
    return heads, encoder

  def apply_gradients(self, grads_and_vars, name=None,
                      experimental_aggregate_gradients=True):
    """Applies the heads' gradients, and the encoder's (zeros with learning
    rate 0 before step N); increments `iterations` once."""
    heads, encoder = self._split(grads_and_vars)
    with tf.init_scope():  # as OptimizerV2.apply_gradients: slots first
      self._create_all_weights([v for _, v in heads + encoder])
    ops = []
    if encoder:
      # First: the encoder's learning rate and step read the global step
      # before the heads' update increments it.
      ops.append(self.encoder_optimizer.iterations.assign(tf.maximum(
          self.iterations - self.head_warmup_steps, 0)))
      ops.append(self.encoder_optimizer.apply_gradients(
          encoder, name=name,
          experimental_aggregate_gradients=experimental_aggregate_gradients))
    if heads:
      ops.append(self.head_optimizer.apply_gradients(
          heads, name=name,
          experimental_aggregate_gradients=experimental_aggregate_gradients))
    else:
      ops.append(self.iterations.assign_add(1))
    return tf.group([op for op in ops if op is not None])

  def _create_all_weights(self, var_list):
    is_encoder = self._is_encoder()
    # pylint: disable=protected-access
    self.head_optimizer._create_all_weights(
        [v for v in var_list if not is_encoder(v)])
    self.encoder_optimizer._create_all_weights(
        [v for v in var_list if is_encoder(v)])

  # Keras optimizer API -----------------------------------------------------

  def get_slot_names(self):
    return self.head_optimizer.get_slot_names()

  def variables(self):
    return self.head_optimizer.variables() + self.encoder_optimizer.variables()

  @property
  def weights(self):
    return self.variables()

  def get_config(self):
    return {"name": self._name, "head_warmup_steps": self.head_warmup_steps,
            "encoder_warmup_steps": self.encoder_schedule.warmup_steps,
            "head_optimizer": self.head_optimizer.get_config()}


def _zeros_like(grad, variable: tf.Variable):
  """A zero gradient of `grad`'s kind (IndexedSlices: no rows, and a
  dense_shape only if `grad` has one)."""
  if isinstance(grad, tf.IndexedSlices):
    return tf.IndexedSlices(
        tf.zeros([0] + variable.shape.as_list()[1:], grad.values.dtype),
        tf.zeros([0], grad.indices.dtype),
        None if grad.dense_shape is None
        else tf.shape(variable, out_type=grad.dense_shape.dtype))
  return tf.zeros(variable.shape, grad.dtype)


def find(optimizer) -> Optional[HeadWarmupOptimizer]:
  """The HeadWarmupOptimizer `optimizer` is or wraps (a LossScaleOptimizer's
  inner one), else None."""
  inner = getattr(optimizer, "inner_optimizer", optimizer)
  return inner if isinstance(inner, HeadWarmupOptimizer) else None
