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

"""Registered SQuAD fine-tuning experiments.

`spanbert/squad_v1` and `spanbert/squad_v2` (null answers from [CLS], with the
best null-score threshold searched at evaluation), with the SpanBERT paper's
base-model defaults. Settings and the best checkpoint: docs/finetuning.md.
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining as pretraining_configs
from official_spanbert.tasks import question_answering

SQUAD_TRAIN_QUESTIONS = 88_641
BATCH_SIZE = 32
EPOCHS = 4


def _experiment(version_2: bool) -> cfg.ExperimentConfig:
  steps = SQUAD_TRAIN_QUESTIONS * EPOCHS // BATCH_SIZE

  def data(is_training: bool):
    return question_answering.QADataConfig(
        is_training=is_training, seq_length=512, doc_stride=128,
        query_length=64, global_batch_size=BATCH_SIZE,
        version_2_with_negative=version_2, do_lower_case=False,
        drop_remainder=is_training)

  return cfg.ExperimentConfig(
      runtime=cfg.RuntimeConfig(distribution_strategy="mirrored"),
      task=question_answering.SpanBertQAConfig(
          train_data=data(True), validation_data=data(False)),
      trainer=cfg.TrainerConfig(
          train_steps=steps, steps_per_loop=100, summary_interval=100,
          checkpoint_interval=1000, validation_interval=steps,
          validation_steps=-1, max_to_keep=3,
          best_checkpoint_eval_metric="best_f1" if version_2 else "f1",
          best_checkpoint_metric_comp="higher",
          optimizer_config=pretraining_configs.optimization_config(
              train_steps=steps, warmup_steps=steps // 10,
              learning_rate=2e-5)),
      restrictions=[
          "task.train_data.is_training != None",
          "task.validation_data.is_training != None",
      ])


@exp_factory.register_config_factory("spanbert/squad_v1")
def squad_v1() -> cfg.ExperimentConfig:
  """SQuAD v1.1 fine-tuning."""
  return _experiment(version_2=False)


@exp_factory.register_config_factory("spanbert/squad_v2")
def squad_v2() -> cfg.ExperimentConfig:
  """SQuAD 2.0 fine-tuning."""
  return _experiment(version_2=True)
