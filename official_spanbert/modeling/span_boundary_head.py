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

"""The Span Boundary Objective head of SpanBERT."""

import tensorflow as tf
import tf_keras


def gather_positions(sequence: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
  """Gathers [batch, P, width] vectors at positions [batch, P]."""
  return tf.gather(sequence, tf.cast(positions, tf.int32), batch_dims=1)


def tied_logits(states: tf.Tensor, table, biases) -> tf.Tensor:
  """Logits [k, N / k, vocab] of states [N, H] against a table [vocab, H].

  Computed as (table @ states^T)^T, which oneDNN runs about 2.4x faster than
  states @ table^T at H = 768 (benchmarks/RESULTS.md, "Training-step cost of
  SBO"); the i-th of the k row blocks gets biases[i].
  """
  table = tf.cast(table, states.dtype)
  logits = tf.transpose(tf.matmul(table, states, transpose_b=True))
  logits = tf.reshape(logits, [len(biases), -1, table.shape[0]])
  return logits + tf.cast(tf.stack(biases), logits.dtype)[:, tf.newaxis, :]


@tf_keras.utils.register_keras_serializable(package="spanbert")
class SpanBoundaryHead(tf_keras.layers.Layer):
  """Predicts each masked token from its span's outer boundaries (SBO).

  For a token x_i of a masked span s..e the head reads the encodings of x_{s-1}
  and x_{e+1}, concatenates a learned embedding of the relative position
  i - s, and applies Dense(2H + P -> H), activation, LayerNorm, Dense(H -> H),
  activation, LayerNorm; logits are taken against the (tied) input embedding
  table plus the head's own bias.

  Args:
    embedding_table: the encoder's word embedding table [vocab, H]. May be
      None (e.g. in from_config); then call `tie_embedding_table` before use.
    max_targets: rows of the relative-position embedding (targets per span).
    position_embedding_size: width of the relative-position embedding.
    activation: activation of the two dense layers.
    initializer: kernel initializer.
    layer_norm_epsilon: epsilon of the two LayerNorms.
    output: "logits" or "predictions" (log-softmax).

  Example:
    table = tf.random.normal([30, 16])   # the tied word embeddings [vocab, H]
    head = SpanBoundaryHead(table, max_targets=4, position_embedding_size=8)
    states = tf.random.normal([2, 12, 16])   # encoder output [batch, seq, H]
    left, right = tf.constant([[2, 2], [5, 5]]), tf.constant([[5, 5], [9, 9]])
    logits = head(states, left, right, tf.constant([[0, 1], [0, 1]]))
    assert logits.shape == (2, 2, 30)   # [batch, targets, vocab]
  """

  def __init__(self, embedding_table=None, max_targets: int = 15,
               position_embedding_size: int = 200, activation="gelu",
               initializer="glorot_uniform", layer_norm_epsilon: float = 1e-12,
               output: str = "logits", **kwargs):
    super().__init__(**kwargs)
    if output not in ("logits", "predictions"):
      raise ValueError(f"output must be 'logits' or 'predictions', not "
                       f"{output!r}")
    self.embedding_table = embedding_table
    self._max_targets = max_targets
    self._position_embedding_size = position_embedding_size
    self._activation = tf_keras.activations.get(activation)
    self._activation_name = activation
    self._initializer = tf_keras.initializers.get(initializer)
    self._layer_norm_epsilon = layer_norm_epsilon
    self._output = output

  @property
  def max_targets(self) -> int:
    """Relative positions the head has embeddings for (targets per span)."""
    return self._max_targets

  def tie_embedding_table(self, embedding_table):
    """Sets the table the logits are computed against."""
    self.embedding_table = embedding_table

  def build(self, input_shape):
    if self.embedding_table is None:
      raise ValueError("SpanBoundaryHead needs the embedding table; call "
                       "tie_embedding_table() before using the layer")
    vocab_size, hidden = self.embedding_table.shape
    self.position_embeddings = self.add_weight(
        "position_embeddings",
        shape=(self._max_targets, self._position_embedding_size),
        initializer=self._initializer)
    self.dense1 = tf_keras.layers.Dense(
        hidden, activation=self._activation,
        kernel_initializer=self._initializer, name="mlp/dense_1")
    self.layer_norm1 = tf_keras.layers.LayerNormalization(
        epsilon=self._layer_norm_epsilon, name="mlp/layer_norm_1")
    self.dense2 = tf_keras.layers.Dense(
        hidden, activation=self._activation,
        kernel_initializer=self._initializer, name="mlp/dense_2")
    self.layer_norm2 = tf_keras.layers.LayerNormalization(
        epsilon=self._layer_norm_epsilon, name="mlp/layer_norm_2")
    self.bias = self.add_weight("output_bias", shape=(vocab_size,),
                                initializer="zeros")
    super().build(input_shape)

  def call(self, sequence_output, left_positions, right_positions,
           relative_positions):
    """Computes SBO logits.

    Args:
      sequence_output: encoder output [batch, seq_length, H].
      left_positions: s - 1 per target [batch, P].
      right_positions: e + 1 per target [batch, P].
      relative_positions: i - s per target [batch, P], < max_targets.

    Returns:
      [batch, P, vocab] logits (or log-probabilities).
    """
    h = self.hidden_states(sequence_output, left_positions, right_positions,
                           relative_positions)
    logits = tf.reshape(
        tied_logits(tf.reshape(h, [-1, h.shape[-1]]), self.embedding_table,
                    [self.bias]),
        [tf.shape(h)[0], tf.shape(h)[1], self.embedding_table.shape[0]])
    if self._output == "predictions":
      return tf.nn.log_softmax(logits)
    return logits

  def hidden_states(self, sequence_output, left_positions, right_positions,
                    relative_positions):
    """The MLP's output [batch, P, H], before the tied output projection.

    `call` projects it against the embedding table; SpanBertPretrainer
    instead projects it together with the MLM head's states in one matmul.
    Arguments as in `call`; the layer must be built.
    """
    left = gather_positions(sequence_output, left_positions)
    right = gather_positions(sequence_output, right_positions)
    rel = tf.clip_by_value(tf.cast(relative_positions, tf.int32), 0,
                           self._max_targets - 1)
    pos = tf.cast(tf.gather(self.position_embeddings, rel), left.dtype)
    h = tf.concat([left, right, pos], axis=-1)
    h = self.layer_norm1(self.dense1(h))
    return self.layer_norm2(self.dense2(h))

  def build_from_config(self, config):
    # Deserialized heads have no table yet; they build on first call after
    # tie_embedding_table().
    if self.embedding_table is not None:
      super().build_from_config(config)

  def get_config(self):
    config = super().get_config()
    config.update({
        "max_targets": self._max_targets,
        "position_embedding_size": self._position_embedding_size,
        "activation": self._activation_name,
        "initializer": tf_keras.initializers.serialize(self._initializer),
        "layer_norm_epsilon": self._layer_norm_epsilon,
        "output": self._output,
    })
    return config


# "SpanBert>SpanBoundaryHead" until issue 49 gave the package one Keras
# name ("spanbert", as activations.py's): Keras configs saved then load.
tf_keras.utils.get_custom_objects()["SpanBert>SpanBoundaryHead"] = (
    SpanBoundaryHead)
