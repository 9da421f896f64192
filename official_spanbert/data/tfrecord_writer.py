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

"""The one TFRecord writer: files appear under their names only when complete.

AtomicTFRecordWriter writes each file as `<path>.incomplete` and renames it
when all are written (removing them on failure); `example_bytes` serializes
the same inputs to byte-identical files.
"""

from typing import Callable, Dict, Iterable, Optional, Sequence

import tensorflow as tf

from official_spanbert.utils import atomic_io

# (path, the OSError or tf.errors.OpError) -> the exception to raise instead.
ErrorMapper = Callable[[str, Exception], Exception]


class AtomicTFRecordWriter:
  """TFRecord files written under temporary names, renamed only on success.

  Use as a context manager (commit on a clean exit, abort on an exception)
  or call commit() / abort() yourself. Paths may be local or any tf.io.gfile
  file system.

  Args:
    paths: the files to write; write(i, record) appends to paths[i].
    error: maps a failure to write, close or rename a file to the exception
      to raise (e.g. a one-line error for a command-line tool); by default
      the original exception propagates. Files are removed either way.
  """

  def __init__(self, paths: Sequence[str], error: Optional[ErrorMapper] = None):
    self._paths = list(paths)
    self._tmp = [atomic_io.temp_path(p) for p in self._paths]
    self._error = error
    self._writers = []
    try:
      for tmp in self._tmp:
        self._writers.append(tf.io.TFRecordWriter(tmp))
    except BaseException as e:
      self.abort()
      self._raise(tmp, e)

  def _raise(self, path: str, error: BaseException):
    if self._error is not None and isinstance(
        error, (tf.errors.OpError, OSError)):
      raise self._error(path, error) from None
    raise error

  def write(self, index: int, record: bytes):
    """Appends one serialized record to paths[index]."""
    try:
      self._writers[index].write(record)
    except tf.errors.OpError as e:
      self._raise(self._tmp[index], e)

  def close_records(self) -> Dict[str, int]:
    """Closes the record files (if open); returns {path: bytes} of each,
    e.g. for a stats file that describes them (safe to call twice)."""
    sizes = {}
    for tmp, path, w in zip(self._tmp, self._paths, self._writers):
      try:
        w.close()
      except tf.errors.OpError as e:
        self._raise(tmp, e)
      sizes[path] = tf.io.gfile.stat(tmp).length
    return sizes

  def commit(self, texts: Optional[Dict[str, str]] = None):
    """Closes the record files, writes `texts` (path -> contents, e.g. a
    stats JSON) beside them, then renames every file into place.

    The records and their texts are published as one unit as far as a
    reader that checks them can tell: earlier files at the texts' paths are
    removed before the first record file is renamed, and the texts are
    renamed last, so a process killed in between leaves new records without
    texts, never beside the texts of earlier ones.
    """
    self.close_records()
    for path, text in (texts or {}).items():
      self._paths.append(path)
      self._tmp.append(atomic_io.temp_path(path))  # abort() removes it too
      try:
        with tf.io.gfile.GFile(self._tmp[-1], "w") as f:
          f.write(text)
      except (tf.errors.OpError, OSError) as e:
        self._raise(self._tmp[-1], e)
    for path in texts or {}:
      try:
        atomic_io.remove_file(path)
      except (tf.errors.OpError, OSError) as e:
        self._raise(path, e)
    for tmp, path in zip(self._tmp, self._paths):
      try:
        atomic_io.move_into_place(tmp, path)
      except (tf.errors.OpError, OSError) as e:
        self._raise(path, e)

  def abort(self):
    """Closes and removes every temporary file (safe to call twice)."""
    for w in self._writers:
      try:
        w.close()
      except tf.errors.OpError:
        pass  # e.g. disk full on flush; the file is removed below
    for tmp in self._tmp:
      atomic_io.remove_file(tmp)

  def __enter__(self) -> "AtomicTFRecordWriter":
    return self

  def __exit__(self, exc_type, exc, tb):
    if exc_type is not None:
      self.abort()
      return
    try:
      self.commit()
    except BaseException:
      self.abort()
      raise


def int64_feature(values) -> tf.train.Feature:
  """An int64 list feature."""
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def example_bytes(features: Dict[str, tf.train.Feature]) -> bytes:
  """A serialized tf.train.Example, its feature map in key order, so the
  same records are the same bytes in every process (protobuf's default map
  order differs between processes)."""
  return tf.train.Example(features=tf.train.Features(
      feature=features)).SerializeToString(deterministic=True)


def write_records(path: str, records: Iterable[bytes],
                  error: Optional[ErrorMapper] = None) -> int:
  """Writes one TFRecord file atomically; returns the number of records."""
  count = 0
  with AtomicTFRecordWriter([path], error) as writer:
    for record in records:
      writer.write(0, record)
      count += 1
  return count
