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

"""One run per directory or output prefix: a lock file naming its holder.

Not filelock: its lock records no holder and cannot tell a dead one from a
live one, which a takeover after a kill needs. See docs/reliability.md.
"""

import contextlib
import errno
import json
import os
import socket
import time
from typing import Iterator, Optional

from absl import logging

LOCK_NAME = "train.lock"
_FIELDS = (("pid", int), ("host", str), ("started", str))


class LockedError(RuntimeError):
  """Another run holds the lock, or the lock file cannot be read."""


ModelDirLockedError = LockedError  # the name training code raises


class LockWriteError(OSError):
  """The lock file cannot be written (e.g. the disk is full)."""


def _read(path: str, user: str, subject: str) -> Optional[dict]:
  """The holder record in `path`; None when the file is gone.

  Raises:
    LockedError: the content is not a holder record.
  """
  try:
    with open(path, encoding="utf-8", errors="replace") as f:
      text = f.read()
  except FileNotFoundError:
    return None
  try:
    holder = json.loads(text)
  except ValueError:
    holder = None
  if not (isinstance(holder, dict) and all(
      type(holder.get(k)) is t for k, t in _FIELDS)):  # pylint: disable=unidiomatic-typecheck
    raise LockedError(
        f"lock file {path} is unreadable (it holds {text[:80]!r}, not a pid, "
        f"host and start time); delete it if no {user} is using {subject}")
  return holder


def _describe(holder: dict) -> str:
  return (f"pid {holder['pid']} on {holder['host']}, started "
          f"{holder['started']}")


def _is_stale(holder: dict) -> bool:
  """True when the holder is a process of this host that no longer runs."""
  if holder["host"] != socket.gethostname():
    return False
  try:
    os.kill(holder["pid"], 0)
  except ProcessLookupError:
    return True
  except (PermissionError, OverflowError, ValueError):
    return False  # alive (another user's), or no pid of this host
  return False


def _create_exclusive(path: str, record: dict) -> bool:
  """_create for filesystems without hard links: O_EXCL, then the write."""
  try:
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
  except FileExistsError:
    return False
  with os.fdopen(fd, "w", encoding="utf-8") as f:
    json.dump(record, f)
  return True


def _write_error(path: str, e: OSError) -> LockWriteError:
  """What to do about a lock file that cannot be written: free space, or
  choose another directory when this one cannot be written at all."""
  where = os.path.dirname(path) or "."
  advice = (f"{where} is not writable: choose a writable directory"
            if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
            else f"free space in {where} and rerun")
  return LockWriteError(
      f"cannot write the lock file {path}: {e.strerror or e}; {advice}")


def _create(path: str, record: dict) -> bool:
  """Creates the lock file holding `record`; False when it exists.

  Raises:
    LockWriteError: the record cannot be written.
  """
  own = f"{path}.{socket.gethostname()}.{os.getpid()}.tmp"
  try:
    try:
      with open(own, "w", encoding="utf-8") as f:
        json.dump(record, f)
    except OSError as e:
      raise _write_error(path, e) from None
    try:
      os.link(own, path)
    except FileExistsError:
      return False
    except OSError as e:
      if e.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
        return _create_exclusive(path, record)
      raise _write_error(path, e) from None
  finally:
    with contextlib.suppress(OSError):
      os.remove(own)
  return True


def _remove_stale(path: str, holder: dict, user: str, subject: str) -> None:
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
  try:
    if _read(aside, user, subject) == holder:
      os.remove(aside)
      return
  except LockedError:
    pass
  try:
    os.link(aside, path)
  except FileExistsError:
    pass
  os.remove(aside)


def acquire_file(path: str, user: str, subject: str) -> Optional[dict]:
  """Takes the lock file `path`; returns the record written, or None.

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
  record = {"pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
  while not _create(path, record):
    holder = _read(path, user, subject)
    if holder is None:
      continue
    if not _is_stale(holder):
      raise LockedError(
          f"{subject} is in use by another {user}: {_describe(holder)} "
          f"(lock file {path}; delete it if that run is no longer running)")
    logging.warning("Taking over the lock %s of a %s that is no longer "
                    "running: %s", path, user, _describe(holder))
    _remove_stale(path, holder, user, subject)
  return record


def release_file(path: str, record: Optional[dict]) -> None:
  """Removes the lock file if it still holds `record`."""
  if record is None:
    return
  try:
    with open(path, encoding="utf-8") as f:
      mine = json.loads(f.read()) == record
  except (OSError, ValueError):
    mine = False
  if mine:
    os.remove(path)
  else:
    logging.warning("The lock %s no longer names this run; left as it is",
                    path)


@contextlib.contextmanager
def hold_file(path: str, user: str, subject: str) -> Iterator[None]:
  """Holds the lock file `path` for the `with` block (see acquire_file)."""
  record = acquire_file(path, user, subject)
  try:
    yield
  finally:
    release_file(path, record)


def acquire(model_dir: str) -> Optional[dict]:
  """Takes the training lock of `model_dir` (see acquire_file)."""
  if "://" not in model_dir:
    os.makedirs(model_dir, exist_ok=True)
  return acquire_file(os.path.join(model_dir, LOCK_NAME), "training run",
                      model_dir)


def release(model_dir: str, record: Optional[dict]) -> None:
  """Removes the training lock of `model_dir` if it still holds `record`."""
  release_file(os.path.join(model_dir, LOCK_NAME), record)


@contextlib.contextmanager
def hold(model_dir: str) -> Iterator[None]:
  """Holds the training lock of `model_dir` for the `with` block."""
  record = acquire(model_dir)
  try:
    yield
  finally:
    release(model_dir, record)
