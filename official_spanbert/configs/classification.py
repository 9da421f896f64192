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

"""Registered fine-tuning experiments for classification.

`spanbert/classification` (CoLA, RTE, SST-2, ...; `spanbert/glue` is its old
name) and `spanbert/tacred` (relation extraction on TACRED-format records,
TACRED's or SemEval-2010 Task 8's: configs/experiments/semeval2010.yaml;
num_classes from the records). Their defaults, optimiser and
best-checkpoint settings: docs/finetuning.md.
"""

from absl import logging
from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.data.finetuning import classification_loader as cls_loader
from official_spanbert.configs.pretraining import (
    optimization_config)
from official_spanbert.tasks import classification


def _experiment(metric_type: str, num_classes: int, train_steps: int,
                best_metric: str, batch_size: int = 32, seq_length: int = 128
                ) -> cfg.ExperimentConfig:
  """Fine-tuning with evaluation over the whole dev set."""
  def data(is_training):
    return cls_loader.ClassificationDataConfig(
        is_training=is_training, drop_remainder=is_training,
        seq_length=seq_length, global_batch_size=batch_size)
  return cfg.ExperimentConfig(
      runtime=cfg.RuntimeConfig(distribution_strategy="mirrored"),
      task=classification.SpanBertClassificationConfig(
          metric_type=metric_type,
          model=classification.SpanBertClassifierConfig(
              num_classes=num_classes),
          train_data=data(True), validation_data=data(False)),
      trainer=cfg.TrainerConfig(
          train_steps=train_steps, steps_per_loop=100, summary_interval=100,
          checkpoint_interval=train_steps, validation_interval=train_steps,
          validation_steps=-1, max_to_keep=1,
          best_checkpoint_eval_metric=best_metric,
          best_checkpoint_metric_comp="higher",
          optimizer_config=optimization_config(
              train_steps=train_steps, warmup_steps=train_steps // 10,
              learning_rate=2e-5)),
      restrictions=[
          "task.train_data.is_training != None",
          "task.validation_data.is_training != None",
      ])


@exp_factory.register_config_factory("spanbert/classification")
def spanbert_classification() -> cfg.ExperimentConfig:
  """GLUE-style classification; 3 epochs of RTE train (2,490) at batch 32."""
  return _experiment("accuracy", num_classes=2, train_steps=231,
                     best_metric="cls_accuracy")


@exp_factory.register_config_factory("spanbert/glue")
def spanbert_glue() -> cfg.ExperimentConfig:
  """Deprecated: spanbert/classification's name until issue 36."""
  logging.warning("--experiment=spanbert/glue is deprecated: it is "
                  "spanbert/classification now (the same experiment)")
  return spanbert_classification()


@exp_factory.register_config_factory("spanbert/tacred")
def spanbert_tacred() -> cfg.ExperimentConfig:
  """Relation extraction; 10 epochs of TACRED train (68,124) at batch 32.

  num_classes 0: the records' number of labels (42 for TACRED, 19 for
  SemEval-2010 Task 8).
  """
  return _experiment("tacred_f1", num_classes=0, train_steps=21_280,
                     best_metric="tacred_f1")
