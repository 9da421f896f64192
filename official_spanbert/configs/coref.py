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

"""Registered coreference experiment.

`spanbert/coref`: Lee et al. (2018) span ranking on the encoder, as SpanBERT's
coreference code, set up for LitBank (mention loss and singletons on). Its
defaults and the settings a run must give: docs/coreference.md.
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining as pretraining_configs
from official_spanbert.tasks import coreference

LITBANK_TRAIN_DOCUMENTS = 80
EPOCHS = 20


@exp_factory.register_config_factory("spanbert/coref")
def coref() -> cfg.ExperimentConfig:
  """Coreference fine-tuning (LitBank-sized defaults)."""
  return pretraining_configs.finetuning_experiment(
      coreference.CorefTaskConfig(
          train_data=coreference.CorefDataConfig(
              is_training=True, max_training_segments=11),
          validation_data=coreference.CorefDataConfig(is_training=False),
          head_learning_rate_multiplier=5.0, mention_loss_weight=1.0,
          predict_singletons=True),
      LITBANK_TRAIN_DOCUMENTS, EPOCHS, "conll_f1", learning_rate=2e-5)
