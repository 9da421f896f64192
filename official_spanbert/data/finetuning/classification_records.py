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

"""GLUE and TACRED fine-tuning records: read, tokenize, write, with a meta JSON.

`create_finetuning_data` validates every input file (classification.py for
the GLUE tsv files, tacred.py for TACRED's JSON) before anything is written,
then writes the SentencePredictionDataLoader records and meta_data.json.
"""

import json
import os
from typing import Callable, Dict, Optional

from absl import logging
import tensorflow as tf

from official_spanbert.utils import progress as progress_lib
from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import tacred
from official_spanbert.data import tokenization

DataError = classification.DataError
TASKS = classification.TASKS
TRAIN_FILE, EVAL_FILE, META_FILE = (classification.TRAIN_FILE,
                                    classification.EVAL_FILE,
                                    classification.META_FILE)


def _shared_labels(labels, markers, meta, vocab, entity_mode):
  """The labels and markers of earlier records `meta`, if these records'
  are among them (else DataError)."""
  if meta.get("entity_mode", "mask") != entity_mode:
    raise DataError(f"the earlier records are of entity mode "
                    f"{meta.get('entity_mode', 'mask')!r}, not {entity_mode!r}")
  unknown = sorted(set(labels) - set(meta["labels"]))
  if unknown:
    raise DataError(f"labels {unknown} are not among the earlier records' "
                    f"{len(meta['labels'])} labels")
  ids = {t: i for i, t in enumerate(vocab.tokens)}
  shared = {name: ids[token] for name, token in meta["entity_markers"].items()}
  missing = sorted(set(markers) - set(shared))
  if missing:
    raise DataError(f"entity markers {missing} are not among the earlier "
                    "records' (another entity type)")
  return tuple(meta["labels"]), shared


def create_finetuning_data(task: str, vocab_file: str, output_dir: str, *,
                           train_file: Optional[str] = None,
                           eval_file: Optional[str] = None,
                           lower_case: bool = False,
                           max_seq_length: int = 128,
                           max_train_examples: Optional[int] = None,
                           max_eval_examples: Optional[int] = None,
                           entity_mode: str = "mask",
                           labels_from: Optional[Dict[str, object]] = None
                           ) -> Dict[str, object]:
  """Reads, tokenizes and writes train/eval records and the meta JSON.

  All input files are read and validated before anything is written. Outputs
  in output_dir: train.tf_record, eval.tf_record (for the files given) and
  meta_data.json (task, labels, num_labels, metric_type, sizes, truncation
  counts; for tacred also the entity mode, its markers, the ids of the
  markers that open an entity and negative_label_id).

  Args:
    task: one of TASKS.
    vocab_file: WordPiece vocab.
    output_dir: where to write (created if missing).
    train_file, eval_file: inputs; at least one.
    lower_case: uncased tokenization (for uncased vocabs).
    max_seq_length: sequence length including special tokens.
    max_train_examples, max_eval_examples: keep only the first N examples.
    entity_mode: tacred: how the entities are shown, one of
      tacred.ENTITY_MODES (`mask`, SpanBERT's, by default).
    labels_from: tacred: the meta of earlier records (e.g. train + dev)
      whose labels and markers these records must share (e.g. train +
      test), instead of those of their own files.

  Returns:
    The meta data (as written to meta_data.json).

  Raises:
    DataError: unusable input (names the file and line or record).
    tokenization.VocabError: unusable vocab.
  """
  if task not in TASKS:
    raise DataError(f"unknown task {task!r}; expected one of {TASKS}")
  if not train_file and not eval_file:
    raise DataError("give a train file, an eval file or both")
  if entity_mode not in tacred.ENTITY_MODES:
    raise DataError(f"entity mode {entity_mode!r} is not one of "
                    f"{', '.join(tacred.ENTITY_MODES)}")
  if max_seq_length < (3 if task == "tacred" or
                       classification.FORMATS[task].text_b is None else 4):
    raise DataError(f"max_seq_length {max_seq_length} is too small")
  reader: Callable[[str], list] = (
      tacred.read_tacred if task == "tacred"
      else lambda p: classification.read_tsv(p, task))
  files = {"train": train_file, "eval": eval_file}
  limits = {"train": max_train_examples, "eval": max_eval_examples}
  splits = {}
  for split, path in files.items():
    if path:
      splits[split] = reader(path)[:limits[split]]
  tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
  meta = {"task": task, "task_type": "bert_classification",
          "metric_type": classification.METRICS[task],
          "max_seq_length": max_seq_length,
          "vocab_file": vocab_file, "lower_case": lower_case}
  if task == "tacred":
    labels = tacred.relation_labels(splits)
    markers = tacred.entity_markers(
        [e for examples in splits.values() for e in examples],
        tokenizer.vocab, entity_mode)
    if labels_from:
      labels, markers = _shared_labels(labels, markers, labels_from,
                                       tokenizer.vocab, entity_mode)
    meta.update(negative_label_id=0, entity_mode=entity_mode,
                entity_markers={name: tokenizer.vocab.tokens[i]
                                for name, i in markers.items()},
                entity_start_ids=tacred.start_marker_ids(markers,
                                                         entity_mode))
  else:
    labels = classification.FORMATS[task].labels
  meta.update(labels=list(labels), num_labels=len(labels))
  label_id = {label: i for i, label in enumerate(labels)}
  tf.io.gfile.makedirs(output_dir)
  report = progress_lib.Progress(f"{task} records")
  for split, examples in splits.items():
    report.note(f"tokenizing and writing {len(examples)} {split} examples")
    if task == "tacred":
      ids, segments, truncated = tacred.encode_relations(
          tokenizer, examples, markers, max_seq_length, entity_mode)
    else:
      ids, segments, truncated = classification.encode(tokenizer, examples,
                                                       max_seq_length)
    label_ids = [label_id[e.label] for e in examples]
    classification.write_records(
        os.path.join(output_dir,
                     TRAIN_FILE if split == "train" else EVAL_FILE),
        ids, segments, label_ids, max_seq_length, tokenizer.vocab.pad_id)
    meta[f"{split}_file"] = files[split]
    meta[f"{split}_data_size"] = len(examples)
    meta[f"{split}_truncated"] = truncated
    meta[f"{split}_label_counts"] = {
        label: label_ids.count(i) for i, label in enumerate(labels)}
    logging.info("%s: %d %s examples (%d truncated) -> %s", task,
                 len(examples), split, truncated, output_dir)
  with tf.io.gfile.GFile(os.path.join(output_dir, META_FILE), "w") as f:
    json.dump(meta, f, indent=2)
  report.done(f"{task} records: wrote " + ", ".join(
      f"{meta[f'{split}_data_size']} {split}" for split in splits) +
              f" examples to {output_dir} in {report.elapsed():.1f} s")
  return meta
