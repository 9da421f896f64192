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

"""The best checkpoint's info.json and checkpoint stay a pair when an export
of them is interrupted (official_spanbert/training/best_checkpoint.py).

Issue 39 probes (b) and (c): Model Garden's exporter wrote info.json in place
before saving the checkpoint, so a SIGTERM, kill or full disk between or
during them left metrics of a step whose checkpoint is not there, or an empty
info.json that failed every later run of the model_dir. A small checkpoint
stands for the trainer's (it has the global_step the exporter reads).
"""

import json
import logging
import os

import pytest
import tensorflow as tf

from official.core import train_utils
from official_spanbert.training import best_checkpoint
from official_spanbert.utils import atomic_io


class _Interrupted(BaseException):
  """Stands for a SIGTERM's exit or a kill at that point."""


def _checkpoint(step):
  return tf.train.Checkpoint(global_step=tf.Variable(step, dtype=tf.int64),
                             w=tf.Variable(tf.fill([100], float(step))))


def _exporter(export_dir, **kwargs):
  return best_checkpoint.BestCheckpointExporter(
      str(export_dir), "accuracy", "higher", **kwargs)


def _export(export_dir, step, accuracy):
  exporter = _exporter(export_dir)
  return exporter.maybe_export_checkpoint(
      _checkpoint(step), {"accuracy": tf.constant(accuracy)}, step)


def _info(export_dir):
  with open(os.path.join(export_dir, "info.json")) as f:
    return json.load(f)


def _best_step(export_dir):
  return int(train_utils.read_global_step_from_checkpoint(
      tf.train.latest_checkpoint(str(export_dir))))


def test_exports_the_better_evaluation_with_its_info(tmp_path):
  best = tmp_path / "best"
  assert _export(best, 4, 0.1)
  assert not _export(best, 8, 0.05)  # worse: kept as it was
  assert _export(best, 12, 0.2)
  assert _best_step(best) == 12
  assert _info(best) == {"accuracy": pytest.approx(0.2),
                         "best_ckpt_global_step": 12.0}
  assert sorted(os.listdir(best)) == [
      "best_ckpt-1.data-00000-of-00001", "best_ckpt-1.index", "checkpoint",
      "info.json"]


@pytest.mark.parametrize("where", ["save", "rename"])
def test_an_interrupted_export_leaves_a_pair(tmp_path, monkeypatch, where,
                                             caplog):
  """Interrupted before the checkpoint was saved, the old pair stays;
  after, the next run completes the new one."""
  best = tmp_path / "best"
  assert _export(best, 4, 0.1)
  if where == "save":
    def save(*args, **kwargs):
      raise _Interrupted()
    monkeypatch.setattr(tf.train.CheckpointManager, "save", save)
  else:
    def move(tmp, path, **kwargs):
      raise _Interrupted()
    monkeypatch.setattr(atomic_io, "move_into_place", move)
  with pytest.raises(_Interrupted):
    _export(best, 8, 0.2)
  monkeypatch.undo()
  with caplog.at_level(logging.WARNING):
    exporter = _exporter(best)  # the next run
  step = 4 if where == "save" else 8
  assert _best_step(best) == step
  assert _info(best)["best_ckpt_global_step"] == step
  assert exporter.best_ckpt_logs["best_ckpt_global_step"] == step
  assert not os.path.exists(best / "info.json.incomplete")
  assert ("Completed the interrupted export of the best checkpoint (step 8)"
          in caplog.text) == (where == "rename")


@pytest.mark.parametrize("content", ["", '{"accuracy": 0.', "[]",
                                     '{"accuracy": 0.9, '
                                     '"best_ckpt_global_step": 99}'])
def test_model_gardens_interrupted_info_is_set_aside(tmp_path, content,
                                                     caplog):
  """An empty or truncated info.json (a kill or full disk while Model Garden
  wrote it), or one of a step whose checkpoint was never saved: every later
  run failed (`Expecting value: line 1 column 1 (char 0)`) or compared with
  metrics no checkpoint had."""
  best = tmp_path / "best"
  assert _export(best, 4, 0.1)
  (best / "info.json").write_text(content)
  with caplog.at_level(logging.WARNING):
    exporter = _exporter(best)
  assert exporter.best_ckpt_logs is None
  assert (best / "info.json.unusable").read_text() == content
  assert f"{best}/info.json " in caplog.text
  assert ("(an export of the best checkpoint was interrupted); kept as "
          f"{best}/info.json.unusable, and the next evaluation is taken as "
          "the best so far") in caplog.text
  # The next evaluation is exported, even if worse than the 0.9 claimed.
  assert exporter.maybe_export_checkpoint(
      _checkpoint(8), {"accuracy": tf.constant(0.05)}, 8)
  assert _info(best)["best_ckpt_global_step"] == 8 == _best_step(best)


def test_a_full_disk_while_writing_the_info_changes_nothing(tmp_path,
                                                            monkeypatch):
  best = tmp_path / "best"
  assert _export(best, 4, 0.1)
  before = (best / "info.json").read_text()
  gfile = tf.io.gfile.GFile

  class FullDisk(gfile):
    def write(self, data):
      super().write(data[:10])
      raise tf.errors.ResourceExhaustedError(
          None, None, f"{self.name}; No space left on device")

  monkeypatch.setattr(tf.io.gfile, "GFile", FullDisk)
  with pytest.raises(tf.errors.ResourceExhaustedError):
    _export(best, 8, 0.2)
  monkeypatch.undo()
  assert (best / "info.json").read_text() == before
  assert _exporter(best).best_ckpt_logs["best_ckpt_global_step"] == 4
  assert not os.path.exists(best / "info.json.incomplete")
  assert _best_step(best) == 4


def test_a_training_run_removes_partial_saves_of_the_best_checkpoint(
    tmp_path):
  best = tmp_path / "best"
  assert _export(best, 4, 0.1)
  partial = best / "best_ckpt-2_temp"
  partial.mkdir()
  (partial / "part-00000-of-00001.data-00000-of-00001").write_bytes(
      b"\0" * 1000)
  _exporter(best)  # an evaluation: no lock, leaves them
  assert partial.exists()
  _exporter(best, remove_partial_saves=True)
  assert not partial.exists()
