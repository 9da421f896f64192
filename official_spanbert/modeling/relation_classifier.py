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

"""A relation classifier that reads the two entities' start markers.

"Entity start" pooling (Baldini Soares et al. 2019; Zhou and Chen 2021):
the encoder's vectors at the first subject marker and the first object
marker, concatenated, go through a dense ReLU layer and the output layer.
The markers are found in `input_word_ids` by their vocab ids (the records'
meta_data.json `entity_start_ids`), so the records and the served inputs
need nothing besides the usual three tensors; a sequence whose marker was
cut off by truncation reads the [CLS] vector in its place.

Example:
  model = RelationClassifier(encoder, num_classes=19,
                             subject_marker_ids=[3], object_marker_ids=[4])
  logits = model({"input_word_ids": ids, "input_mask": mask,
                  "input_type_ids": types})      # [batch, 19]
"""

from typing import Sequence

import tensorflow as tf
import tf_keras


def first_position(ids: tf.Tensor, marker_ids: Sequence[int]) -> tf.Tensor:
  """[batch] index of the first token of each row whose id is one of
  `marker_ids`, 0 where there is none."""
  hits = tf.reduce_any(
      tf.equal(ids[:, :, tf.newaxis],
               tf.constant(list(marker_ids), ids.dtype)), axis=-1)
  return tf.where(tf.reduce_any(hits, axis=1),
                  tf.argmax(tf.cast(hits, tf.int32), axis=1,
                            output_type=tf.int32), 0)


@tf_keras.utils.register_keras_serializable(package="SpanBert")
class RelationClassifier(tf_keras.Model):
  """Encoder + entity-start head: logits of the relation classes.

  Args:
    network: the encoder (dict inputs -> dict with `sequence_output`).
    num_classes: relation classes.
    subject_marker_ids, object_marker_ids: vocab ids of the markers that
      open the subject / object.
    initializer: the head's kernel initializer.
    dropout_rate: dropout before the output layer.
  """

  def __init__(self, network, num_classes: int,
               subject_marker_ids: Sequence[int],
               object_marker_ids: Sequence[int],
               initializer="glorot_uniform", dropout_rate: float = 0.1,
               **kwargs):
    super().__init__(**kwargs)
    if not subject_marker_ids or not object_marker_ids:
      raise ValueError("entity_start pooling needs the ids of the subject "
                       "and object markers (entity_start_ids in the "
                       "records' meta_data.json)")
    self._network = network
    self._config = dict(num_classes=num_classes,
                        subject_marker_ids=list(subject_marker_ids),
                        object_marker_ids=list(object_marker_ids),
                        initializer=initializer, dropout_rate=dropout_rate)
    hidden = network.get_config().get("hidden_size") or network.get_config(
    )["embedding_width"]
    self.pair_dense = tf_keras.layers.Dense(
        hidden, activation="relu", kernel_initializer=initializer,
        name="relation/pair_dense")
    self.dropout = tf_keras.layers.Dropout(dropout_rate)
    self.out = tf_keras.layers.Dense(num_classes,
                                     kernel_initializer=initializer,
                                     name="relation/logits")

  def call(self, inputs, training=None):  # pylint: disable=arguments-differ
    sequence = self._network(inputs, training=training)["sequence_output"]
    ids = inputs["input_word_ids"]
    subj = first_position(ids, self._config["subject_marker_ids"])
    obj = first_position(ids, self._config["object_marker_ids"])
    pair = tf.concat([tf.gather(sequence, subj, batch_dims=1),
                      tf.gather(sequence, obj, batch_dims=1)], axis=-1)
    hidden = self.dropout(self.pair_dense(pair), training=training)
    return self.out(hidden)

  @property
  def checkpoint_items(self):
    return dict(encoder=self._network)

  def get_config(self):
    return dict(self._config, network=self._network)

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)
