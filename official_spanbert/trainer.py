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

`SpanBertTrainer` is `base_trainer.Trainer` plus three things:

- the `examples_per_second` TensorBoard scalar (global batch size x steps /
  wall time of each training loop);
- a progress line every `trainer.steps_per_loop` steps: steps done / total,
  examples/s and an ETA; evaluation passes report batches done (of the total
  when `trainer.validation_steps` or the task's `eval_steps_hint` gives it),
  examples/s and an ETA about every 10% or 30 s, and one line at the end;
- divergence as a typed error: Model Garden's blowup rule (a NaN loss, or a
  loss above `trainer.loss_upper_bound` from step `recovery_begin_steps` on;
  after `trainer.recovery_max_trials` restores of the last checkpoint the run
  stops) raises `TrainingDivergedError` instead of a RuntimeError that only
  its message tells apart.

Model Garden's runners build their trainer with `train_utils.create_trainer`,
whose `trainer_cls` is gin-configurable; `scope()` binds it to
`SpanBertTrainer`, so `train_lib.run_experiment` and
`continuous_finetune_lib.run_continuous_finetune` run unchanged inside it.
"""

import contextlib
import datetime
import time
from typing import Iterator, Optional

from absl import logging
import gin

import official_spanbert  # noqa: F401
import tensorflow as tf
from official.core import actions
from official.core import base_trainer

_SCOPE = "spanbert"
_TRAINER_CLS = "official.core.train_utils.create_trainer.trainer_cls"


class TrainingDivergedError(RuntimeError):
  """The loss became NaN/Inf or exceeded trainer.loss_upper_bound, and the
  trainer.recovery_max_trials restores of the last checkpoint are used up."""


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


class _Progress:
  """Steps done / total, examples/s and ETA of a run's training loops.

  The rate leaves out the first loop (it traces the train function) once a
  later one has run, and the time spent evaluating between loops.
  """

  def __init__(self, total_steps: int, global_batch_size: int):
    self.total_steps = total_steps
    self.batch = global_batch_size
    self._first = None   # (steps, seconds) of the first loop
    self._later = [0, 0.0]  # steps, seconds of the loops after it

  def add(self, steps: int, seconds: float) -> None:
    if self._first is None:
      self._first = (steps, seconds)
    else:
      self._later[0] += steps
      self._later[1] += seconds

  def line(self, step: int) -> str:
    steps, seconds = (self._later if self._later[0] else self._first)
    rate = steps / seconds if seconds > 0 else 0.0
    text = f"train progress: step {step}/{self.total_steps}"
    if self.total_steps > 0:
      text += f" ({100 * step / self.total_steps:.0f}%)"
    text += f" | {rate * self.batch:.1f} examples/s"
    if rate > 0 and 0 < step < self.total_steps:
      eta = datetime.timedelta(
          seconds=round((self.total_steps - step) / rate))
      text += f" | ETA {eta}"
    return text


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
    self._progress = _Progress(trainer.train_steps,
                               self.config.task.train_data.global_batch_size)
    self._loop_start = None

  def eval_begin(self):
    validation = self.config.task.validation_data
    total = self.config.trainer.validation_steps
    if total is None or total <= 0:
      total = getattr(self.task, "eval_steps_hint", None)
    self._eval_progress = _EvalProgress(
        total, getattr(validation, "global_batch_size", 0) or 0)
    return super().eval_begin()

  def eval_reduce(self, state=None, step_outputs=None):
    progress = getattr(self, "_eval_progress", None)
    if progress is not None:
      progress.step()
    return super().eval_reduce(state, step_outputs)

  def eval_end(self, aggregated_logs=None):
    logs = super().eval_end(aggregated_logs)
    progress = getattr(self, "_eval_progress", None)
    if progress is not None:
      logging.info("%s", progress.summary())
    return logs

  def train_loop_begin(self):
    self._loop_start = (time.time(), int(self.global_step.numpy()))
    super().train_loop_begin()

  def train_loop_end(self):
    logs = super().train_loop_end()
    step = int(self.global_step.numpy())
    if self._loop_start is not None:
      elapsed = time.time() - self._loop_start[0]
      steps = step - self._loop_start[1]
      if elapsed > 0 and steps > 0:
        logs["examples_per_second"] = (
            steps * self._progress.batch / elapsed)
        self._progress.add(steps, elapsed)
        logging.info("%s", self._progress.line(step))
    if self._divergence is not None:
      # Raises before Model Garden's own RecoveryCondition (a train action,
      # run on these logs next) would; returns whether it will restore.
      self._divergence(logs)
    return logs


class _EvalProgress:
  """Batches done in an evaluation pass, logged about every 10% or 30 s."""

  INTERVAL_S = 30.0

  def __init__(self, total: Optional[int], batch: int):
    self.total = total if total and total > 0 else None
    self.batch = batch
    self.done = 0
    self._start = self._last = time.time()
    self._tenths = 0

  def line(self) -> str:
    elapsed = time.time() - self._start
    rate = self.done / elapsed if elapsed > 0 else 0.0
    text = f"eval progress: batch {self.done}"
    if self.total:
      text += f"/{self.total} ({100 * self.done / self.total:.0f}%)"
    text += f" | {rate * self.batch:.1f} examples/s"
    if self.total and rate > 0 and self.done < self.total:
      eta = datetime.timedelta(seconds=round((self.total - self.done) / rate))
      text += f" | ETA {eta}"
    return text

  def step(self) -> None:
    self.done += 1
    now = time.time()
    tenths = 10 * self.done // self.total if self.total else 0
    if tenths > self._tenths or now - self._last >= self.INTERVAL_S:
      self._tenths, self._last = tenths, now
      logging.info("%s", self.line())

  def summary(self) -> str:
    return (f"eval: {self.done} batches ({self.done * self.batch} examples) "
            f"in {time.time() - self._start:.1f} s")


@contextlib.contextmanager
def scope() -> Iterator[None]:
  """Model Garden's train_utils.create_trainer builds a SpanBertTrainer in
  this block (a gin binding of its trainer_cls in scope "spanbert")."""
  with gin.unlock_config():
    gin.bind_parameter(f"{_SCOPE}/{_TRAINER_CLS}", SpanBertTrainer)
  with gin.config_scope(_SCOPE):
    yield
