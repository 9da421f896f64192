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

"""The vocab of an import against the embedding rows it comes with.

A vocab longer than the table is refused; a shorter one only converts when
allowed, with a warning naming the ids without a token.
"""

from typing import List

from official_spanbert.data import tokenization
from official_spanbert.interop import hf_files

ConversionError = hf_files.ConversionError
FLAG = "--allow_vocab_mismatch"


def check(vocab: tokenization.Vocab, rows: int, source: str,
          allow: bool = False) -> List[str]:
  """Returns warnings (empty when the sizes agree).

  Args:
    vocab: the vocab that will be written beside the checkpoint.
    rows: rows of the source's word embeddings.
    source: the file the rows come from (named in messages).
    allow: convert with a shorter vocab (the ids past it get no token).

  Raises:
    ConversionError: the vocab is longer than the embeddings, or shorter and
      not allowed.
  """
  if vocab.size > rows:
    raise ConversionError(
        f"vocab {vocab.path} has {vocab.size} tokens but {source} has "
        f"{rows} word embeddings: ids {rows}..{vocab.size - 1} would index "
        "past the table; use the vocab the checkpoint was trained with")
  if vocab.size < rows:
    missing = (f"id {rows - 1}" if rows - vocab.size == 1 else
               f"ids {vocab.size}..{rows - 1}")
    message = (f"vocab {vocab.path} has {vocab.size} tokens but {source} has "
               f"{rows} word embeddings: {missing} "
               f"({rows - vocab.size}) have no token")
    if not allow:
      raise ConversionError(f"{message}; use the vocab the checkpoint was "
                            f"trained with, or pass {FLAG} to convert anyway")
    return [message]
  return []
