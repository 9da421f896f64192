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

"""Reading a JSON input file with errors that name the file and line."""

import json
from typing import Any, Type

import tensorflow as tf


def read_json(path: str, error: Type[Exception], hint: str = "") -> Any:
  """Parses the JSON file at `path` (any tf.io.gfile path).

  Args:
    path: the file.
    error: the exception type to raise (e.g. the reader's DataError).
    hint: appended to the message of an undecodable file (what was expected).

  Returns:
    The parsed value.

  Raises:
    error: the file is missing, not UTF-8 or not JSON; the message names the
      file and line ("path:line: ...").
  """
  if not tf.io.gfile.exists(path):
    raise error(f"{path}: file does not exist")
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  try:
    return json.loads(raw.decode("utf-8"))
  except UnicodeDecodeError as e:
    line = raw[:e.start].count(b"\n") + 1
    raise error(f"{path}:{line}: not valid UTF-8{hint}") from None
  except json.JSONDecodeError as e:
    raise error(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column "
                f"{e.colno})") from None
