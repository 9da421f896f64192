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

"""Properties of `classify` on generated text.

A sentence classification export (1 layer, hidden 32, random weights, two
labels, 24 positions) of the committed cased vocab excerpt. Texts are
property_harness's. See docs/testing.md.
"""

import numpy as np
import pytest
from hypothesis import given

import property_harness as ph

WARMUP = [("classify", {"text": ["Mr. Bennet, who lived in London."]})]


@pytest.fixture(scope="module", params=["cased"])
def classify(request, small_vocab, tmp_path_factory):
  yield from ph.serve("classify", request, small_vocab, tmp_path_factory,
                      WARMUP)


@given(batch=ph.batches())
def test_classify_returns_probabilities_in_time(classify, batch):
  out = classify.call("classify", text=batch)
  p = out["probabilities"]
  assert p.shape == (len(batch), 2) and np.isfinite(p).all(), batch
  np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-5)
  assert (out["label_id"] == p.argmax(1)).all()
  assert [x.decode() for x in out["label"]] == [
      ("no", "yes")[i] for i in out["label_id"]]


@given(batch=ph.batches(min_size=2))
def test_a_batch_gets_what_its_rows_get_alone(classify, batch):
  together = classify.call("classify", text=batch)["probabilities"]
  for i, text in enumerate(batch):
    alone = classify.call("classify", text=[text])["probabilities"]
    np.testing.assert_allclose(together[i], alone[0], rtol=1e-5, atol=1e-6,
                               err_msg=f"row {i} of {batch!r}")


@given(batch=ph.batches())
def test_memory_does_not_grow_across_calls(classify, batch):
  growth = ph.rss_growth(classify, "classify", text=batch)
  assert growth <= ph.RSS_GROWTH_BYTES, (growth, batch)
