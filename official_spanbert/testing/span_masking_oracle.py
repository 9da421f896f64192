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

"""Plain NumPy/Python SpanBERT masking, kept as an oracle for the graph code.

A direct transcription of the reference's span masking
(pretraining/fairseq/data/masking.py), one block at a time, with a budget of
ceil(rate * n) and random replacements by corpus frequency.
"""

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np


def merge_intervals(intervals: List[List[int]]) -> List[List[int]]:
  """Merges overlapping and adjacent inclusive [start, end] intervals."""
  merged = []
  for interval in sorted(intervals, key=lambda x: x[0]):
    if not merged or merged[-1][1] + 1 < interval[0]:
      merged.append(list(interval))
    else:
      merged[-1][1] = max(merged[-1][1], interval[1])
  return merged


def mask_block(tokens: Sequence[int], word_starts: Sequence[int],
               rng: np.random.Generator, *, rate=0.15, p=0.2, lower=1,
               upper=10, mask_prob=0.8, random_prob=0.1, max_targets=15,
               mask_id=103, corpus_tokens: Sequence[int] = (999,),
               tagged_spans: Optional[Sequence[Tuple[int, int]]] = None,
               tagged_prob=0.5) -> Dict[str, object]:
  """Masks one block (no [CLS]/[SEP]) the SpanBERT way.

  Args:
    tokens: the block's wordpiece ids.
    word_starts: 1 where a word starts.
    rng: random source.
    rate, p, lower, upper, mask_prob, random_prob, max_targets, mask_id: the
      masking parameters.
    corpus_tokens: every wordpiece of the corpus (the reference's `tokens`);
      a random replacement is a uniform choice among them.
    tagged_spans: (start, end) of the block's tagged spans, end exclusive:
      masks as `NERSpanMaskingScheme`, drawing one of them with probability
      tagged_prob and a geometric span otherwise. None: `span` masking.
    tagged_prob: the reference's ner_masking_prob.

  Returns:
    dict with `masked` (the new tokens), `mask` (sorted positions),
    `drawn_lengths` (lengths of accepted spans), `spans` (merged, inclusive),
    `decisions` (0 mask / 1 random / 2 keep, per merged span) and
    `pair_targets` ((s - 1, e + 1, [targets...]) per eligible span).
  """
  n = len(tokens)
  lens = np.arange(lower, upper + 1)
  probs = p * (1 - p) ** (lens - lower)
  probs = probs / probs.sum()
  # The reference's math.ceil(n * 0.15): the two agree for every n up to 2,000 at
  # rate 0.15; the 1e-9 only guards rates whose float product lands just above an
  # integer.
  mask_num = math.ceil(n * rate - 1e-9)
  starts = np.flatnonzero(np.asarray(word_starts))

  def word_start(i):
    return int(starts[np.searchsorted(starts, i, side="right") - 1])

  def word_end(i):  # exclusive
    k = np.searchsorted(starts, i, side="right")
    return int(starts[k]) if k < len(starts) else n

  mask, spans, drawn = set(), [], []
  while len(mask) < mask_num:
    if tagged_spans is not None and rng.random() <= tagged_prob:
      if len(tagged_spans):
        start, end = tagged_spans[int(rng.integers(len(tagged_spans)))]
        spans.append([start, start])
        for i in range(start, end):
          if len(mask) >= mask_num:
            break
          spans[-1][-1] = i
          mask.add(i)
      continue
    span_len = int(rng.choice(lens, p=probs))
    anchor = int(rng.integers(n))
    if anchor in mask:
      continue
    drawn.append(span_len)
    left1, right1 = word_start(anchor), word_end(anchor)
    spans.append([left1, left1])
    for i in range(left1, right1):
      if len(mask) >= mask_num:
        break
      mask.add(i)
      spans[-1][-1] = i
    num_words, right2 = 1, right1
    while num_words < span_len and right2 < n and len(mask) < mask_num:
      left2, right2 = right2, word_end(right2)
      num_words += 1
      for i in range(left2, right2):
        if len(mask) >= mask_num:
          break
        mask.add(i)
        spans[-1][-1] = i

  spans = merge_intervals(spans)
  masked = list(tokens)
  decisions, pair_targets = [], []
  for start, end in spans:
    if start > 0 and end < n - 1:
      pair_targets.append((start - 1, end + 1,
                           [tokens[i] for i in range(start, end + 1)]
                           [:max_targets]))
    u = rng.random()
    decision = 0 if u < mask_prob else (1 if u < mask_prob + random_prob
                                        else 2)
    decisions.append(decision)
    for i in range(start, end + 1):
      if decision == 0:
        masked[i] = mask_id
      elif decision == 1:
        masked[i] = int(rng.choice(corpus_tokens))
  return {"masked": masked, "mask": sorted(mask), "drawn_lengths": drawn,
          "spans": spans, "decisions": decisions,
          "pair_targets": pair_targets}
