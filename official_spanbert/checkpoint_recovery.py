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

"""Resuming past a broken newest checkpoint.

Model Garden restores the checkpoint that `<model_dir>/checkpoint` names. If
its files were cut short (a full disk, an interrupted copy), the restore
fails with "IndexError: Read less bytes than requested" and names no file.
`recover_latest` reads every tensor of that checkpoint first. If one cannot
be read, it moves the checkpoint's files into `<model_dir>/broken_checkpoints/`
(kept, and out of the way of the next save of the same step), points the
state file at the newest intact checkpoint and logs both. A `ckpt-N_temp/`
folder left by a kill during a save is not a checkpoint: the state file never
names it, and the next save of step N replaces it.
"""

import os
from typing import Optional

from absl import logging
import tensorflow as tf

BROKEN_DIR = "broken_checkpoints"


class CheckpointError(ValueError):
  """The latest checkpoint of a model_dir is broken and nothing can replace
  it."""


def problem(prefix: str) -> Optional[str]:
  """Why the checkpoint at `prefix` cannot be restored; None if it can."""
  try:
    reader = tf.train.load_checkpoint(prefix)
    for name in reader.get_variable_to_dtype_map():
      reader.get_tensor(name)
  except (tf.errors.OpError, IndexError) as e:
    message = e.message if isinstance(e, tf.errors.OpError) else str(e)
    return f"{type(e).__name__}: {message}"
  return None


def _move_aside(model_dir: str, prefix: str) -> str:
  """Moves the files of checkpoint `prefix` into BROKEN_DIR; returns their
  new prefix (with a .N suffix if that step was moved there before)."""
  broken_dir = os.path.join(model_dir, BROKEN_DIR)
  tf.io.gfile.makedirs(broken_dir)
  name = os.path.basename(prefix)
  target, n = os.path.join(broken_dir, name), 0
  while tf.io.gfile.glob(target + ".*"):
    n += 1
    target = os.path.join(broken_dir, f"{name}.{n}")
  for path in tf.io.gfile.glob(prefix + ".*"):
    tf.io.gfile.rename(path, target + path[len(prefix):])
  return target


def check_latest(model_dir: str) -> None:
  """Raises CheckpointError if the latest checkpoint cannot be restored."""
  latest = tf.train.latest_checkpoint(model_dir)
  why = latest and problem(latest)
  if why:
    raise CheckpointError(
        f"checkpoint {latest} is broken ({why}); the next training run on "
        f"{model_dir} moves it into {BROKEN_DIR}/ and resumes from the "
        "newest intact checkpoint")


def recover_latest(model_dir: str) -> None:
  """Points `<model_dir>/checkpoint` at the newest intact checkpoint.

  Broken checkpoints newer than it are moved into BROKEN_DIR, never deleted.

  Raises:
    CheckpointError: no checkpoint the state file lists is intact (then
      nothing is moved or rewritten).
  """
  state = tf.train.get_checkpoint_state(model_dir)
  if state is None or not problem(state.model_checkpoint_path):
    return
  paths = list(state.all_model_checkpoint_paths)
  if state.model_checkpoint_path not in paths:
    paths.append(state.model_checkpoint_path)
  broken = []
  while paths:
    prefix = paths.pop()
    why = problem(prefix)
    if not why:
      break
    broken.append((prefix, why))
  else:
    raise CheckpointError(
        f"no intact checkpoint in {model_dir}: "
        + "; ".join(f"{p} is broken ({why})" for p, why in broken)
        + f". Move them out of {model_dir} (and its checkpoint file) to "
        "start from scratch")
  for path, why in broken:
    moved = _move_aside(model_dir, path)
    logging.warning("Checkpoint %s is broken (%s); its files are kept as "
                    "%s.*", path, why, moved)
  timestamps = list(state.all_model_checkpoint_timestamps)[:len(paths) + 1]
  tf.compat.v1.train.update_checkpoint_state(
      model_dir, os.path.relpath(prefix, model_dir),
      [os.path.relpath(p, model_dir) for p in paths + [prefix]],
      all_model_checkpoint_timestamps=timestamps or None,
      last_preserved_timestamp=state.last_preserved_timestamp)
  logging.warning("Resuming from %s, the newest intact checkpoint in %s",
                  prefix, model_dir)
