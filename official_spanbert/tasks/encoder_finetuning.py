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

"""What the span tasks (coreference, span NER) share around their models.

Encoder restore from init_checkpoint, two learning rates
(head_learning_rate_multiplier) and the predictions_dir.

Example:
  class MyTask(encoder_finetuning.EncoderFinetuningTask):
    def make_model(self):
      return builder.build_my_model(self.task_config.model)
"""

import dataclasses
import os
from typing import Optional, Sequence

import tf_keras

from official.core import base_task
from official.core import config_definitions as cfg
from official.modeling.hyperparams import base_config
from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data import tokenization
from official_spanbert.modeling import checkpoints
from official_spanbert.modeling import coref_optimizer

PREDICTIONS_DIR = "predictions"


@dataclasses.dataclass
class EncoderModelConfig(base_config.Config):
  """The encoder; `mlm_activation` lets a converted checkpoint's params.yaml
  (which sets task.model.mlm_activation) apply unchanged (unused)."""
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=spanbert_configs.bert_encoder)
  mlm_activation: str = "gelu"


@dataclasses.dataclass
class TextDataConfig(cfg.DataConfig):
  """Text input: `vocab_file` and `do_lower_case` are the checkpoint's."""
  vocab_file: str = ""
  do_lower_case: bool = False
  is_training: bool = True


@dataclasses.dataclass
class EncoderTaskConfig(cfg.TaskConfig):
  """A fine-tuning task.

  Attributes:
    head_learning_rate_multiplier: task-layer learning rate / encoder
      learning rate.
    predictions_dir: where evaluation writes its predictions (default
      <model_dir>/predictions).
  """
  head_learning_rate_multiplier: float = 1.0
  predictions_dir: str = ""

  def validate(self, data_fields: Sequence[str] = ()) -> None:
    """Model Garden's restrictions; a task adds its own checks of the
    config and of the data configs in `data_fields` (the data the run
    reads), as tasks/pretraining.py's does."""
    del data_fields  # coreference and span NER check their data as they read
    super().validate()


def tokenizer(params: TextDataConfig) -> tokenization.WordpieceTokenizer:
  """The data config's tokenizer (ValueError without a vocab_file)."""
  if not params.vocab_file:
    raise ValueError("set the data config's vocab_file (and do_lower_case) "
                     "to the vocab of the checkpoint being fine-tuned")
  return tokenization.WordpieceTokenizer(params.vocab_file,
                                         lower_case=params.do_lower_case)


class EncoderFinetuningTask(base_task.Task):
  """A base_task.Task whose subclasses give make_model().

  Example:
    class MyTask(EncoderFinetuningTask):
      def make_model(self):
        return builder.build_span_ner_model(self.task_config.model)
  """

  def __init__(self, params, logging_dir: Optional[str] = None,
               name: Optional[str] = None):
    super().__init__(params, logging_dir, name=name)
    self._model = None

  def make_model(self) -> tf_keras.Model:
    raise NotImplementedError

  def build_model(self) -> tf_keras.Model:
    self._model = self.make_model()
    return self._model

  def initialize(self, model: tf_keras.Model):
    """Restores the encoder from task_config.init_checkpoint, if set."""
    if self.task_config.init_checkpoint:
      checkpoints.restore_encoder(model.checkpoint_items["encoder"],
                                  self.task_config.init_checkpoint)

  def create_optimizer(self, optimizer_config, runtime_config=None,
                       dp_config=None):
    """Two learning rates: the config's for the encoder, times
    head_learning_rate_multiplier for the task layers."""
    del runtime_config, dp_config
    if self._model is None:
      raise ValueError("build_model() must come before create_optimizer()")
    encoder = self._model.checkpoint_items["encoder"]
    return coref_optimizer.SplitLearningRateOptimizer(
        optimizer_config, self.task_config.head_learning_rate_multiplier,
        lambda: encoder.trainable_variables)

  def predictions_dir(self) -> str:
    return self.task_config.predictions_dir or os.path.join(
        self.logging_dir or ".", PREDICTIONS_DIR)
