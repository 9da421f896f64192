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

"""Configs of the SpanBERT pretraining model; its task's config is in tasks/."""

import dataclasses
from typing import Optional

from absl import logging
from official.modeling.hyperparams import base_config
from official.nlp.configs import encoders

CASED_VOCAB_SIZE = 28996


def bert_encoder(num_layers=12, hidden_size=768, num_attention_heads=12,
                 intermediate_size=3072, vocab_size=CASED_VOCAB_SIZE,
                 max_position_embeddings=512, **kwargs
                 ) -> encoders.EncoderConfig:
  """A BertEncoderV2 config (type `bert_v2`)."""
  return encoders.EncoderConfig(
      type="bert_v2",
      bert_v2=encoders.BertEncoderConfig(
          vocab_size=vocab_size, hidden_size=hidden_size,
          num_layers=num_layers, num_attention_heads=num_attention_heads,
          intermediate_size=intermediate_size,
          max_position_embeddings=max_position_embeddings,
          hidden_activation="gelu", dropout_rate=0.1,
          attention_dropout_rate=0.1, **kwargs))


@dataclasses.dataclass
class SpanBertPretrainerConfig(base_config.Config):
  """The SpanBertPretrainer model.

  Attributes:
    encoder: encoder config (BertEncoderV2, `bert_v2`).
    mlm_activation: MLM transform activation.
    mlm_initializer_range: stddev of the heads' truncated-normal initializer.
    use_sbo: add the span boundary objective head.
    max_sbo_targets: SBO relative positions (targets per span): the one
      setting, of the SBO head and of the masking, to which the pretraining
      task passes it (its data configs' max_sbo_targets, which a params.yaml
      written before sets too, must then equal it).
    sbo_position_embedding_size: SBO relative-position embedding width.
    sbo_activation: activation of the SBO head's two layers ("gelu" is Model
      Garden's tanh approximation, `spanbert>gelu_exact` the reference's erf
      form).
    use_next_sentence: add the NSP head (BERT baseline).
    clamp_attention: clamp the encoder's scaled attention scores to +-1e4
      before the softmax, as the reference's `--clamp-attention` does
      (modeling/attention_clamp.py): matters in float16 / bfloat16 only.
    head_projection: how the MLM and SBO logits against the tied table are
      computed: "auto", "layers", "transposed" or "joint"
      (modeling/head_projection.py). The same values either way; "auto" takes
      the measured fastest on CPU and Model Garden's layers on a GPU or TPU.
    dropout_mask: how the encoder's and heads' dropout draws its training
      mask: "bits" (modeling/bits_dropout.py: 16-bit integer random bits, the
      rate exact in every dtype, the op about half the CPU time), "keras"
      (Keras' Dropout: a float uniform per element) or "auto", the default
      (bits_dropout.resolve: "bits" on a CPU with native bfloat16,
      AVX512-BF16 or AMX, where the mixed-bfloat16 step was measured 4-11%
      faster on a Zen 4 EPYC, benchmarks/RESULTS.md; "keras"
      on other CPUs and with a GPU or TPU visible, where it is not faster or
      not measured). Dropout 0 and inference are the same either way.
    encoder_layout: how the encoder computes its products in training:
      "keras" (Model Garden's layers: Einsum projections and attention) or
      "matmul" (the projections as MatMul + BiasAdd on the 2-D product,
      which oneDNN fuses, and the attention's scores and context as batched
      matmuls: matmul_projections.py, attention_layout.py). The same
      variables and the same math, rounded differently; the exports serve
      "matmul" (with the GELU fused too) whatever the training used.
    sbo_max_targets: deprecated, max_sbo_targets's name until issue 36; a
      params.yaml that sets it (every model dir written before) still loads,
      with a warning (`sbo_targets`).
  """
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=bert_encoder)
  mlm_activation: str = "gelu"
  mlm_initializer_range: float = 0.02
  use_sbo: bool = True
  max_sbo_targets: int = 15
  sbo_position_embedding_size: int = 200
  sbo_activation: str = "gelu"
  use_next_sentence: bool = False
  clamp_attention: bool = False
  head_projection: str = "auto"
  dropout_mask: str = "auto"
  encoder_layout: str = "keras"
  sbo_max_targets: Optional[int] = None

  def sbo_targets(self) -> int:
    """max_sbo_targets, or the deprecated sbo_max_targets an older params.yaml
    sets (with a warning); a one-line ValueError if both are set apart."""
    if self.sbo_max_targets is None:
      return self.max_sbo_targets
    if self.max_sbo_targets not in (15, self.sbo_max_targets):
      raise ValueError(
          f"task.model.sbo_max_targets={self.sbo_max_targets} (deprecated) "
          f"and task.model.max_sbo_targets={self.max_sbo_targets} differ; "
          "keep max_sbo_targets only")
    logging.warning("task.model.sbo_max_targets is deprecated: it is "
                    "task.model.max_sbo_targets now (the data config's name); "
                    "rename it in your YAML or params.yaml")
    return self.sbo_max_targets
