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

"""Where the records writers meet the filesystem: errors, SIGTERM, the prefix lock.

Shared by pretraining_records.py and beam_records.py: a failed or SIGTERMed run
leaves no shard or directory it created, and `<prefix>.lock` keeps a second run
off the same prefix (docs/pretraining.md, "Pretraining records").
"""

import contextlib
import os
import signal
import threading
from typing import Iterator, List, Sequence

from absl import logging
import tensorflow as tf

from official_spanbert.utils import run_lock

# Held by the run writing a prefix (official_spanbert/utils/run_lock.py).
LOCK_SUFFIX = ".lock"


class RecordsOutputError(ValueError):
  """The output shards cannot be written (path, permissions, disk space)."""


class TerminatedError(RuntimeError):
  """SIGTERM arrived while the shards were being written."""


def output_error(path: str, error: Exception) -> RecordsOutputError:
  if isinstance(error, tf.errors.OpError):
    reason = error.message.replace(f"{path}; ", "")
  else:
    reason = error.strerror or str(error)
  return RecordsOutputError(
      f"cannot write {path}: {reason}; choose a writable output_prefix with "
      "free space (no shard was left behind)")


class SigtermGuard:
  """Turns a SIGTERM into TerminatedError at the next check() while writing.

  Only in the main thread (where Python runs signal handlers). The handler
  just notes the signal: an exception raised from it can be swallowed by
  library code (AutoGraph does). A SIGTERM no check() saw (e.g. during the
  commit) goes to the previous handler when the guard exits.
  """

  def __init__(self, what: str):
    self._what = what
    self._active = threading.current_thread() is threading.main_thread()
    self._previous = None
    self._pending = False

  def __enter__(self):
    if self._active:
      self._previous = signal.signal(signal.SIGTERM, self._handle)
    return self

  def _handle(self, signum, frame):
    del signum, frame
    self._pending = True

  def check(self):
    """Raises TerminatedError if a SIGTERM arrived since the last check."""
    if self._pending:
      self._pending = False
      raise TerminatedError(
          f"terminated by SIGTERM while writing {self._what}; partial shards "
          "removed, rerun to write them")

  def __exit__(self, *exc):
    if self._active:  # (None: the previous handler was not set from Python)
      signal.signal(signal.SIGTERM, self._previous or signal.SIG_DFL)
      if self._pending:
        signal.raise_signal(signal.SIGTERM)


def make_dirs(path: str) -> List[str]:
  """Creates a directory and its parents; returns the new ones, deepest first.

  Raises:
    RecordsOutputError: it cannot be created.
  """
  created, p = [], os.path.abspath(path)
  while not os.path.exists(p):
    created.append(p)
    p = os.path.dirname(p)
  try:
    os.makedirs(path, exist_ok=True)
  except OSError as e:
    remove_empty_dirs(created)
    raise RecordsOutputError(
        f"cannot create output directory {path}: {e.strerror}; choose a "
        "writable output_prefix") from None
  return created


def remove_empty_dirs(dirs: Sequence[str]):
  for d in dirs:
    try:
      os.rmdir(d)
    except OSError:
      pass  # not empty, or never created


@contextlib.contextmanager
def prefix_lock(output_prefix: str) -> Iterator[None]:
  """Holds `<output_prefix>.lock` for the block.

  Raises:
    RecordsOutputError: another live run writes this prefix, or the lock
      cannot be written.
  """
  path = output_prefix + LOCK_SUFFIX
  try:
    record = run_lock.acquire_file(path, "records run", output_prefix)
  except (run_lock.LockedError, run_lock.LockWriteError) as e:
    raise RecordsOutputError(str(e)) from None
  try:
    yield
  finally:
    run_lock.release_file(path, record)


def remove(paths: Sequence[str], what: str):
  if paths:
    logging.warning("removing %d %s: %s", len(paths), what, ", ".join(paths))
  for p in paths:
    os.remove(p)
