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

"""Batches cut to their longest row, or to the smallest bucket width."""

import doctest

import numpy as np
import tensorflow as tf

from official_spanbert.data import batch_trimming


def test_bucket_widths_are_even_multiples_of_8_up_to_seq_length():
  assert batch_trimming.bucket_widths(512, 8) == [64 * i for i in range(1, 9)]
  assert batch_trimming.bucket_widths(128, 3) == [48, 88, 128]
  assert batch_trimming.bucket_widths(64, 1) == [64]
  assert batch_trimming.bucket_widths(16, 8) == [8, 16]  # rounding merges
  failed, _ = doctest.testmod(batch_trimming)
  assert not failed


def test_trim_batch_cuts_to_the_longest_row_or_its_bucket():
  mask = tf.constant([[1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]])
  batch = {"input_mask": mask, "input_word_ids": mask * 7,
           "input_type_ids": tf.zeros_like(mask),
           "masked_lm_positions": tf.constant([[1, 2], [1, 0]])}
  cut = batch_trimming.trim_batch(batch)
  assert {k: v.shape[1] for k, v in cut.items()} == {
      "input_mask": 3, "input_word_ids": 3, "input_type_ids": 3,
      "masked_lm_positions": 2}
  np.testing.assert_array_equal(cut["input_word_ids"], mask[:, :3] * 7)
  for widths, width in (([2, 4, 8], 4), ([3, 8], 3), ([2], 3)):
    cut = batch_trimming.trim_batch(batch, widths=widths)
    assert cut["input_word_ids"].shape == (2, width)
  # Never a real token cut (beyond the widths: the longest row); an
  # all-padding batch keeps one column.
  empty = {"input_mask": tf.zeros([2, 5], tf.int32)}
  assert batch_trimming.trim_batch(empty)["input_mask"].shape == (2, 1)
