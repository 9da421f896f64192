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

"""Resuming from the newest intact checkpoint, whatever the state file says.

`recover_latest` points `<model_dir>/checkpoint` at the newest intact `ckpt-N`
before a run builds anything: broken checkpoints go to `broken_checkpoints/`,
partial saves are removed. See docs/reliability.md.
"""

import os
import re
from typing import List, Optional

from absl import logging
import tensorflow as tf

BROKEN_DIR = "broken_checkpoints"
STATE_FILE = "checkpoint"
_INDEX = re.compile(r"^ckpt-(\d+)\.index$")
# What interrupted saves of checkpoints named <name>-N leave.
_PARTIAL_SAVES = ("{name}-*_temp", "{name}-*.tempstate*", "checkpoint.tmp*")


class CheckpointError(ValueError):
  """The latest checkpoint of a model_dir is broken and nothing can replace
  it."""


def _step(prefix: str) -> int:
  """The N of a checkpoint prefix `.../name-N` (-1 for another name)."""
  match = re.search(r"-(\d+)$", prefix)
  return int(match.group(1)) if match else -1


def listed(model_dir: str) -> List[str]:
  """Prefixes of the `ckpt-N` checkpoints in model_dir, oldest first."""
  names = (_INDEX.match(n) for n in tf.io.gfile.listdir(model_dir)
           ) if tf.io.gfile.isdir(model_dir) else ()
  return sorted((os.path.join(model_dir, m.group(0)[:-len(".index")])
                 for m in names if m), key=_step)


def _state(model_dir: str):
  """The CheckpointState of model_dir; None if missing or unreadable."""
  try:
    return tf.train.get_checkpoint_state(model_dir)
  except ValueError:  # an empty state file
    return None


def remove_partial_saves(model_dir: str, name: str = "ckpt") -> None:
  """Removes what interrupted saves of checkpoints `name`-N left in
  model_dir (see the docstring)."""
  paths = sorted(p for pattern in _PARTIAL_SAVES for p in tf.io.gfile.glob(
      os.path.join(model_dir, pattern.format(name=name))))
  if not paths:
    return
  size = 0
  for path in paths:
    if tf.io.gfile.isdir(path):
      size += sum(f.length for f in map(
          tf.io.gfile.stat, tf.io.gfile.glob(os.path.join(path, "*"))))
      tf.io.gfile.rmtree(path)
    else:
      size += tf.io.gfile.stat(path).length
      tf.io.gfile.remove(path)
  logging.warning("Removed %d partial save(s) of an interrupted run (%.1f "
                  "MB): %s", len(paths), size / 1e6, ", ".join(paths))


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
  """Raises CheckpointError if the latest checkpoint cannot be restored, or
  if the state file does not name the newest checkpoint of the directory."""
  state = _state(model_dir)
  latest = state.model_checkpoint_path if state else None
  found = listed(model_dir)
  if found and (latest is None or _step(found[-1]) > _step(latest)):
    raise CheckpointError(
        f"the checkpoint state file {os.path.join(model_dir, STATE_FILE)} "
        f"is missing or unreadable or names an older checkpoint than "
        f"{found[-1]}; a training run on {model_dir} rebuilds it")
  why = latest and problem(latest)
  if why:
    raise CheckpointError(
        f"checkpoint {latest} is broken ({why}); the next training run on "
        f"{model_dir} moves it into {BROKEN_DIR}/ and resumes from the "
        "newest intact checkpoint")


def recover_latest(model_dir: str) -> None:
  """Points `<model_dir>/checkpoint` at the newest intact checkpoint.

  Removes partial saves; broken checkpoints newer than the intact one are
  moved into BROKEN_DIR, never deleted.

  Raises:
    CheckpointError: no checkpoint is intact (then nothing is moved or
      rewritten).
  """
  remove_partial_saves(model_dir)
  state = _state(model_dir)
  paths = sorted(set(listed(model_dir)) | set(
      state.all_model_checkpoint_paths if state else ()) | (
          {state.model_checkpoint_path} if state else set()), key=_step)
  if not paths:
    return
  named = state.model_checkpoint_path if state else None
  if named == paths[-1] and not problem(named):
    return
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
  if state is None or _step(prefix) > _step(named):
    logging.warning(
        "The checkpoint state file %s %s; found the checkpoints by listing "
        "the directory", os.path.join(model_dir, STATE_FILE),
        "is missing or unreadable" if state is None else
        f"names {named}, older than {prefix}")
  kept = paths + [prefix]
  known = dict(zip(state.all_model_checkpoint_paths,
                   state.all_model_checkpoint_timestamps)) if state else {}
  timestamps = [known[p] for p in kept if p in known]
  tf.compat.v1.train.update_checkpoint_state(
      model_dir, os.path.relpath(prefix, model_dir),
      [os.path.relpath(p, model_dir) for p in kept],
      all_model_checkpoint_timestamps=(
          timestamps if len(timestamps) == len(kept) else None),
      last_preserved_timestamp=state.last_preserved_timestamp if state
      else None)
  # (the training run then says "Resuming from <prefix> (step N)")
