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

"""Coreference examples: CoNLL-2012 documents -> wordpieces, segments, records.

As SpanBERT's coreference code ("independent" setup): documents are cut into
independent segments of at most max_segment_len wordpieces at sentence ends,
with OntoNotes genre and speakers (ontonotes.py), one document a record. The
segmenting and the record's features: docs/coreference.md.
"""

import dataclasses
import json
import os
from typing import Dict, List, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf

from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import ontonotes
from official_spanbert.data.finetuning import split_lists
from official_spanbert.data.finetuning import conll2012

META_FILE = "meta_data.json"
# Per-wordpiece features of a record (all int64, same length).
TOKEN_FEATURES = ("sentence_map", "subtoken_map", "speaker_ids", "word_start",
                  "word_end")
MENTION_FEATURES = ("gold_starts", "gold_ends", "cluster_ids")


@dataclasses.dataclass
class CorefExample:
  """One tokenized document.

  Attributes:
    doc_index: position of the document in its input list.
    segments: wordpiece ids of each segment, [CLS] ... [SEP].
    sentence_map, subtoken_map, speaker_ids, word_start, word_end: one value
      per content wordpiece (segments without [CLS]/[SEP], concatenated).
    gold_starts, gold_ends, cluster_ids: gold mentions in wordpiece indices
      (inclusive), sorted; cluster ids from 1.
    genre: index in ontonotes.GENRES (0 for a name without a genre prefix).
  """
  doc_index: int
  segments: List[List[int]]
  sentence_map: List[int]
  subtoken_map: List[int]
  speaker_ids: List[int]
  word_start: List[int]
  word_end: List[int]
  gold_starts: List[int]
  gold_ends: List[int]
  cluster_ids: List[int]
  genre: int = 0

  @property
  def num_subtokens(self) -> int:
    return len(self.subtoken_map)


def word_pieces(tokenizer: tokenization.WordpieceTokenizer,
                words: Sequence[str]) -> List[List[int]]:
  """Wordpiece ids of each word ([UNK] for a word that yields none)."""
  if not words:
    return []
  ids, _ = tokenizer.tokenize(tf.constant(list(words)))
  pieces = ids.to_list()
  unk = tokenizer.vocab.unk_id
  return [p if p else [unk] for p in pieces]


def split_segments(num_subtokens: int, sentence_end: Sequence[bool],
                   word_end: Sequence[bool], max_content: int
                   ) -> List[int]:
  """End offsets (exclusive) of the segments of a wordpiece sequence.

  minimize.py's split_into_segments (max_content = max_segment_len - 2):
  each segment holds at most max_content wordpieces and ends after the last
  sentence end that fits, else the last word end. Where the reference
  raises ("Can't find valid segment": one word of more than max_content
  wordpieces), the segment is cut at max_content.
  """
  if max_content < 1:
    raise ValueError(f"max_segment_len leaves {max_content} wordpieces per "
                     "segment; it must be at least 3")
  ends, start = [], 0
  while start < num_subtokens:
    limit = min(start + max_content, num_subtokens)
    end = limit
    if limit < num_subtokens:
      for flags in (sentence_end, word_end):
        cut = next((i + 1 for i in range(limit - 1, start - 1, -1)
                    if flags[i]), None)
        if cut is not None:
          end = cut
          break
    ends.append(end)
    start = end
  return ends


def encode_document(doc: conll2012.ConllDocument,
                    tokenizer: tokenization.WordpieceTokenizer,
                    max_segment_len: int = 384,
                    doc_index: int = 0,
                    max_num_speakers: int = 0) -> CorefExample:
  """Tokenizes and segments one document (max_num_speakers: see
  ontonotes.speaker_ids)."""
  words = [ontonotes.normalize_word(w) for w in doc.words]
  pieces = word_pieces(tokenizer, words)
  sentence_of_word = [s for s, sent in enumerate(doc.sentences) for _ in sent]
  speakers = ontonotes.speaker_ids(
      [sp for sent in doc.speakers for sp in sent], max_num_speakers)
  ids, subtoken_map, sentence_map, speaker, starts, ends = [], [], [], [], [], []
  first_piece, last_piece = [], []
  for w, word_ids in enumerate(pieces):
    first_piece.append(len(ids))
    for j, piece in enumerate(word_ids):
      ids.append(piece)
      subtoken_map.append(w)
      sentence_map.append(sentence_of_word[w])
      speaker.append(speakers[w])
      starts.append(int(j == 0))
      ends.append(int(j == len(word_ids) - 1))
    last_piece.append(len(ids) - 1)
  n = len(ids)
  sentence_end = [i == n - 1 or sentence_map[i + 1] != sentence_map[i]
                  for i in range(n)]
  cuts = split_segments(n, sentence_end, ends, max_segment_len - 2)
  segments, start = [], 0
  for end in cuts:
    segments.append([tokenizer.vocab.cls_id] + ids[start:end] +
                    [tokenizer.vocab.sep_id])
    start = end
  mentions = sorted((first_piece[s], last_piece[e], c + 1)
                    for c, cluster in enumerate(doc.clusters)
                    for s, e in cluster)
  return CorefExample(
      doc_index=doc_index, segments=segments, sentence_map=sentence_map,
      subtoken_map=subtoken_map, speaker_ids=speaker, word_start=starts,
      word_end=ends, gold_starts=[m[0] for m in mentions],
      gold_ends=[m[1] for m in mentions],
      cluster_ids=[m[2] for m in mentions],
      genre=ontonotes.genre_id(doc.name))


def to_tf_example(example: CorefExample, max_segment_len: int) -> bytes:
  """One serialized tf.train.Example (segments padded to max_segment_len)."""
  ids = np.zeros((len(example.segments), max_segment_len), np.int64)
  mask = np.zeros_like(ids)
  for i, seg in enumerate(example.segments):
    ids[i, :len(seg)] = seg
    mask[i, :len(seg)] = 1
  feature = tfrecord_writer.int64_feature
  features = {
      "input_word_ids": feature(ids.reshape(-1)),
      "input_mask": feature(mask.reshape(-1)),
      "num_segments": feature([len(example.segments)]),
      "doc_index": feature([example.doc_index]),
      "genre": feature([example.genre]),
  }
  for name in TOKEN_FEATURES + MENTION_FEATURES:
    features[name] = feature(getattr(example, name))
  return tfrecord_writer.example_bytes(features)


def read_documents(paths: Sequence[str]) -> List[conll2012.ConllDocument]:
  """Documents of CoNLL-2012 files, in order (ConllError names file:line)."""
  docs = []
  for path in paths:
    docs.extend(conll2012.read_file(path))
  return docs


def document_list(path: str) -> List[str]:
  """CoNLL files named by `path`: a .conll file, a glob, or a split list
  (one document name per line, each `<dir of the list>/../../conll/<name>
  .conll` as in LitBank's splits/<fold>/<part>.txt, or a path)."""
  return split_lists.document_files(path, "conll", ".conll",
                                    conll2012.ConllError)


def encode_documents(docs: Sequence[conll2012.ConllDocument],
                     tokenizer: tokenization.WordpieceTokenizer,
                     max_segment_len: int = 384,
                     max_num_speakers: int = 0) -> List[CorefExample]:
  """encode_document for each document (doc_index = its position); logs
  once how many documents have no genre prefix."""
  no_genre = [d.name for d in docs if not ontonotes.has_genre(d.name)]
  if no_genre:
    logging.info(
        "coref data: %d of %d documents have no OntoNotes genre prefix (%s) "
        "in their names (e.g. %r); they get genre 0 (%s), as the reference",
        len(no_genre), len(docs), ", ".join(ontonotes.GENRES), no_genre[0],
        ontonotes.GENRES[0])
  return [encode_document(d, tokenizer, max_segment_len, i, max_num_speakers)
          for i, d in enumerate(docs)]


def write_examples(examples: Sequence[CorefExample], output: str,
                   max_segment_len: int = 384) -> Dict[str, int]:
  """Writes examples into one TFRecord file; returns counts."""
  tfrecord_writer.write_records(
      output, (to_tf_example(e, max_segment_len) for e in examples))
  return {"documents": len(examples),
          "segments": sum(len(e.segments) for e in examples),
          "subtokens": sum(e.num_subtokens for e in examples),
          "mentions": sum(len(e.gold_starts) for e in examples),
          "max_segment_len": max_segment_len}


def create_finetuning_data(vocab_file: str, output_dir: str, *,
                           train_file: Optional[str] = None,
                           eval_file: Optional[str] = None,
                           lower_case: bool = False,
                           max_segment_len: int = 384,
                           max_num_speakers: int = 0) -> Dict[str, object]:
  """train.tf_record / eval.tf_record + meta_data.json from CoNLL input.

  Each of train_file / eval_file is a .conll file, a glob or a LitBank split
  list (see document_list). All input is read (and validated) first.
  """
  tokenizer = tokenization.WordpieceTokenizer(vocab_file,
                                              lower_case=lower_case)
  splits = {name: read_documents(document_list(path))
            for name, path in (("train", train_file), ("eval", eval_file))
            if path}
  if not splits:
    raise conll2012.ConllError("give --train_file and/or --eval_file")
  tf.io.gfile.makedirs(output_dir)
  meta = {"task": "coref", "vocab_file": vocab_file,
          "do_lower_case": lower_case, "max_num_speakers": max_num_speakers}
  for name, docs in splits.items():
    meta[name] = write_examples(
        encode_documents(docs, tokenizer, max_segment_len, max_num_speakers),
        os.path.join(output_dir, f"{name}.tf_record"), max_segment_len)
  with open(os.path.join(output_dir, META_FILE), "w", encoding="utf-8") as f:
    json.dump(meta, f, indent=2)
  return meta


def parse(record: tf.Tensor, max_segment_len: int) -> Dict[str, tf.Tensor]:
  """One serialized record -> the model's features (no batch dimension)."""
  names = (("input_word_ids", "input_mask") + TOKEN_FEATURES +
           MENTION_FEATURES)
  spec = {n: tf.io.VarLenFeature(tf.int64) for n in names}
  spec["num_segments"] = tf.io.FixedLenFeature([], tf.int64)
  spec["doc_index"] = tf.io.FixedLenFeature([], tf.int64)
  spec["genre"] = tf.io.FixedLenFeature([], tf.int64, default_value=0)
  parsed = tf.io.parse_single_example(record, spec)
  out = {}
  for n in names:
    out[n] = tf.cast(tf.sparse.to_dense(parsed[n]), tf.int32)
  for n in ("input_word_ids", "input_mask"):
    out[n] = tf.reshape(out[n], [-1, max_segment_len])
  out["doc_index"] = tf.cast(parsed["doc_index"], tf.int32)
  out["genre"] = tf.cast(parsed["genre"], tf.int32)
  return out


def truncate(features: Dict[str, tf.Tensor], max_segments: int,
             seed: Optional[int] = None) -> Dict[str, tf.Tensor]:
  """A random window of max_segments consecutive segments (training only, as
  the reference's max_training_sentences); gold mentions outside it are
  dropped, the others re-indexed."""
  num = tf.shape(features["input_word_ids"])[0]
  start = tf.random.uniform([], 0, tf.maximum(num - max_segments, 0) + 1,
                            dtype=tf.int32, seed=seed)
  end = tf.minimum(start + max_segments, num)
  content = tf.reduce_sum(features["input_mask"], axis=1) - 2
  offsets = tf.concat([[0], tf.cumsum(content)], axis=0)
  lo, hi = offsets[start], offsets[end]
  out = dict(features)
  out["input_word_ids"] = features["input_word_ids"][start:end]
  out["input_mask"] = features["input_mask"][start:end]
  for n in TOKEN_FEATURES:
    out[n] = features[n][lo:hi]
  inside = (features["gold_starts"] >= lo) & (features["gold_ends"] < hi)
  out["gold_starts"] = tf.boolean_mask(features["gold_starts"], inside) - lo
  out["gold_ends"] = tf.boolean_mask(features["gold_ends"], inside) - lo
  out["cluster_ids"] = tf.boolean_mask(features["cluster_ids"], inside)
  return out


def load(input_path: str, max_segment_len: int, is_training: bool,
         max_training_segments: int = 0, seed: Optional[int] = None,
         input_context: Optional[tf.distribute.InputContext] = None
         ) -> tf.data.Dataset:
  """Documents as batches of one (shuffled and repeated when training)."""
  files = tf.io.gfile.glob(input_path)
  if not files:
    raise ValueError(f"coreference records {input_path} match no file")
  ds = tf.data.TFRecordDataset(sorted(files))
  if input_context and input_context.num_input_pipelines > 1:
    ds = ds.shard(input_context.num_input_pipelines,
                  input_context.input_pipeline_id)
  if is_training:
    ds = ds.shuffle(1000, seed=seed, reshuffle_each_iteration=True).repeat()
  ds = ds.map(lambda r: parse(r, max_segment_len))
  if is_training and max_training_segments > 0:
    ds = ds.map(lambda f: truncate(f, max_training_segments, seed))
  return ds.batch(1).prefetch(2)
