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

"""Write to a temporary name, then rename: the package's one implementation.

Files are written as `<path>.incomplete` and renamed when complete; export
directories are renamed into place without overwriting. Local paths use os,
so this module does not import TensorFlow; gs:// and the like use tf.io.gfile.
"""

import contextlib
import errno
import os
import shutil
from typing import Iterator

INCOMPLETE = ".incomplete"


def temp_path(path: str) -> str:
  """Where `path` is written until it is complete."""
  return path + INCOMPLETE


def _gfile(path: str):
  """tf.io.gfile for a path with a scheme, else None (a local path)."""
  if "://" not in path:
    return None
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.io.gfile


def move_into_place(tmp: str, path: str, *, overwrite: bool = True) -> None:
  """Renames `tmp` (a file or a directory) to `path`.

  Raises:
    FileExistsError (tf.errors.AlreadyExistsError for a path with a
      scheme): `overwrite` is False and `path` exists.
  """
  gfile = _gfile(path) or _gfile(tmp)
  if gfile is not None:
    gfile.rename(tmp, path, overwrite=overwrite)
    return
  if not overwrite and os.path.exists(path):
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
  os.replace(tmp, path)


def remove_file(path: str) -> None:
  """Removes the file `path` if there is one (a directory is left alone)."""
  gfile = _gfile(path)
  if gfile is not None:
    if gfile.exists(path) and not gfile.isdir(path):
      gfile.remove(path)
  elif os.path.exists(path) and not os.path.isdir(path):
    os.remove(path)


def remove_tree(path: str) -> None:
  """Removes the directory `path` and everything in it, if it exists."""
  gfile = _gfile(path)
  if gfile is not None:
    if gfile.exists(path):
      gfile.rmtree(path)
  elif os.path.isdir(path):
    shutil.rmtree(path)
  elif os.path.exists(path):
    os.remove(path)


@contextlib.contextmanager
def writing(path: str) -> Iterator[str]:
  """Yields temp_path(path) to write; renames it onto `path` (replacing any
  file there) when the block exits normally, removes it when the block
  raises (also KeyboardInterrupt / SystemExit)."""
  tmp = temp_path(path)
  try:
    yield tmp
    move_into_place(tmp, path)
  except BaseException:
    remove_file(tmp)
    raise


@contextlib.contextmanager
def removed_on_error(path: str) -> Iterator[str]:
  """Yields `path` (a temporary directory or file); removes it if the block
  raises, e.g. an export that failed before it was moved into place."""
  try:
    yield path
  except BaseException:
    remove_tree(path)
    raise
