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

`spanbert/coref`  Lee et al. (2018) span ranking on the encoder, as SpanBERT's
                  coreference code (independent 384-wordpiece segments),
                  set up for LitBank (Bamman et al. 2020), which annotates
                  singletons: a mention loss and singleton output are on.

Defaults follow the reference's base model where LitBank allows: encoder lr
2e-5 and task-layer lr 1e-4 (head_learning_rate_multiplier 5), AdamW with 10%
linear warmup and linear decay, clip-norm 1.0, dropout 0.3, span width 30,
0.4 spans per wordpiece, 50 antecedents, FFNN 3000 x 1, feature size 20,
training windows of up to 11 segments, 20 epochs of LitBank's 80 training
documents (one document per step), evaluation every epoch, the best
checkpoint by conll_f1. Set at least:

  task.init_checkpoint                    the pretrained encoder
  task.train_data.input_path              CoNLL input (e.g. LitBank
                                          splits/0/train.txt) or TFRecords
  task.validation_data.input_path         CoNLL input (splits/0/dev.txt)
  task.{train,validation}_data.vocab_file / do_lower_case   its vocab
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining_experiments
from official_spanbert.tasks import coreference

LITBANK_TRAIN_DOCUMENTS = 80
EPOCHS = 20


@exp_factory.register_config_factory("spanbert/coref")
def coref() -> cfg.ExperimentConfig:
  """Coreference fine-tuning (LitBank-sized defaults)."""
  return pretraining_experiments.finetuning_experiment(
      coreference.CorefTaskConfig(
          train_data=coreference.CorefDataConfig(
              is_training=True, max_training_segments=11),
          validation_data=coreference.CorefDataConfig(is_training=False),
          head_learning_rate_multiplier=5.0, mention_loss_weight=1.0,
          predict_singletons=True),
      LITBANK_TRAIN_DOCUMENTS, EPOCHS, "conll_f1", learning_rate=2e-5)
