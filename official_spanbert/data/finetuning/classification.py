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

"""Fine-tuning records for classification: GLUE sentence(s) and TACRED.

Readers turn CoLA (raw tsv), RTE / SST-2 (GLUE tsv) and TACRED (JSON) files
into examples, validating every line or record first: bad input raises one
DataError naming the file and line (or record) before anything is written.
Examples become `[CLS] a [SEP] (b [SEP])` wordpiece ids, the longer segment
truncated first (as BERT), in the TFRecord layout Model Garden's
SentencePredictionDataLoader reads (`input_ids`, `input_mask`, `segment_ids`,
`label_ids`, plus `example_id`), with a meta JSON beside them.

TACRED uses entity masking as in SpanBERT: the subject's tokens become one
marker per subject type (`[SUBJ-PERSON]`), the object's one per object type
(`[OBJ-CITY]`). The markers found in the input files, sorted, take the vocab
entries `[unused1]`, `[unused2]`, ... in turn.
"""

import csv
import dataclasses
import json
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from absl import logging
import official_spanbert  # noqa: F401
import tensorflow as tf

from official_spanbert.utils import progress as progress_lib
from official_spanbert.data.finetuning import json_file
from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization

TASKS = ("cola", "rte", "sst2", "tacred")
NO_RELATION = "no_relation"
TRAIN_FILE, EVAL_FILE, META_FILE = ("train.tf_record", "eval.tf_record",
                                    "meta_data.json")
# TACRED's PTB bracket tokens and what they stand for (as SpanBERT's code).
_PTB_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]",
                 "-lcb-": "{", "-rcb-": "}"}
_TACRED_FIELDS = {"id": str, "token": list, "subj_start": int,
                  "subj_end": int, "obj_start": int, "obj_end": int,
                  "subj_type": str, "obj_type": str, "relation": str}
_JSON_TYPE_NAMES = {str: "string", list: "list", int: "integer"}


class DataError(ValueError):
  """Unusable fine-tuning input; the message names the file and line/record."""


@dataclasses.dataclass(frozen=True)
class Example:
  """One sentence (pair) to classify.

  Attributes:
    guid: where it came from (`file:line`).
    text_a: the (first) sentence.
    text_b: the second sentence of a pair, or None.
    label: its label string.
  """
  guid: str
  text_a: str
  text_b: Optional[str]
  label: str


@dataclasses.dataclass(frozen=True)
class RelationExample:
  """One TACRED record (token spans inclusive).

  Attributes:
    guid: the record id.
    tokens: the sentence's tokens.
    subj_start, subj_end, obj_start, obj_end: entity spans (inclusive).
    subj_type, obj_type: entity types (e.g. PERSON, CITY).
    label: the relation.
  """
  guid: str
  tokens: Tuple[str, ...]
  subj_start: int
  subj_end: int
  obj_start: int
  obj_end: int
  subj_type: str
  obj_type: str
  label: str


@dataclasses.dataclass(frozen=True)
class TsvFormat:
  """A GLUE-style tsv layout.

  Attributes:
    header: the expected header row, or None for headerless files.
    text_a, text_b: column indices of the sentence(s) (text_b may be None).
    label: column index of the label.
    labels: the label set, in id order.
  """
  header: Optional[Tuple[str, ...]]
  text_a: int
  text_b: Optional[int]
  label: int
  labels: Tuple[str, ...]

  @property
  def num_columns(self) -> int:
    return len(self.header) if self.header else 4


FORMATS = {
    # CoLA raw: source, label, original label, sentence (no header).
    "cola": TsvFormat(None, 3, None, 1, ("0", "1")),
    "rte": TsvFormat(("index", "sentence1", "sentence2", "label"), 1, 2, 3,
                     ("entailment", "not_entailment")),
    "sst2": TsvFormat(("sentence", "label"), 0, None, 1, ("0", "1")),
}
METRICS = {"cola": "matthews_corrcoef", "rte": "accuracy",
           "sst2": "accuracy", "tacred": "tacred_f1"}


def _lines(path: str):
  """Yields (line number, text without the newline) of a UTF-8 file."""
  if not tf.io.gfile.exists(path):
    raise DataError(f"{path}: file does not exist")
  with tf.io.gfile.GFile(path, "rb") as f:
    for number, raw in enumerate(f, 1):
      try:
        yield number, raw.decode("utf-8").rstrip("\r\n")
      except UnicodeDecodeError:
        raise DataError(f"{path}:{number}: not valid UTF-8") from None


def read_tsv(path: str, task: str) -> List[Example]:
  """Reads a CoLA raw, RTE or SST-2 tsv file.

  Args:
    path: the tsv file.
    task: cola, rte or sst2.

  Returns:
    The examples in file order.

  Raises:
    DataError: missing file, wrong header, a line with the wrong number of
      columns, an empty sentence or an unknown label.
  """
  fmt = FORMATS[task]
  examples = []
  for number, line in _lines(path):
    if not line.strip():
      continue
    # Quotes are literal in GLUE files (BERT reads them with quotechar=None).
    cols = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
    if fmt.header and number == 1:
      if tuple(cols) != fmt.header:
        raise DataError(f"{path}:1: expected the header "
                        f"{' | '.join(fmt.header)}, found {line[:80]!r}")
      continue
    if len(cols) != fmt.num_columns:
      names = fmt.header or ("source", "label", "original label", "sentence")
      raise DataError(
          f"{path}:{number}: expected {fmt.num_columns} tab-separated columns "
          f"({', '.join(names)}), found {len(cols)}")
    label = cols[fmt.label]
    if label not in fmt.labels:
      raise DataError(f"{path}:{number}: unknown label {label!r}; {task} "
                      f"labels are {', '.join(fmt.labels)}")
    text_b = cols[fmt.text_b] if fmt.text_b is not None else None
    for text in (cols[fmt.text_a], text_b):
      if text is not None and not text.strip():
        raise DataError(f"{path}:{number}: empty sentence")
    examples.append(Example(f"{path}:{number}", cols[fmt.text_a], text_b,
                            label))
  if not examples:
    raise DataError(f"{path}: no examples")
  return examples


def _check_relation_record(rec, where: str) -> RelationExample:
  """Validates one TACRED record; raises DataError naming it."""
  if not isinstance(rec, dict):
    raise DataError(f"{where}: expected a JSON object, found "
                    f"{type(rec).__name__}")
  for field, kind in _TACRED_FIELDS.items():
    if field not in rec:
      raise DataError(f"{where}: missing field {field!r}")
    value = rec[field]
    if not isinstance(value, kind) or (kind is int and isinstance(value,
                                                                  bool)):
      raise DataError(f"{where}: field {field!r} must be a JSON "
                      f"{_JSON_TYPE_NAMES[kind]}, found {value!r}"[:300])
  tokens = rec["token"]
  if not tokens or not all(isinstance(t, str) for t in tokens):
    raise DataError(f"{where}: 'token' must be a non-empty list of strings")
  for name in ("subj", "obj"):
    start, end = rec[f"{name}_start"], rec[f"{name}_end"]
    if not 0 <= start <= end < len(tokens):
      raise DataError(f"{where}: {name}_start..{name}_end = {start}..{end} is "
                      f"not a span of the {len(tokens)} tokens (inclusive, "
                      "0-based)")
    if not rec[f"{name}_type"].strip():
      raise DataError(f"{where}: empty {name}_type")
  if not rec["relation"].strip():
    raise DataError(f"{where}: empty relation")
  return RelationExample(
      rec["id"], tuple(tokens), rec["subj_start"], rec["subj_end"],
      rec["obj_start"], rec["obj_end"], rec["subj_type"], rec["obj_type"],
      rec["relation"])


def read_tacred(path: str) -> List[RelationExample]:
  """Reads a TACRED-format JSON file (a list of records).

  Args:
    path: the JSON file.

  Returns:
    The records in file order.

  Raises:
    DataError: missing file, invalid JSON, or a malformed record (missing or
      mistyped field, span outside the tokens); names the record and its id.
  """
  records = json_file.read_json(path, DataError)
  if not isinstance(records, list) or not records:
    raise DataError(f"{path}: expected a non-empty JSON list of records")
  examples, seen = [], {}
  for i, rec in enumerate(records):
    rid = rec.get("id") if isinstance(rec, dict) else None
    where = f"{path}: record {i}" + (f" (id {rid!r})" if rid else "")
    example = _check_relation_record(rec, where)
    if example.guid in seen:
      raise DataError(f"{where}: duplicate id (also record "
                      f"{seen[example.guid]})")
    seen[example.guid] = i
    examples.append(example)
  return examples


def entity_markers(examples: Sequence[RelationExample],
                   vocab: tokenization.Vocab) -> Dict[str, int]:
  """Maps each `[SUBJ-type]` / `[OBJ-type]` marker to an [unusedN] id.

  Args:
    examples: all records (train and eval), so that both share the mapping.
    vocab: the vocab whose [unused1], [unused2], ... take the sorted markers.

  Returns:
    marker -> vocab id.

  Raises:
    DataError: the vocab has too few [unusedN] entries.
  """
  names = sorted({f"[SUBJ-{e.subj_type}]" for e in examples} |
                 {f"[OBJ-{e.obj_type}]" for e in examples})
  ids = {t: i for i, t in enumerate(vocab.tokens)}
  markers = {}
  for n, name in enumerate(names, 1):
    token = f"[unused{n}]"
    if token not in ids:
      raise DataError(
          f"vocab {vocab.path} has no {token}: entity masking needs "
          f"{len(names)} entries [unused1]..[unused{len(names)}] for the "
          f"markers {', '.join(names)}")
    markers[name] = ids[token]
  return markers


def _tokenize(tokenizer: tokenization.WordpieceTokenizer,
              texts: Sequence[str], chunk: int = 1024) -> List[List[int]]:
  """Wordpiece ids of each text (batched through the tf.text tokenizer)."""
  out = []
  for i in range(0, len(texts), chunk):
    ids, _ = tokenizer.tokenize(tf.constant(list(texts[i:i + chunk])))
    out.extend(ids.to_list())
  return out


def _truncate_pair(a: List[int], b: List[int], max_length: int) -> bool:
  """Pops from the longer of a and b until they fit; True if any was cut."""
  cut = False
  while len(a) + len(b) > max_length:
    (a if len(a) > len(b) else b).pop()
    cut = True
  return cut


def encode(tokenizer: tokenization.WordpieceTokenizer,
           examples: Sequence[Example], max_seq_length: int
           ) -> Tuple[List[List[int]], List[List[int]], int]:
  """`[CLS] a [SEP] (b [SEP])` ids and segment ids of each example.

  Args:
    tokenizer: the wordpiece tokenizer.
    examples: sentences or pairs.
    max_seq_length: length limit including the special tokens.

  Returns:
    (ids, segment_ids, number of truncated examples), unpadded.
  """
  vocab = tokenizer.vocab
  a_ids = _tokenize(tokenizer, [e.text_a for e in examples])
  pairs = [i for i, e in enumerate(examples) if e.text_b is not None]
  b_ids = dict(zip(pairs, _tokenize(tokenizer,
                                    [examples[i].text_b for i in pairs])))
  ids, segments, truncated = [], [], 0
  for i, a in enumerate(a_ids):
    b = b_ids.get(i)
    if b is None:
      cut = len(a) > max_seq_length - 2
      a = a[:max_seq_length - 2]
      b_part = []
    else:
      cut = _truncate_pair(a, b, max_seq_length - 3)
      b_part = b + [vocab.sep_id]
    truncated += cut
    ids.append([vocab.cls_id] + a + [vocab.sep_id] + b_part)
    segments.append([0] * (len(a) + 2) + [1] * len(b_part))
  return ids, segments, truncated


def encode_relations(tokenizer: tokenization.WordpieceTokenizer,
                     examples: Sequence[RelationExample],
                     markers: Dict[str, int], max_seq_length: int
                     ) -> Tuple[List[List[int]], List[List[int]], int]:
  """Entity-masked `[CLS] tokens [SEP]` ids of TACRED records.

  As SpanBERT's run_tacred.py (mode `ner`): a marker is put where each entity
  starts and the entity's tokens are dropped; other tokens are wordpieced one
  by one (PTB brackets such as -LRB- mapped back first).

  Args:
    tokenizer: the wordpiece tokenizer.
    examples: the records.
    markers: from entity_markers().
    max_seq_length: length limit including [CLS] and [SEP].

  Returns:
    (ids, segment_ids, number of truncated examples), unpadded.
  """
  words = [_PTB_BRACKETS.get(t.lower(), t) for e in examples
           for t in e.tokens]
  pieces = iter(_tokenize(tokenizer, words))
  vocab = tokenizer.vocab
  ids, segments, truncated = [], [], 0
  for e in examples:
    body = []
    for i in range(len(e.tokens)):
      word = next(pieces)
      if i == e.subj_start:
        body.append(markers[f"[SUBJ-{e.subj_type}]"])
      if i == e.obj_start:
        body.append(markers[f"[OBJ-{e.obj_type}]"])
      if not (e.subj_start <= i <= e.subj_end or
              e.obj_start <= i <= e.obj_end):
        body.extend(word)
    truncated += len(body) > max_seq_length - 2
    body = body[:max_seq_length - 2]
    ids.append([vocab.cls_id] + body + [vocab.sep_id])
    segments.append([0] * (len(body) + 2))
  return ids, segments, truncated


def write_records(path: str, ids: Sequence[Sequence[int]],
                  segments: Sequence[Sequence[int]], label_ids: Sequence[int],
                  max_seq_length: int, pad_id: int = 0):
  """Writes SentencePredictionDataLoader records (padded to max_seq_length),
  atomically (path.incomplete, renamed when complete)."""
  def feature(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
  def records():
    for n, (x, s, label) in enumerate(zip(ids, segments, label_ids)):
      pad = max_seq_length - len(x)
      yield tf.train.Example(features=tf.train.Features(feature={
          "input_ids": feature(list(x) + [pad_id] * pad),
          "input_mask": feature([1] * len(x) + [0] * pad),
          "segment_ids": feature(list(s) + [0] * pad),
          "label_ids": feature([label]),
          "example_id": feature([n]),
      })).SerializeToString()
  tfrecord_writer.write_records(path, records())


def _relation_labels(splits) -> Tuple[str, ...]:
  """Sorted relations of all splits, `no_relation` first (id 0)."""
  found = {e.label for examples in splits.values() for e in examples}
  return (NO_RELATION,) + tuple(sorted(found - {NO_RELATION}))


def create_finetuning_data(task: str, vocab_file: str, output_dir: str, *,
                           train_file: Optional[str] = None,
                           eval_file: Optional[str] = None,
                           lower_case: bool = False,
                           max_seq_length: int = 128,
                           max_train_examples: Optional[int] = None,
                           max_eval_examples: Optional[int] = None
                           ) -> Dict[str, object]:
  """Reads, tokenizes and writes train/eval records and the meta JSON.

  All input files are read and validated before anything is written. Outputs
  in output_dir: train.tf_record, eval.tf_record (for the files given) and
  meta_data.json (task, labels, num_labels, metric_type, sizes, truncation
  counts; for tacred also the entity markers and negative_label_id).

  Args:
    task: one of TASKS.
    vocab_file: WordPiece vocab.
    output_dir: where to write (created if missing).
    train_file, eval_file: inputs; at least one.
    lower_case: uncased tokenization (for uncased vocabs).
    max_seq_length: sequence length including special tokens.
    max_train_examples, max_eval_examples: keep only the first N examples.

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
  if max_seq_length < (3 if task == "tacred" or FORMATS[task].text_b is None
                       else 4):
    raise DataError(f"max_seq_length {max_seq_length} is too small")
  reader: Callable[[str], list] = (
      read_tacred if task == "tacred" else lambda p: read_tsv(p, task))
  files = {"train": train_file, "eval": eval_file}
  limits = {"train": max_train_examples, "eval": max_eval_examples}
  splits = {}
  for split, path in files.items():
    if path:
      splits[split] = reader(path)[:limits[split]]
  tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
  meta = {"task": task, "task_type": "bert_classification",
          "metric_type": METRICS[task], "max_seq_length": max_seq_length,
          "vocab_file": vocab_file, "lower_case": lower_case}
  if task == "tacred":
    labels = _relation_labels(splits)
    markers = entity_markers(
        [e for examples in splits.values() for e in examples],
        tokenizer.vocab)
    meta.update(negative_label_id=0, entity_markers={
        name: tokenizer.vocab.tokens[i] for name, i in markers.items()})
  else:
    labels = FORMATS[task].labels
  meta.update(labels=list(labels), num_labels=len(labels))
  label_id = {label: i for i, label in enumerate(labels)}
  tf.io.gfile.makedirs(output_dir)
  report = progress_lib.Progress(f"{task} records")
  for split, examples in splits.items():
    report.note(f"tokenizing and writing {len(examples)} {split} examples")
    if task == "tacred":
      ids, segments, truncated = encode_relations(tokenizer, examples, markers,
                                                  max_seq_length)
    else:
      ids, segments, truncated = encode(tokenizer, examples, max_seq_length)
    label_ids = [label_id[e.label] for e in examples]
    write_records(os.path.join(output_dir, TRAIN_FILE if split == "train"
                               else EVAL_FILE),
                  ids, segments, label_ids, max_seq_length,
                  tokenizer.vocab.pad_id)
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
