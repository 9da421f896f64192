"""Reading a JSON input file with errors that name the file and line."""

import json
from typing import Any, Type

import official_spanbert  # noqa: F401
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
