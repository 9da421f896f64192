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

"""Properties of `resolve` (coreference) on generated text.

A coreference export (1 layer, hidden 32, random weights, segments of 32
wordpieces) with singletons on, so every top span is a mention, of the
committed cased vocab excerpt. Texts are property_harness's; `resolve`
takes one text a request. See docs/testing.md.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings

import property_harness as ph

WARMUP = [("resolve", {"text": "Mr. Bennet, who lived in London. He left."})]


@pytest.fixture(scope="module", params=["cased"])
def coref(request, small_vocab, tmp_path_factory):
  yield from ph.serve("coref", request, small_vocab, tmp_path_factory,
                      WARMUP)


def _resolve(worker, text):
  return worker.call("resolve", text=np.array(text, dtype=object))


@given(text=ph.texts())
def test_resolve_returns_in_time(coref, text):
  out = _resolve(coref, text)
  n = int(out["num_clusters"])
  assert ((out["cluster_ids"] >= 0) & (out["cluster_ids"] < n)).all()


@settings(max_examples=max(settings().max_examples, 60))  # ~10 ms a call
@given(text=ph.texts())
def test_mentions_are_the_slices_of_their_offsets_on_words(coref, text):
  out = _resolve(coref, text)
  words = ph.Words(text, coref.vocab, coref.lower_case)
  ph.check_spans(text, out["mention_starts"], out["mention_ends"],
                 words.starts, words.ends, "mention")
  for s, e, got in zip(out["mention_starts"], out["mention_ends"],
                       out["mention_texts"]):
    assert ph.decoded(got) == text[s:e], (text, s, e, got)


@given(first=ph.texts(), other=ph.texts())
def test_a_text_resolves_alike_after_any_other(coref, first, other):
  before = _resolve(coref, first)
  _resolve(coref, other)
  after = _resolve(coref, first)
  for key, value in before.items():
    assert np.array_equal(value, after[key]), (first, other, key)


@given(text=ph.texts())
def test_memory_does_not_grow_across_calls(coref, text):
  growth = ph.rss_growth(coref, "resolve", text=np.array(text, dtype=object))
  assert growth <= ph.RSS_GROWTH_BYTES, (growth, text)
