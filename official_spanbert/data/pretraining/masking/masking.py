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

"""Graph-mode masking of pretraining batches: SpanBERT spans and baselines.

`mask_batch` masks a batch of framed sequences inside tf.data with the `span`,
`token`, `whole_word`, `named_entity` or `noun_phrase` scheme, applies
80/10/10 and computes the MLM and SBO targets; masks are reproducible from
(seed, batch index). The schemes: docs/pretraining.md, "Masking".
"""

import dataclasses
from typing import Dict, Optional, Sequence

import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining.masking import span_sampler
from official_spanbert.data.pretraining.masking.masking_config import MaskingConfigError
from official_spanbert.data.pretraining.masking.masking_config import MaskingParams
from official_spanbert.data.pretraining.masking.masking_config import TAGGED_SCHEMES

# Replacement decisions.
MASK, RANDOM, KEEP = 0, 1, 2


# do_not_convert: TF ops only, so autograph (~1 s of CPU per process for
# mask_batch) has nothing to convert.
@tf.autograph.experimental.do_not_convert
def rows_to_dense(values: tf.Tensor, rows: tf.Tensor, nrows, width: int
                  ) -> tf.Tensor:
  """Lays row-sorted values out as [nrows, width], zero-padded/truncated."""
  return tf.RaggedTensor.from_value_rowids(values, rows, nrows=nrows).to_tensor(
      default_value=tf.zeros([], values.dtype), shape=[None, width])


@tf.autograph.experimental.do_not_convert
def masked_runs(masked: tf.Tensor):
  """Locates each masked token's maximal run of masked tokens.

  Args:
    masked: bool [batch, length].

  Returns:
    (where, first, last, run_start): `where` is [num_masked, 2] (row,
    position) in row-major order; `first`/`last` are the first and last
    positions of each masked token's run; run_start is [batch, length], True
    where a run begins.
  """
  length = tf.shape(masked)[1]
  prev = tf.pad(masked[:, :-1], [[0, 0], [1, 0]])
  run_start = masked & tf.logical_not(prev)
  where = tf.cast(tf.where(masked), tf.int32)
  rows, cols = where[:, 0], where[:, 1]
  run_id = tf.gather(tf.cumsum(tf.reshape(tf.cast(run_start, tf.int32), [-1])),
                     rows * length + cols) - 1
  num_runs = tf.reduce_sum(tf.cast(run_start, tf.int32))
  first = tf.gather(tf.math.unsorted_segment_min(cols, run_id, num_runs),
                    run_id)
  last = tf.gather(tf.math.unsorted_segment_max(cols, run_id, num_runs),
                   run_id)
  return where, first, last, run_start


def _draw_random_tokens(shape, seed, random_ids, random_weights=None):
  """Random replacement ids: uniform, or by weight (inverse CDF)."""
  table = tf.constant(np.asarray(random_ids, np.int32))
  if random_weights is None:
    index = tf.random.stateless_uniform(shape, seed, minval=0,
                                        maxval=len(random_ids), dtype=tf.int32)
  else:
    weights = np.asarray(random_weights, np.float64)
    if weights.shape != (len(random_ids),) or np.any(weights < 0) or (
        weights.sum() <= 0):
      raise MaskingConfigError(
          "random token weights must be one non-negative weight per random "
          f"id ({len(random_ids)}) with a positive sum")
    cdf = np.cumsum(weights) / weights.sum()
    u = tf.random.stateless_uniform(shape, seed, dtype=tf.float64)
    index = tf.minimum(tf.searchsorted(tf.constant(cdf), tf.reshape(u, [-1]),
                                       side="right", out_type=tf.int32),
                       len(random_ids) - 1)
    index = tf.reshape(index, shape)
  return tf.gather(table, index)


def _select(maskable, word_starts, word_idx, seed, params: MaskingParams,
            tagged_spans=None):
  """The masked positions of one budget over `maskable` (+ span histogram)."""
  n = tf.reduce_sum(tf.cast(maskable, tf.int32), axis=1)
  budget = span_sampler.budget(n, params.masking_rate)
  scheme = params.masking_scheme
  if scheme == "token":
    return span_sampler.token_mask(maskable, budget, seed), None, budget
  if scheme == "whole_word":
    params = dataclasses.replace(params, span_lower=1, span_upper=1)
  elif scheme not in ("span",) + TAGGED_SCHEMES:
    raise MaskingConfigError(f"unknown masking scheme {scheme!r}")
  masked, hist = span_sampler.span_mask(maskable, word_starts, word_idx, n,
                                        budget, params, seed, tagged_spans)
  return masked, (None if scheme == "whole_word" else hist), budget


@tf.autograph.experimental.do_not_convert
def mask_batch(input_word_ids: tf.Tensor, maskable: tf.Tensor,
               word_starts: tf.Tensor, seed: tf.Tensor, params: MaskingParams,
               random_ids: Sequence[int],
               diagnostics: bool = False,
               segment_ids: Optional[tf.Tensor] = None,
               random_weights: Optional[Sequence[float]] = None,
               tagged_spans: Optional[tf.Tensor] = None
               ) -> Dict[str, tf.Tensor]:
  """Masks a batch of framed sequences.

  Args:
    input_word_ids: int32 [batch, seq_length], [CLS] ... [SEP] and padding.
    maskable: bool [batch, seq_length], True on real tokens of the block(s)
      (never on [CLS], [SEP] or padding).
    word_starts: bool [batch, seq_length], True where a word starts; must be
      True on every non-maskable position too.
    seed: int32/int64 [2] stateless seed for this batch.
    params: a validated MaskingParams.
    random_ids: ids a random replacement draws from.
    diagnostics: also return `span_length_histogram` ([batch, span_upper + 1],
      drawn lengths of accepted geometric spans, before merging and
      truncation), `unit_decisions` ([batch, 3], replacement units that
      became [MASK], random, kept) and `num_units`.
    segment_ids: int [batch, seq_length], 0 for segment A and 1 for B of
      two-segment sequences: each segment gets its own budget. None: one
      budget over all maskable tokens.
    random_weights: relative frequency of each of random_ids (the reference
      draws replacements from the corpus unigram distribution); None:
      uniform.
    tagged_spans: int [batch, K, 2] (start, end) positions (end exclusive) of
      the tagged spans of each sequence, for TAGGED_SCHEMES (required there);
      the valid ones (end > start) come first, the rest is padding. Spans
      start at word starts and lie inside one segment.

  Returns:
    input_word_ids (masked), masked_lm_positions, masked_lm_ids,
    masked_lm_weights, sbo_left_positions, sbo_right_positions,
    sbo_relative_positions, sbo_weights; the masked_lm_* and sbo_* tensors are
    [batch, max_predictions_per_seq] and aligned with each other.

  Example:
    params = MaskingParams(seq_length=8, max_predictions_per_seq=2, mask_id=4,
                           use_xla_masking=False).validate(max_maskable=6)
    ids = tf.constant([[2, 10, 11, 12, 13, 14, 3, 0]])   # [CLS] .. [SEP] pad
    maskable = (ids > 4)
    out = mask_batch(ids, maskable, tf.ones_like(maskable), tf.constant([1, 2]),
                     params, random_ids=range(5, 30))
  """
  ids = tf.cast(input_word_ids, tf.int32)
  maskable = tf.cast(maskable, tf.bool)
  word_starts = tf.cast(word_starts, tf.bool) | tf.logical_not(maskable)
  seed = tf.cast(seed, tf.int64)
  batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
  word_idx = tf.cumsum(tf.cast(word_starts, tf.int32), axis=1) - 1

  scheme = params.masking_scheme
  if scheme in TAGGED_SCHEMES:
    tagged_spans = _checked_tagged_spans(scheme, tagged_spans, segment_ids)
  masked, hist, budget = _select_by_segment(
      maskable, word_starts, word_idx, seed, params, segment_ids, tagged_spans)

  where, run_first, run_last, run_start = masked_runs(masked)
  rows, cols = where[:, 0], where[:, 1]
  unit_id, num_units = _replacement_units(scheme, masked, word_starts,
                                          run_start, rows * length + cols)
  masked_ids, original, decision = _replace(
      ids, where, unit_id, num_units, seed, params, random_ids, random_weights)
  left, right_c, ok = _sbo_boundaries(maskable, rows, cols, run_first,
                                      run_last, length, params)

  out = _outputs(masked_ids, original, rows, cols, left, right_c, ok,
                 run_first, batch, params.max_predictions_per_seq)
  if diagnostics:
    out.update(_diagnostics(hist, rows, unit_id, num_units, decision, batch,
                            budget))
  return out


def _outputs(masked_ids, original, rows, cols, left, right_c, ok, run_first,
             batch, p):
  """The model's inputs and targets, [batch, p] per masked_lm_/sbo_ key."""

  def dense(values, dtype):
    return rows_to_dense(tf.cast(values, dtype), rows, batch, p)

  return {
      "input_word_ids": masked_ids,
      "masked_lm_positions": dense(cols, tf.int32),
      "masked_lm_ids": dense(original, tf.int32),
      "masked_lm_weights": dense(tf.ones_like(cols), tf.float32),
      "sbo_left_positions": dense(left * ok, tf.int32),
      "sbo_right_positions": dense(right_c * ok, tf.int32),
      "sbo_relative_positions": dense((cols - run_first) * ok, tf.int32),
      "sbo_weights": dense(ok, tf.float32),
  }


def _diagnostics(hist, rows, unit_id, num_units, decision, batch, budget):
  """mask_batch's diagnostics=True outputs."""
  out = {}
  if hist is not None:
    out["span_length_histogram"] = hist
  unit_rows = tf.gather(rows, tf.math.unsorted_segment_min(
      tf.range(tf.shape(rows)[0]), unit_id, num_units))
  out["unit_decisions"] = tf.math.unsorted_segment_sum(
      tf.one_hot(decision, 3, dtype=tf.int32), unit_rows, batch)
  out["num_units"] = num_units
  out["budget"] = budget
  return out


def _checked_tagged_spans(scheme, tagged_spans, segment_ids):
  """tagged_spans as int32; raises where a tagged scheme cannot run."""
  if tagged_spans is None:
    raise MaskingConfigError(
        f"masking scheme {scheme!r} needs the tagged spans of the blocks "
        "(tagged_spans)")
  if segment_ids is not None:
    raise MaskingConfigError(
        f"masking scheme {scheme!r} masks single-segment blocks, not "
        "two-segment (NSP) sequences")
  return tf.cast(tagged_spans, tf.int32)


def _select_by_segment(maskable, word_starts, word_idx, seed, params,
                       segment_ids, tagged_spans):
  """_select over all maskable tokens, or per segment with its own budget."""
  if segment_ids is None:
    return _select(maskable, word_starts, word_idx, seed, params,
                   tagged_spans)
  in_b = tf.cast(segment_ids, tf.int32) > 0
  masked_a, hist, budget_a = _select(maskable & tf.logical_not(in_b),
                                     word_starts, word_idx, seed, params)
  masked_b, hist_b, budget_b = _select(maskable & in_b, word_starts,
                                       word_idx, span_sampler.fold(seed, 7),
                                       params)
  masked, budget = masked_a | masked_b, budget_a + budget_b
  if hist is not None:
    hist += hist_b
  return masked, hist, budget


def _replacement_units(scheme, masked, word_starts, run_start, flat):
  """The unit (span, word or token) of each masked token, and their count."""
  if scheme == "span" or scheme in TAGGED_SCHEMES:
    unit_start = run_start
  elif scheme == "token":
    unit_start = masked
  else:
    unit_start = masked & word_starts
  unit_id = tf.gather(tf.cumsum(tf.reshape(tf.cast(unit_start, tf.int32),
                                           [-1])), flat) - 1
  num_units = tf.reduce_sum(tf.cast(unit_start, tf.int32))
  return unit_id, num_units


def _replace(ids, where, unit_id, num_units, seed, params, random_ids,
             random_weights):
  """Masked ids, original ids and per-unit decisions (MASK, RANDOM, KEEP)."""
  # Replacement: one decision per unit; random tokens drawn per token.
  u_unit = tf.random.stateless_uniform([num_units], span_sampler.fold(seed, 5))
  decision = tf.where(
      u_unit < params.mask_token_prob, MASK,
      tf.where(u_unit < params.mask_token_prob + params.random_token_prob,
               RANDOM, KEEP))
  token_decision = tf.gather(decision, unit_id)
  random_tok = _draw_random_tokens(tf.shape(where[:, 0]),
                                   span_sampler.fold(seed, 6),
                                   random_ids, random_weights)
  original = tf.gather_nd(ids, where)
  replaced = tf.where(token_decision == MASK, params.mask_id,
                      tf.where(token_decision == RANDOM, random_tok, original))
  return tf.tensor_scatter_nd_update(ids, where, replaced), original, decision


def _sbo_boundaries(maskable, rows, cols, run_first, run_last, length, params):
  """Left, clipped right boundary and 0/1 validity of each masked token."""
  # SBO: boundaries of the maximal run each masked token belongs to.
  s, e = run_first, run_last
  left, right = s - 1, e + 1
  right_ok = right < length
  right_c = tf.minimum(right, length - 1)
  sbo_ok = (tf.gather_nd(maskable, tf.stack([rows, tf.maximum(left, 0)], 1)) &
            (left >= 0) & right_ok &
            tf.gather_nd(maskable, tf.stack([rows, right_c], 1)) &
            (cols - s < params.max_sbo_targets))
  return left, right_c, tf.cast(sbo_ok, tf.int32)
