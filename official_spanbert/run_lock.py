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

"""One training run per model_dir: a lock file naming its holder.

`hold(model_dir)` creates `<model_dir>/train.lock` with O_CREAT|O_EXCL and
writes the holder's pid, host and start time into it; a second run on the
same model_dir gets `ModelDirLockedError` naming the holder. A lock left by a
process that no longer runs on this host is taken over with a warning. A lock
from another host cannot be checked and stays until deleted by hand. The lock
is removed when the `with` block exits, also on an exception. Model dirs on
non-local filesystems (gs://, ...) are not locked: they have no atomic
exclusive create.
"""

import contextlib
import json
import os
import socket
import time
from typing import Iterator, Optional

from absl import logging

LOCK_NAME = "train.lock"
# A lock file is written right after its exclusive create; a reader that
# finds it empty or half-written waits this long for the content.
_READ_WAIT_S = 2.0


class ModelDirLockedError(RuntimeError):
  """Another training run holds the model_dir."""


def _read(path: str) -> Optional[dict]:
  """The holder record in `path`; None when the file is gone."""
  deadline = time.monotonic() + _READ_WAIT_S
  while True:
    try:
      with open(path, encoding="utf-8") as f:
        text = f.read()
    except FileNotFoundError:
      return None
    try:
      return json.loads(text)
    except ValueError:
      if time.monotonic() > deadline:
        return {"text": text}
      time.sleep(0.1)


def _describe(holder: dict) -> str:
  if "pid" not in holder:
    return f"an unreadable holder record {holder.get('text', '')!r}"
  return (f"pid {holder['pid']} on {holder['host']}, started "
          f"{holder['started']}")


def _is_stale(holder: dict) -> bool:
  """True when the holder is a process of this host that no longer runs."""
  if "pid" not in holder or holder["host"] != socket.gethostname():
    return False
  try:
    os.kill(int(holder["pid"]), 0)
  except ProcessLookupError:
    return True
  except PermissionError:  # alive, another user's
    return False
  return False


def _create(path: str, record: dict) -> bool:
  """Creates the lock file holding `record`; False when it exists."""
  try:
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
  except FileExistsError:
    return False
  with os.fdopen(fd, "w", encoding="utf-8") as f:
    json.dump(record, f)
  return True


def _remove_stale(path: str, holder: dict) -> None:
  """Removes the lock file if it still holds `holder`'s record.

  The file is first renamed to a name of this process's own, so of two runs
  taking over the same stale lock only one removes it; if what got renamed
  is a live lock written in between, it is put back.
  """
  aside = f"{path}.{socket.gethostname()}.{os.getpid()}.stale"
  try:
    os.rename(path, aside)
  except FileNotFoundError:
    return
  if _read(aside) == holder:
    os.remove(aside)
    return
  try:
    os.link(aside, path)
  except FileExistsError:
    pass
  os.remove(aside)


def acquire(model_dir: str) -> Optional[dict]:
  """Takes the lock of `model_dir`; returns the record written, or None.

  Raises:
    ModelDirLockedError: a live run (or one on another host) holds it.
  """
  if "://" in model_dir:
    logging.warning("%s is not a local path: no lock against a second "
                    "training run on it", model_dir)
    return None
  os.makedirs(model_dir, exist_ok=True)
  path = os.path.join(model_dir, LOCK_NAME)
  record = {"pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
  while not _create(path, record):
    holder = _read(path)
    if holder is None:
      continue
    if not _is_stale(holder):
      raise ModelDirLockedError(
          f"{model_dir} is in use by another training run: "
          f"{_describe(holder)} (lock file {path}; delete it if that run is "
          "no longer running)")
    logging.warning("Taking over the lock %s of a training run that is no "
                    "longer running: %s", path, _describe(holder))
    _remove_stale(path, holder)
  return record


def release(model_dir: str, record: Optional[dict]) -> None:
  """Removes the lock file if it still holds `record`."""
  if record is None:
    return
  path = os.path.join(model_dir, LOCK_NAME)
  if _read(path) == record:
    os.remove(path)
  else:
    logging.warning("The lock %s no longer names this run; left as it is",
                    path)


@contextlib.contextmanager
def hold(model_dir: str) -> Iterator[None]:
  """Holds the lock of `model_dir` for the `with` block."""
  record = acquire(model_dir)
  try:
    yield
  finally:
    release(model_dir, record)
