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

"""The files an `input_path` names: a file, a glob, or a LitBank split list.

Example:
  files = document_files("litbank/splits/0/train.txt", "tsv", ".tsv")
"""

import os
from typing import List, Type

import tensorflow as tf

LIST_SUFFIX = ".txt"


def document_files(path: str, folder: str, suffix: str,
                   error: Type[Exception] = ValueError) -> List[str]:
  """The files named by `path` (a split list in order, a glob sorted).

  Raises:
    error: the list cannot be read, or the glob matches no file.
  """
  if path.endswith(LIST_SUFFIX):
    root = os.path.join(os.path.dirname(path), os.pardir, os.pardir, folder)
    try:
      with open(path, encoding="utf-8") as f:
        names = [line.strip() for line in f if line.strip()]
    except (OSError, UnicodeDecodeError) as e:
      raise error(f"{path}: cannot read the document list ({e})") from None
    return [n if n.endswith(suffix) and os.path.exists(n)
            else os.path.normpath(os.path.join(root, n + suffix))
            for n in names]
  files = sorted(tf.io.gfile.glob(path))
  if not files:
    raise error(f"{path}: matches no file")
  return files
