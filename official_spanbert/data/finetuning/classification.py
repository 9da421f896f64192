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

"""Sentence classification inputs: GLUE readers, encoding and the records.

CoLA, RTE and SST-2 files become validated examples (bad input raises one
DataError naming file and line), then `[CLS] a [SEP] (b [SEP])` ids in the
TFRecord layout of Model Garden's SentencePredictionDataLoader.
"""

import csv
import dataclasses
from typing import List, Optional, Sequence, Tuple

import tensorflow as tf

from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization

TASKS = ("cola", "rte", "sst2", "tacred")
TRAIN_FILE, EVAL_FILE, META_FILE = ("train.tf_record", "eval.tf_record",
                                    "meta_data.json")


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


def tokenize_texts(tokenizer: tokenization.WordpieceTokenizer,
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
  a_ids = tokenize_texts(tokenizer, [e.text_a for e in examples])
  pairs = [i for i, e in enumerate(examples) if e.text_b is not None]
  b_ids = dict(zip(pairs, tokenize_texts(tokenizer,
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


def write_records(path: str, ids: Sequence[Sequence[int]],
                  segments: Sequence[Sequence[int]], label_ids: Sequence[int],
                  max_seq_length: int, pad_id: int = 0):
  """Writes SentencePredictionDataLoader records (padded to max_seq_length),
  atomically (path.incomplete, renamed when complete)."""
  feature = tfrecord_writer.int64_feature
  def records():
    for n, (x, s, label) in enumerate(zip(ids, segments, label_ids)):
      pad = max_seq_length - len(x)
      yield tfrecord_writer.example_bytes({
          "input_ids": feature(list(x) + [pad_id] * pad),
          "input_mask": feature([1] * len(x) + [0] * pad),
          "segment_ids": feature(list(s) + [0] * pad),
          "label_ids": feature([label]),
          "example_id": feature([n]),
      })
  tfrecord_writer.write_records(path, records())
