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

"""Which tokens to mask: the SpanBERT span sampler and the token baseline.

`span_mask` runs the span schemes' sampling loop for a whole batch at once
(XLA-compiled unless use_xla_masking is False); `token_mask` is BERT's.
Randomness is stateless, keyed by the seed tensor.
"""

import functools

import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining.masking import masking_config
from official_spanbert.data.pretraining.masking.masking_config import MaskingParams


def fold(seed: tf.Tensor, salt: int) -> tf.Tensor:
  return tf.random.experimental.stateless_fold_in(seed, salt)


def budget(n: tf.Tensor, rate: float) -> tf.Tensor:
  """masking_config.masked_count of an int tensor, as int32."""
  return tf.cast(masking_config.masked_count(tf.cast(n, tf.float64), rate,
                                             tf.math.ceil), tf.int32)


def _positions_table(flags, index, batch, length):
  """[batch, length + 1] table: entry k is the position where `index` == k.

  `index` numbers the True positions of `flags` 0, 1, ...; entries past the
  last one hold `length`. Built with a segment minimum over static shapes (no
  tf.where), so it compiles with XLA.
  """
  col = tf.where(flags, index, length)  # unflagged positions go to `length`
  rows = tf.range(batch)[:, tf.newaxis]
  pos = tf.broadcast_to(tf.range(length)[tf.newaxis, :], [batch, length])
  table = tf.math.unsorted_segment_min(pos, rows * (length + 1) + col,
                                       batch * (length + 1))
  table = tf.minimum(tf.reshape(table, [batch, length + 1]), length)
  return tf.concat([table[:, :-1], tf.fill([batch, 1], length)], axis=1)


def span_tables(maskable, word_starts, word_idx):
  """Per-sequence lookup tables of the sampling loop (static shapes).

  Returns:
    maskable_pos: [batch, length + 1], position of the j-th maskable token.
    word_start_pos: [batch, length + 1], position where word w starts.
    segment_end: [batch, length], the first non-maskable position at or after
      each position (the end of its segment).
  """
  batch, length = tf.shape(maskable)[0], tf.shape(maskable)[1]
  not_maskable = tf.logical_not(maskable)
  cum_maskable = tf.cumsum(tf.cast(maskable, tf.int32), axis=1)
  cum_not = tf.cumsum(tf.cast(not_maskable, tf.int32), axis=1)
  maskable_pos = _positions_table(maskable, cum_maskable - 1, batch, length)
  word_start_pos = _positions_table(word_starts, word_idx, batch, length)
  not_maskable_pos = _positions_table(not_maskable, cum_not - 1, batch,
                                      length)
  segment_end = tf.gather(not_maskable_pos, cum_not, batch_dims=1)
  return maskable_pos, word_start_pos, segment_end


_RANDOM_BITS = 24  # resolution of the loop's uniform draws


def _take(table, index):
  """table[b, index[b, ...]] for a [batch, k] table (a flat gather)."""
  k = tf.shape(table)[1]
  rows = tf.range(tf.shape(table)[0])
  rows = tf.reshape(rows, [-1] + [1] * (len(index.shape) - 1))
  return tf.gather(tf.reshape(table, [-1]), rows * k + index)


def _low_bits(k):
  """int32 with the k lowest bits set, 0 <= k <= 32."""
  return tf.where(k >= 32, -1,
                  tf.bitwise.left_shift(1, tf.clip_by_value(k, 0, 31)) - 1)


def _popcount(x):
  return tf.cast(tf.raw_ops.PopulationCount(x=x), tf.int32)


def _range_bits(start, end, offsets):
  """Bitset words of positions [start, end); start, end [batch, 1]."""
  return tf.bitwise.bitwise_and(
      _low_bits(tf.clip_by_value(end - offsets, 0, 32)),
      tf.bitwise.invert(_low_bits(tf.clip_by_value(start - offsets, 0, 32))))


def _first_bits(bits, k):
  """The k[b] lowest set bits of bitset `bits` [batch, words] (row-wise)."""
  count = _popcount(bits)
  before = tf.cumsum(count, axis=1, exclusive=True)
  keep = tf.clip_by_value(k[:, None] - before, 0, count)
  # In each word keep the bits below the smallest m in [1, 32] with
  # popcount(bits & low_bits(m)) >= keep (binary search; lo is never enough).
  lo, hi = tf.zeros_like(keep), tf.fill(tf.shape(keep), 32)
  for _ in range(5):
    mid = (lo + hi) // 2
    enough = _popcount(tf.bitwise.bitwise_and(bits, _low_bits(mid))) >= keep
    lo, hi = tf.where(enough, lo, mid), tf.where(enough, mid, hi)
  return tf.where(keep > 0, tf.bitwise.bitwise_and(bits, _low_bits(hi)), 0)


def span_loop(maskable_pos, word_start_pos, segment_end, word_idx, n, budget,
               seed, tags, params: MaskingParams):
  """The sampling loop: one (anchor, length) draw per sequence per iteration.

  The mask is a bitset, [batch, ceil(length / 32)] int32 words, so an
  iteration works on 16 words per sequence (at 512) rather than 512
  positions: it tests the anchor's bit, builds the bits of the span's token
  range and adds the unmasked ones among them. The span that would overrun
  the budget is the sequence's last; it is only recorded, and after the loop
  just its first `remaining` unmasked tokens are added.

  With `tags` ((starts, ends) [batch, K] and counts [batch] of tagged spans)
  a draw is, with probability params.tagged_span_prob, a tagged span picked
  uniformly instead of a geometric one; it is not tested for an unmasked
  anchor (the reference adds whatever of it is unmasked, maybe nothing).

  Returns:
    (masked [batch, length] bool, span-length histogram of the geometric
    draws, loop iterations).
  """
  # A static batch size where there is one: with a symbolic one, a batch of
  # 1 broadcasts to an unknown size and changes the loop's shapes.
  batch = word_idx.shape[0] or tf.shape(word_idx)[0]
  length = tf.shape(word_idx)[1]
  num_words = -(-(word_idx.shape[1] or params.seq_length) // 32)
  offsets = 32 * tf.range(num_words)[tf.newaxis, :]
  window, thresholds = _span_limits(params)
  num_lengths = params.span_upper + 1
  tag_threshold = round(params.tagged_span_prob * (1 << _RANDOM_BITS))

  def body(i, bits, remaining, last, hist):
    u = _draw(seed, i, batch)
    span_len, anchor_bit, start, end = _geometric_span(
        u, bits, maskable_pos, word_start_pos, segment_end, word_idx, n,
        thresholds, window, params)
    active = (remaining > 0) & (anchor_bit == 0)
    geometric = active
    if tags is not None:
      tagged, start, end = _tagged_span(_draw(seed, i, batch, salt=1), tags,
                                        segment_end, tag_threshold, start,
                                        end)
      active = (remaining > 0) & tf.where(tagged, tags[1] > 0,
                                          anchor_bit == 0)
      geometric = active & tf.logical_not(tagged)
    bits, remaining, last = _add_span(bits, remaining, last, start, end,
                                      active, offsets)
    hist += tf.one_hot(span_len, num_lengths, dtype=tf.int32) * tf.cast(
        geometric, tf.int32)[:, None]
    return i + 1, bits, remaining, last, hist

  max_iterations = 8 * params.seq_length + 64

  def cond(i, bits, remaining, last, hist):
    del bits, last, hist
    return tf.logical_and(tf.reduce_any(remaining > 0), i < max_iterations)

  iterations, bits, _, last, hist = tf.while_loop(
      cond, body, (tf.constant(0), tf.zeros([batch, num_words], tf.int32),
                   budget, tf.zeros([batch, 3], tf.int32),
                   tf.zeros([batch, num_lengths], tf.int32)))
  masked = _final_mask(bits, last, offsets, batch, num_words, length)
  return masked > 0, hist, iterations


def _span_limits(params):
  """A span's most tokens, and the draw thresholds of its lengths."""
  # A span never has more tokens than this (longer ones are cut here). BERT's
  # 100-character word limit keeps a word under 100 pieces, so only spans of
  # many very long words can reach it.
  window = min(params.seq_length, max(16 * params.span_upper, 100))
  # Span length: lower + the number of CDF points u / 2**24 is at or above.
  thresholds = tf.constant(np.ceil(np.cumsum(params.span_length_probs())[:-1]
                                   * (1 << _RANDOM_BITS)), tf.int32)
  return window, thresholds


def _draw(seed, i, batch, salt=None):
  """[batch, 2] int32 draws u in [0, 2**24), keyed by seed, i and salt."""
  # Integer draws u / 2**24: XLA and plain TF give the same integers (not
  # the same floats), so both paths make the same masks.
  key = tf.random.experimental.stateless_fold_in(seed, i, alg="philox")
  if salt is not None:
    key = tf.random.experimental.stateless_fold_in(key, salt, alg="philox")
  return tf.random.stateless_uniform(
      [batch, 2], key, minval=0, maxval=1 << _RANDOM_BITS, dtype=tf.int32,
      alg="philox")


def _scale(u, k):
  """floor(u / 2**24 * k), exact."""
  return tf.cast(tf.bitwise.right_shift(
      tf.cast(u, tf.int64) * tf.cast(k, tf.int64), _RANDOM_BITS), tf.int32)


def _geometric_span(u, bits, maskable_pos, word_start_pos, segment_end,
                    word_idx, n, thresholds, window, params):
  """Length, anchor's mask bit and [start, end) of each geometric draw."""
  length = tf.shape(word_idx)[1]
  j = _scale(u[:, 0], n)
  # Rows without maskable tokens (never active) get a valid index too.
  anchor = tf.minimum(_take(maskable_pos, j), length - 1)
  span_len = params.span_lower + tf.reduce_sum(
      tf.cast(u[:, 1:] >= thresholds[tf.newaxis, :], tf.int32), axis=1)
  anchor_bit = tf.bitwise.bitwise_and(tf.bitwise.right_shift(
      _take(bits, anchor // 32), anchor % 32), 1)
  w = _take(word_idx, anchor)
  bounds = _take(word_start_pos, tf.stack(
      [w, tf.minimum(w + span_len, length)], axis=1))
  start = bounds[:, :1]
  end = tf.minimum(tf.minimum(bounds[:, 1:], _take(segment_end, anchor)[
      :, tf.newaxis]), start + window)
  return span_len, anchor_bit, start, end


def _tagged_span(v, tags, segment_end, tag_threshold, start, end):
  """Which draws take a tagged span, and [start, end) with those spans in."""
  (tag_starts, tag_ends), num_tags = tags
  tagged = v[:, 0] < tag_threshold
  k = _scale(v[:, 1], num_tags)[:, tf.newaxis]
  tag_start = _take(tag_starts, k)
  tag_end = tf.minimum(_take(tag_ends, k), _take(segment_end, tag_start))
  start = tf.where(tagged[:, None], tag_start, start)
  end = tf.where(tagged[:, None], tag_end, end)
  return tagged, start, end


def _add_span(bits, remaining, last, start, end, active, offsets):
  """Adds the spans that fit the budget; records the one that overruns it."""
  new = tf.bitwise.bitwise_and(_range_bits(start, end, offsets),
                               tf.bitwise.invert(bits))
  added = tf.reduce_sum(_popcount(new), axis=1)
  fits = added <= remaining
  bits = tf.bitwise.bitwise_or(bits, tf.where((active & fits)[:, None],
                                              new, 0))
  final = active & tf.logical_not(fits)
  last = tf.where(final[:, None],
                  tf.stack([start[:, 0], end[:, 0], remaining], axis=1),
                  last)
  remaining = tf.where(active, tf.where(fits, remaining - added, 0),
                       remaining)
  return bits, remaining, last


def _final_mask(bits, last, offsets, batch, num_words, length):
  """The bitset, with the last spans' first tokens, as [batch, length] 0/1."""
  # The last spans: their first `remaining` unmasked tokens (none where no
  # span overran the budget: last is then [0, 0, 0]).
  new = tf.bitwise.bitwise_and(
      _range_bits(last[:, :1], last[:, 1:2], offsets), tf.bitwise.invert(bits))
  bits = tf.bitwise.bitwise_or(bits, _first_bits(new, last[:, 2]))
  masked = tf.bitwise.bitwise_and(tf.bitwise.right_shift(
      bits[:, :, tf.newaxis], tf.range(32)[tf.newaxis, tf.newaxis, :]), 1)
  return tf.reshape(masked, [batch, 32 * num_words])[:, :length]


def _span_sample(maskable, word_starts, word_idx, n, budget, seed,
                 tagged_spans, params: MaskingParams):
  """Tables + loop; static shapes throughout, so XLA compiles all of it."""
  tables = span_tables(maskable, word_starts, word_idx)
  tags = None
  if tagged_spans is not None:
    starts, ends = tagged_spans[:, :, 0], tagged_spans[:, :, 1]
    tags = ((starts, ends), tf.reduce_sum(tf.cast(ends > starts, tf.int32),
                                          axis=1))
  return span_loop(*tables, word_idx, n, budget, seed, tags, params=params)


# The settings the tables and loop read (_span_sample and what it calls);
# the rest of MaskingParams (rates, ids, sizes of the outputs) does not
# change the compiled loop.
LOOP_SETTINGS = ("seq_length", "span_lower", "span_upper", "geometric_p",
                 "tagged_span_prob")


def loop_params(params: MaskingParams) -> MaskingParams:
  """The loop's settings of `params`, everything else at its default: the
  key of the loop's compiled function, equal for params that differ only in
  what the loop does not read."""
  return MaskingParams(**{name: getattr(params, name)
                          for name in LOOP_SETTINGS})


@functools.lru_cache(maxsize=None)
def compiled_sampler(params: MaskingParams):
  """The XLA-compiled tables + loop of one loop_params(...), built once a
  process.

  A tf.function keyed by value, not by the MaskingParams object: a
  tf.function's trace cache keys a dataclass argument by a weak reference,
  so each loader (its own MaskingParams, gone once its dataset is built)
  traced and XLA-compiled the loop again. Here every loader, mask_batch
  call and tf.data pipeline of one loop setting reuses one function, its
  traces (one a signature of input shapes) and their XLA compilations.

  Example:
    sample = compiled_sampler(loop_params(params))
    assert sample is compiled_sampler(loop_params(params))
  """
  return tf.function(functools.partial(_span_sample, params=params),
                     jit_compile=True, autograph=False)


def span_mask(maskable, word_starts, word_idx, n, budget,
               params: MaskingParams, seed, tagged_spans=None):
  """The SpanBERT sampling loop, all sequences of the batch at once.

  Compiled with XLA (tables and loop together, once a process for each
  loop setting and input shapes: compiled_sampler) unless
  params.use_xla_masking is False; both give the same masks.
  """
  if params.use_xla_masking:
    masked, hist, _ = compiled_sampler(loop_params(params))(
        maskable, word_starts, word_idx, n, budget, seed, tagged_spans)
  else:
    masked, hist, _ = _span_sample(maskable, word_starts, word_idx, n,
                                   budget, seed, tagged_spans, params=params)
  return masked, hist


def token_mask(maskable, budget, seed):
  scores = tf.where(maskable, tf.random.stateless_uniform(
      tf.shape(maskable), fold(seed, 3)), 2.0)
  ordered = tf.sort(scores, axis=1)
  thresh = tf.gather(ordered, tf.maximum(budget - 1, 0)[:, None],
                     batch_dims=1)
  return maskable & (scores <= thresh) & (budget > 0)[:, None]
