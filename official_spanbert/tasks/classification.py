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
the package's checkpoints, the `tacred_f1` and `semeval_macro_f1` metrics,
and for relations a classifier on the two entities' start markers
(`model.pooling: entity_start`, modeling/relation_classifier.py).
`model.num_classes: 0` takes the number of labels from the records.

Example:
  config = exp_factory.get_exp_config("spanbert/tacred").task
  config.train_data.input_path = "/tmp/semeval/train.tf_record"
  task = SpanBertClassificationTask(config)   # num_classes from the records
"""

import dataclasses
import json
import os
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf
import tf_keras

from official.core import base_task
from official.core import config_definitions as cfg
from official.core import task_factory
from official.nlp.configs import encoders
from official.nlp.tasks import sentence_prediction
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.data.finetuning import classification_loader as cls_loader
from official_spanbert.metrics import relation_f1
from official_spanbert.modeling import checkpoints
from official_spanbert.modeling import relation_classifier
from official_spanbert.modeling import activations  # noqa: F401  (registers gelu_exact)

METRIC_TYPES = frozenset(["accuracy", "matthews_corrcoef", "tacred_f1",
                          "semeval_macro_f1"])
# What the classifier reads: BERT's pooled [CLS] vector, or the vectors of
# the two entities' start markers (relation records only).
POOLINGS = ("cls", "entity_start")


@dataclasses.dataclass
class SpanBertClassifierConfig(sentence_prediction.ModelConfig):
  """BertClassifier config; `mlm_activation` is accepted and ignored.

  Attributes:
    num_classes: the labels; 0: the records' num_labels (meta_data.json).
    pooling: `cls` (BertClassifier on the pooled [CLS] vector) or
      `entity_start` (relation_classifier.RelationClassifier: the vectors
      of the subject's and object's first markers).
    subject_marker_ids, object_marker_ids: entity_start: vocab ids of the
      markers that open each entity; empty: the records'.
    mlm_activation: unused here; lets a converted checkpoint's params.yaml
      (task.model.encoder + task.model.mlm_activation) apply unchanged.
  """
  num_classes: int = 2
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=spanbert_configs.bert_encoder)
  pooling: str = "cls"
  subject_marker_ids: List[int] = dataclasses.field(default_factory=list)
  object_marker_ids: List[int] = dataclasses.field(default_factory=list)
  mlm_activation: str = "gelu"


@dataclasses.dataclass
class SpanBertClassificationConfig(
    sentence_prediction.SentencePredictionConfig):
  """The classification task.

  Attributes:
    metric_type: accuracy, matthews_corrcoef, tacred_f1 or
      semeval_macro_f1 (SemEval-2010 Task 8's official score; reports
      tacred_f1 and accuracy beside it).
    negative_label_id: for tacred_f1, the label id left out of P/R/F1
      (`no_relation`, id 0 in the records data/finetuning/tacred.py writes).
  """
  model: SpanBertClassifierConfig = dataclasses.field(
      default_factory=SpanBertClassifierConfig)
  negative_label_id: int = 0
  train_data: cfg.DataConfig = dataclasses.field(
      default_factory=cls_loader.ClassificationDataConfig)
  validation_data: cfg.DataConfig = dataclasses.field(
      default_factory=lambda: cls_loader.ClassificationDataConfig(
          is_training=False, drop_remainder=False))

  def fill_from_data(self) -> None:
    """Fills, in place, what the records decide (fill_from_records)."""
    fill_from_records(self)

  def validate(self, data_fields: Sequence[str] = ()) -> None:
    """Raises a one-line error for a config that cannot work, before
    anything is written: Model Garden's restrictions, then the model
    against the records' meta_data.json (check_config; both data configs,
    whatever `data_fields` the run reads)."""
    del data_fields  # the model must fit the records of either
    super().validate()
    check_config(self)


# Kept for callers of the old name; the scores live in metrics/relation_f1.
tacred_scores = relation_f1.tacred_scores


def records_metas(task_config) -> Iterator[Tuple[str, str, dict]]:
  """(records pattern, meta path, meta) of each input pattern of the task's
  train and validation data that has a meta_data.json beside it (written by
  tools/create_finetuning_data.py). Training's checks and the export read
  the records' metas through this one function.

  Raises:
    ValueError: a meta_data.json that is not a JSON object (one line naming
      it).
  """
  for data in (task_config.train_data, task_config.validation_data):
    input_path = getattr(data, "input_path", None)
    if (not isinstance(input_path, str) or not input_path or
        input_path == "dummy"):
      continue
    for pattern in (p.strip() for p in input_path.split(",") if p.strip()):
      meta_path = os.path.join(os.path.dirname(pattern), cls_data.META_FILE)
      if not tf.io.gfile.exists(meta_path):
        continue  # records written elsewhere: nothing to compare with
      with tf.io.gfile.GFile(meta_path) as f:
        try:
          meta = json.load(f)
        except ValueError as e:
          raise ValueError(f"{meta_path} is not JSON ({e}); rewrite the "
                           "records with spanbert-create-finetuning-data"
                           ) from None
      if not isinstance(meta, dict):
        raise ValueError(f"{meta_path} holds a {type(meta).__name__}, not "
                         "the JSON object spanbert-create-finetuning-data "
                         "writes; rewrite the records")
      yield pattern, meta_path, meta


def fill_from_records(task_config, meta: Optional[dict] = None) -> None:
  """Sets, in place, what the records decide and the config leaves open:
  `model.num_classes` 0 -> the records' number of labels, and for
  `model.pooling: entity_start` empty marker ids -> the records'
  `entity_start_ids`. `meta` defaults to the first records' meta_data.json.

  Raises:
    ValueError: something to fill and no records meta to fill it from.
  """
  model = task_config.model
  needs_ids = model.pooling == "entity_start" and not (
      model.subject_marker_ids and model.object_marker_ids)
  if model.num_classes and not needs_ids:
    return
  if meta is None:
    meta = next((m for _, _, m in records_metas(task_config)), None)
  what = ("task.model.num_classes=0 (the records' number of labels)"
          if not model.num_classes else
          "task.model.pooling=entity_start (the records' entity markers)")
  if meta is None:
    raise ValueError(f"{what} needs the records' meta_data.json beside "
                     "task.train_data.input_path or validation_data's; "
                     "none was found")
  if not model.num_classes:
    model.num_classes = int(meta["num_labels"])
  if needs_ids:
    starts = meta.get("entity_start_ids")
    if not starts:
      raise ValueError(
          "task.model.pooling=entity_start reads the entity markers, but the "
          "records have none (not relation records, or written before "
          "entity modes); use pooling=cls or rewrite the records")
    model.subject_marker_ids = list(starts["subject"])
    model.object_marker_ids = list(starts["object"])


def check_config(params: SpanBertClassificationConfig) -> None:
  """Refuses a task.model.num_classes other than the records' number of
  labels (num_labels in the meta_data.json beside them, which
  tools/create_finetuning_data.py writes): too few fails at the first step,
  too many trains classes no example has.

  Raises:
    ValueError: the two differ (one line naming both and the file).
  """
  num_classes = params.model.num_classes
  model = params.model
  if model.pooling not in POOLINGS:
    raise ValueError(f"task.model.pooling={model.pooling!r} is not one of "
                     f"{', '.join(POOLINGS)}")
  for pattern, meta_path, meta in records_metas(params):
    labels = meta.get("num_labels")
    if (isinstance(labels, int) and num_classes and labels != num_classes
        and num_classes != 1):  # a regression's records have label names
      consequence = (
          f"label ids up to {labels - 1} would be out of range"
          if labels > num_classes else
          f"{num_classes - labels} classes would never be trained")
      raise ValueError(
          f"task.model.num_classes={num_classes}, but the records {pattern} "
          f"have {labels} labels (num_labels in {meta_path}): {consequence}; "
          f"set task.model.num_classes={labels} (or 0: from the records)")
    starts = meta.get("entity_start_ids")
    if (model.pooling == "entity_start" and starts and
        model.subject_marker_ids and
        (list(model.subject_marker_ids) != list(starts["subject"]) or
         list(model.object_marker_ids) != list(starts["object"]))):
      raise ValueError(
          f"task.model.subject_marker_ids/object_marker_ids "
          f"{list(model.subject_marker_ids)}/{list(model.object_marker_ids)} "
          f"are not the markers of the records {pattern} "
          f"({starts['subject']}/{starts['object']} in {meta_path}); leave "
          "them empty to take the records'")


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
    fill_from_records(params)
    check_config(params)
    if params.init_cls_pooler:
      raise ValueError("init_cls_pooler is not supported: SpanBERT has no "
                       "pretrained NSP pooler; the head starts fresh")
    # SemEval's score needs the label names (read when evaluating; an
    # export builds the task without records).
    self._label_names = next((list(m["labels"]) for _, _, m in
                              records_metas(params) if m.get("labels")), None)
    if (params.metric_type in ("tacred_f1", "semeval_macro_f1") and
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
    if self.metric_type == "semeval_macro_f1":
      return ("semeval_macro_f1", "tacred_f1", "tacred_precision",
              "tacred_recall", "accuracy")
    if self.metric_type == "matthews_corrcoef":
      return ("matthews_corrcoef",)
    return ()

  def build_model(self):
    """BertClassifier, or for pooling=entity_start a RelationClassifier."""
    model_config = self.task_config.model
    if model_config.pooling != "entity_start":
      return super().build_model()
    encoder = encoders.build_encoder(model_config.encoder)
    return relation_classifier.RelationClassifier(
        encoder, num_classes=model_config.num_classes,
        subject_marker_ids=model_config.subject_marker_ids,
        object_marker_ids=model_config.object_marker_ids,
        initializer=tf_keras.initializers.TruncatedNormal(
            stddev=model_config.encoder.get().initializer_range))

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
    """Dev-set metrics; tacred_f1 adds tacred_precision / tacred_recall,
    semeval_macro_f1 adds those and accuracy."""
    if self.metric_type not in ("tacred_f1", "semeval_macro_f1"):
      return super().reduce_aggregated_logs(aggregated_logs, global_step)
    logits = np.concatenate(aggregated_logs["sentence_prediction"], axis=0)
    labels = np.concatenate(aggregated_logs["labels"], axis=0).reshape(-1)
    predictions = np.argmax(logits, axis=-1)
    scores = relation_f1.tacred_scores(predictions, labels,
                                       self.task_config.negative_label_id)
    out = {"tacred_f1": scores["f1"],
           "tacred_precision": scores["precision"],
           "tacred_recall": scores["recall"]}
    if self.metric_type == "semeval_macro_f1":
      names = self._label_names
      if not names:
        raise ValueError(
            "metric_type semeval_macro_f1 needs the label names (labels in "
            "the records' meta_data.json beside task.validation_data."
            "input_path); none was found")
      out["semeval_macro_f1"] = relation_f1.semeval_macro_f1(
          [names[i] for i in labels], [names[i] for i in predictions])
      out["accuracy"] = float(np.mean(predictions == labels))
    return out
