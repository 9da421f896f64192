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

"""Coreference resolution (Lee et al. 2018 / SpanBERT) as a Model Garden task.

CoNLL-2012 input or records, CorefModel, two learning rates, and evaluation
that writes predictions.conll and returns the CoNLL-2012 metrics. See
docs/coreference.md.
"""

import dataclasses
import hashlib
import os
from typing import Any, Dict, List, Optional

from absl import logging
import numpy as np
import tensorflow as tf
import tf_keras

from official.core import task_factory
from official_spanbert.data.finetuning import coref as coref_data
from official_spanbert.data.finetuning import conll2012
from official_spanbert.metrics import coref_evaluate
from official_spanbert.modeling import activations  # noqa: F401  (registers gelu_exact)
from official_spanbert.modeling import builder
from official_spanbert.modeling import coref_model
from official_spanbert.tasks import encoder_finetuning

PREDICTIONS_DIR = encoder_finetuning.PREDICTIONS_DIR
PREDICTIONS_FILE = "predictions.conll"
_RECORD_SUFFIXES = (".tf_record", ".tfrecord")


@dataclasses.dataclass
class CorefDataConfig(encoder_finetuning.TextDataConfig):
  """Coreference input.

  Attributes:
    input_path: CoNLL-2012 input (file, glob or split list) or, for
      training, TFRecords of spanbert-create-finetuning-data --task=coref.
    vocab_file, do_lower_case: the checkpoint's tokenizer.
    max_segment_len: wordpieces per segment, [CLS] and [SEP] included
      (the reference: 384 for spanbert_base, 512 for spanbert_large).
    max_num_speakers: 0: every speaker string its own id, `-`/`_` none;
      > 0: the reference's speaker ids, capped at this many (20 in
      experiments.conf; data/finetuning/ontonotes.py).
    max_training_segments: training takes a random window of this many
      consecutive segments of a document (0: the whole document).
    global_batch_size: documents per step (1).
  """
  input_path: str = ""
  max_segment_len: int = 384
  max_num_speakers: int = 0
  max_training_segments: int = 0
  global_batch_size: int = 1


@dataclasses.dataclass
class CorefModelConfig(encoder_finetuning.EncoderModelConfig):
  """CorefModel settings (modeling/coref_model.py); `mlm_activation` lets a
  converted checkpoint's params.yaml apply unchanged (unused).
  `suppress_crossing_spans` (on, as the reference) skips pruning candidates
  that cross a higher-scoring kept span. `max_top_spans` caps the spans kept
  (3900, the reference's cap; 0: top_span_ratio alone); `chunk_size` bounds inference memory (spans
  scored per chunk; 0: the whole document at once). `variant: reference` is
  mandarjoshi90/coref's independent model (modeling/coref_reference.py, with
  `coref_depth` refinement rounds and `max_segment_distance` buckets)."""
  max_span_width: int = 30
  feature_size: int = 20
  ffnn_size: int = 3000
  ffnn_depth: int = 1
  top_span_ratio: float = 0.4
  max_top_antecedents: int = 50
  dropout_rate: float = 0.3
  use_speaker: bool = True
  suppress_crossing_spans: bool = True
  max_top_spans: int = 3900
  chunk_size: int = 128
  variant: str = "default"
  coref_depth: int = 2
  max_segment_distance: int = 3


@dataclasses.dataclass
class CorefTaskConfig(encoder_finetuning.EncoderTaskConfig):
  """The coreference task (head_learning_rate_multiplier: the reference
  base's 1e-4 / 2e-5 = 5; evaluation writes predictions_dir/
  predictions.conll).

  Attributes:
    mention_loss_weight: weight of the mention-detection loss added to the
      antecedent loss (0: the reference's loss only).
    predict_singletons: output top spans with mention score > 0 and no link
      as singleton clusters (for data that annotates singletons).
  """
  model: CorefModelConfig = dataclasses.field(default_factory=CorefModelConfig)
  train_data: CorefDataConfig = dataclasses.field(
      default_factory=CorefDataConfig)
  validation_data: CorefDataConfig = dataclasses.field(
      default_factory=lambda: CorefDataConfig(is_training=False))
  head_learning_rate_multiplier: float = 5.0
  mention_loss_weight: float = 0.0
  predict_singletons: bool = False


def build_model(params: CorefModelConfig) -> coref_model.CorefModel:
  """The coreference model of `params` (modeling/builder.build_coref_model)."""
  return builder.build_coref_model(params)


def word_clusters(clusters, subtoken_map) -> List[conll2012.Cluster]:
  """Wordpiece-span clusters -> word-span clusters (duplicates merged)."""
  out = []
  for cluster in clusters:
    spans = sorted({(int(subtoken_map[s]), int(subtoken_map[e]))
                    for s, e in cluster})
    if spans:
      out.append(spans)
  return out


@task_factory.register_task_cls(CorefTaskConfig)
class CorefTask(encoder_finetuning.EncoderFinetuningTask):
  """Fine-tunes an encoder for coreference; evaluates with the CoNLL metrics.

  Args:
    params: a CorefTaskConfig.
    logging_dir: the model dir (converted records and predictions go here).
    name: task name.
  """

  def __init__(self, params: CorefTaskConfig,
               logging_dir: Optional[str] = None, name: Optional[str] = None):
    super().__init__(params, logging_dir, name=name)
    self._eval_docs: List[conll2012.ConllDocument] = []
    self._eval_examples: List[coref_data.CorefExample] = []
    self._eval_records = ""

  # Data -------------------------------------------------------------------

  def _work_dir(self) -> str:
    if not self.logging_dir:
      raise ValueError("CoNLL input is converted to TFRecords first: set the "
                       "model dir")
    return self.logging_dir

  def _records(self, params: CorefDataConfig, split: str) -> str:
    """Converts CoNLL input once (keyed by files and settings)."""
    files = coref_data.document_list(params.input_path)
    key = hashlib.sha1(repr((
        [(os.path.abspath(f), os.stat(f).st_mtime_ns) for f in files],
        params.vocab_file, params.do_lower_case, params.max_segment_len,
        params.max_num_speakers)).encode()).hexdigest()[:12]
    output = os.path.join(self._work_dir(), f"coref-{split}-{key}.tf_record")
    docs = coref_data.read_documents(files)
    examples = None

    def encode():
      return coref_data.encode_documents(docs, encoder_finetuning.tokenizer(params),
                                         params.max_segment_len,
                                         params.max_num_speakers)

    if split == "eval":
      examples = encode()
      self._eval_docs, self._eval_examples = docs, examples
    if not tf.io.gfile.exists(output):
      if examples is None:
        examples = encode()
      coref_data.write_examples(examples, output, params.max_segment_len)
    return output

  def build_inputs(self, params: CorefDataConfig,
                   input_context: Optional[tf.distribute.InputContext] = None):
    """One document per batch (training: shuffled, repeated)."""
    path = params.input_path
    if not params.is_training:
      if not self._eval_records:
        self._eval_records = self._records(params, "eval")
      path = self._eval_records
    elif not path.endswith(_RECORD_SUFFIXES) and "tf_record" not in path:
      path = self._records(params, "train")
    return coref_data.load(path, params.max_segment_len, params.is_training,
                           params.max_training_segments, params.seed,
                           input_context)

  @property
  def eval_steps_hint(self) -> Optional[int]:
    """Documents in one evaluation pass (the trainer's progress ETA)."""
    return len(self._eval_docs) or None

  # Model and optimizer ----------------------------------------------------

  def make_model(self) -> tf_keras.Model:
    """The model with every variable built, so that the trainer makes the
    optimizer's slots before the first step: a tf.function whose first
    trace creates variables is traced twice, and so were the train and
    eval steps of every run (the continued study's micro LitBank stage,
    alone: 41 -> 23 CPU-s, AVX2 EPYC)."""
    model = build_model(self.task_config.model)
    model(coref_model.dummy_features(), training=False)
    return model

  def build_losses(self, labels, model_outputs, aux_losses=None) -> tf.Tensor:
    gold = [labels[n][0] for n in coref_data.MENTION_FEATURES]
    loss = coref_model.antecedent_loss(model_outputs, *gold)
    if self.task_config.mention_loss_weight:
      loss += self.task_config.mention_loss_weight * coref_model.mention_loss(
          model_outputs, gold[0], gold[1])
    if aux_losses:
      loss += tf.add_n(aux_losses)
    return loss

  # Evaluation -------------------------------------------------------------

  def validation_step(self, inputs, model: tf_keras.Model, metrics=None):
    outputs = model(inputs, training=False)
    logs = {self.loss: self.build_losses(inputs, outputs)}
    top = tf.stack([outputs["top_span_starts"], outputs["top_span_ends"]], 1)
    logs.update(doc_index=inputs["doc_index"], top_spans=top,
                top_mention_scores=outputs["top_span_mention_scores"],
                top_antecedents=outputs["top_antecedents"],
                antecedent_scores=outputs["antecedent_scores"])
    return logs

  def aggregate_logs(self, state=None, step_outputs=None):
    state = {} if state is None else state
    names = ("top_spans", "top_mention_scores", "top_antecedents",
             "antecedent_scores")
    for doc, *values in zip(step_outputs["doc_index"],
                            *(step_outputs[n] for n in names)):
      state[int(np.asarray(doc).reshape(-1)[0])] = [np.asarray(v)
                                                    for v in values]
    return state

  def predicted_clusters(self, aggregated_logs) -> List[List[conll2012.Cluster]]:
    """Word-span clusters of every evaluation document."""
    out = []
    for i, example in enumerate(self._eval_examples):
      if i not in (aggregated_logs or {}):
        logging.warning("evaluation document %d has no outputs", i)
        out.append([])
        continue
      spans, mention_scores, antecedents, scores = aggregated_logs[i]
      clusters = coref_model.predict_clusters(
          spans[:, 0], spans[:, 1], antecedents, scores,
          mention_scores if self.task_config.predict_singletons else None)
      out.append(word_clusters(clusters, example.subtoken_map))
    return out

  def reduce_aggregated_logs(self, aggregated_logs, global_step=None
                             ) -> Dict[str, Any]:
    """Writes predictions.conll; returns the CoNLL metrics (percent)."""
    predicted = self.predicted_clusters(aggregated_logs)
    out = self.predictions_dir()
    tf.io.gfile.makedirs(out)
    path = os.path.join(out, PREDICTIONS_FILE)
    conll2012.write_file(path, self._eval_docs, predicted)
    # Scored as written: two crossing mentions of one cluster cannot both be
    # told apart by brackets, so the file (what any scorer reads) decides.
    predicted = [d.clusters for d in conll2012.read_file(path)]
    evaluator = coref_evaluate.CorefEvaluator()
    for doc, clusters in zip(self._eval_docs, predicted):
      evaluator.update(doc.clusters, clusters)
    result = evaluator.result()
    metrics = {"conll_f1": result["conll_f1"]}
    for name in coref_evaluate.METRICS:
      for part, value in result[name].items():
        metrics[f"{name}_{part}"] = value
    for part, value in mention_scores(self._eval_docs, predicted).items():
      metrics[f"mention_{part}"] = value
    logging.info("Coreference metrics at step %s: %s (predictions in %s)",
                 None if global_step is None else int(global_step), metrics,
                 path)
    return metrics


def mention_scores(docs: List[conll2012.ConllDocument],
                   predicted: List[List[conll2012.Cluster]]
                   ) -> Dict[str, float]:
  """Exact-span mention P/R/F1 over documents, as percentages."""
  gold = found = correct = 0
  for doc, clusters in zip(docs, predicted):
    g = {m for c in doc.clusters for m in c}
    p = {m for c in clusters for m in c}
    gold, found, correct = gold + len(g), found + len(p), correct + len(g & p)
  precision = correct / found if found else 0.0
  recall = correct / gold if gold else 0.0
  f1 = (2 * precision * recall / (precision + recall)
        if precision + recall else 0.0)
  return {"p": 100 * precision, "r": 100 * recall, "f1": 100 * f1}
