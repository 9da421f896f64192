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

"""serving/span_encoder_module.py: `encode_spans` of no span (issue 55,
item 7): no text, or spans of shape [2, 0], failed with TensorFlow's
`while/GatherV2 … indices = -1 is not in [0, 0)` / an ArgMax of an empty
tensor instead of embeddings of no rows / columns. Through a saved and
loaded SavedModel, as a server runs it (the pretraining export's
`encode_spans` is this module's).
"""

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert import registry_imports  # noqa: F401
import export_helpers


@pytest.fixture(scope="module")
def encode_spans(tmp_path_factory, cased_vocab):
  """The pretraining export's `encode_spans` (export_helpers.shared_export,
  which other files load too): its span encoder is this module's."""
  exported = export_helpers.shared_export(tmp_path_factory, cased_vocab)
  return tf.saved_model.load(exported["model"]).signatures["encode_spans"]


@pytest.mark.parametrize("texts,n", [
    ([], 0), ([], 3), (["Ann met Bob in Paris.", "Hi there."], 0)],
                         ids=["no_text", "no_text_three_columns", "no_span"])
def test_encode_spans_of_no_span_is_an_empty_result(encode_spans, texts, n):
  starts = tf.zeros([len(texts), n], tf.int32)
  out = encode_spans(text=tf.constant(texts, tf.string), span_starts=starts,
                     span_ends=starts)["span_embeddings"]
  assert out.shape == [len(texts), n, 96]  # 3 x hidden 32
  # The same module still encodes spans, and still refuses bad ones.
  got = encode_spans(text=tf.constant(["Ann met Bob."]),
                     span_starts=tf.constant([[0, -1]]),
                     span_ends=tf.constant([[3, -1]]))["span_embeddings"]
  assert got.shape == [1, 2, 96] and np.abs(got[0, 0]).sum() > 0
  assert not got[0, 1].numpy().any()
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="must both be .batch, n. with the batch of text"):
    encode_spans(text=tf.constant([], tf.string),
                 span_starts=tf.zeros([2, 0], tf.int32),
                 span_ends=tf.zeros([2, 0], tf.int32))


def test_a_word_over_100_bytes_is_one_unk_spanning_the_word(encode_spans):
  """A word over 100 bytes is one [UNK] covering the whole word (issue 55;
  tf.text ended it 5 characters in): the span of the word is that [UNK]'s
  vector, and a span of its first 5 characters holds no wordpiece."""
  text = "See " + "ACGT" * 30 + " here."
  out = encode_spans(text=tf.constant([text]),
                     span_starts=tf.constant([[4, 0]]),
                     span_ends=tf.constant([[124, 124]]))[
                         "span_embeddings"].numpy()
  assert np.abs(out[0, 0]).sum() > 0
  # [x_start, x_end, mean] of one piece: three copies of its vector.
  np.testing.assert_allclose(out[0, 0, :32], out[0, 0, 32:64], atol=1e-6)
  np.testing.assert_allclose(out[0, 1, 32:64], out[0, 0, 32:64], atol=1e-6)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"characters \[4, 9\)\) covers no wordpiece"):
    encode_spans(text=tf.constant([text]), span_starts=tf.constant([[4]]),
                 span_ends=tf.constant([[9]]))
