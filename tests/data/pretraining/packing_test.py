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

"""Tests of greedy document packing."""

import numpy as np
import pytest

from official_spanbert.data.pretraining import packing


def _check_cover(blocks, total):
  assert blocks[0][0] == 0 and blocks[-1][1] == total
  for (s0, e0), (s1, _) in zip(blocks, blocks[1:]):
    assert e0 == s1


def test_lines_are_packed_greedily_without_splitting():
  lengths = np.array([3, 4, 2, 5, 1])
  blocks, split = packing.pack_document(lengths, np.ones(15, np.int8), 8)
  assert blocks == [(0, 7), (7, 15)]  # 3+4 (+2 > 8) | 2+5+1
  assert split == 0


def test_long_line_is_split_at_word_starts():
  # One line of 12 tokens; words start at 0, 3, 5, 9.
  starts = np.zeros(12, np.int8)
  starts[[0, 3, 5, 9]] = 1
  blocks, split = packing.pack_document(np.array([12]), starts, 6)
  assert split == 1
  assert blocks == [(0, 5), (5, 9), (9, 12)]
  for s, _ in blocks:
    assert starts[s] == 1


def test_tail_of_split_line_packs_with_next_line():
  starts = np.ones(10, np.int8)
  blocks, _ = packing.pack_document(np.array([7, 2, 1]), starts, 5)
  assert blocks == [(0, 5), (5, 10)]


def test_word_longer_than_block_is_cut():
  starts = np.zeros(9, np.int8)
  starts[0] = 1
  blocks, split = packing.pack_document(np.array([9]), starts, 4)
  assert blocks == [(0, 4), (4, 8), (8, 9)] and split == 1


def test_empty_lines_are_ignored_and_coverage_is_exact():
  rng = np.random.default_rng(0)
  lengths = rng.integers(0, 40, size=200)
  total = int(lengths.sum())
  starts = (rng.random(total) < 0.7).astype(np.int8)
  blocks, _ = packing.pack_document(lengths, starts, 30)
  _check_cover(blocks, total)
  assert all(0 < e - s <= 30 for s, e in blocks)


def test_bad_capacity():
  with pytest.raises(ValueError, match="positive"):
    packing.pack_document(np.array([1]), np.ones(1), 0)
