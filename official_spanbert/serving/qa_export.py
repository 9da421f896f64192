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


"""Exports a SQuAD model (spanbert/squad_v1, spanbert/squad_v2) for TF Serving.

The `answer` signature (serving/qa_module.py) with the run's tokenizer,
windows and post-processing; for SQuAD 2.0 the null-score threshold is the
evaluation's best-F1 one (<model_dir>/predictions/null_threshold.json) unless
one is given.

Example:
  export_from_params(params, "/runs/squad/best_ckpt", "/models/squad",
                     model_dir="/runs/squad")
"""

import math
import os
from typing import Dict, Optional

import tensorflow as tf

from official.core import task_factory
from official_spanbert.metrics import null_threshold as null_threshold_lib
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib
from official_spanbert.serving import qa_module
from official_spanbert.tasks import question_answering

WARMUP = {
    "question": ["Who wrote the letter?", ""],
    "context": ["The letter was written by Elizabeth in 1813, in Kent.", ""],
}


def null_threshold(params, model_dir: Optional[str],
                   override: Optional[float] = None,
                   checkpoint: Optional[str] = None) -> float:
  """The SQuAD 2.0 threshold: `override`, else the best-F1 one of the
  evaluation of `checkpoint`'s step (<predictions dir>/null_threshold.json,
  metrics/null_threshold.py), else the task config's.

  Raises:
    ValueError: `override` is not finite; the file is unusable or has no
      evaluation at the checkpoint's step (named in the message).
  """
  if override is not None:
    if not math.isfinite(override):
      raise ValueError(f"--null_score_diff_threshold must be a finite "
                       f"number, got {override}")
    return float(override)
  out = params.task.predictions_dir or (
      model_dir and os.path.join(model_dir, question_answering.PREDICTIONS_DIR))
  path = out and os.path.join(out, null_threshold_lib.FILE)
  if (getattr(params.task.validation_data, "version_2_with_negative", False)
      and path and tf.io.gfile.exists(path)):
    return null_threshold_lib.for_step(path, _step(checkpoint))
  return float(params.task.null_score_diff_threshold)


def _step(checkpoint: Optional[str]) -> Optional[int]:
  """The global step saved in `checkpoint` (None: no step in it)."""
  if not checkpoint:
    return None
  reader = tf.train.load_checkpoint(checkpoints.resolve(checkpoint))
  key = "global_step/.ATTRIBUTES/VARIABLE_VALUE"
  return int(reader.get_tensor(key)) if reader.has_tensor(key) else None


def build_module(params, checkpoint: Optional[str], vocab_file: str,
                 threshold: float,
                 max_context_wordpieces: int = (
                     qa_module.DEFAULT_MAX_CONTEXT_WORDPIECES)
                 ) -> qa_module.QuestionAnsweringModule:
  """The answer module of the run's span labeler, restored if `checkpoint`."""
  # Without validation_data: the task would convert the evaluation JSON.
  model = task_factory.get_task(
      params.task.replace(validation_data=None)).build_model()
  if checkpoint:
    checkpoints.restore(model, checkpoint)
  task, data = params.task, params.task.validation_data
  return qa_module.QuestionAnsweringModule(
      model, vocab_file, lower_case=data.do_lower_case,
      seq_length=data.seq_length, doc_stride=data.doc_stride,
      query_length=data.query_length, n_best_size=task.n_best_size,
      max_answer_length=task.max_answer_length,
      version_2_with_negative=data.version_2_with_negative,
      null_score_diff_threshold=threshold,
      max_context_wordpieces=max_context_wordpieces)


def export_from_params(params, checkpoint: str, export_base: str, *,
                       model_dir: Optional[str] = None,
                       vocab_file: Optional[str] = None,
                       null_score_diff_threshold: Optional[float] = None,
                       version: Optional[int] = None,
                       max_context_wordpieces: int = (
                           qa_module.DEFAULT_MAX_CONTEXT_WORDPIECES)
                       ) -> Dict[str, str]:
  """Writes <export_base>/<version>/ with `answer`; returns {"model": dir}."""
  vocab = export_lib.vocab_of(params, vocab_file)
  module = build_module(params, checkpoint, vocab, null_threshold(
      params, model_dir, null_score_diff_threshold, checkpoint),
                        max_context_wordpieces)
  return export_lib.export_module(module, export_base, {
      "answer": WARMUP, "serving_default": WARMUP},
                                  version=version,
                                  what="question-answering model")
