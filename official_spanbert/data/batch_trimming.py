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

"""Batches cut to their longest row: no encoder compute on padding columns.

A batch padded to `seq_length` is cut to the columns some row uses (its
`input_mask`), or to the smallest of a few fixed widths that holds them, so
that a train step traced per shape sees a bounded number of shapes. The
encoder's outputs at the kept positions are the padded batch's (padding is
masked either way). Used by the fine-tuning classification loader
(`trim_batch_padding`) and the pretraining loader (`length_buckets`).

Example:
  batch = {"input_mask": tf.constant([[1, 1, 0, 0], [1, 0, 0, 0]]),
           "input_word_ids": tf.constant([[5, 6, 0, 0], [7, 0, 0, 0]])}
  trim_batch(batch)["input_word_ids"]  # [[5, 6], [7, 0]]
  trim_batch(batch, widths=[3, 4])["input_word_ids"].shape  # (2, 3)
"""

from typing import Dict, Optional, Sequence

import tensorflow as tf

SEQUENCE_KEYS = ("input_word_ids", "input_mask", "input_type_ids")


def bucket_widths(seq_length: int, buckets: int, multiple: int = 8
                  ) -> Sequence[int]:
  """`buckets` increasing widths up to seq_length, evenly spaced, each
  rounded up to a multiple of `multiple` (fewer if rounding merges some).

  >>> bucket_widths(512, 4)
  [128, 256, 384, 512]
  >>> bucket_widths(64, 3)
  [24, 48, 64]
  """
  widths = []
  for i in range(1, buckets + 1):
    width = min(-(-seq_length * i // buckets // multiple) * multiple,
                seq_length) if i < buckets else seq_length
    if width > (widths[-1] if widths else 0):
      widths.append(width)
  return widths


def width_for(length: tf.Tensor, widths: Optional[Sequence[int]]
              ) -> tf.Tensor:
  """The smallest of `widths` (increasing) >= length, as an int32 scalar;
  max(length, 1) without widths or beyond the largest (a real token is never
  cut)."""
  length = tf.maximum(tf.cast(length, tf.int32), 1)
  if not widths:
    return length
  table = tf.constant(list(widths), tf.int32)
  index = tf.searchsorted(table, tf.reshape(length, [1]), side="left")[0]
  return tf.where(index < len(widths),
                  tf.gather(table, tf.minimum(index, len(widths) - 1)),
                  length)


def trim_batch(batch: Dict[str, tf.Tensor],
               keys: Sequence[str] = SEQUENCE_KEYS,
               widths: Optional[Sequence[int]] = None
               ) -> Dict[str, tf.Tensor]:
  """The batch with its `keys` tensors ([batch, seq, ...]) cut to its
  longest row (input_mask), or to the smallest of `widths` that holds it.
  Other tensors are returned as they are."""
  longest = tf.reduce_max(tf.reduce_sum(tf.cast(batch["input_mask"],
                                                tf.int32), axis=1))
  width = width_for(longest, widths)
  return {k: v[:, :width] if k in keys else v for k, v in batch.items()}
