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

"""Exports a classification run (spanbert/classification) for TF Serving.

What the records were made with comes from their meta_data.json (written by
spanbert-create-finetuning-data beside train.tf_record / eval.tf_record):
the label names, the vocab and casing, max_seq_length, whether the task
takes sentence pairs, and TACRED's entity markers. The export serves
`classify` (GLUE) or `classify_relation` (TACRED), see classify_module.py.

Example:
  export_from_params(params, "/runs/rte/best_ckpt", "/models/rte")
"""

import json
import os
from typing import Dict, Optional

import tensorflow as tf

from official.core import task_factory
from official_spanbert.data.finetuning import classification
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import classify_module
from official_spanbert.serving import export_lib
from official_spanbert.tasks import classification as classification_task

_TEXT = "The letter was written by Elizabeth in 1813, in Kent."
WARMUP = {
    "single": {"text": [_TEXT, ""]},
    "pair": {"text": [_TEXT, ""], "text_pair": ["Elizabeth wrote it.", ""]},
    "relation": {"text": [_TEXT], "subject_start": [26],
                 "subject_end": [35], "object_start": [48],
                 "object_end": [52]},
}


def records_meta(params) -> Dict[str, object]:
  """The meta_data.json beside the run's training (else evaluation) records.

  Raises:
    ValueError: neither data config points at records with a meta file.
  """
  tried = []
  for data in (params.task.train_data, params.task.validation_data):
    path = data and data.input_path
    if not path:
      continue
    first = path.split(",")[0]
    meta = os.path.join(os.path.dirname(first), classification.META_FILE)
    tried.append(meta)
    if tf.io.gfile.exists(meta):
      with tf.io.gfile.GFile(meta) as f:
        return json.load(f)
  raise ValueError(
      "the export needs the records' meta_data.json (label names, vocab, "
      f"max_seq_length); not found at {' or '.join(tried) or 'any input_path'}"
      "; point task.train_data.input_path at the records of "
      "spanbert-create-finetuning-data")


def build_module(params, checkpoint: Optional[str], meta: Dict[str, object],
                 vocab_file: Optional[str] = None
                 ) -> classify_module.ClassifyModule:
  """The classifier of the run, restored if `checkpoint`, as a module."""
  task_config = params.task.replace(train_data=None, validation_data=None)
  # num_classes 0 / entity_start marker ids: the records' (as in training).
  classification_task.fill_from_records(task_config, meta)
  model = task_factory.get_task(task_config).build_model()
  if checkpoint:
    checkpoints.restore(model, checkpoint)
  labels = list(meta["labels"])
  if params.task.model.num_classes == 1:
    labels = ["score"]
  elif len(labels) != params.task.model.num_classes:
    raise ValueError(
        f"the records have {len(labels)} labels ({', '.join(labels)}) but "
        f"task.model.num_classes is {params.task.model.num_classes}")
  task = meta.get("task")
  pair = bool(task in classification.FORMATS and
              classification.FORMATS[task].text_b is not None)
  return classify_module.ClassifyModule(
      model, vocab_file or str(meta["vocab_file"]),
      lower_case=bool(meta.get("lower_case", False)),
      seq_length=int(meta.get("max_seq_length",
                              params.task.validation_data.seq_length)),
      label_names=labels, pair=pair,
      entity_markers=meta.get("entity_markers"),
      entity_mode=str(meta.get("entity_mode", "mask")))


def export_from_params(params, checkpoint: str, export_base: str, *,
                       vocab_file: Optional[str] = None,
                       version: Optional[int] = None) -> Dict[str, str]:
  """Writes <export_base>/<version>/ with classify or classify_relation."""
  meta = records_meta(params)
  module = build_module(params, checkpoint, meta, vocab_file)
  if module.relation:
    # Types of the records (any string in `marker` mode, which has none).
    subj = next((m[6:-1] for m in module.marker_names
                 if m.startswith("[SUBJ-")), "ANY")
    obj = next((m[5:-1] for m in module.marker_names
                if m.startswith("[OBJ-")), "ANY")
    warmup = dict(WARMUP["relation"], subject_type=[subj],
                  object_type=[obj])
    name = "classify_relation"
  else:
    warmup = WARMUP["pair" if module.pair else "single"]
    name = "classify"
  return export_lib.export_module(
      module, export_base, {name: warmup, "serving_default": warmup},
      version=version, what="classifier")
