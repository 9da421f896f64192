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

"""Requests of nothing get an empty result (issue 55, item 7).

`answer` with no question and `encode_spans` with no text or spans of shape
[2, 0] failed with TensorFlow's internal errors (strided_slice, GatherV2,
ArgMax on an empty tensor) instead of a result with no rows / columns.
Through a saved and loaded SavedModel, as a server runs them.
"""

import numpy as np
import pytest
import tensorflow as tf

from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import qa_export
from official_spanbert.serving import span_encoder_module
import export_helpers
from qa_export_test import _qa_params

_NO_TEXT = tf.constant([], tf.string)


def _saved(module, signatures, tmp_path):
  tf.saved_model.save(module, str(tmp_path), signatures)
  return tf.saved_model.load(str(tmp_path)).signatures


@pytest.fixture(scope="module")
def answer(small_vocab, tmp_path_factory):
  module = qa_export.build_module(_qa_params(small_vocab), None, small_vocab,
                                  0.0)
  return _saved(module, module.signatures(),
                tmp_path_factory.mktemp("qa"))["answer"]


@pytest.fixture(scope="module")
def encode_spans(small_vocab, tmp_path_factory):
  model = task_factory.get_task(export_helpers.params().task).build_model()
  module = span_encoder_module.SpanEncoderModule(model.encoder_network,
                                                 small_vocab, seq_length=32)
  return _saved(module, module.signatures(),
                tmp_path_factory.mktemp("spans"))["encode_spans"]


def test_answer_of_no_question_is_an_empty_answer(answer):
  out = answer(question=_NO_TEXT, context=_NO_TEXT)
  assert sorted(out) == ["answer_end", "answer_start", "answer_text",
                         "has_answer", "score"]
  assert all(v.shape == [0] for v in out.values()), out
  assert out["answer_start"].dtype == tf.int32
  one = answer(question=tf.constant(["Who smiled?"]),
               context=tf.constant(["Mr. Bennet smiled."]))
  assert one["answer_text"].shape == [1]


@pytest.mark.parametrize("batch,texts,n", [
    ("no_text", [], 0), ("no_text_three_columns", [], 3),
    ("no_span", ["Ann met Bob in Paris.", "Hi there."], 0)])
def test_encode_spans_of_no_span_is_an_empty_result(encode_spans, batch,
                                                    texts, n):
  del batch
  starts = tf.zeros([len(texts), n], tf.int32)
  out = encode_spans(text=tf.constant(texts, tf.string), span_starts=starts,
                     span_ends=starts)["span_embeddings"]
  assert out.shape == [len(texts), n, 96]
  # The same module still encodes spans, and still refuses bad ones.
  got = encode_spans(text=tf.constant(["Ann met Bob."]),
                     span_starts=tf.constant([[0, -1]]),
                     span_ends=tf.constant([[3, -1]]))["span_embeddings"]
  assert got.shape == [1, 2, 96] and np.abs(got[0, 0]).sum() > 0
  assert not got[0, 1].numpy().any()
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="must both be .batch, n. with the batch of text"):
    encode_spans(text=_NO_TEXT, span_starts=tf.zeros([2, 0], tf.int32),
                 span_ends=tf.zeros([2, 0], tf.int32))
