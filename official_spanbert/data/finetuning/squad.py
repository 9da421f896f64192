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

"""SQuAD v1.1 / v2.0 JSON -> question-answering features, tokenized with tf.text.

Examples (squad_examples.py) become `[CLS] question [SEP] passage window [SEP]`
features sliding with doc_stride, in the TFRecord layout of Model Garden's QA
data loader. How bad data is handled: docs/finetuning.md, "SQuAD".
"""

import dataclasses
import os
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from official_spanbert.utils import progress as progress_lib
from official_spanbert.data.finetuning import squad_examples
from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization

# The examples' side (squad_examples.py), under the names callers use.
SquadFormatError = squad_examples.SquadFormatError
SquadExample = squad_examples.SquadExample
load_data = squad_examples.load_data
read_examples = squad_examples.read_examples

TRAIN_SHUFFLE_SEED = 12345


@dataclasses.dataclass
class SquadFeature:
  """One window of one example, as fed to the model.

  Attributes:
    unique_id: id of the feature (the model's `unique_ids`).
    example_index: index of its example.
    tokens: the wordpiece strings of the window ([CLS] ... [SEP]).
    token_to_word: position -> passage word index (passage tokens only).
    token_to_chars: position -> (start, end) character offsets of the piece
      in the example's context, end exclusive (passage tokens only).
    token_is_max_context: position -> whether this window gives the token its
      most context (passage tokens only).
    input_ids, input_mask, segment_ids: the model inputs.
    start_position, end_position: answer token positions (0: no answer here).
    is_impossible: the window holds no answer (training).
  """
  unique_id: int
  example_index: int
  tokens: List[str]
  token_to_word: Dict[int, int]
  token_is_max_context: Dict[int, bool]
  input_ids: List[int]
  input_mask: List[int]
  segment_ids: List[int]
  start_position: int = 0
  end_position: int = 0
  is_impossible: bool = False
  token_to_chars: Dict[int, Tuple[int, int]] = dataclasses.field(
      default_factory=dict)


class _PieceCache:
  """WordPiece ids of words and questions, tokenized in large batches, with
  each piece's character offsets in its text."""

  def __init__(self, tokenizer: tokenization.WordpieceTokenizer):
    self._tokenizer = tokenizer
    self._cache: Dict[str, List[int]] = {}
    self._offsets: Dict[str, List[Tuple[int, int]]] = {}

  def add(self, texts: Iterable[str], batch_size: int = 8192):
    todo = sorted({t for t in texts if t not in self._cache})
    for i in range(0, len(todo), batch_size):
      chunk = todo[i:i + batch_size]
      ids, begin, end = self._tokenizer.tokenize_with_offsets(
          tf.constant(chunk))
      for text, row, b, e in zip(chunk, ids.to_list(), begin.to_list(),
                                 end.to_list()):
        self._cache[text] = row
        self._offsets[text] = list(zip(b, e))

  def __getitem__(self, text: str) -> List[int]:
    return self._cache[text]

  def offsets(self, text: str) -> List[Tuple[int, int]]:
    return self._offsets[text]


def _improve_answer_span(doc_ids, start, end, answer_ids):
  """The tightest token span inside [start, end] that equals the answer."""
  n = len(answer_ids)
  for new_start in range(start, end + 1):
    for new_end in range(end, new_start - 1, -1):
      if new_end - new_start + 1 == n and (
          doc_ids[new_start:new_end + 1] == answer_ids):
        return new_start, new_end
  return start, end


def _is_max_context(spans, index, position):
  best, best_index = None, None
  for i, (start, length) in enumerate(spans):
    end = start + length - 1
    if start <= position <= end:
      score = min(position - start, end - position) + 0.01 * length
      if best is None or score > best:
        best, best_index = score, i
  return best_index == index


def convert_examples(examples: Sequence[SquadExample],
                     tokenizer: tokenization.WordpieceTokenizer,
                     max_seq_length: int = 384, doc_stride: int = 128,
                     max_query_length: int = 64, is_training: bool = False,
                     source: str = "SQuAD",
                     report: Optional[progress_lib.Progress] = None
                     ) -> List[SquadFeature]:
  """Tokenizes examples and cuts them into [CLS] q [SEP] window [SEP] features.

  Args:
    examples: from read_examples.
    tokenizer: the tf.text WordPiece tokenizer (its lower_case must match the
      vocab of the checkpoint being fine-tuned).
    max_seq_length: feature length.
    doc_stride: offset between consecutive passage windows.
    max_query_length: question tokens kept (longer ones are truncated).
    is_training: set answer positions (examples must come from
      read_examples(is_training=True)).
    source: name used in warnings (the file).
    report: progress over the questions (none if None).

  Returns:
    The features; unique ids count from 1,000,000,000 as in BERT.
  """
  _check_lengths(max_seq_length, doc_stride, max_query_length)
  warnings = squad_examples.Warnings(source)
  vocab = tokenizer.vocab
  pieces = _tokenize_all(examples, tokenizer, is_training, report)
  features = []
  unique_id = 1_000_000_000
  if report:
    report.start(len(examples), "questions")
  for index, example in enumerate(examples):
    if report:
      report.advance()
    query = _query(pieces, example, max_query_length, warnings)
    doc_ids, tok_to_word, word_to_tok, tok_chars = _doc_tokens(pieces,
                                                               example)
    if not doc_ids:
      continue
    tok_start = tok_end = -1
    if is_training and not example.is_impossible:
      tok_start, tok_end = _answer_tokens(pieces, example, doc_ids,
                                          word_to_tok)
    spans = _doc_spans(len(doc_ids), max_seq_length - len(query) - 3,
                       doc_stride)
    for s, (start, length) in enumerate(spans):
      feature = _feature(vocab, query, spans, s, doc_ids,
                         tok_to_word, tok_chars, max_seq_length,
                         unique_id=unique_id, example_index=index,
                         is_impossible=example.is_impossible)
      if is_training and not example.is_impossible:
        if start <= tok_start and tok_end < start + length:
          offset = len(query) + 2 - start
          feature.start_position = tok_start + offset
          feature.end_position = tok_end + offset
        else:
          feature.is_impossible = True
      features.append(feature)
      unique_id += 1
  warnings.summary()
  return features


def _check_lengths(max_seq_length, doc_stride, max_query_length):
  """Raises ValueError on lengths that leave no passage window."""
  if max_seq_length < max_query_length + 3 + 1:
    raise ValueError(
        f"max_seq_length {max_seq_length} leaves no room for the passage "
        f"after a question of up to max_query_length {max_query_length} "
        "tokens; raise max_seq_length or lower max_query_length")
  if doc_stride < 1:
    raise ValueError(f"doc_stride must be positive, got {doc_stride}")


def _tokenize_all(examples, tokenizer, is_training, report):
  """A _PieceCache of every passage word, question and (training) answer."""
  pieces = _PieceCache(tokenizer)
  if report:
    report.note(f"tokenizing {len(examples)} questions and their passages")
  pieces.add(t for e in examples for t in e.words)
  pieces.add(e.question for e in examples)
  if is_training:
    pieces.add(e.answer_text for e in examples if e.answer_text)
  return pieces


def _query(pieces, example, max_query_length, warnings):
  """The question's pieces, cut to max_query_length (with a warning)."""
  query = pieces[example.question]
  if not query:
    warnings.warn("an empty question",
                  f"question {example.qas_id}: the question has no tokens")
  if len(query) > max_query_length:
    warnings.warn(
        "a question over max_query_length",
        f"question {example.qas_id}: {len(query)} question tokens, "
        f"truncated to max_query_length {max_query_length}")
    query = query[:max_query_length]
  return query


def _doc_tokens(pieces, example):
  """The passage's piece ids, piece -> word, word -> first piece, chars."""
  doc_ids, tok_to_word, word_to_tok, tok_chars = [], [], [], []
  for w, word in enumerate(example.words):
    word_to_tok.append(len(doc_ids))
    first = example.word_starts[w] if example.word_starts else 0
    for piece, (b, e) in zip(pieces[word], pieces.offsets(word)):
      tok_to_word.append(w)
      tok_chars.append((first + b, first + e))
      doc_ids.append(piece)
  return doc_ids, tok_to_word, word_to_tok, tok_chars


def _answer_tokens(pieces, example, doc_ids, word_to_tok):
  """First and last passage piece of the (training) answer."""
  tok_start = word_to_tok[example.start_word]
  tok_end = (word_to_tok[example.end_word + 1] - 1
             if example.end_word + 1 < len(example.words)
             else len(doc_ids) - 1)
  return _improve_answer_span(doc_ids, tok_start, tok_end,
                              pieces[example.answer_text])


def _doc_spans(num_tokens, max_doc, doc_stride):
  """(start, length) of the passage windows, doc_stride apart at most."""
  spans = []
  start = 0
  while True:
    length = min(num_tokens - start, max_doc)
    spans.append((start, length))
    if start + length >= num_tokens:
      break
    start += min(length, doc_stride)
  return spans


def _feature(vocab, query, spans, s, doc_ids, tok_to_word, tok_chars,
             max_seq_length, **fields):
  """The [CLS] query [SEP] window [SEP] feature of window `s`, padded."""
  start, length = spans[s]
  ids = [vocab.cls_id] + query + [vocab.sep_id]
  segment = [0] * len(ids)
  token_to_word, max_context, token_to_chars = {}, {}, {}
  for i in range(length):
    token_to_word[len(ids)] = tok_to_word[start + i]
    token_to_chars[len(ids)] = tok_chars[start + i]
    max_context[len(ids)] = _is_max_context(spans, s, start + i)
    ids.append(doc_ids[start + i])
    segment.append(1)
  ids.append(vocab.sep_id)
  segment.append(1)
  mask = [1] * len(ids)
  pad = max_seq_length - len(ids)
  return SquadFeature(
      tokens=[vocab.tokens[i] for i in ids],
      token_to_word=token_to_word, token_is_max_context=max_context,
      token_to_chars=token_to_chars,
      input_ids=ids + [vocab.pad_id] * pad, input_mask=mask + [0] * pad,
      segment_ids=segment + [0] * pad, **fields)


def write_features(features: Sequence[SquadFeature], path: str,
                   is_training: bool, pad_to_multiple: int = 1) -> int:
  """Writes features as TFRecords for Model Garden's QA data loader.

  Args:
    features: from convert_examples.
    path: output file (written to path.incomplete, then renamed; removed
      on failure).
    is_training: write answer positions (else unique_ids).
    pad_to_multiple: evaluation only: append padding features (unique_id -1,
      ignored by postprocessing) so that the count is a multiple of the batch
      size and no batch is dropped.

  Returns:
    The number of records written (padding included).
  """
  tf.io.gfile.makedirs(os.path.dirname(path) or ".")
  feature = tfrecord_writer.int64_feature
  def records():
    for f in features:
      record = {"input_ids": feature(f.input_ids),
                "input_mask": feature(f.input_mask),
                "segment_ids": feature(f.segment_ids)}
      if is_training:
        record["start_positions"] = feature([f.start_position])
        record["end_positions"] = feature([f.end_position])
        record["is_impossible"] = feature([int(f.is_impossible)])
      else:
        record["unique_ids"] = feature([f.unique_id])
      yield tfrecord_writer.example_bytes(record)
    if not is_training and features:
      zeros = feature([0] * len(features[0].input_ids))
      padding = tfrecord_writer.example_bytes({
          "input_ids": zeros, "input_mask": zeros, "segment_ids": zeros,
          "unique_ids": feature([-1])})
      yield from [padding] * (-len(features) % max(pad_to_multiple, 1))
  return tfrecord_writer.write_records(path, records())


def feature_stats(examples: Sequence[SquadExample],
                  features: Sequence[SquadFeature]) -> Dict[str, float]:
  """Counts for logs and the data tool's stats file."""
  per_example = np.bincount([f.example_index for f in features],
                            minlength=len(examples)) if features else []
  return {
      "examples": len(examples),
      "features": len(features),
      "examples_without_features": int(np.sum(np.asarray(per_example) == 0)),
      "impossible_features": sum(f.is_impossible for f in features),
  }


def prepare(path: str, tokenizer: tokenization.WordpieceTokenizer,
            output: str, is_training: bool,
            version_2_with_negative: bool = False, max_seq_length: int = 384,
            doc_stride: int = 128, max_query_length: int = 64,
            pad_to_multiple: int = 1, max_examples: Optional[int] = None
            ) -> Tuple[List[SquadExample], List[SquadFeature]]:
  """read_examples + convert_examples + write_features in one call.

  Reports progress on stderr (stages, questions with an ETA) and ends with one
  line saying what was written where.
  """
  report = progress_lib.Progress(
      f"SQuAD {'training' if is_training else 'evaluation'} features")
  report.note(f"reading {path}")
  examples = read_examples(path, is_training, version_2_with_negative)
  if max_examples:
    examples = examples[:max_examples]
  features = convert_examples(
      examples, tokenizer, max_seq_length=max_seq_length,
      doc_stride=doc_stride, max_query_length=max_query_length,
      is_training=is_training, source=path, report=report)
  if not features:
    raise SquadFormatError(f"{path}: no features (all contexts empty?)")
  written = features
  if is_training:
    # Records in random order, as BERT's run_squad writes them: the file is in
    # article order and the loader only shuffles within a 100-record buffer,
    # so a run shorter than an epoch would see just the first articles.
    order = np.random.default_rng(TRAIN_SHUFFLE_SEED).permutation(len(features))
    written = [features[i] for i in order]
  count = write_features(written, output, is_training, pad_to_multiple)
  logging.info("%s: %s -> %s (%d records)", path,
               feature_stats(examples, features), output, count)
  report.done(f"SQuAD features: wrote {count} records ({len(features)} "
              f"features of {len(examples)} questions) to {output} in "
              f"{report.elapsed():.1f} s")
  return examples, features
