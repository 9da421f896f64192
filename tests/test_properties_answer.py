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

"""Properties of `answer` (question answering) on generated text.

A SQuAD v1.1 export (1 layer, hidden 32, random weights: it always answers
something), windows of 32 positions with stride 8, with the uncased vocab (the
committed vocab excerpt lower-cased: the harder offsets; the cased export runs
in test_qa_export.py). Questions and contexts
are property_harness's texts. See docs/testing.md.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import property_harness as ph

WARMUP = [("answer", {"question": ["Who?"], "context": ["Ann met Bob."]})]
REQUESTS = st.lists(st.tuples(ph.texts(), ph.texts()), min_size=1,
                    max_size=4)


@pytest.fixture(scope="module", params=["uncased"])
def qa(request, small_vocab, tmp_path_factory):
  yield from ph.serve("qa", request, small_vocab, tmp_path_factory,
                      WARMUP)


def _answer(worker, pairs):
  return worker.call("answer", question=[q for q, _ in pairs],
                     context=[c for _, c in pairs])


@given(pairs=REQUESTS)
def test_answer_returns_in_time(qa, pairs):
  out = _answer(qa, pairs)
  assert np.isfinite(out["score"]).all()


@given(pairs=REQUESTS)
def test_answers_are_the_slices_of_their_offsets_on_words(qa, pairs):
  out = _answer(qa, pairs)
  for i, (_, context) in enumerate(pairs):
    s, e = int(out["answer_start"][i]), int(out["answer_end"][i])
    text = ph.decoded(out["answer_text"][i])
    if s == -1:
      assert e == -1 and text == "", (pairs, i)
      continue
    words = ph.Words(context, qa.vocab, qa.lower_case)
    ph.check_spans(context, [s], [e], words.starts | words.inner,
                   words.ends | words.inner, "answer")
    assert text == context[s:e], (context, s, e, text)


@given(pairs=st.lists(st.tuples(ph.texts(), ph.texts()), min_size=2,
                      max_size=4))
def test_a_batch_gets_what_its_rows_get_alone(qa, pairs):
  together = _answer(qa, pairs)
  for i, pair in enumerate(pairs):
    alone = _answer(qa, [pair])
    for key in ("answer_start", "answer_end", "answer_text"):
      assert together[key][i] == alone[key][0], (pairs, i, key)
    np.testing.assert_allclose(together["score"][i], alone["score"][0],
                               rtol=1e-5, atol=1e-5)


@given(pairs=REQUESTS)
def test_memory_does_not_grow_across_calls(qa, pairs):
  growth = ph.rss_growth(qa, "answer", question=[q for q, _ in pairs],
                         context=[c for _, c in pairs])
  assert growth <= ph.RSS_GROWTH_BYTES, (growth, pairs)
