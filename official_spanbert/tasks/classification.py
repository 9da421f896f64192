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

"""Sentence(-pair) classification and relation extraction from SpanBERT.

Model Garden's SentencePredictionTask, with the encoder restored from any of
the package's checkpoints and the `tacred_f1` metric.
"""

import dataclasses
import json
import os
from typing import Dict, Sequence, Tuple

import numpy as np
import tensorflow as tf

from official.core import base_task
from official.core import config_definitions as cfg
from official.core import task_factory
from official.nlp.configs import encoders
from official.nlp.data import sentence_prediction_dataloader as loader_lib
from official.nlp.tasks import sentence_prediction
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.modeling import checkpoints
from official_spanbert.modeling import activations  # noqa: F401  (registers gelu_exact)

METRIC_TYPES = frozenset(["accuracy", "matthews_corrcoef", "tacred_f1"])


@dataclasses.dataclass
class SpanBertClassifierConfig(sentence_prediction.ModelConfig):
  """BertClassifier config; `mlm_activation` is accepted and ignored.

  Attributes:
    mlm_activation: unused here; lets a converted checkpoint's params.yaml
      (task.model.encoder + task.model.mlm_activation) apply unchanged.
  """
  num_classes: int = 2
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=spanbert_configs.bert_encoder)
  mlm_activation: str = "gelu"


@dataclasses.dataclass
class SpanBertClassificationConfig(
    sentence_prediction.SentencePredictionConfig):
  """The classification task.

  Attributes:
    metric_type: accuracy, matthews_corrcoef or tacred_f1.
    negative_label_id: for tacred_f1, the label id left out of P/R/F1
      (`no_relation`, id 0 in the records data/finetuning/tacred.py writes).
  """
  model: SpanBertClassifierConfig = dataclasses.field(
      default_factory=SpanBertClassifierConfig)
  negative_label_id: int = 0
  train_data: cfg.DataConfig = dataclasses.field(
      default_factory=loader_lib.SentencePredictionDataConfig)
  validation_data: cfg.DataConfig = dataclasses.field(
      default_factory=lambda: loader_lib.SentencePredictionDataConfig(
          is_training=False, drop_remainder=False))


def tacred_scores(predictions: Sequence[int], labels: Sequence[int],
                  negative_label_id: int = 0) -> Dict[str, float]:
  """Micro precision, recall and F1 ignoring the negative label (TACRED).

  As TACRED's scorer: a prediction counts as guessed unless negative, as
  correct if it also equals a non-negative gold label; precision is 1 when
  nothing is guessed.

  Args:
    predictions: predicted label ids.
    labels: gold label ids.
    negative_label_id: the `no_relation` id.

  Returns:
    {"precision", "recall", "f1"}.
  """
  predictions, labels = np.asarray(predictions), np.asarray(labels)
  guessed = predictions != negative_label_id
  gold = labels != negative_label_id
  correct = int(np.sum(guessed & (predictions == labels)))
  precision = correct / guessed.sum() if guessed.any() else 1.0
  recall = correct / gold.sum() if gold.any() else 0.0
  f1 = (2 * precision * recall / (precision + recall)
        if precision + recall > 0 else 0.0)
  return {"precision": float(precision), "recall": float(recall),
          "f1": float(f1)}


def check_config(params: SpanBertClassificationConfig) -> None:
  """Refuses a task.model.num_classes other than the records' number of
  labels (num_labels in the meta_data.json beside them, which
  tools/create_finetuning_data.py writes): too few fails at the first step,
  too many trains classes no example has.

  Raises:
    ValueError: the two differ (one line naming both and the file).
  """
  num_classes = params.model.num_classes
  for data in (params.train_data, params.validation_data):
    input_path = getattr(data, "input_path", None)
    if (not isinstance(input_path, str) or not input_path or
        input_path == "dummy" or
        getattr(data, "label_type", "int") == "float"):
      continue
    for pattern in (p.strip() for p in input_path.split(",") if p.strip()):
      meta_path = os.path.join(os.path.dirname(pattern), cls_data.META_FILE)
      if not tf.io.gfile.exists(meta_path):
        continue  # records written elsewhere: nothing to compare with
      with tf.io.gfile.GFile(meta_path) as f:
        try:
          labels = json.load(f).get("num_labels")
        except (ValueError, AttributeError):
          continue
      if not isinstance(labels, int) or labels == num_classes:
        continue
      consequence = (
          f"label ids up to {labels - 1} would be out of range"
          if labels > num_classes else
          f"{num_classes - labels} classes would never be trained")
      raise ValueError(
          f"task.model.num_classes={num_classes}, but the records {pattern} "
          f"have {labels} labels (num_labels in {meta_path}): {consequence}; "
          f"set task.model.num_classes={labels}")


@task_factory.register_task_cls(SpanBertClassificationConfig)
class SpanBertClassificationTask(
    sentence_prediction.SentencePredictionTask):
  """Fine-tunes a SpanBERT encoder for classification (GLUE, TACRED)."""

  def __init__(self, params: SpanBertClassificationConfig,
               logging_dir=None, name=None):
    if params.metric_type not in METRIC_TYPES:
      raise ValueError(f"metric_type {params.metric_type!r} is not one of "
                       f"{sorted(METRIC_TYPES)}")
    for field in ("train_data", "validation_data"):
      data = getattr(params, field)
      if (params.model.num_classes == 1 and data and data.input_path and
          getattr(data, "label_type", "float") != "float"):
        raise ValueError(
            f"task.model.num_classes=1 trains a regression, but task.{field}"
            f".label_type is {data.label_type!r} (class labels); set "
            "task.model.num_classes to the labels' count (num_labels in the "
            f"records' meta_data.json), or task.{field}.label_type=float "
            "for a regression")
    check_config(params)
    if params.init_cls_pooler:
      raise ValueError("init_cls_pooler is not supported: SpanBERT has no "
                       "pretrained NSP pooler; the head starts fresh")
    if (params.metric_type == "tacred_f1" and
        not 0 <= params.negative_label_id < params.model.num_classes):
      raise ValueError(f"negative_label_id {params.negative_label_id} is not "
                       f"a label id (num_classes {params.model.num_classes})")
    # SentencePredictionTask.__init__ would reject tacred_f1.
    base_task.Task.__init__(self, params, logging_dir, name=name)
    self.metric_type = params.metric_type
    self.label_field = getattr(params.train_data, "label_field", "label_ids")

  @property
  def eval_metric_names(self) -> Tuple[str, ...]:
    """What evaluation reports besides the build_metrics names."""
    if self.metric_type == "tacred_f1":
      return ("tacred_f1", "tacred_precision", "tacred_recall")
    if self.metric_type == "matthews_corrcoef":
      return ("matthews_corrcoef",)
    return ()

  def initialize(self, model):
    """Restores the encoder from `init_checkpoint`; the head starts fresh."""
    path = self.task_config.init_checkpoint
    if not path:
      return
    try:
      checkpoints.restore_encoder(model.checkpoint_items["encoder"], path)
    except ValueError as e:
      if path in str(e):
        raise
      # A shape mismatch surfaces as TF's ValueError naming only a variable.
      raise ValueError(f"checkpoint {path}: its encoder does not match "
                       f"task.model.encoder (check the model size): {e}"
                       ) from None

  def reduce_aggregated_logs(self, aggregated_logs, global_step=None):
    """Dev-set metrics; tacred_f1 adds tacred_precision / tacred_recall."""
    if self.metric_type != "tacred_f1":
      return super().reduce_aggregated_logs(aggregated_logs, global_step)
    logits = np.concatenate(aggregated_logs["sentence_prediction"], axis=0)
    labels = np.concatenate(aggregated_logs["labels"], axis=0).reshape(-1)
    scores = tacred_scores(np.argmax(logits, axis=-1), labels,
                           self.task_config.negative_label_id)
    return {"tacred_f1": scores["f1"],
            "tacred_precision": scores["precision"],
            "tacred_recall": scores["recall"]}
