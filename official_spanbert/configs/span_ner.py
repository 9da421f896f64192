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

"""Registered nested NER experiment.

`spanbert/span_ner`: span classification on the encoder for LitBank's entity
layer (`task.model.head: flat` is the BIO baseline). Defaults and the settings
a run must give: docs/finetuning.md, "Nested NER".
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining as pretraining_configs
from official_spanbert.tasks import span_ner

STEPS_PER_EPOCH = 105
EPOCHS = 10


@exp_factory.register_config_factory("spanbert/span_ner")
def span_ner_experiment() -> cfg.ExperimentConfig:
  """Nested NER fine-tuning (LitBank-sized defaults)."""
  return pretraining_configs.finetuning_experiment(
      span_ner.SpanNerTaskConfig(head_learning_rate_multiplier=5.0),
      STEPS_PER_EPOCH, EPOCHS, "f1", learning_rate=5e-5)
