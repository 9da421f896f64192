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

"""modeling/relation_classifier: the entity-start classifier."""

import numpy as np
import pytest
import tensorflow as tf

from official.nlp.modeling import networks
from official_spanbert.modeling import relation_classifier


def test_first_position_finds_the_first_marker_of_any_id():
  ids = tf.constant([[101, 5, 7, 4, 5, 102],
                     [101, 9, 9, 4, 9, 102],
                     [101, 9, 9, 9, 9, 102]])
  np.testing.assert_array_equal(
      relation_classifier.first_position(ids, [4, 5]), [1, 3, 0])


def _encoder():
  return networks.BertEncoderV2(vocab_size=40, hidden_size=16, num_layers=1,
                                num_attention_heads=2, inner_dim=32,
                                max_sequence_length=16)


def test_logits_read_the_markers_vectors_not_the_cls_vector():
  tf.keras.utils.set_random_seed(0)
  model = relation_classifier.RelationClassifier(
      _encoder(), num_classes=3, subject_marker_ids=[4],
      object_marker_ids=[5])
  ids = tf.constant([[2, 4, 10, 11, 5, 12, 3, 0]])
  inputs = {"input_word_ids": ids, "input_mask": tf.constant([[1] * 7 + [0]]),
            "input_type_ids": tf.zeros_like(ids)}
  logits = model(inputs, training=False)
  assert logits.shape == (1, 3)
  # The same from the encoder's vectors at positions 1 and 4 by hand.
  seq = model.checkpoint_items["encoder"](inputs)["sequence_output"]
  pair = tf.concat([seq[:, 1], seq[:, 4]], -1)
  np.testing.assert_allclose(model.out(model.pair_dense(pair)), logits,
                             atol=1e-6)
  # Moving the object marker changes the output; a missing marker reads
  # [CLS] (position 0).
  moved = dict(inputs, input_word_ids=tf.constant([[2, 4, 10, 5, 11, 12, 3,
                                                    0]]))
  assert not np.allclose(model(moved), logits)
  gone = dict(inputs, input_word_ids=tf.constant([[2, 4, 10, 11, 9, 12, 3,
                                                   0]]))
  seq = model.checkpoint_items["encoder"](gone)["sequence_output"]
  np.testing.assert_allclose(
      model.out(model.pair_dense(tf.concat([seq[:, 1], seq[:, 0]], -1))),
      model(gone, training=False), atol=1e-6)


def test_no_marker_ids_is_refused():
  with pytest.raises(ValueError, match="needs the ids of the subject and "
                     "object markers"):
    relation_classifier.RelationClassifier(_encoder(), 3, [], [5])
