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

"""Greedy packing of a tokenized document into blocks.

Blocks hold consecutive lines of one document; a line longer than a block is
split at word starts.
"""

from typing import List, Tuple

import numpy as np


def split_long_line(start: int, end: int, word_starts: np.ndarray,
                    max_tokens: int) -> List[Tuple[int, int]]:
  """Splits [start, end) into pieces of at most max_tokens at word starts.

  Args:
    start: first token of the line (document coordinates).
    end: one past its last token.
    word_starts: 0/1 flags for the whole document.
    max_tokens: largest piece.

  Returns:
    Consecutive (start, end) pieces covering the line. A single word longer
    than max_tokens (impossible with BERT's 100-character word limit) is cut
    inside the word.
  """
  starts = np.flatnonzero(word_starts[start:end]) + start
  pieces = []
  cur = start
  while end - cur > max_tokens:
    limit = cur + max_tokens
    # The last word start in (cur, limit] is where the next piece begins.
    i = np.searchsorted(starts, limit, side="right") - 1
    cut = int(starts[i]) if i >= 0 and starts[i] > cur else limit
    pieces.append((cur, cut))
    cur = cut
  pieces.append((cur, end))
  return pieces


def pack_document(line_lengths: np.ndarray, word_starts: np.ndarray,
                  max_tokens: int) -> Tuple[List[Tuple[int, int]], int]:
  """Packs the lines of one document greedily into blocks.

  Args:
    line_lengths: wordpieces per line, in order.
    word_starts: 0/1 flags of the document's tokens (all lines concatenated).
    max_tokens: block capacity (max_seq_length - 2 for [CLS] ... [SEP]).

  Returns:
    (blocks, split_lines): blocks as (start, end) token offsets into the
    document, covering every token exactly once, in order; and the number of
    lines that had to be split.
  """
  if max_tokens < 1:
    raise ValueError(f"max_tokens must be positive, got {max_tokens}")
  bounds = np.concatenate([[0], np.cumsum(line_lengths)]).astype(np.int64)
  units = []
  split_lines = 0
  for s, e in zip(bounds[:-1], bounds[1:]):
    if e == s:
      continue  # a line with no wordpieces (e.g. only control characters)
    if e - s > max_tokens:
      split_lines += 1
      units.extend(split_long_line(int(s), int(e), word_starts, max_tokens))
    else:
      units.append((int(s), int(e)))
  blocks = []
  block_start = block_end = None
  for s, e in units:
    if block_start is not None and e - block_start > max_tokens:
      blocks.append((block_start, block_end))
      block_start = None
    if block_start is None:
      block_start = s
    block_end = e
  if block_start is not None:
    blocks.append((block_start, block_end))
  return blocks, split_lines
