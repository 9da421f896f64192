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

"""Builds the SpanBERT pretrainer from its config: the one model builder.

The pretraining task, the converters, the export and the fine-tuning models
all build here, so they cannot drift apart.
"""

import tf_keras

from official.modeling import tf_utils
from official.nlp.configs import encoders
from official.nlp.modeling import models
from official_spanbert.modeling import activations  # noqa: F401  (gelu_exact)
from official_spanbert.modeling import attention_clamp
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import bits_dropout
from official_spanbert.modeling import coref_model
from official_spanbert.modeling import coref_reference
from official_spanbert.modeling import head_projection as head_projection_lib
from official_spanbert.modeling import matmul_projections
from official_spanbert.modeling import span_bert_pretrainer
from official_spanbert.modeling import span_ner_model


def build_pretrainer(config) -> span_bert_pretrainer.SpanBertPretrainer:
  """A SpanBertPretrainer with all its variables, from its config.

  Args:
    config: a SpanBertPretrainerConfig (configs/spanbert.py, the
      experiments' `task.model`): encoder, MLM/SBO activations and
      initializer range, which heads, head_projection, clamp_attention
      (modeling/attention_clamp.py), dropout_mask
      (modeling/bits_dropout.py), encoder_layout. Activations may name
      `spanbert>gelu_exact` (registered by modeling/activations.py, imported
      here).

  Returns:
    The model; its heads' variables exist (the constructor calls it once).

  Raises:
    ValueError: an unknown head_projection, dropout_mask or encoder_layout.
  """
  mask = bits_dropout.resolve(config.dropout_mask,
                              head_projection_lib.accelerator_visible())
  if config.encoder_layout not in ("keras", "matmul"):
    raise ValueError(f"task.model.encoder_layout must be 'keras' or "
                     f"'matmul', got {config.encoder_layout!r}")
  encoder = encoders.build_encoder(config.encoder)
  init = tf_keras.initializers.TruncatedNormal(
      stddev=config.mlm_initializer_range)
  model = span_bert_pretrainer.SpanBertPretrainer(
      encoder_network=encoder,
      mlm_activation=tf_utils.get_activation(config.mlm_activation),
      mlm_initializer=init, use_sbo=config.use_sbo,
      max_sbo_targets=config.sbo_targets(),
      sbo_position_embedding_size=config.sbo_position_embedding_size,
      sbo_activation=tf_utils.get_activation(config.sbo_activation),
      sbo_initializer=init, use_next_sentence=config.use_next_sentence,
      head_projection=config.head_projection)
  if config.clamp_attention:  # the encoder is built by now
    attention_clamp.clamp_attention_scores(model.encoder_network)
  if mask == "bits":
    bits_dropout.use_bits_dropout(model)
  if config.encoder_layout == "matmul":
    attention_layout.use_matmul_attention(model.encoder_network)
    matmul_projections.use_matmul_projections(model.encoder_network,
                                              fused_2d=True)
  return model


def build_coref_model(params) -> coref_model.CorefModel:
  """CorefModel (or, with variant: reference, ReferenceCorefModel) on the
  configured encoder, from a CorefModelConfig (tasks/coreference.py).

  Here rather than in the task so that interop/ and serving/ build it
  without importing tasks/ (the layers of dev/layout_report.py).
  """
  if params.variant not in ("default", "reference"):
    raise ValueError(f"task.model.variant must be 'default' or 'reference', "
                     f"got {params.variant!r}")
  extra = {}
  cls = coref_model.CorefModel
  if params.variant == "reference":
    cls = coref_reference.ReferenceCorefModel
    extra = dict(coref_depth=params.coref_depth,
                 max_segment_distance=params.max_segment_distance)
  return cls(
      encoders.build_encoder(params.encoder), **extra,
      max_span_width=params.max_span_width, feature_size=params.feature_size,
      ffnn_size=params.ffnn_size, ffnn_depth=params.ffnn_depth,
      top_span_ratio=params.top_span_ratio,
      max_top_antecedents=params.max_top_antecedents,
      dropout_rate=params.dropout_rate, use_speaker=params.use_speaker,
      suppress_crossing_spans=params.suppress_crossing_spans,
      max_top_spans=params.max_top_spans, chunk_size=params.chunk_size)


def build_span_ner_model(params) -> tf_keras.Model:
  """From a SpanNerModelConfig (tasks/span_ner.py): with head `span`, a
  SpanNerModel; with head `flat`, Model Garden's BertTokenClassifier (a
  BIO tag logit per wordpiece), the flat baseline on the same encoder."""
  encoder = encoders.build_encoder(params.encoder)
  init = tf_keras.initializers.TruncatedNormal(
      stddev=params.encoder.get().initializer_range)
  if params.head == "flat":
    return models.BertTokenClassifier(
        encoder, span_ner_model.NUM_BIO_TAGS, initializer=init,
        dropout_rate=params.dropout_rate)
  if params.head != "span":
    raise ValueError(f"task.model.head must be 'span' or 'flat', got "
                     f"{params.head!r}")
  return span_ner_model.SpanNerModel(
      encoder, max_span_width=params.max_span_width,
      feature_size=params.feature_size, ffnn_size=params.ffnn_size,
      ffnn_depth=params.ffnn_depth, dropout_rate=params.dropout_rate,
      initializer_range=params.encoder.get().initializer_range)
