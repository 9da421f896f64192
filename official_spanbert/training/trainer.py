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

"""The Model Garden trainer SpanBERT runs with, and how runs pick it.

SpanBertTrainer is base_trainer.Trainer plus examples/s (of wall and of
process CPU time), progress lines, TrainingDivergedError and XLA on CPUs;
`scope()` binds Model Garden's gin-configurable trainer_cls to it. See
docs/pretraining.md, "Running".
"""

import contextlib
import dataclasses
import signal
import time
from typing import Iterator, Optional

from absl import logging
import gin

import tensorflow as tf
from official.core import actions
from official.core import base_trainer
from orbit import controller as orbit_controller
from orbit.utils import loop_fns
from official_spanbert.training import release
from official_spanbert.utils import progress as progress_lib

_SCOPE = "spanbert"
_TRAINER_CLS = "official.core.train_utils.create_trainer.trainer_cls"
EVAL_INTERVAL_S = 30.0  # an evaluation of unknown length reports this often


class TrainingDivergedError(RuntimeError):
  """The loss became NaN/Inf or exceeded trainer.loss_upper_bound, and the
  trainer.recovery_max_trials restores of the last checkpoint are used up."""


class EmptyEvaluationError(ValueError):
  """An evaluation that read no batch: its metrics (a Mean's 0) are no
  result."""


class Stopped(SystemExit):
  """A SIGTERM or SIGINT, raised where the run was (train_lib.main installs
  the handler): it unwinds like an error, so the model_dir lock is released
  and partial saves are removed; the exit status is 128 + the signal."""

  def __init__(self, signum: int):
    super().__init__(128 + signum)
    self.signal_name = signal.Signals(signum).name
    # The step of the checkpoint whose evaluation it interrupted, if any.
    self.evaluating_step: Optional[int] = None


class DivergenceCondition(actions.RecoveryCondition):
  """Model Garden's RecoveryCondition, raising TrainingDivergedError.

  RecoveryCondition counts the training loops whose loss blew up and raises
  a RuntimeError -- its only exception -- once there are more than
  `recovery_max_trials`; until then Model Garden's RecoveryAction restores the
  last checkpoint. This one counts the same loops by the same rule, so it
  raises at the same loop, with the typed error.
  """

  def __init__(self, trainer: base_trainer.Trainer):
    config = trainer.config.trainer
    super().__init__(global_step=trainer.global_step,
                     loss_upper_bound=config.loss_upper_bound,
                     recovery_begin_steps=config.recovery_begin_steps,
                     recovery_max_trials=config.recovery_max_trials)
    self._model_dir = trainer.task.logging_dir

  def __call__(self, outputs) -> bool:
    try:
      return super().__call__(outputs)
    except RuntimeError as e:
      last = (self._model_dir and tf.train.latest_checkpoint(self._model_dir))
      raise TrainingDivergedError(
          f"training diverged at step {int(self.global_step.numpy())}: {e} "
          f"Last good checkpoint: {last or 'none (no checkpoint was written)'}"
          "; lower the learning rate or check the data, then rerun to resume "
          "from it.") from None


class SpanBertTrainer(base_trainer.Trainer):
  """base_trainer.Trainer with examples_per_second, progress and typed
  divergence (see the module docstring).

  Task metrics (both losses and accuracies, gradient norm) and the learning
  rate are logged by the base trainer.
  """

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    trainer = self.config.trainer
    self._divergence: Optional[DivergenceCondition] = (
        DivergenceCondition(self) if trainer.recovery_max_trials >= 0
        else None)
    # runtime.enable_xla: Model Garden jit-compiles the train step on GPUs
    # only; here the task's train and validation steps are compiled on every
    # device (see use_xla).
    self._xla = use_xla(self.config.runtime)
    if self._xla:
      self._xla_train_step = tf.function(self.task.train_step,
                                         jit_compile=True)
      self._xla_validation_step = tf.function(self.task.validation_step,
                                              jit_compile=True)
    self._progress = progress_lib.Progress("train", sink="auto")
    self._progress_started = False
    self._loop_start = None
    with self.strategy.scope():
      create_slots(self.optimizer, self.model.trainable_variables)
    if hasattr(self, "_eval_options"):  # a trainer that evaluates
      # Each evaluation reads its data from the start with an iterator of
      # its own, as Orbit's default; kept by Orbit, so that evaluate() ends
      # it on a thread (release_iterators).
      self._eval_options = dataclasses.replace(
          self._eval_options, recreate_iterator_for_each_eval=False)

  def create_train_loop_fn(self):
    """Orbit's train loop (a tf.while_loop of train steps in one
    tf.function), traced without AutoGraph: the steps' Python is graph code
    already, and AutoGraph converting it and every Keras layer's call made
    each trace cost more (a 2-layer model's 8-step run: 7.9 -> 5.0 CPU-s,
    AVX2 EPYC). Orbit's own loop where its options ask for another kind."""
    options = self._train_options
    if (not options.use_tf_while_loop or
        options.use_tpu_summary_optimization):
      return super().create_train_loop_fn()
    return tf.function(while_loop_fn(self.train_step), autograph=False)

  def create_eval_loop_fn(self, has_state: bool):
    """Orbit's eval loop; its step's tf.function (Model Garden runs eval steps
    from Python) traced without AutoGraph, as the train loop."""
    options = self._eval_options
    if options.use_tf_while_loop or not options.use_tf_function:
      return super().create_eval_loop_fn(has_state)
    return loop_fns.create_loop_fn(
        tf.function(self.eval_step, autograph=False))

  def train_step(self, iterator):
    """Model Garden's train step; with XLA, the task's step compiled."""
    if not self._xla:
      return super().train_step(iterator)

    def step_fn(inputs):
      logs = self._xla_train_step(inputs, model=self.model,
                                  optimizer=self.optimizer,
                                  metrics=self.train_metrics)
      self._train_loss.update_state(logs[self.task.loss])
      self.global_step.assign_add(1)

    inputs = self.next_train_inputs(iterator)
    self.strategy.run(step_fn, args=(inputs,), options=self._runtime_options)

  def eval_step(self, iterator):
    """Model Garden's eval step; with XLA, the task's step compiled."""
    if not self._xla:
      return super().eval_step(iterator)
    task_step = self.task.validation_step
    self.task.validation_step = self._xla_validation_step
    try:  # the base eval step calls self.task.validation_step
      return super().eval_step(iterator)
    finally:
      self.task.validation_step = task_step

  def evaluate(self, num_steps):
    try:
      return super().evaluate(num_steps)
    except Stopped as e:
      e.evaluating_step = int(self.global_step.numpy())
      raise
    finally:
      self.release_iterators(training=False)

  def release_iterators(self, training: bool = True) -> None:
    """Ends the evaluation's iterator and, with `training`, the training one,
    each on a thread of its own (release.py), so that their waits overlap;
    the next evaluation or training loop makes a new one (from the data's
    start). Ended on the caller's thread, an evaluation's stopped it up to a
    minute for each of its two autotuned iterators: the end of a SQuAD
    evaluation over 613 batches, then 78 s idle before the binary wrote its
    result (Zen 4, 2026-12-07).

      trainer.evaluate(tf.constant(-1))  # its iterator ends on a thread
      trainer.release_iterators()        # a finished run's training one
    """
    for name, end in (("_eval_iter", True), ("_train_iter", training)):
      if end and getattr(self, name, None) is not None:
        garbage = [getattr(self, name)]
        setattr(self, name, None)
        release.in_background(garbage, name="release-iterators")

  def eval_begin(self):
    validation = self.config.task.validation_data
    total = self.config.trainer.validation_steps
    if total is None or total <= 0:
      total = getattr(self.task, "eval_steps_hint", None)
    self._eval_progress = progress_lib.Progress("eval", sink="auto",
                                                interval_s=EVAL_INTERVAL_S)
    self._eval_progress.start(
        total if total and total > 0 else 0, "batches",
        batch=getattr(validation, "global_batch_size", 0) or 0)
    return super().eval_begin()

  def eval_reduce(self, state=None, step_outputs=None):
    progress = getattr(self, "_eval_progress", None)
    if progress is not None:
      progress.advance()
    return super().eval_reduce(state, step_outputs)

  def eval_end(self, aggregated_logs=None):
    progress = getattr(self, "_eval_progress", None)
    if progress is not None and progress.count == 0:
      progress.close_line()
      raise empty_evaluation(self.config, int(self.global_step.numpy()))
    logs = super().eval_end(aggregated_logs)
    if progress is not None:
      progress.close_line()
      progress.done(eval_summary(progress, int(self.global_step.numpy()),
                                 logs))
    return logs

  def set_train_steps(self, steps: int) -> None:
    """The step the run now trains to (train_lib.Pause): the progress line
    counts to it."""
    self._progress.total = steps

  def train_loop_begin(self):
    step = int(self.global_step.numpy())
    if not self._progress_started:
      # At the first loop the step a resumed run starts from is known.
      self._progress.start(
          self.config.trainer.train_steps, "steps",
          batch=self.config.task.train_data.global_batch_size, done=step,
          each=logging.level_info())
      self._progress_started = True
    self._loop_start = (time.time(), step, time.process_time())
    super().train_loop_begin()

  def train_loop_end(self):
    logs = super().train_loop_end()
    step = int(self.global_step.numpy())
    if self._loop_start is not None:
      elapsed = time.time() - self._loop_start[0]
      steps = step - self._loop_start[1]
      if elapsed > 0 and steps > 0:
        examples = steps * self.config.task.train_data.global_batch_size
        logs["examples_per_second"] = examples / elapsed
        # Per second of this process's CPU time (all its threads): what the
        # loop cost, whatever else the machine ran (the demo's step budget).
        cpu = time.process_time() - self._loop_start[2]
        if cpu > 0:
          logs["examples_per_cpu_second"] = examples / cpu
        self._progress.advance(steps, seconds=elapsed,
                               detail=loss_detail(logs))
    if self._divergence is not None:
      # Raises before Model Garden's own RecoveryCondition (a train action,
      # run on these logs next) would; returns whether it will restore.
      self._divergence(logs)
    return logs


def while_loop_fn(step_fn):
  """loop_fn(iterator, num_steps) calling step_fn(iterator) num_steps times
  in a tf.while_loop, as orbit's loop_fns.create_tf_while_loop_fn, written
  without Python loops over tensors so that it traces without AutoGraph.

    loop = tf.function(while_loop_fn(trainer.train_step), autograph=False)
    loop(iterator, tf.constant(100))
  """
  def loop_fn(iterator, num_steps):
    if not isinstance(num_steps, tf.Tensor):
      raise ValueError("num_steps should be a tf.Tensor (a Python value "
                       "retraces the loop for every value)")

    def body(i):
      with tf.name_scope(""):  # no "while/" prefix on the steps' ops
        step_fn(iterator)
      return (i + 1,)

    tf.while_loop(lambda i: i < num_steps, body,
                  (tf.zeros([], num_steps.dtype),),
                  maximum_iterations=num_steps)

  return loop_fn


def create_slots(optimizer, variables) -> None:
  """Creates `optimizer`'s slot (and step) variables for `variables` now.

  A tf.function that creates variables on its first call is traced twice
  (once to create them, once more without): the train loop's first call
  created the optimizer's slots, so every run traced its train step twice
  (2 traces for a 4-step run of a tiny model, 1 with the slots made first).
  Variables that get no gradient (a pooler without NSP) get slots that stay
  zero. A restored checkpoint's slots are restored into them at once.
  """
  if not variables or optimizer is None:
    return
  if hasattr(optimizer, "_create_all_weights"):  # tf_keras legacy, LSO
    optimizer._create_all_weights(variables)  # pylint: disable=protected-access
  elif hasattr(optimizer, "build"):  # tf_keras' new optimizers
    optimizer.build(variables)


def empty_evaluation(config, step: int) -> EmptyEvaluationError:
  """The error of an evaluation at `step` that read no batch."""
  data = config.task.validation_data
  path = getattr(data, "input_path", "") or "no input_path"
  drop = (" and drop_remainder drops the rest"
          if getattr(data, "drop_remainder", False) else "")
  return EmptyEvaluationError(
      f"the evaluation at step {step} read no batch of task.validation_data "
      f"({path}): it holds fewer examples than global_batch_size="
      f"{getattr(data, 'global_batch_size', None)}{drop}, or none; its "
      "metrics would be zeros, not a result: use more validation data or a "
      "smaller task.validation_data.global_batch_size")


def use_xla(runtime) -> bool:
  """Whether the steps are XLA-compiled: runtime.enable_xla, on CPU and GPU
  (TPU programs are compiled anyway)."""
  return bool(runtime.enable_xla) and runtime.distribution_strategy != "tpu"


def loss_detail(logs) -> str:
  """'loss 15.264 (mlm 7.622, sbo 7.642)' from a training loop's logs."""
  parts = [f"{k[:-len('_loss')]} {float(v):.3f}" for k, v in sorted(
      logs.items()) if k.endswith("_loss") and k != "training_loss"]
  text = ""
  if "training_loss" in logs:
    text = f"loss {float(logs['training_loss']):.3f}"
    if parts:
      text += f" ({', '.join(parts)})"
  elif parts:
    text = ", ".join(parts)
  return text


def eval_summary(progress: progress_lib.Progress, step: int, logs) -> str:
  """The line an evaluation pass ends with: its size, time and metrics."""
  batch = progress.batch
  text = (f"eval at step {step}: {progress.count} batches "
          f"({progress.count * batch} examples) in {progress.elapsed():.1f} s")
  metrics = [f"{k} {float(v):.4g}" for k, v in sorted((logs or {}).items())
             if _is_number(v)]
  if metrics:
    text += ": " + ", ".join(metrics)
  return text


def _is_number(value) -> bool:
  try:
    float(value)
  except (TypeError, ValueError):
    return False
  return getattr(value, "ndim", 0) == 0


@contextlib.contextmanager
def scope() -> Iterator[None]:
  """Model Garden's train_utils.create_trainer builds a SpanBertTrainer in
  this block (a gin binding of its trainer_cls in scope "spanbert")."""
  with gin.unlock_config():
    gin.bind_parameter(f"{_SCOPE}/{_TRAINER_CLS}", SpanBertTrainer)
  original = getattr(orbit_controller, "_log", None)
  if original is not None:
    orbit_controller._log = _orbit_log  # pylint: disable=protected-access
  try:
    with gin.config_scope(_SCOPE):
      yield
  finally:
    if original is not None:
      orbit_controller._log = original  # pylint: disable=protected-access


def _orbit_log(message: str) -> None:
  """Orbit's controller._log without its print to stdout."""
  logging.info(message)


logging.ABSLLogger.register_frame_to_skip(__file__, _orbit_log.__name__)
