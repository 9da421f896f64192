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

Everything here is vectorised over a batch of framed sequences ([CLS] ... [SEP]
padding) and runs inside tf.data. Randomness comes from stateless ops keyed by a
seed tensor, so masks are reproducible from (seed, batch index) and differ from
batch to batch (and therefore from epoch to epoch).

Schemes:
* `span` (SpanBERT, Joshi et al. 2019, and its released code): repeat until
  exactly ceil(rate * n) tokens are masked: draw a span length L in words from
  a geometric(p) distribution truncated to [lower, upper] and an anchor token
  uniformly; if the anchor is already masked, draw again; otherwise move it to
  the start of its word and mask whole words until L words, the end of the
  segment or the budget (counted in tokens, so the last span may stop
  mid-word). Overlapping or adjacent spans merge. 80/10/10 is decided once per
  merged span.
* `token` (BERT): ceil(rate * n) random tokens, 80/10/10 per token.
* `whole_word`: the reference's whole-word route, the `span` loop with every
  span one word long: anchors are uniform over tokens (so a word is picked in
  proportion to its length), exactly ceil(rate * n) tokens (the last word may
  be cut), 80/10/10 per word.
* `named_entity`, `noun_phrase` (the paper's Table 6; the reference's
  `NERSpanMaskingScheme`): the `span` loop, but each draw is, with probability
  `tagged_span_prob`, a tagged span of the block (named entity or noun phrase,
  whole words, from the records) picked uniformly; its still unmasked tokens
  are masked (none where the block has no tagged span or the span is already
  masked: the draw is then spent, as in the reference). Otherwise it is a
  geometric span as in `span`. 80/10/10 per merged span.

Two-segment (NSP) sequences get one budget per segment, ceil(rate * n_A) and
ceil(rate * n_B), each segment masked on its own, as the reference masks the
two blocks of a pair (span_bert_dataset.py).

Span Boundary Objective targets are computed for the maximal runs of masked
tokens whose outer boundaries are real tokens of the block: each of the first
`max_sbo_targets` tokens of such a run gets (s - 1, e + 1, i - s).
"""

import dataclasses
import math
from typing import Dict, Optional, Sequence

import numpy as np
import official_spanbert  # noqa: F401
import tensorflow as tf

SCHEMES = ("span", "token", "whole_word", "named_entity", "noun_phrase")
# Schemes that draw tagged spans (given to mask_batch as `tagged_spans`).
TAGGED_SCHEMES = ("named_entity", "noun_phrase")

# Replacement decisions.
MASK, RANDOM, KEEP = 0, 1, 2


class MaskingConfigError(ValueError):
  """Masking parameters that cannot work."""


@dataclasses.dataclass
class MaskingConfig:
  """The masking settings, defined once.

  The pretraining data config (pretrain_dataloader.SpanBertPretrainDataConfig)
  inherits them, so they are set as `task.train_data.<name>`, flat as in
  Model Garden's data configs (and as the YAML configs, command-line
  overrides and their error messages name them); MaskingParams inherits them
  and adds what the data config and vocab fix.

  Attributes:
    masking_scheme: one of SCHEMES: "span" (SpanBERT), "token" (BERT),
      "whole_word", "named_entity" or "noun_phrase" (the paper's Table 6;
      need records written with --tag_spans).
    masking_rate: share of maskable tokens to mask, ceil(rate * n)
      (0 < rate < 1).
    geometric_p: p of the span-length geometric distribution (0 < p <= 1).
    span_lower: shortest span, in words.
    span_upper: longest span, in words.
    mask_token_prob: share of spans (units) replaced by [MASK].
    random_token_prob: share replaced by random tokens; the rest is kept.
    tagged_span_prob: for TAGGED_SCHEMES, the probability that a draw is a
      tagged span rather than a geometric one (the reference's 0.5).
    max_sbo_targets: SBO targets per span (the first ones).
    use_xla_masking: compile the span sampling loop with XLA (much faster on
      CPU; the same masks).
  """
  masking_scheme: str = "span"
  masking_rate: float = 0.15
  geometric_p: float = 0.2
  span_lower: int = 1
  span_upper: int = 10
  mask_token_prob: float = 0.8
  random_token_prob: float = 0.1
  tagged_span_prob: float = 0.5
  max_sbo_targets: int = 15
  use_xla_masking: bool = True


@dataclasses.dataclass(unsafe_hash=True)
class MaskingParams(MaskingConfig):
  """What masking needs besides the batch: MaskingConfig's settings + 3 more.

  Hashed by value, as the XLA sampling loop takes it as a static tf.function
  argument: treat it as immutable (dataclasses.replace makes a changed copy).
  pretrain_dataloader.masking_params builds it from a data config.

  Attributes (besides MaskingConfig's):
    max_predictions_per_seq: size of the masked_lm_* outputs.
    seq_length: length of the framed sequences.
    mask_id: id of [MASK].
  """
  max_predictions_per_seq: int = 80
  seq_length: int = 512
  mask_id: int = 103

  def span_length_probs(self) -> np.ndarray:
    """P(L = k) for k in [span_lower, span_upper]."""
    k = np.arange(self.span_upper - self.span_lower + 1)
    w = self.geometric_p * (1.0 - self.geometric_p) ** k
    return w / w.sum()

  def budget(self, n: int, specials: int = 2) -> int:
    """Tokens masked in a sequence of n maskable tokens (host-side)."""
    del specials
    return math.ceil(self.masking_rate * n - 1e-9)

  def max_budget(self, max_maskable: int, segments: int = 1) -> int:
    """Most tokens masked in a sequence of at most max_maskable tokens.

    Two segments get a budget each, ceil(rate * n_A) + ceil(rate * n_B), which
    can exceed ceil(rate * (n_A + n_B)) by one.
    """
    if segments == 1 or max_maskable < 2:
      return self.budget(max_maskable)
    return max(self.budget(a) + self.budget(max_maskable - a)
               for a in range(1, max_maskable))

  def validate(self, max_maskable: Optional[int] = None,
               segments: int = 1) -> "MaskingParams":
    """Raises MaskingConfigError with one clear message if unusable.

    Args:
      max_maskable: most maskable tokens in a sequence (seq_length - 2 for
        single segments, seq_length - 3 for pairs).
      segments: 2 for two-segment (NSP) sequences, masked with a budget per
        segment.
    """
    def fail(msg):
      raise MaskingConfigError(f"masking config: {msg}")
    if self.masking_scheme not in SCHEMES:
      fail(f"masking_scheme must be one of {SCHEMES}, not "
           f"{self.masking_scheme!r}")
    if not 0.0 < self.masking_rate < 1.0:
      fail(f"masking_rate must be in (0, 1), got {self.masking_rate}")
    if not 0.0 < self.geometric_p <= 1.0:
      fail(f"geometric_p must be in (0, 1], got {self.geometric_p}")
    if not 1 <= self.span_lower <= self.span_upper:
      fail(f"need 1 <= span_lower ({self.span_lower}) <= span_upper "
           f"({self.span_upper})")
    if (self.mask_token_prob < 0 or self.random_token_prob < 0 or
        self.mask_token_prob + self.random_token_prob > 1.0 + 1e-9):
      fail("mask_token_prob and random_token_prob must be >= 0 and sum to "
           f"<= 1, got {self.mask_token_prob} and {self.random_token_prob}")
    if not 0.0 <= self.tagged_span_prob < 1.0:
      # At 1 a block whose tagged spans cover less than the budget would
      # never be filled.
      fail(f"tagged_span_prob must be in [0, 1), got {self.tagged_span_prob}")
    if self.max_sbo_targets < 1:
      fail(f"max_sbo_targets must be >= 1, got {self.max_sbo_targets}")
    if self.seq_length < 3:
      fail(f"seq_length must be >= 3, got {self.seq_length}")
    max_maskable = (self.seq_length - 2 if max_maskable is None
                    else max_maskable)
    need = self.max_budget(max_maskable, segments)
    if segments == 1:
      what = f"ceil({self.masking_rate} * {max_maskable})"
    else:
      what = (f"ceil({self.masking_rate} * n_A) + ceil({self.masking_rate} * "
              f"n_B) with n_A + n_B = {max_maskable}, at most")
    if self.max_predictions_per_seq < need:
      fail(f"max_predictions_per_seq={self.max_predictions_per_seq} is "
           f"smaller than the masking budget {what} = {need} at seq_length="
           f"{self.seq_length}; raise it to at least {need}")
    return self


def _fold(seed: tf.Tensor, salt: int) -> tf.Tensor:
  return tf.random.experimental.stateless_fold_in(seed, salt)


def _budget(n: tf.Tensor, rate: float) -> tf.Tensor:
  # ceil(rate * n), exact for integer products (0.15 * 20 is 3, not 4).
  return tf.cast(tf.math.ceil(tf.cast(n, tf.float64) * rate - 1e-9), tf.int32)


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


def _span_tables(maskable, word_starts, word_idx):
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


def _span_loop(maskable_pos, word_start_pos, segment_end, word_idx, n, budget,
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
  # A span never has more tokens than this (longer ones are cut here). BERT's
  # 100-character word limit keeps a word under 100 pieces, so only spans of
  # many very long words can reach it.
  window = min(params.seq_length, max(16 * params.span_upper, 100))
  # Span length: lower + the number of CDF points u / 2**24 is at or above.
  thresholds = tf.constant(np.ceil(np.cumsum(params.span_length_probs())[:-1]
                                   * (1 << _RANDOM_BITS)), tf.int32)
  num_lengths = params.span_upper + 1
  tag_threshold = round(params.tagged_span_prob * (1 << _RANDOM_BITS))

  def draw(i, salt=None):
    # Integer draws u / 2**24: XLA and plain TF give the same integers (not
    # the same floats), so both paths make the same masks.
    key = tf.random.experimental.stateless_fold_in(seed, i, alg="philox")
    if salt is not None:
      key = tf.random.experimental.stateless_fold_in(key, salt, alg="philox")
    return tf.random.stateless_uniform(
        [batch, 2], key, minval=0, maxval=1 << _RANDOM_BITS, dtype=tf.int32,
        alg="philox")

  def scale(u, k):
    """floor(u / 2**24 * k), exact."""
    return tf.cast(tf.bitwise.right_shift(
        tf.cast(u, tf.int64) * tf.cast(k, tf.int64), _RANDOM_BITS), tf.int32)

  def body(i, bits, remaining, last, hist):
    u = draw(i)
    j = scale(u[:, 0], n)
    # Rows without maskable tokens (never active) get a valid index too.
    anchor = tf.minimum(_take(maskable_pos, j), length - 1)
    span_len = params.span_lower + tf.reduce_sum(
        tf.cast(u[:, 1:] >= thresholds[tf.newaxis, :], tf.int32), axis=1)
    anchor_bit = tf.bitwise.bitwise_and(tf.bitwise.right_shift(
        _take(bits, anchor // 32), anchor % 32), 1)
    active = (remaining > 0) & (anchor_bit == 0)
    w = _take(word_idx, anchor)
    bounds = _take(word_start_pos, tf.stack(
        [w, tf.minimum(w + span_len, length)], axis=1))
    start = bounds[:, :1]
    end = tf.minimum(tf.minimum(bounds[:, 1:], _take(segment_end, anchor)[
        :, tf.newaxis]), start + window)
    geometric = active
    if tags is not None:
      (tag_starts, tag_ends), num_tags = tags
      v = draw(i, salt=1)
      tagged = v[:, 0] < tag_threshold
      k = scale(v[:, 1], num_tags)[:, tf.newaxis]
      tag_start = _take(tag_starts, k)
      tag_end = tf.minimum(_take(tag_ends, k), _take(segment_end, tag_start))
      start = tf.where(tagged[:, None], tag_start, start)
      end = tf.where(tagged[:, None], tag_end, end)
      active = (remaining > 0) & tf.where(tagged, num_tags > 0,
                                          anchor_bit == 0)
      geometric = active & tf.logical_not(tagged)
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
  # The last spans: their first `remaining` unmasked tokens (none where no
  # span overran the budget: last is then [0, 0, 0]).
  new = tf.bitwise.bitwise_and(
      _range_bits(last[:, :1], last[:, 1:2], offsets), tf.bitwise.invert(bits))
  bits = tf.bitwise.bitwise_or(bits, _first_bits(new, last[:, 2]))
  masked = tf.bitwise.bitwise_and(tf.bitwise.right_shift(
      bits[:, :, tf.newaxis], tf.range(32)[tf.newaxis, tf.newaxis, :]), 1)
  masked = tf.reshape(masked, [batch, 32 * num_words])[:, :length]
  return masked > 0, hist, iterations


def _span_sample(maskable, word_starts, word_idx, n, budget, seed,
                 tagged_spans, params: MaskingParams):
  """Tables + loop; static shapes throughout, so XLA compiles all of it."""
  tables = _span_tables(maskable, word_starts, word_idx)
  tags = None
  if tagged_spans is not None:
    starts, ends = tagged_spans[:, :, 0], tagged_spans[:, :, 1]
    tags = ((starts, ends), tf.reduce_sum(tf.cast(ends > starts, tf.int32),
                                          axis=1))
  return _span_loop(*tables, word_idx, n, budget, seed, tags, params=params)


_span_sample_xla = tf.function(_span_sample, jit_compile=True,
                               autograph=False)


def _span_mask(maskable, word_starts, word_idx, n, budget,
               params: MaskingParams, seed, tagged_spans=None):
  """The SpanBERT sampling loop, all sequences of the batch at once.

  Compiled with XLA (tables and loop together) unless params.use_xla_masking is
  False; both give the same masks.
  """
  sample = _span_sample_xla if params.use_xla_masking else _span_sample
  masked, hist, _ = sample(maskable, word_starts, word_idx, n, budget, seed,
                           tagged_spans, params=params)
  return masked, hist


def _token_mask(maskable, budget, seed):
  scores = tf.where(maskable, tf.random.stateless_uniform(
      tf.shape(maskable), _fold(seed, 3)), 2.0)
  ordered = tf.sort(scores, axis=1)
  thresh = tf.gather(ordered, tf.maximum(budget - 1, 0)[:, None],
                     batch_dims=1)
  return maskable & (scores <= thresh) & (budget > 0)[:, None]


def rows_to_dense(values: tf.Tensor, rows: tf.Tensor, nrows, width: int
                  ) -> tf.Tensor:
  """Lays row-sorted values out as [nrows, width], zero-padded/truncated."""
  return tf.RaggedTensor.from_value_rowids(values, rows, nrows=nrows).to_tensor(
      default_value=tf.zeros([], values.dtype), shape=[None, width])


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
  budget = _budget(n, params.masking_rate)
  scheme = params.masking_scheme
  if scheme == "token":
    return _token_mask(maskable, budget, seed), None, budget
  if scheme == "whole_word":
    params = dataclasses.replace(params, span_lower=1, span_upper=1)
  elif scheme not in ("span",) + TAGGED_SCHEMES:
    raise MaskingConfigError(f"unknown masking scheme {scheme!r}")
  masked, hist = _span_mask(maskable, word_starts, word_idx, n, budget,
                            params, seed, tagged_spans)
  return masked, (None if scheme == "whole_word" else hist), budget


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
  """
  ids = tf.cast(input_word_ids, tf.int32)
  maskable = tf.cast(maskable, tf.bool)
  word_starts = tf.cast(word_starts, tf.bool) | tf.logical_not(maskable)
  seed = tf.cast(seed, tf.int64)
  batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
  word_idx = tf.cumsum(tf.cast(word_starts, tf.int32), axis=1) - 1

  scheme = params.masking_scheme
  if scheme in TAGGED_SCHEMES:
    if tagged_spans is None:
      raise MaskingConfigError(
          f"masking scheme {scheme!r} needs the tagged spans of the blocks "
          "(tagged_spans)")
    if segment_ids is not None:
      raise MaskingConfigError(
          f"masking scheme {scheme!r} masks single-segment blocks, not "
          "two-segment (NSP) sequences")
    tagged_spans = tf.cast(tagged_spans, tf.int32)
  if segment_ids is None:
    masked, hist, budget = _select(maskable, word_starts, word_idx, seed,
                                   params, tagged_spans)
  else:
    in_b = tf.cast(segment_ids, tf.int32) > 0
    masked_a, hist, budget_a = _select(maskable & tf.logical_not(in_b),
                                       word_starts, word_idx, seed, params)
    masked_b, hist_b, budget_b = _select(maskable & in_b, word_starts,
                                         word_idx, _fold(seed, 7), params)
    masked, budget = masked_a | masked_b, budget_a + budget_b
    if hist is not None:
      hist += hist_b

  where, run_first, run_last, run_start = masked_runs(masked)
  if scheme == "span" or scheme in TAGGED_SCHEMES:
    unit_start = run_start
  elif scheme == "token":
    unit_start = masked
  else:
    unit_start = masked & word_starts
  rows, cols = where[:, 0], where[:, 1]
  flat = rows * length + cols
  unit_id = tf.gather(tf.cumsum(tf.reshape(tf.cast(unit_start, tf.int32),
                                           [-1])), flat) - 1
  num_units = tf.reduce_sum(tf.cast(unit_start, tf.int32))

  # Replacement: one decision per unit; random tokens drawn per token.
  u_unit = tf.random.stateless_uniform([num_units], _fold(seed, 5))
  decision = tf.where(
      u_unit < params.mask_token_prob, MASK,
      tf.where(u_unit < params.mask_token_prob + params.random_token_prob,
               RANDOM, KEEP))
  token_decision = tf.gather(decision, unit_id)
  random_tok = _draw_random_tokens(tf.shape(rows), _fold(seed, 6), random_ids,
                                   random_weights)
  original = tf.gather_nd(ids, where)
  replaced = tf.where(token_decision == MASK, params.mask_id,
                      tf.where(token_decision == RANDOM, random_tok, original))
  masked_ids = tf.tensor_scatter_nd_update(ids, where, replaced)

  # SBO: boundaries of the maximal run each masked token belongs to.
  s, e = run_first, run_last
  left, right = s - 1, e + 1
  right_ok = right < length
  right_c = tf.minimum(right, length - 1)
  sbo_ok = (tf.gather_nd(maskable, tf.stack([rows, tf.maximum(left, 0)], 1)) &
            (left >= 0) & right_ok &
            tf.gather_nd(maskable, tf.stack([rows, right_c], 1)) &
            (cols - s < params.max_sbo_targets))

  p = params.max_predictions_per_seq

  def dense(values, dtype):
    return rows_to_dense(tf.cast(values, dtype), rows, batch, p)

  ok = tf.cast(sbo_ok, tf.int32)
  out = {
      "input_word_ids": masked_ids,
      "masked_lm_positions": dense(cols, tf.int32),
      "masked_lm_ids": dense(original, tf.int32),
      "masked_lm_weights": dense(tf.ones_like(cols), tf.float32),
      "sbo_left_positions": dense(left * ok, tf.int32),
      "sbo_right_positions": dense(right_c * ok, tf.int32),
      "sbo_relative_positions": dense((cols - s) * ok, tf.int32),
      "sbo_weights": dense(ok, tf.float32),
  }
  if diagnostics:
    if hist is not None:
      out["span_length_histogram"] = hist
    unit_rows = tf.gather(rows, tf.math.unsorted_segment_min(
        tf.range(tf.shape(rows)[0]), unit_id, num_units))
    out["unit_decisions"] = tf.math.unsorted_segment_sum(
        tf.one_hot(decision, 3, dtype=tf.int32), unit_rows, batch)
    out["num_units"] = num_units
    out["budget"] = budget
  return out
