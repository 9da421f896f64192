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

"""One run per directory or output prefix: filelock's SoftFileLock, our words.

filelock 4.3.2 (the version verified; setup.py) writes the holder's pid,
host and process start time into the lock file, refuses a live holder and
takes over a dead one of this host on a non-blocking acquire (a recycled
pid does not pass for the holder: the start time must match); a full disk
or read-only directory raises the OSError with nothing left behind. What is
left here is the project's: the one-line errors naming the holder, the
warning on a takeover, the refusal of a lock file that holds no record
(measured: a blocking acquire with timeout=5 took a `null` one over after
2.0 s and timed out on an empty one; a single attempt never takes one
over, so the user decides, as the message says) and "started",
the lock file's mtime (filelock's start token is clock ticks since boot).
A lock file of this package before filelock (JSON) reads as unreadable.

Example:
  with run_lock.hold(model_dir):  # LockedError if another run holds it
    train(model_dir)
"""

import contextlib
import errno
import os
import time
from typing import Iterator, Optional

from absl import logging
import filelock

LOCK_NAME = "train.lock"
_NAMESPACE_MARK = "?pidns-"  # filelock's suffix on a host in a pid namespace


class LockedError(RuntimeError):
  """Another run holds the lock, or the lock file cannot be read."""


ModelDirLockedError = LockedError  # the name training code raises


class LockWriteError(OSError):
  """The lock file cannot be written (e.g. the disk is full)."""


class Held(dict):
  """What acquire_file took: the holder record ("pid", "host", "started")
  as the messages show it, and the filelock to release. Keep it until
  release_file: filelock releases a lock whose object is collected."""

  def __init__(self, record: dict, lock: filelock.SoftFileLock):
    super().__init__(record)
    self.lock = lock


def holder(path: str) -> Optional[dict]:
  """The record in the lock file `path`; None when it is gone or holds none."""
  try:
    with open(path, encoding="utf-8", errors="replace") as f:
      lines = f.read().split("\n")
    started = time.localtime(os.stat(path).st_mtime)
  except FileNotFoundError:
    return None
  if len(lines) not in (3, 4) or lines[-1] or not lines[0].isdigit():
    return None
  return {"pid": int(lines[0]), "host": lines[1].split(_NAMESPACE_MARK)[0],
          "started": time.strftime("%Y-%m-%d %H:%M:%S %z", started)}


def _describe(record: dict) -> str:
  return (f"pid {record['pid']} on {record['host']}, started "
          f"{record['started']}")


def _write_error(path: str, e: OSError) -> LockWriteError:
  """What to do about a lock file that cannot be written: free space, or
  choose another directory when this one cannot be written at all."""
  where = os.path.dirname(path) or "."
  advice = (f"{where} is not writable: choose a writable directory"
            if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
            else f"free space in {where} and rerun")
  return LockWriteError(
      f"cannot write the lock file {path}: {e.strerror or e}; {advice}")


def acquire_file(path: str, user: str, subject: str) -> Optional[Held]:
  """Takes the lock file `path`; returns what was taken, or None.

  Args:
    path: the lock file.
    user: what holds it, for messages ("training run").
    subject: what it guards, for messages (a model_dir, an output prefix).

  Raises:
    LockedError: a live run (or one on another host) holds it, or it holds
      something else than a holder record.
    LockWriteError: it cannot be written.
  """
  if "://" in path:
    logging.warning("%s is not a local path: no lock against a second %s "
                    "on it", subject, user)
    return None
  while True:
    before = os.path.exists(path) and holder(path)
    lock = filelock.SoftFileLock(path, blocking=False, thread_local=False)
    try:
      lock.acquire()
      break
    except filelock.Timeout:  # an OSError too: caught first
      pass
    except OSError as e:
      raise _write_error(path, e) from None
    content = holder(path)
    if content is not None:
      raise LockedError(
          f"{subject} is in use by another {user}: {_describe(content)} "
          f"(lock file {path}; delete it if that run is no longer running)")
    with contextlib.suppress(FileNotFoundError):  # else released: retry
      with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
      raise LockedError(
          f"lock file {path} is unreadable (it holds {text[:80]!r}, not a "
          f"pid, host and start time); delete it if no {user} is using "
          f"{subject}")
  if before:
    logging.warning("Taking over the lock %s of a %s that is no longer "
                    "running: %s", path, user, _describe(before))
  return Held(holder(path) or {}, lock)


def release_file(path: str, held: Optional[Held]) -> None:
  """Releases what acquire_file took (its file, if it still names us)."""
  if held is None:
    return
  if not held.lock.is_lock_held_by_us:
    logging.warning("The lock %s no longer names this run; left as it is",
                    path)
  held.lock.release()


@contextlib.contextmanager
def hold_file(path: str, user: str, subject: str) -> Iterator[None]:
  """Holds the lock file `path` for the `with` block (see acquire_file)."""
  held = acquire_file(path, user, subject)
  try:
    yield
  finally:
    release_file(path, held)


def acquire(model_dir: str) -> Optional[Held]:
  """Takes the training lock of `model_dir` (see acquire_file)."""
  if "://" not in model_dir:
    os.makedirs(model_dir, exist_ok=True)
  return acquire_file(os.path.join(model_dir, LOCK_NAME), "training run",
                      model_dir)


def release(model_dir: str, held: Optional[Held]) -> None:
  """Releases the training lock of `model_dir` taken by acquire."""
  release_file(os.path.join(model_dir, LOCK_NAME), held)


@contextlib.contextmanager
def hold(model_dir: str) -> Iterator[None]:
  """Holds the training lock of `model_dir` for the `with` block."""
  held = acquire(model_dir)
  try:
    yield
  finally:
    release(model_dir, held)
