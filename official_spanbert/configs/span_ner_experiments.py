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

`spanbert/span_ner`  span classification on the encoder (every span of up to
                     24 wordpieces: none or one of LitBank's six types),
                     set up for LitBank's entity layer (Bamman et al. 2019);
                     `task.model.head: flat` is the flat BIO baseline.

Defaults: windows of 256 wordpieces, 8 a step; encoder lr 5e-5, task layers
x5 (head_learning_rate_multiplier), AdamW with 10% linear warmup and linear
decay, clip-norm 1.0; 10 epochs of LitBank fold 0's training windows (844 of
them with a 30k uncased vocab: ~105 steps an epoch), evaluation every epoch,
the best checkpoint by f1. Set at least:

  task.init_checkpoint                    the pretrained encoder
  task.train_data.input_path              LitBank tsv input (e.g.
                                          splits/0/train.txt)
  task.validation_data.input_path         the same (splits/0/dev.txt)
  task.{train,validation}_data.vocab_file / do_lower_case   its vocab

configs/experiments/span_ner/litbank.yaml sets the LitBank fold-0 paths
relative to the shared data.
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining_experiments
from official_spanbert.tasks import span_ner

STEPS_PER_EPOCH = 105
EPOCHS = 10


@exp_factory.register_config_factory("spanbert/span_ner")
def span_ner_experiment() -> cfg.ExperimentConfig:
  """Nested NER fine-tuning (LitBank-sized defaults)."""
  return pretraining_experiments.finetuning_experiment(
      span_ner.SpanNerTaskConfig(head_learning_rate_multiplier=5.0),
      STEPS_PER_EPOCH, EPOCHS, "f1", learning_rate=5e-5)
