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

"""Properties of the pretraining export's text signatures on generated text.

`serving_default` (encode), `fill_spans` and `encode_spans` of a
pretraining export (1 layer, hidden 32, random weights, 32 positions, 3
masks) of the committed cased vocab excerpt. Texts are property_harness's,
with [MASK] markers between them for fill_spans. See docs/testing.md.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import property_harness as ph

WARMUP = [("serving_default", {"text": ["Mr. Bennet"]}),
          ("fill_spans", {"text": ["Mr. [MASK] lived in London."]}),
          ("encode_spans", {"text": ["Mr. Bennet"], "span_starts": [[0]],
                            "span_ends": [[3]]})]
MASKED = st.builds(lambda a, n, b: a + " [MASK]" * n + b, ph.texts(),
                   st.integers(0, 4), ph.texts())


@pytest.fixture(scope="module", params=["cased"])
def pretraining(request, small_vocab, tmp_path_factory):
  yield from ph.serve("pretraining", request, small_vocab, tmp_path_factory,
                      WARMUP)


@given(batch=ph.batches(min_size=2))
def test_encode_returns_in_time_and_a_batch_gets_its_rows(pretraining, batch):
  together = pretraining.call("serving_default", text=batch)
  for i, text in enumerate(batch):
    alone = pretraining.call("serving_default", text=[text])
    for key in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(together[key][i], alone[key][0], rtol=1e-4,
                                 atol=1e-5, err_msg=f"{key} row {i} {batch!r}")


@given(batch=st.lists(MASKED, min_size=1, max_size=4))
def test_fill_spans_returns_in_time_and_a_batch_gets_its_rows(pretraining,
                                                              batch):
  together = pretraining.call("fill_spans", text=batch)
  weights = together["masked_weights"]
  assert (weights.sum(1) <= [min(3, t.count("[MASK]")) for t in batch]).all()
  assert np.isfinite(together["mlm_top_k_scores"]).all()
  for i, text in enumerate(batch):
    alone = pretraining.call("fill_spans", text=[text])
    for key in ("masked_positions", "masked_weights"):
      assert np.array_equal(together[key][i], alone[key][0]), (batch, i, key)
    for key in ("mlm_top_k_scores", "sbo_top_k_scores"):
      np.testing.assert_allclose(together[key][i], alone[key][0], rtol=1e-4,
                                 atol=1e-4, err_msg=f"{key} row {i}")
    scores = alone["mlm_top_k_scores"][0]
    if (scores[:, 0] - scores[:, 1] > 1e-3).all():  # no near tie for top 1
      assert together["filled_text"][i] == alone["filled_text"][0], (batch, i)


@given(batch=st.lists(MASKED, min_size=1, max_size=4))
def test_memory_does_not_grow_across_calls(pretraining, batch):
  growth = ph.rss_growth(pretraining, "fill_spans", text=batch)
  assert growth <= ph.RSS_GROWTH_BYTES, (growth, batch)


@given(batch=ph.batches())
def test_encode_spans_returns_in_time(pretraining, batch):
  pretraining.call("encode_spans", text=batch,
                   span_starts=np.full((len(batch), 1), -1),
                   span_ends=np.full((len(batch), 1), -1))


@given(batch=ph.batches().filter(lambda b: any(map(ph.has_words, b))))
def test_spans_of_words_are_encoded_as_alone(pretraining, batch):
  ph.check_encode_spans(pretraining, batch)


@settings(max_examples=max(settings().max_examples, 40))  # ~10 ms a call
@given(text=ph.texts(), data=st.data())
def test_a_span_covering_no_whole_wordpiece_is_refused(pretraining, text, data):
  ph.check_cut_word_is_refused(pretraining, text, data)
