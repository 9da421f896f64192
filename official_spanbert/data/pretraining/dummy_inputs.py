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

"""Synthetic pretraining batches for `input_path: dummy` (tests, smoke runs).

As in Model Garden's tasks: an endless, deterministic stream of masked batches
with the features, dtypes and shapes of SpanBertPretrainDataLoader's, read from
no records and no vocab (token ids below DUMMY_VOCAB_SIZE).
"""

from typing import Dict, Optional

import tensorflow as tf

from official_spanbert.data.pretraining.masking import masking_config

DUMMY = "dummy"
# Token ids of the synthetic batches are below this.
DUMMY_VOCAB_SIZE = 100


def is_dummy(params) -> bool:
  """Whether a data config asks for synthetic batches."""
  return isinstance(params.input_path, str) and (
      params.input_path.strip() == DUMMY)


def batch(params, batch_size: int, index=0, pipeline_id: int = 0
          ) -> Dict[str, tf.Tensor]:
  """One synthetic masked batch of `batch_size` rows (see the module doc)."""
  seq, preds = params.seq_length, params.max_predictions_per_seq
  nsp = params.use_next_sentence_label
  if seq < 5:
    raise ValueError(f"input_path: {DUMMY} needs seq_length >= 5, got {seq}")
  # The span is positions 2..span + 1: its SBO boundaries 1 and span + 2
  # are ordinary tokens, as the masking asks of real ones.
  span = min(preds, seq - 4)
  seed = tf.stack([tf.constant(params.seed or 0, tf.int64),
                   tf.cast(index, tf.int64) * 1024 + pipeline_id])
  ids = tf.random.stateless_uniform([batch_size, seq], seed, minval=1,
                                    maxval=DUMMY_VOCAB_SIZE, dtype=tf.int32)
  cols = tf.range(seq)[tf.newaxis, :]
  type_ids = tf.cast(cols >= seq // 2, tf.int32) if nsp else 0 * cols
  slots = tf.range(preds)
  real = slots < span
  sbo = real & (slots < masking_config.sbo_targets(params))
  positions = tf.where(real, slots + 2, 0)

  def rows(x):
    return tf.tile(x[tf.newaxis, :], [batch_size, 1])

  features = {
      "input_word_ids": ids,
      "input_mask": tf.ones_like(ids),
      "input_type_ids": tf.tile(type_ids, [batch_size, 1]),
      "masked_lm_positions": rows(positions),
      "masked_lm_ids": tf.gather(ids, rows(positions), batch_dims=1) *
                       rows(tf.cast(real, tf.int32)),
      "masked_lm_weights": rows(tf.cast(real, tf.float32)),
      "sbo_left_positions": rows(tf.where(sbo, 1, 0)),
      "sbo_right_positions": rows(tf.where(sbo, span + 2, 0)),
      "sbo_relative_positions": rows(tf.where(sbo, slots, 0)),
      "sbo_weights": rows(tf.cast(sbo, tf.float32)),
  }
  if nsp:
    features["next_sentence_labels"] = tf.range(batch_size) % 2
  return features


def load(params, input_context: Optional[tf.distribute.InputContext] = None
         ) -> tf.data.Dataset:
  """Endless dataset of synthetic batches (the per-replica batch size)."""
  batch_size = (input_context.get_per_replica_batch_size(
      params.global_batch_size) if input_context
                else params.global_batch_size)
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  return tf.data.Dataset.range(2**62).map(
      lambda i: batch(params, batch_size, i, pipeline_id))
