"""Configs of the SpanBERT pretraining model and task."""

import dataclasses

from official.core import config_definitions as cfg
from official.modeling.hyperparams import base_config
from official.nlp.configs import encoders
from official_spanbert.data import pretrain_dataloader

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
    sbo_max_targets: SBO relative positions (targets per span).
    sbo_position_embedding_size: SBO relative-position embedding width.
    use_next_sentence: add the NSP head (BERT baseline).
  """
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=bert_encoder)
  mlm_activation: str = "gelu"
  mlm_initializer_range: float = 0.02
  use_sbo: bool = True
  sbo_max_targets: int = 15
  sbo_position_embedding_size: int = 200
  use_next_sentence: bool = False


@dataclasses.dataclass
class SpanBertPretrainTaskConfig(cfg.TaskConfig):
  """The pretraining task: loss = MLM + sbo_weight * SBO (+ NSP)."""
  model: SpanBertPretrainerConfig = dataclasses.field(
      default_factory=SpanBertPretrainerConfig)
  sbo_weight: float = 1.0
  train_data: pretrain_dataloader.SpanBertPretrainDataConfig = (
      dataclasses.field(
          default_factory=pretrain_dataloader.SpanBertPretrainDataConfig))
  validation_data: pretrain_dataloader.SpanBertPretrainDataConfig = (
      dataclasses.field(default_factory=lambda: pretrain_dataloader.
                        SpanBertPretrainDataConfig(is_training=False)))
