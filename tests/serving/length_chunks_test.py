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

"""serving/length_chunks: length-ordered chunks give the unchunked outputs."""

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.serving import length_chunks


def _rows(lengths, width):
  rng = np.random.default_rng(len(lengths))
  ids = rng.integers(1, 50, size=(len(lengths), width)).astype(np.int32)
  mask = (np.arange(width)[None] < np.array(lengths)[:, None]).astype(np.int32)
  return {"input_word_ids": tf.constant(ids * mask),
          "input_mask": tf.constant(mask)}


def _fn(seen):
  """Per-position and per-row outputs that depend on the real positions
  only; records the widths it was called with."""
  def fn(inputs):
    seen.append(int(tf.shape(inputs["input_mask"])[1]))
    x = tf.cast(inputs["input_word_ids"] * inputs["input_mask"], tf.float32)
    return x * 2.0 + 1.0, tf.stack([tf.reduce_sum(x, 1),
                                    tf.reduce_max(x, 1)], 1)
  return fn


@pytest.mark.parametrize("chunk", [1, 2, 3, 100])
def test_chunks_in_length_order_give_the_direct_outputs(chunk):
  lengths = [5, 12, 1, 7, 12, 3, 9]
  inputs = _rows(lengths, 12)
  direct = _fn([])(inputs)
  seen = []
  pos, row = length_chunks.encode_by_length(_fn(seen), inputs, chunk,
                                            dims=(None, 2))
  mask = inputs["input_mask"].numpy().astype(bool)
  np.testing.assert_array_equal(pos.numpy()[mask], direct[0].numpy()[mask])
  # Padding: fn's value (1) inside a chunk's cut, 0 beyond it.
  assert set(pos.numpy()[~mask].tolist()) <= {0.0, 1.0}
  np.testing.assert_array_equal(row.numpy(), direct[1].numpy())
  # Each chunk is cut to its own longest row: sorted 1 3 5 7 9 12 12.
  ordered = sorted(lengths)
  expected = [max(ordered[i:i + chunk]) for i in range(0, len(lengths), chunk)]
  assert seen == expected


def test_an_empty_call_gives_empty_outputs_in_graph_mode():
  fn = tf.function(lambda inputs: length_chunks.encode_by_length(
      _fn([]), inputs, 4, dims=(None, 2)))
  pos, row = fn(_rows([], 6))
  assert pos.shape == [0, 6] and row.shape == [0, 2]
  pos, row = fn(_rows([2, 6, 4], 6))
  assert pos.shape == [3, 6] and row.shape == [3, 2]
