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

"""The masking settings (MaskingConfig) and what masking needs (MaskingParams).

MaskingConfig defines each setting once (task.train_data.<name>); MaskingParams
adds what the data config and vocab fix and validates the whole.
"""

import dataclasses
import math
from typing import Optional

import numpy as np

SCHEMES = ("span", "token", "whole_word", "named_entity", "noun_phrase")
# Schemes that draw tagged spans (given to mask_batch as `tagged_spans`).
TAGGED_SCHEMES = ("named_entity", "noun_phrase")


def masked_count(n, rate: float, ceil=math.ceil):
  """ceil(rate * n), the tokens masked among n maskable ones; exact for
  integer products (0.15 * 20 is 3, not 4). `ceil` is tf.math.ceil for a
  float tensor `n` (span_sampler.budget)."""
  return ceil(n * rate - 1e-9)

def sbo_targets(data_config) -> int:
  """The SBO targets per span a pretraining data config masks for: its
  max_sbo_targets, which the pretraining task sets to the model's; unset
  (a loader built without the task), MaskingParams' default."""
  targets = getattr(data_config, "max_sbo_targets", None)
  return MaskingParams.max_sbo_targets if targets is None else targets


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
    use_xla_masking: compile the span sampling loop with XLA (much faster on
      CPU; the same masks).

  Example:
    config = MaskingConfig(masking_scheme="span", span_upper=5)
    params = MaskingParams(**dataclasses.asdict(config), seq_length=128,
                           max_predictions_per_seq=20, mask_id=103)
    params.validate(max_maskable=126)   # one MaskingConfigError if unusable
    assert params.budget(100) == 15     # ceil(masking_rate * maskable)
  """
  masking_scheme: str = "span"
  masking_rate: float = 0.15
  geometric_p: float = 0.2
  span_lower: int = 1
  span_upper: int = 10
  mask_token_prob: float = 0.8
  random_token_prob: float = 0.1
  tagged_span_prob: float = 0.5
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
    max_sbo_targets: SBO targets per span (the first ones): the model's
      setting, task.model.max_sbo_targets, which the pretraining task gives
      the data config (sbo_targets).
  """
  max_predictions_per_seq: int = 80
  seq_length: int = 512
  mask_id: int = 103
  max_sbo_targets: int = 15

  def span_length_probs(self) -> np.ndarray:
    """P(L = k) for k in [span_lower, span_upper]."""
    k = np.arange(self.span_upper - self.span_lower + 1)
    w = self.geometric_p * (1.0 - self.geometric_p) ** k
    return w / w.sum()

  def budget(self, n: int, specials: int = 2) -> int:
    """Tokens masked in a sequence of n maskable tokens (host-side)."""
    del specials
    return masked_count(n, self.masking_rate)

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
