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

"""SQuAD v1.1 / v2.0 fine-tuning: Model Garden's QA task with our data path.

Model Garden's QuestionAnsweringTask with tf.text features from SQuAD JSON, our
post-processing and the official metrics; predictions go to
<model_dir>/predictions/. See docs/finetuning.md, "SQuAD".
"""

import dataclasses
import hashlib
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from absl import logging
import tensorflow as tf
import tf_keras

from official.core import base_task
from official.core import config_definitions as cfg
from official.core import task_factory
from official.modeling.hyperparams import base_config
from official.nlp.configs import encoders
from official.nlp.data import data_loader_factory
from official.nlp.data import question_answering_dataloader
from official.nlp.tasks import question_answering as mg_question_answering
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.finetuning import squad
from official_spanbert.data.finetuning import squad_predictions
from official_spanbert.data import tokenization
from official_spanbert.metrics import null_threshold
from official_spanbert.metrics import squad_evaluate
from official_spanbert.modeling import checkpoints
from official_spanbert.modeling import activations  # noqa: F401  (registers gelu_exact)

QADataConfig = question_answering_dataloader.QADataConfig
PREDICTIONS_DIR = "predictions"


@dataclasses.dataclass
class QAModelConfig(base_config.Config):
  """Span labeler over a BERT encoder.

  Attributes:
    encoder: the encoder (BertEncoderV2 by default, base size).
    mlm_activation: not used by fine-tuning; present so that the params.yaml
      of a converted checkpoint (which also sets it, for pretraining) applies
      unchanged.
  """
  encoder: encoders.EncoderConfig = dataclasses.field(
      default_factory=spanbert_configs.bert_encoder)
  mlm_activation: str = "gelu"


@dataclasses.dataclass
class SpanBertQAConfig(mg_question_answering.QuestionAnsweringConfig):
  """SQuAD fine-tuning.

  The tokenizer is given by the data configs' vocab_file and do_lower_case
  (they must match the checkpoint's vocab). predictions_dir defaults to
  <model_dir>/predictions.
  """
  model: QAModelConfig = dataclasses.field(default_factory=QAModelConfig)
  train_data: cfg.DataConfig = dataclasses.field(default_factory=QADataConfig)
  validation_data: cfg.DataConfig = dataclasses.field(
      default_factory=lambda: QADataConfig(is_training=False))
  predictions_dir: str = ""

  def validate(self, data_fields: Sequence[str] = ()) -> None:
    """Raises a one-line error for a config that cannot work, before
    anything is written: Model Garden's restrictions, then a SQuAD JSON in
    `data_fields` (the data the run reads) that the task would refuse
    (check_data)."""
    super().validate()
    for field in data_fields:
      check_data(getattr(self, field))


def check_data(params: QADataConfig) -> None:
  """Reads a SQuAD JSON input as the task will, so that an unusable file
  (no 'qas', a null context, duplicate ids, no usable question, 2.0 data
  for a v1.1 task) is refused before the run writes anything; its warnings
  are left to the task's own reading.

  Raises:
    squad.SquadFormatError: (a ValueError) the file cannot be used.
  """
  path = params.input_path
  if not (isinstance(path, str) and path.endswith(".json") and
          tf.io.gfile.exists(path)):
    return  # TFRecords, dummy data, or a path the caller reports
  verbosity = logging.get_verbosity()
  logging.set_verbosity(logging.ERROR)
  try:
    squad.read_examples(path, params.is_training,
                        params.version_2_with_negative)
  finally:
    logging.set_verbosity(verbosity)


def _tokenizer(params: QADataConfig) -> tokenization.WordpieceTokenizer:
  if not params.vocab_file:
    raise ValueError(
        "set the data config's vocab_file (and do_lower_case) to the vocab of "
        "the checkpoint being fine-tuned")
  return tokenization.WordpieceTokenizer(params.vocab_file,
                                         lower_case=params.do_lower_case)


@task_factory.register_task_cls(SpanBertQAConfig)
class SpanBertQuestionAnsweringTask(
    mg_question_answering.QuestionAnsweringTask):
  """SQuAD fine-tuning with tf.text features and the official metrics.

  Args:
    params: a SpanBertQAConfig.
    logging_dir: the model dir (converted data and predictions go here).
    name: task name.
  """

  def __init__(self, params: SpanBertQAConfig, logging_dir: Optional[str] = None,
               name: Optional[str] = None):
    # Model Garden's __init__ prepares evaluation data with its own Python
    # tokenizer; ours does it with tf.text.
    base_task.Task.__init__(self, params, logging_dir, name=name)  # pylint: disable=non-parent-init-called
    self._eval_examples: List[squad.SquadExample] = []
    self._eval_features: List[squad.SquadFeature] = []
    self._eval_dataset = None
    self._tf_record_input_path = ""
    val = params.validation_data
    if val is not None and val.input_path and val.input_path != "dummy":
      self._tf_record_input_path, self._eval_examples, self._eval_features = (
          self._preprocess_eval_data(val))

  def _work_dir(self, params: QADataConfig) -> str:
    path = params.input_preprocessed_data_path or self.logging_dir
    if not path:
      raise ValueError(
          "SQuAD JSON is converted to TFRecords first: set the model dir "
          "(logging_dir) or the data config's input_preprocessed_data_path")
    return path

  def _preprocess_eval_data(self, params: QADataConfig):
    """SQuAD JSON -> evaluation TFRecord + examples + features."""
    output = os.path.join(self._work_dir(params), "eval.tf_record")
    examples, features = squad.prepare(
        params.input_path, _tokenizer(params), output, is_training=False,
        version_2_with_negative=params.version_2_with_negative,
        max_seq_length=params.seq_length, doc_stride=params.doc_stride,
        max_query_length=params.query_length,
        pad_to_multiple=params.global_batch_size)
    self._eval_dataset = squad.load_data(params.input_path)
    return output, examples, features

  def _training_records(self, params: QADataConfig) -> str:
    """Converts a training JSON once (keyed by file and settings)."""
    key = hashlib.sha1(repr((
        os.path.abspath(params.input_path),
        tf.io.gfile.stat(params.input_path).mtime_nsec,
        params.vocab_file, params.do_lower_case, params.seq_length,
        params.doc_stride, params.query_length,
        params.version_2_with_negative)).encode()).hexdigest()[:12]
    output = os.path.join(self._work_dir(params), f"train-{key}.tf_record")
    if not tf.io.gfile.exists(output):
      squad.prepare(params.input_path, _tokenizer(params), output,
                    is_training=True,
                    version_2_with_negative=params.version_2_with_negative,
                    max_seq_length=params.seq_length,
                    doc_stride=params.doc_stride,
                    max_query_length=params.query_length)
    return output

  def initialize(self, model: tf_keras.Model):
    """Loads the encoder from task_config.init_checkpoint, if set."""
    if self.task_config.init_checkpoint:
      checkpoints.restore_encoder(model.checkpoint_items["encoder"],
                                  self.task_config.init_checkpoint)

  def build_inputs(self, params: QADataConfig,
                   input_context: Optional[tf.distribute.InputContext] = None):
    """Training or evaluation batches (SQuAD JSON converted on first use)."""
    if params.input_path == "dummy":
      return super().build_inputs(params, input_context)
    if params.is_training:
      if params.input_path.endswith(".json"):
        params = params.replace(input_path=self._training_records(params))
    else:
      if not self._tf_record_input_path:
        self._tf_record_input_path, self._eval_examples, self._eval_features = (
            self._preprocess_eval_data(params))
      params = params.replace(input_path=self._tf_record_input_path)
    return data_loader_factory.get_data_loader(params).load(input_context)

  @property
  def eval_steps_hint(self) -> Optional[int]:
    """Batches in one evaluation pass (the trainer's progress ETA)."""
    batch = self.task_config.validation_data.global_batch_size
    if not self._eval_features or not batch:
      return None
    return -(-len(self._eval_features) // batch)

  @property
  def eval_metric_names(self) -> Tuple[str, ...]:
    """What reduce_aggregated_logs reports (train.py checks
    trainer.best_checkpoint_eval_metric against it)."""
    if not self.task_config.validation_data.version_2_with_negative:
      return ("exact_match", "f1")
    return ("exact", "f1", "total", "best_exact", "best_exact_thresh",
            "best_f1", "best_f1_thresh") + tuple(
                f"{part}_{key}" for part in ("HasAns", "NoAns")
                for key in ("exact", "f1", "total"))

  def predictions_dir(self) -> str:
    return self.task_config.predictions_dir or os.path.join(
        self.logging_dir or ".", PREDICTIONS_DIR)

  def postprocess(self, aggregated_logs
                  ) -> squad_predictions.Predictions:
    """Validation-step outputs -> predictions (padding features dropped)."""
    logits = {int(r.unique_id): (r.start_logits, r.end_logits)
              for r in aggregated_logs or [] if int(r.unique_id) >= 0}
    missing = len(self._eval_features) - sum(
        f.unique_id in logits for f in self._eval_features)
    if missing:
      logging.warning("%d evaluation features have no logits", missing)
    val = self.task_config.validation_data
    return squad_predictions.postprocess(
        self._eval_examples, self._eval_features, logits,
        n_best_size=self.task_config.n_best_size,
        max_answer_length=self.task_config.max_answer_length,
        lower_case=val.do_lower_case,
        version_2_with_negative=val.version_2_with_negative,
        null_score_diff_threshold=self.task_config.null_score_diff_threshold)

  def reduce_aggregated_logs(self, aggregated_logs, global_step=None
                             ) -> Dict[str, Any]:
    """Writes the official prediction files and returns EM/F1 (percent)."""
    predictions = self.postprocess(aggregated_logs)
    out = self.predictions_dir()
    write = squad_predictions.write_json
    write(predictions.answers, os.path.join(out, "predictions.json"))
    write(predictions.nbest, os.path.join(out, "nbest_predictions.json"))
    if not self.task_config.validation_data.version_2_with_negative:
      metrics = squad_evaluate.evaluate_v1(self._eval_dataset,
                                           predictions.answers)
    else:
      write(predictions.null_odds, os.path.join(out, "null_odds.json"))
      metrics = squad_evaluate.evaluate_v2(
          self._eval_dataset, predictions.answers, predictions.null_odds)
      null_threshold.record(
          out, metrics, None if global_step is None else int(global_step))
      write(squad_predictions.apply_threshold(predictions,
                                              metrics["best_f1_thresh"]),
            os.path.join(out, "predictions_best_f1_thresh.json"))
    logging.info("SQuAD metrics: %s (predictions in %s)", metrics, out)
    return {k: float(v) for k, v in metrics.items()}
