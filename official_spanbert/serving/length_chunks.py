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

"""Runs an encoder over a call's rows in length order, each chunk unpadded.

A call's rows (windows, sentences) padded to its longest row pay for every
padding position; on CPU the encoder's cost per position barely falls with
the batch, so padding is lost time. The rows are sorted by length, cut into
chunks of at most `chunk` rows, each chunk cut to its own longest row; the
outputs come back in the rows' order, per-position outputs padded to the
call's width.

Example:
  starts, ends = length_chunks.encode_by_length(logits_fn, inputs, chunk=4)
"""

from typing import Callable, Dict, Optional, Sequence, Tuple

import tensorflow as tf

Inputs = Dict[str, tf.Tensor]


def encode_by_length(fn: Callable[[Inputs], Tuple[tf.Tensor, ...]],
                     inputs: Inputs, chunk: int,
                     dims: Sequence[Optional[int]] = (None, None)
                     ) -> Tuple[tf.Tensor, ...]:
  """`fn(inputs)` computed chunk by chunk in length order.

  Args:
    fn: inputs ([rows, width] each, with "input_mask") -> float32 outputs,
      one per entry of `dims`.
    inputs: the call's rows, right-padded; "input_mask" marks real positions.
    chunk: rows the encoder takes at once (memory is bounded by it).
    dims: per output, None for one value a position ([rows, width]) or its
      size d for one vector a row ([rows, d]).

  Returns:
    fn's outputs for all rows, in the rows' order. A row's padding positions
    hold fn's output inside its chunk's cut and 0 beyond it: mask them.
  """
  mask = inputs["input_mask"]
  rows, width = tf.shape(mask)[0], tf.shape(mask)[1]
  lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
  order = tf.argsort(lengths, stable=True)
  ordered = {k: tf.gather(v, order) for k, v in inputs.items()}
  ordered_lengths = tf.gather(lengths, order)
  chunks = (rows + chunk - 1) // chunk

  def body(i, arrays):
    lo = i * chunk
    hi = tf.minimum(lo + chunk, rows)
    cut = tf.maximum(ordered_lengths[hi - 1], 1)  # ascending: the longest
    outputs = fn({k: v[lo:hi, :cut] for k, v in ordered.items()})
    outputs = [x if d is not None else tf.pad(x, [[0, 0], [0, width - cut]])
               for x, d in zip(outputs, dims)]
    return i + 1, [a.write(i, x) for a, x in zip(arrays, outputs)]

  def loop():
    arrays = [tf.TensorArray(tf.float32, size=chunks, infer_shape=False,
                             element_shape=tf.TensorShape([None, d]))
              for d in dims]
    _, arrays = tf.while_loop(lambda i, _: i < chunks, body, (0, arrays),
                              parallel_iterations=1)
    inverse = tf.math.invert_permutation(order)
    return tuple(tf.gather(a.concat(), inverse) for a in arrays)

  def empty():
    return tuple(tf.zeros([0, d or width]) for d in dims)

  return tf.cond(rows > 0, loop, empty)
