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

`spanbert/squad_v1`  SQuAD v1.1: every question has an answer.
`spanbert/squad_v2`  SQuAD 2.0: null answer from [CLS]; evaluation also finds
                     and saves the best null-score threshold.

Defaults follow the SpanBERT paper's SQuAD setup for the base model: max
sequence length 512 (384 is Model Garden's default; either works), doc
stride 128, max query length 64, n-best 20, max answer length 30, AdamW with
peak lr 2e-5, 10% linear warmup, linear decay, batch 32, 4 epochs of the
88k-question SQuAD train set. Set at least:

  task.init_checkpoint             the pretrained encoder
  task.train_data.input_path       SQuAD-format training JSON (or TFRecords
                                   from spanbert-create-finetuning-data)
  task.validation_data.input_path  SQuAD-format evaluation JSON
  task.{train,validation}_data.vocab_file / do_lower_case   its vocab

Best checkpoint (as the reference, which evaluates on dev several times per
epoch and keeps the best model): with --mode=train_and_eval, set
trainer.validation_interval and trainer.best_checkpoint_export_subdir (e.g.
best_ckpt). Each evaluation that beats the best so far is saved there, with
its metrics and step in info.json. It is chosen on f1 for v1.1 and on best_f1
(F1 at the best null threshold, kept in info.json as best_f1_thresh) for 2.0,
as the reference's --eval_metric.
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official_spanbert.configs import pretraining_experiments
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
          optimizer_config=pretraining_experiments.optimization_config(
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
