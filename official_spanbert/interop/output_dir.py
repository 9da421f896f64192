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

"""A conversion's output directory: one writer, written whole or not at all.

`converting` takes `<output>.lock`, checks the output, and renames a staging
directory into place when all files are complete (docs/reliability.md). A
directory that holds a training run or another model's files is refused even
with overwrite; a symlinked output is written through the link.
"""

import contextlib
import dataclasses
import errno
import fnmatch
import glob
import os
import secrets
import shutil
from typing import Iterator, List, Sequence, Tuple

from absl import logging

from official_spanbert.interop import hf_files
from official_spanbert.interop import sbo_map
from official_spanbert.utils import run_lock
from official_spanbert.utils import write_errors

ConversionError = hf_files.ConversionError
LOCK_SUFFIX = ".lock"
# Names used when the staging dir and lock must go inside the output.
_INSIDE_LOCK = ".conversion.lock"
_INSIDE_STAGING = ".tmp-conversion-"
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


@dataclasses.dataclass(frozen=True)
class Kind:
  """The files one kind of conversion writes.

  Attributes:
    name: for messages ("tf_to_hf").
    files: glob patterns of every file it writes (or leaves, as a
      checkpoint's `_temp` dir), replaced or removed by an overwrite.
    markers: files whose presence means an earlier conversion is there.
    proof: a file every conversion of the kind writes: markers without it are
      another program's (a training run's params.yaml), not a conversion's.
    foreign: glob patterns of files that mean the directory is not a
      conversion's, refused even with overwrite (a run's checkpoints, another
      model's tokenizer.json, which transformers would load beside ours).
    foreign_what: what such files are, for the message.
  """
  name: str
  files: Tuple[str, ...]
  markers: Tuple[str, ...]
  proof: str = ""
  foreign: Tuple[str, ...] = ()
  foreign_what: str = ""

  def owns(self, name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in self.files)

  def foreign_in(self, names: Sequence[str]) -> List[str]:
    return sorted(n for n in names
                  if any(fnmatch.fnmatchcase(n, p) for p in self.foreign))


_CKPT = hf_files.CHECKPOINT_NAME
# hf_to_tf, fairseq_to_tf, tf1_to_tf (converted_output.py).
IMPORT = Kind("import", (
    _CKPT + ".index", _CKPT + ".data-*", _CKPT + "_temp", "checkpoint",
    hf_files.PARAMS_FILE, hf_files.VOCAB_FILE, hf_files.CONVERSION_FILE),
              hf_files.HF_TO_TF_OUTPUTS, proof=hf_files.CONVERSION_FILE,
              foreign=("ckpt-*.index",), foreign_what="a training run")
# Files of a Hugging Face model that tf_to_hf does not write and transformers
# would load with (or instead of) the ones it writes.
HF_MODEL_FILES = (
    "tokenizer.json", "added_tokens.json", "tokenizer.model", "spiece.model",
    "sentencepiece.bpe.model", "vocab.json", "merges.txt",
    "generation_config.json", "pytorch_model*.bin", "pytorch_model.bin.*",
    "model.safetensors.index.json", "model-*.safetensors", "tf_model.h5",
    "flax_model.msgpack", "adapter_config.json", "adapter_model.*")
# tf_to_hf.
HF_EXPORT = Kind("tf_to_hf", (
    hf_files.HF_CONFIG_FILE, hf_files.HF_WEIGHTS_FILE, hf_files.VOCAB_FILE,
    hf_files.TOKENIZER_CONFIG_FILE, hf_files.SPECIAL_TOKENS_FILE,
    sbo_map.FILE), hf_files.TF_TO_HF_OUTPUTS, foreign=HF_MODEL_FILES,
                 foreign_what="another model's files, which transformers "
                 "would load with the converted ones")
# coref_tf1_to_tf (a run dir: CheckpointManager's ckpt-0 and params.yaml);
# a later checkpoint is a training run's.
COREF_RUN = Kind("coref_tf1_to_tf", (
    "ckpt-*.index", "ckpt-*.data-*", "ckpt-*_temp", "checkpoint",
    hf_files.PARAMS_FILE), ("ckpt-0.index", hf_files.PARAMS_FILE),
                 foreign=("ckpt-[1-9]*.index",), foreign_what="a training run")


@dataclasses.dataclass
class Output:
  """The output being written: `staging` is where to write the files."""
  path: str
  staging: str


def _not_writable(path: str, reason: str) -> ConversionError:
  return ConversionError(f"output {path} is not writable ({reason}); choose "
                         "a writable directory")


def _why_not_writable(path: str) -> str:
  try:
    read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
  except OSError:
    read_only = False
  return os.strerror(errno.EROFS if read_only else errno.EACCES)


def _out_of_space(path: str, where: str, reason: str, existed: bool
                  ) -> ConversionError:
  return ConversionError(
      f"cannot write the conversion to {path}: {reason}; free space in "
      f"{where} and rerun (" + ("the files there are as they were)"
                                if existed else "nothing was left behind)"))


def _make_parents(path: str) -> List[str]:
  """Creates the missing folders above `path`; returns them, deepest first."""
  created, p = [], os.path.dirname(path)
  while p and not os.path.exists(p):
    created.append(p)
    p = os.path.dirname(p)
  if created:
    os.makedirs(created[0])
  return created


def _remove_empty(dirs: Sequence[str]) -> None:
  for d in dirs:
    with contextlib.suppress(OSError):
      os.rmdir(d)


def _place(path: str) -> Tuple[str, str, str]:
  """(folder of the lock and staging dir, lock file, staging prefix): beside
  the output, or inside it when only the output is writable.

  Raises:
    ConversionError: neither can be written.
  """
  parent, name = os.path.split(path)
  if os.path.isdir(path) and not os.access(path, os.W_OK):
    raise _not_writable(path, _why_not_writable(path))
  if os.access(parent, os.W_OK):
    return parent, path + LOCK_SUFFIX, f".{name}.tmp-"
  if os.path.isdir(path):
    return path, os.path.join(path, _INSIDE_LOCK), _INSIDE_STAGING
  raise _not_writable(path, f"{parent}: {_why_not_writable(parent)}")


def _remove_stale(where: str, prefix: str, path: str) -> None:
  """Removes the staging dirs of interrupted conversions to `path`."""
  stale = glob.glob(os.path.join(glob.escape(where), glob.escape(prefix) + "*"))
  if not stale:
    return
  size = sum(os.path.getsize(os.path.join(d, f))
             for s in stale for d, _, files in os.walk(s) for f in files)
  for s in stale:
    shutil.rmtree(s, ignore_errors=True)
  logging.warning("Removed %d temporary folder(s) of an interrupted "
                  "conversion to %s (%.1f MB)", len(stale), path, size / 1e6)


def _check_contents(path: str, kind: Kind, overwrite: bool, name: str,
                    shown: str) -> Tuple[List[str], List[str]]:
  """(entries of the kind's files, other entries) of the output `path`
  (named `shown` in messages).

  Raises:
    ConversionError: not a directory; a training run or another model's
      files are there (_refuse_foreign, even with overwrite); or, without
      overwrite, an earlier conversion or other files are there.
  """
  if os.path.exists(path) and not os.path.isdir(path):
    raise ConversionError(f"output {shown} is not a directory")
  entries = [e for e in (os.listdir(path) if os.path.isdir(path) else [])
             if e != _INSIDE_LOCK and not e.startswith(_INSIDE_STAGING)]
  ours = sorted(e for e in entries if kind.owns(e))
  others = sorted(set(entries) - set(ours))
  _refuse_foreign(shown, kind, entries, ours)
  if overwrite:
    return ours, others
  earlier = [m for m in kind.markers if m in ours]
  if earlier:
    raise ConversionError(
        f"output {shown} already holds {earlier[0]} (an earlier conversion); "
        "choose an empty directory or pass --overwrite to replace it")
  if others:
    raise ConversionError(
        f"output {shown} holds {len(others)} file(s) that are not part of a "
        f"{name} conversion ({', '.join(others[:3])}"
        f"{', ...' if len(others) > 3 else ''}); choose an empty or new "
        "directory, or pass --overwrite to write the conversion among them")
  return ours, others


def _refuse_foreign(path: str, kind: Kind, entries: Sequence[str],
                    ours: Sequence[str]) -> None:
  """Refuses, even with overwrite, a directory that is not a conversion's:
  one with files of the kind's `foreign` patterns, or with its markers but
  not its proof file (a training run's params.yaml).

  Raises:
    ConversionError: naming those files.
  """
  found = kind.foreign_in(entries)
  if found:
    listed = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
    what = f"{kind.foreign_what} ({listed})"
  elif kind.proof and kind.proof not in ours and any(
      m in ours for m in kind.markers):
    marker = next(m for m in kind.markers if m in ours)
    what = (f"{marker} but no {kind.proof} (not an earlier conversion: a "
            "training run's or another program's file)")
  else:
    return
  raise ConversionError(
      f"output {path} holds {what}; a conversion does not replace it, even "
      "with --overwrite: choose a new or empty directory")


def _merge(staging: str, path: str, ours: Sequence[str]) -> None:
  """Renames the staged files into `path` one by one; removes files of an
  earlier conversion that this one did not write."""
  new = os.listdir(staging)
  for name in new:
    target = os.path.join(path, name)
    if os.path.isdir(target) and not os.path.islink(target):
      shutil.rmtree(target)
    os.replace(os.path.join(staging, name), target)
  for name in set(ours) - set(new):
    target = os.path.join(path, name)
    if os.path.isdir(target) and not os.path.islink(target):
      shutil.rmtree(target)
    else:
      os.remove(target)
  os.rmdir(staging)


def _move_into_place(staging: str, path: str, ours: Sequence[str],
                     others: Sequence[str]) -> None:
  """A new or empty output: one rename; an earlier conversion alone: swapped
  out whole; other files there (overwrite): the files one by one."""
  beside = os.path.dirname(staging) != path
  if beside and not others:
    aside = None
    try:
      if ours:
        aside = staging + ".old"
        os.rename(path, aside)
      os.rename(staging, path)  # also onto an empty directory
    except OSError:
      if aside and not os.path.exists(path):
        os.rename(aside, path)
        aside = None
    else:
      if aside:
        shutil.rmtree(aside, ignore_errors=True)
      return
    os.makedirs(path, exist_ok=True)  # the rename failed: merge into it
  _merge(staging, path, ours)


@contextlib.contextmanager
def converting(output_dir: str, kind: Kind, overwrite: bool = False,
               direction: str = "") -> Iterator[Output]:
  """Holds the output's lock and yields where to write (see the module
  docstring); moves the files into place when the block exits normally.
  `direction` names the conversion in messages (default: the kind's name).

  Raises:
    ConversionError: another conversion writes the output; it is not a
      writable directory; it holds files and overwrite is False; the disk is
      full (nothing is left behind).
  """
  # Through a symlink: the link stays, the directory it names is written.
  path = os.path.realpath(output_dir)
  existed = os.path.exists(path)
  try:
    created = _make_parents(path)
  except OSError as e:
    if e.errno in _NOT_WRITABLE:
      raise _not_writable(output_dir, e.strerror) from None
    raise
  staging = None
  try:
    where, lock, prefix = _place(path)
    try:
      record = run_lock.acquire_file(lock, "conversion", output_dir)
    except (run_lock.LockedError, run_lock.LockWriteError) as e:
      raise ConversionError(str(e)) from None
    try:
      _remove_stale(where, prefix, output_dir)
      ours, others = _check_contents(path, kind, overwrite,
                                     direction or kind.name,
                                     os.path.abspath(output_dir))
      staging = os.path.join(where, prefix + secrets.token_hex(4))
      try:
        os.mkdir(staging)  # the mode of any new folder (umask)
      except OSError as e:
        staging = None
        if e.errno in _NOT_WRITABLE:
          raise _not_writable(output_dir, e.strerror) from None
        raise
      yield Output(output_dir, staging)
      _move_into_place(staging, path, ours, others)
      staging = None
    finally:
      run_lock.release_file(lock, record)
  except BaseException as e:
    if staging:
      shutil.rmtree(staging, ignore_errors=True)
    if not existed:
      _remove_empty([path] + created)
    reason = (not isinstance(e, ConversionError) and
              write_errors.out_of_space(e))
    if reason:
      raise _out_of_space(output_dir, os.path.dirname(path), reason,
                          existed) from None
    raise
