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

"""Registered SpanBERT / BERT-baseline pretraining experiments.

`spanbert/pretraining` (span masking + SBO), `spanbert/no_sbo`, `bert/token_nsp`
and `bert/token_single`, with the paper's optimiser. The experiments and the
reference's recipe: docs/pretraining.md.
"""

from official.core import config_definitions as cfg
from official.core import exp_factory
from official.modeling import optimization
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.pretraining import pretrain_dataloader
from official_spanbert.tasks import pretraining

PAPER_TRAIN_STEPS = 2_400_000


def optimization_config(train_steps: int = PAPER_TRAIN_STEPS,
                        warmup_steps: int = 10_000,
                        learning_rate: float = 1e-4,
                        weight_decay_rate: float = 0.01
                        ) -> optimization.OptimizationConfig:
  """AdamW + linear warmup + linear decay to 0, clip-norm 1.0."""
  return optimization.OptimizationConfig({
      "optimizer": {
          "type": "adamw",
          "adamw": {
              "beta_1": 0.9,
              "beta_2": 0.999,
              "epsilon": 1e-8,
              "weight_decay_rate": weight_decay_rate,
              "exclude_from_weight_decay": ["LayerNorm", "layer_norm",
                                            "bias"],
              "gradient_clip_norm": 1.0,
          },
      },
      "learning_rate": {
          "type": "polynomial",
          "polynomial": {
              "initial_learning_rate": learning_rate,
              "decay_steps": train_steps,
              "end_learning_rate": 0.0,
              "power": 1.0,
          },
      },
      "warmup": {
          "type": "polynomial",
          "polynomial": {"warmup_steps": warmup_steps, "power": 1.0},
      },
  })


def finetuning_experiment(task: cfg.TaskConfig, epoch_steps: int,
                          epochs: int, metric: str, learning_rate: float
                          ) -> cfg.ExperimentConfig:
  """A fine-tuning experiment of `task`: epochs x epoch_steps steps;
  summaries, checkpoints and a whole dev evaluation every epoch, the best
  checkpoint by `metric` (higher) in best_ckpt/; optimization_config's AdamW
  with 10% warmup at peak `learning_rate`."""
  steps = epoch_steps * epochs
  return cfg.ExperimentConfig(
      runtime=cfg.RuntimeConfig(distribution_strategy="mirrored"),
      task=task,
      trainer=cfg.TrainerConfig(
          train_steps=steps, steps_per_loop=epoch_steps,
          summary_interval=epoch_steps, checkpoint_interval=epoch_steps,
          validation_interval=epoch_steps, validation_steps=-1,
          max_to_keep=3, best_checkpoint_eval_metric=metric,
          best_checkpoint_metric_comp="higher",
          best_checkpoint_export_subdir="best_ckpt",
          optimizer_config=optimization_config(
              train_steps=steps, warmup_steps=steps // 10,
              learning_rate=learning_rate)))


def _experiment(masking_scheme: str, use_sbo: bool,
                use_next_sentence: bool) -> cfg.ExperimentConfig:
  def data(is_training):
    return pretrain_dataloader.SpanBertPretrainDataConfig(
        is_training=is_training, masking_scheme=masking_scheme,
        use_next_sentence_label=use_next_sentence, global_batch_size=256)
  return cfg.ExperimentConfig(
      runtime=cfg.RuntimeConfig(distribution_strategy="mirrored"),
      task=pretraining.SpanBertPretrainTaskConfig(
          model=spanbert_configs.SpanBertPretrainerConfig(
              use_sbo=use_sbo, use_next_sentence=use_next_sentence),
          train_data=data(True), validation_data=data(False)),
      trainer=cfg.TrainerConfig(
          train_steps=PAPER_TRAIN_STEPS, steps_per_loop=1000,
          summary_interval=1000, checkpoint_interval=10_000,
          validation_interval=10_000, validation_steps=100, max_to_keep=5,
          optimizer_config=optimization_config()),
      restrictions=[
          "task.train_data.is_training != None",
          "task.validation_data.is_training != None",
      ])


@exp_factory.register_config_factory("spanbert/pretraining")
def spanbert_pretraining() -> cfg.ExperimentConfig:
  """SpanBERT: span masking + span boundary objective, single segment."""
  return _experiment("span", use_sbo=True, use_next_sentence=False)


@exp_factory.register_config_factory("spanbert/no_sbo")
def spanbert_no_sbo() -> cfg.ExperimentConfig:
  """Span masking without the SBO head."""
  return _experiment("span", use_sbo=False, use_next_sentence=False)


@exp_factory.register_config_factory("bert/token_nsp")
def bert_token_nsp() -> cfg.ExperimentConfig:
  """BERT baseline: token masking, two segments, NSP."""
  return _experiment("token", use_sbo=False, use_next_sentence=True)


@exp_factory.register_config_factory("bert/token_single")
def bert_token_single() -> cfg.ExperimentConfig:
  """Token masking, single segment, no NSP."""
  return _experiment("token", use_sbo=False, use_next_sentence=False)
