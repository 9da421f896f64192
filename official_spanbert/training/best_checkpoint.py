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

"""The best checkpoint (trainer.best_checkpoint_export_subdir), kept whole.

BestCheckpointExporter writes `info.json.incomplete`, saves the checkpoint,
then renames the metrics onto info.json, so an interrupted export never leaves
metrics without their checkpoint. See docs/reliability.md.
"""

import json
import os
from typing import Optional

from absl import logging
import orbit
import tensorflow as tf

from official.core import train_utils
from official_spanbert.training import checkpoint_recovery
from official_spanbert.utils import atomic_io


_UNKNOWN = "unknown"  # the step of a best checkpoint without a global_step


class BestCheckpointExporter(train_utils.BestCheckpointExporter):
  """Model Garden's exporter with info.json written after the checkpoint,
  and an interrupted export repaired or set aside (module docstring)."""

  def __init__(self, export_dir: str, metric_name: str, metric_comp: str,
               remove_partial_saves: bool = False):
    # (read by _maybe_load_best_eval_metric, which the base __init__ calls)
    self._remove_partial_saves = remove_partial_saves
    super().__init__(export_dir, metric_name, metric_comp)

  @property
  def pending_logs_path(self) -> str:
    return atomic_io.temp_path(self.best_ckpt_logs_path)

  def _checkpoint_step(self):
    """The step of the best checkpoint; None if there is none, _UNKNOWN if
    it holds no global_step (not a trainer's)."""
    path = tf.train.latest_checkpoint(self._export_dir)
    if not path:
      return None
    try:
      return int(train_utils.read_global_step_from_checkpoint(path))
    except ValueError:
      return _UNKNOWN

  def _maybe_load_best_eval_metric(self):
    if self._remove_partial_saves:  # a training run, holding the lock
      checkpoint_recovery.remove_partial_saves(
          self._export_dir, train_utils.BEST_CHECKPOINT_NAME)
    step = self._checkpoint_step()
    pending = _read_json(self.pending_logs_path)
    if pending is not None:
      if _step(pending) == step:  # saved, not yet renamed
        atomic_io.move_into_place(self.pending_logs_path,
                                  self.best_ckpt_logs_path)
        logging.warning("Completed the interrupted export of the best "
                        "checkpoint (step %d) in %s", step, self._export_dir)
      else:
        atomic_io.remove_file(self.pending_logs_path)
    if not tf.io.gfile.exists(self.best_ckpt_logs_path):
      return None
    logs = _read_json(self.best_ckpt_logs_path)
    if logs is not None and step in (_step(logs), _UNKNOWN):
      return logs
    aside = self.best_ckpt_logs_path + ".unusable"
    atomic_io.move_into_place(self.best_ckpt_logs_path, aside)
    why = ("cannot be read" if logs is None else
           f"describes step {_step(logs)}, but " + (
               f"the best checkpoint there is of step {step}"
               if step is not None else "there is no best checkpoint"))
    logging.warning(
        "%s %s (an export of the best checkpoint was interrupted); kept as "
        "%s, and the next evaluation is taken as the best so far",
        self.best_ckpt_logs_path, why, aside)
    return None

  def maybe_export_checkpoint(self, checkpoint, eval_logs, global_step,
                              write_logs=True) -> bool:
    logging.info("[BestCheckpointExporter] received eval_logs: %s, at step: "
                 "%d", eval_logs, global_step)
    if not (self._best_ckpt_logs is None or
            self._new_metric_is_better(self._best_ckpt_logs, eval_logs)):
      return False
    try:
      if write_logs:
        self.export_best_eval_metric(eval_logs, global_step)
      self._get_checkpoint_manager(checkpoint).save()
    except BaseException:  # also a SIGTERM's exit
      atomic_io.remove_file(self.pending_logs_path)
      raise
    if write_logs:
      atomic_io.move_into_place(self.pending_logs_path,
                                self.best_ckpt_logs_path)
    self._best_ckpt_logs = eval_logs
    return True

  def export_best_eval_metric(self, eval_logs, global_step):
    """Writes the metrics to pending_logs_path (renamed onto info.json once
    the checkpoint is saved)."""
    # As Model Garden's: scalars only, and the step.
    logs = train_utils._filter_leaf_nested_dict(  # pylint: disable=protected-access
        eval_logs, lambda x: tf.rank(x) <= 1)
    logs["best_ckpt_global_step"] = global_step
    logs = train_utils.cast_leaf_nested_dict(
        logs, lambda x: float(orbit.utils.get_value(x)))
    with tf.io.gfile.GFile(self.pending_logs_path, "w") as f:
      f.write(json.dumps(logs, indent=4) + "\n")


def _read_json(path: str) -> Optional[dict]:
  """The dict in a JSON file; None if missing, truncated or not a dict."""
  try:
    with tf.io.gfile.GFile(path, "r") as f:
      value = json.loads(f.read())
  except (tf.errors.NotFoundError, ValueError):
    return None
  return value if isinstance(value, dict) else None


def _step(logs: dict) -> Optional[int]:
  step = logs.get("best_ckpt_global_step")
  return int(step) if isinstance(step, (int, float)) else None


def maybe_create(params, model_dir: str, training: bool
                 ) -> Optional[BestCheckpointExporter]:
  """The exporter Model Garden's maybe_create_best_ckpt_exporter would
  build, as this module's class; `training`: the run holds the model_dir's
  lock, so partial saves in the subdir are removed."""
  trainer = params.trainer
  if not (model_dir and trainer.best_checkpoint_export_subdir and
          trainer.best_checkpoint_eval_metric):
    return None
  return BestCheckpointExporter(
      os.path.join(model_dir, trainer.best_checkpoint_export_subdir),
      trainer.best_checkpoint_eval_metric,
      trainer.best_checkpoint_metric_comp,
      remove_partial_saves=training)
