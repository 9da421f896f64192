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

"""Nested named-entity recognition (LitBank) as a Model Garden task.

LitBank tsv input as windows, a span (or flat BIO) head, two learning rates,
and evaluation that writes LitBank tsv predictions and exact-match F1. See
docs/finetuning.md, "Nested NER".
"""

import dataclasses
import os
from typing import Any, Dict, List, Optional

from absl import logging
import numpy as np
import tensorflow as tf
import tf_keras

from official.core import task_factory
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.metrics import span_f1
from official_spanbert.modeling import activations  # noqa: F401  (registers gelu_exact)
from official_spanbert.modeling import builder
from official_spanbert.modeling import span_ner_model
from official_spanbert.tasks import encoder_finetuning

PREDICTIONS_DIR = encoder_finetuning.PREDICTIONS_DIR
HEADS = ("span", "flat")


@dataclasses.dataclass
class SpanNerDataConfig(encoder_finetuning.TextDataConfig):
  """LitBank entity input.

  Attributes:
    input_path: a .tsv file, a glob or a split list.
    vocab_file, do_lower_case: the checkpoint's tokenizer.
    seq_length: wordpieces per window, [CLS] and [SEP] included.
    global_batch_size: windows per step.
  """
  input_path: str = ""
  seq_length: int = 256
  global_batch_size: int = 8


@dataclasses.dataclass
class SpanNerModelConfig(encoder_finetuning.EncoderModelConfig):
  """The model (see the module docstring). max_span_width is in
  wordpieces: 24 covers 99.05% of LitBank fold 0's training entities with
  all-MiniLM-L6-v2's uncased vocab (docs/finetuning.md)."""
  head: str = "span"
  max_span_width: int = 24
  feature_size: int = 20
  ffnn_size: int = 150
  ffnn_depth: int = 1
  dropout_rate: float = 0.1


@dataclasses.dataclass
class SpanNerTaskConfig(encoder_finetuning.EncoderTaskConfig):
  """The nested NER task (evaluation writes predictions_dir/<document>.tsv).
  """
  model: SpanNerModelConfig = dataclasses.field(
      default_factory=SpanNerModelConfig)
  train_data: SpanNerDataConfig = dataclasses.field(
      default_factory=SpanNerDataConfig)
  validation_data: SpanNerDataConfig = dataclasses.field(
      default_factory=lambda: SpanNerDataConfig(is_training=False))


def read_windows(params: SpanNerDataConfig):
  """(documents, windows) of the data config's input."""
  docs = span_ner_data.read_documents(
      span_ner_data.document_files(params.input_path))
  return docs, span_ner_data.encode_documents(
      docs, encoder_finetuning.tokenizer(params), params.seq_length)


def _numpy(values) -> np.ndarray:
  """One array from a step output (per-replica results concatenated)."""
  if isinstance(values, (list, tuple)):
    return np.concatenate([np.asarray(v) for v in values])
  return np.asarray(values)


def flat_entities(window: span_ner_data.Window, tag_ids: np.ndarray
                  ) -> List[litbank_tsv.Entity]:
  """Document entities of one window's predicted BIO tag ids (one per
  position; read at each word's first wordpiece, sentence by sentence)."""
  out, sentence, tags, words = [], None, [], []

  def close():
    for s, e, kind in litbank_tsv.bio_spans(tags, strict=False):
      out.append(litbank_tsv.Entity(words[s], words[e], kind))

  for pos, start in enumerate(window.word_start):
    if not start:
      continue
    if window.sentence_ids[pos] != sentence:
      close()
      sentence, tags, words = window.sentence_ids[pos], [], []
    tags.append(span_ner_data.BIO_TAGS[int(tag_ids[pos])])
    words.append(window.words[pos])
  close()
  return out


@task_factory.register_task_cls(SpanNerTaskConfig)
class SpanNerTask(encoder_finetuning.EncoderFinetuningTask):
  """Fine-tunes an encoder for nested NER; evaluates exact-match span F1.

  Args:
    params: a SpanNerTaskConfig.
    logging_dir: the model dir (predictions go here).
    name: task name.

  Example:
    params = exp_factory.get_exp_config("spanbert/span_ner")
    params.task.model.encoder.bert_v2.override(
        {"num_layers": 1, "hidden_size": 16, "num_attention_heads": 2})
    task = task_factory.get_task(params.task, logging_dir=out_dir)
    model = task.build_model()
  """

  def __init__(self, params: SpanNerTaskConfig,
               logging_dir: Optional[str] = None, name: Optional[str] = None):
    super().__init__(params, logging_dir, name=name)
    if params.model.head not in HEADS:
      raise ValueError(f"task.model.head must be one of {HEADS}, got "
                       f"{params.model.head!r}")
    self._eval_docs: List[litbank_tsv.TsvDocument] = []
    self._eval_windows: List[span_ner_data.Window] = []

  @property
  def flat(self) -> bool:
    return self.task_config.model.head == "flat"

  # Data -------------------------------------------------------------------

  def build_inputs(self, params: SpanNerDataConfig,
                   input_context: Optional[tf.distribute.InputContext] = None):
    """(features, labels) batches of windows (training: shuffled, repeated)."""
    docs, windows = read_windows(params)
    if not params.is_training:
      self._eval_docs, self._eval_windows = docs, windows
    features = (span_ner_data.ENCODER_FEATURES if self.flat
                else span_ner_data.FEATURES)
    return span_ner_data.dataset(windows, params.seq_length,
                                 params.global_batch_size, params.is_training,
                                 params.seed, features, input_context)

  @property
  def eval_steps_hint(self) -> Optional[int]:
    """Batches in one evaluation pass (the trainer's progress ETA)."""
    if not self._eval_windows:
      return None
    size = self.task_config.validation_data.global_batch_size
    return -(-len(self._eval_windows) // size)

  # Model and optimizer ----------------------------------------------------

  def make_model(self) -> tf_keras.Model:
    return builder.build_span_ner_model(self.task_config.model)

  def build_losses(self, labels, model_outputs, aux_losses=None) -> tf.Tensor:
    if self.flat:
      tags = labels["bio_labels"]
      weights = tf.cast(tags >= 0, tf.float32)
      loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
          tf.maximum(tags, 0), tf.cast(model_outputs["logits"], tf.float32))
      loss = tf.reduce_sum(loss * weights) / tf.maximum(
          tf.reduce_sum(weights), 1.0)
    else:
      loss = span_ner_model.span_loss(model_outputs, span_ner_model.span_labels(
          labels["gold_starts"], labels["gold_ends"], labels["gold_labels"],
          model_outputs["span_mask"]))
    if aux_losses:
      loss += tf.add_n(aux_losses)
    return loss

  # Evaluation -------------------------------------------------------------

  def validation_step(self, inputs, model: tf_keras.Model, metrics=None):
    features, labels = inputs
    outputs = model(features, training=False)
    logs = {self.loss: self.build_losses(labels, outputs),
            "window_index": labels["window_index"]}
    if self.flat:
      logs["tag_ids"] = tf.argmax(outputs["logits"], -1, output_type=tf.int32)
    else:
      logs.update(span_logits=outputs["span_logits"],
                  span_mask=outputs["span_mask"])
    return logs

  def aggregate_logs(self, state=None, step_outputs=None):
    """{window index: its entities in document basic words}."""
    state = {} if state is None else state
    indices = _numpy(step_outputs["window_index"])
    if self.flat:
      tags = _numpy(step_outputs["tag_ids"])
      for i, row in zip(indices, tags):
        window = self._eval_windows[int(i)]
        # Tokens -> their first and last basic words (predicted_entities'
        # unit).
        first, last = {}, {}
        for basic, token in zip(window.basic_words[1:-1],
                                window.words[1:-1]):
          first.setdefault(token, basic)
          last[token] = basic
        state[int(i)] = [(first[e.start], last[e.end], e.type, 1.0)
                         for e in flat_entities(window, row)]
      return state
    logits = _numpy(step_outputs["span_logits"])
    masks = _numpy(step_outputs["span_mask"])
    for i, window_logits, mask in zip(indices, logits, masks):
      basic = self._eval_windows[int(i)].basic_words
      state[int(i)] = [
          (basic[s], basic[e], span_ner_data.ENTITY_TYPES[label - 1], p)
          for s, e, label, p in span_ner_model.candidates(window_logits,
                                                          mask)]
    return state

  def predicted_entities(self, aggregated_logs
                         ) -> List[List[litbank_tsv.Entity]]:
    """The decoded entities of each evaluation document."""
    found: List[list] = [[] for _ in self._eval_docs]
    # Per document: each token's first and last basic word.
    bounds: List[Dict[int, List[int]]] = [{} for _ in self._eval_docs]
    missing = 0
    for i, window in enumerate(self._eval_windows):
      tokens = bounds[window.doc_index]
      for basic, token in zip(window.basic_words[1:-1], window.words[1:-1]):
        lo_hi = tokens.setdefault(token, [basic, basic])
        lo_hi[:] = min(lo_hi[0], basic), max(lo_hi[1], basic)
      if i not in (aggregated_logs or {}):
        missing += 1
        continue
      found[window.doc_index].extend(aggregated_logs[i])
    if missing:
      logging.warning("%d evaluation windows have no outputs", missing)
    types = {t: k for k, t in enumerate(span_ner_data.ENTITY_TYPES)}
    out = []
    for spans, tokens in zip(found, bounds):
      first = {lo: t for t, (lo, _) in tokens.items()}
      last = {hi: t for t, (_, hi) in tokens.items()}
      # Decoded on basic words (as served), reported on LitBank tokens: a
      # span that starts or ends inside a token (`Mr` of `Mr.`) has no
      # token span and is left out.
      kept = span_ner_model.decode(
          [(s, e, types[kind], p) for s, e, kind, p in spans])
      out.append([litbank_tsv.Entity(first[s], last[e],
                                     span_ner_data.ENTITY_TYPES[k])
                  for s, e, k in kept if s in first and e in last])
    return out

  def reduce_aggregated_logs(self, aggregated_logs, global_step=None
                             ) -> Dict[str, Any]:
    """Writes the predicted tsv files; returns P/R/F1 (percent)."""
    predicted = self.predicted_entities(aggregated_logs)
    out = self.predictions_dir()
    tf.io.gfile.makedirs(out)
    scorer = span_f1.SpanF1()
    for doc, entities in zip(self._eval_docs, predicted):
      litbank_tsv.write_file(os.path.join(out, doc.name + ".tsv"),
                             doc.sentences, entities, doc.num_layers)
      scorer.update([e.key for e in doc.entities], [e.key for e in entities])
    result = scorer.result()
    metrics = {name: result[name] for name in ("precision", "recall", "f1")}
    for kind, scores in result["per_type"].items():
      metrics[f"f1_{kind}"] = scores["f1"]
    logging.info("Span NER metrics at step %s: %s (predictions in %s)",
                 None if global_step is None else int(global_step), metrics,
                 out)
    return metrics
