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

"""SpanBERT pretraining model: encoder + MLM head + SBO head (+ NSP head)."""

from typing import Dict

import tensorflow as tf
import tf_keras

from official.nlp.modeling import layers
from official_spanbert.modeling import head_projection as head_projection_lib
from official_spanbert.modeling import span_boundary_head

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _fresh(initializer):
  """A separate initializer instance per head (unseeded ones repeat values)."""
  return tf_keras.initializers.get(
      tf_keras.initializers.serialize(tf_keras.initializers.get(initializer)))


@tf_keras.utils.register_keras_serializable(package="spanbert")
class SpanBertPretrainer(tf_keras.Model):
  """BertEncoderV2 + MaskedLM + SpanBoundaryHead (+ optional NSP head).

  Inputs are the loader's features: input_word_ids, input_mask,
  input_type_ids, masked_lm_positions and, with the SBO head,
  sbo_left_positions, sbo_right_positions, sbo_relative_positions.

  Outputs: sequence_output, pooled_output, mlm_logits, and sbo_logits and
  next_sentence (logits) when those heads exist.

  Args:
    encoder_network: a dict-output encoder (e.g. networks.BertEncoderV2) with
      get_embedding_table().
    mlm_activation: activation of the MLM transform.
    mlm_initializer: initializer of the MLM transform.
    use_sbo: add the span boundary head.
    max_sbo_targets: SBO relative positions (targets per span).
    sbo_position_embedding_size: SBO relative-position embedding width.
    sbo_activation: activation inside the SBO MLP.
    sbo_initializer: initializer of the SBO head.
    use_next_sentence: add BERT's NSP classification head (baseline).
    head_projection: how the MLM and SBO logits are computed, one of
      head_projection.HEAD_PROJECTIONS (modeling/head_projection.py):
      "auto" takes the measured fastest on CPU and Model Garden's layers on
      a GPU or TPU; the values are the same either way.

  Example:
    from official.nlp.modeling import networks
    encoder = networks.BertEncoderV2(vocab_size=30, hidden_size=16,
        num_layers=1, num_attention_heads=2, inner_dim=32)
    model = SpanBertPretrainer(encoder, max_sbo_targets=4)
    outputs = model(dummy_inputs(batch_size=2, seq_length=8, max_predictions=3))
    assert outputs["sbo_logits"].shape == (2, 3, 30)
  """

  def __init__(self, encoder_network: tf_keras.Model, mlm_activation="gelu",
               mlm_initializer="glorot_uniform", use_sbo: bool = True,
               max_sbo_targets: int = 15,
               sbo_position_embedding_size: int = 200,
               sbo_activation="gelu", sbo_initializer="glorot_uniform",
               use_next_sentence: bool = False, head_projection: str = "auto",
               **kwargs):
    super().__init__(**kwargs)
    head_projection_lib.check(head_projection)
    self._config = dict(
        encoder_network=encoder_network, mlm_activation=mlm_activation,
        mlm_initializer=mlm_initializer, use_sbo=use_sbo,
        max_sbo_targets=max_sbo_targets,
        sbo_position_embedding_size=sbo_position_embedding_size,
        sbo_activation=sbo_activation, sbo_initializer=sbo_initializer,
        use_next_sentence=use_next_sentence, head_projection=head_projection)
    # Resolved for "auto" once, where the model is built.
    self._on_accelerator = head_projection_lib.accelerator_visible()
    self.encoder_network = encoder_network
    # Subclassed encoders create their embedding table when first called.
    _ = encoder_network(encoder_network.inputs)
    table = encoder_network.get_embedding_table()
    self.masked_lm = layers.MaskedLM(
        embedding_table=table, activation=mlm_activation,
        initializer=_fresh(mlm_initializer), name="cls/predictions")
    self.span_boundary = None
    if use_sbo:
      self.span_boundary = span_boundary_head.SpanBoundaryHead(
          embedding_table=table, max_targets=max_sbo_targets,
          position_embedding_size=sbo_position_embedding_size,
          activation=sbo_activation, initializer=_fresh(sbo_initializer),
          name="cls/span_boundary")
    self.next_sentence = None
    if use_next_sentence:
      hidden = table.shape[-1]
      self.next_sentence = layers.ClassificationHead(
          inner_dim=hidden, num_classes=2, dropout_rate=0.1,
          initializer=_fresh(mlm_initializer), name="next_sentence")
    # Create every head's variables now, so that a checkpoint of the model
    # always holds the heads (lazily built heads would be missing from it).
    self(dummy_inputs(1, 2, 1), training=False)

  def call(self, inputs: Dict[str, tf.Tensor], training=None):
    encoder_outputs = self.encoder_network(
        {k: inputs[k] for k in ENCODER_INPUTS}, training=training)
    sequence_output = encoder_outputs["sequence_output"]
    masked_positions = tf.cast(inputs["masked_lm_positions"], tf.int32)
    outputs = {
        "sequence_output": sequence_output,
        "pooled_output": encoder_outputs["pooled_output"],
    }
    if self.span_boundary is not None:
      outputs["mlm_logits"], outputs["sbo_logits"] = self.head_logits(
          sequence_output, masked_positions, inputs["sbo_left_positions"],
          inputs["sbo_right_positions"], inputs["sbo_relative_positions"])
    else:
      outputs["mlm_logits"] = self.head_logits(sequence_output,
                                               masked_positions)
    if self.next_sentence is not None:
      outputs["next_sentence"] = self.next_sentence(sequence_output,
                                                    training=training)
    return outputs

  def head_logits(self, sequence_output, masked_positions,
                  left_positions=None, right_positions=None,
                  relative_positions=None):
    """MLM (and SBO) logits against the tied embedding table.

    The same values as calling `masked_lm` (and `span_boundary`), from the
    same variables, computed by the configured `head_projection` (see
    modeling/head_projection.py: on CPU "auto" is the faster transposed /
    joint projection, with a GPU or TPU visible Model Garden's layers).

    Args:
      sequence_output: encoder output [batch, seq_length, H].
      masked_positions: [batch, P] int32.
      left_positions: SBO s - 1 per slot [batch, P] (None: no SBO).
      right_positions: SBO e + 1 per slot [batch, P].
      relative_positions: SBO i - s per slot [batch, P].

    Returns:
      mlm_logits [batch, P, vocab], or (mlm_logits, sbo_logits) with SBO.
    """
    projection = head_projection_lib.resolve(
        self._config["head_projection"],
        self.masked_lm.embedding_table.shape[-1],
        with_sbo=left_positions is not None,
        on_accelerator=self._on_accelerator,
        joint_min_width=_JOINT_PROJECTION_MIN_WIDTH)
    return head_projection_lib.head_logits(
        self.masked_lm, self.span_boundary, sequence_output, masked_positions,
        left_positions, right_positions, relative_positions,
        projection=projection)

  @property
  def checkpoint_items(self) -> Dict[str, tf.Module]:
    """Encoder and heads, for encoder-only export and fine-tuning init."""
    items = dict(encoder=self.encoder_network, masked_lm=self.masked_lm)
    if self.span_boundary is not None:
      items["span_boundary"] = self.span_boundary
    if self.next_sentence is not None:
      items["next_sentence"] = self.next_sentence
    return items

  def get_config(self):
    return dict(self._config)

  @classmethod
  def from_config(cls, config, custom_objects=None):
    return cls(**config)


# "SpanBert>SpanBertPretrainer" until issue 49 gave the package one Keras
# name ("spanbert", as activations.py's): Keras configs saved then load.
tf_keras.utils.get_custom_objects()["SpanBert>SpanBertPretrainer"] = (
    SpanBertPretrainer)


# Hidden width from which head_projection "auto" projects the MLM and SBO
# states together on CPU (tests lower it).
_JOINT_PROJECTION_MIN_WIDTH = head_projection_lib.JOINT_MIN_WIDTH


def dummy_inputs(batch_size: int, seq_length: int, max_predictions: int,
                 ) -> Dict[str, tf.Tensor]:
  """All-zero inputs of the right shapes (to build a model)."""
  ids = tf.zeros([batch_size, seq_length], tf.int32)
  pred = tf.zeros([batch_size, max_predictions], tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.ones_like(ids),
              input_type_ids=ids, masked_lm_positions=pred,
              sbo_left_positions=pred, sbo_right_positions=pred,
              sbo_relative_positions=pred)


def from_encoder(encoder_network, seq_length: int = 8,
                 max_predictions: int = 2, **kwargs) -> SpanBertPretrainer:
  """A SpanBertPretrainer on `encoder_network`, its variables built.

  From an encoder object; the one builder from a config is
  modeling/builder.py's build_pretrainer.

    model = span_bert_pretrainer.from_encoder(encoder, use_sbo=False)
  """
  model = SpanBertPretrainer(encoder_network, **kwargs)
  model(dummy_inputs(1, seq_length, max_predictions))
  return model

