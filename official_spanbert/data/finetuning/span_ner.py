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

"""Nested NER input: LitBank tsv documents -> windows of wordpieces -> tf.data.

Documents are cut into independent windows at sentence ends (as coreference
cuts its segments), with gold entities and the flat tagger's BIO labels; the
dataset is built from padded arrays in memory. Words (where candidate spans
start and end) are the basic words served text has, each LitBank token split
at its punctuation (basic_word_pieces). See docs/finetuning.md.

Example:
  docs = read_documents(document_files("litbank/splits/0/train.txt"))
  windows = encode_documents(docs, tokenizer, seq_length=256)
  ds = dataset(windows, seq_length=256, batch_size=8, is_training=True)
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import coref
from official_spanbert.data.finetuning import split_lists
from official_spanbert.data.finetuning import litbank_tsv

ENTITY_TYPES = litbank_tsv.ENTITY_TYPES
NUM_LABELS = 1 + len(ENTITY_TYPES)  # 0: no entity
BIO_TAGS = (litbank_tsv.OUTSIDE,) + tuple(
    f"{prefix}-{kind}" for kind in ENTITY_TYPES for prefix in ("B", "I"))
IGNORED = -1  # bio_labels of positions that are no word's first wordpiece
# The model's inputs; the rest of a batch is gold data and bookkeeping.
FEATURES = ("input_word_ids", "input_mask", "input_type_ids", "word_start",
            "word_end", "sentence_ids")
ENCODER_FEATURES = FEATURES[:3]
LABELS = ("gold_starts", "gold_ends", "gold_labels", "bio_labels",
          "window_index")


@dataclasses.dataclass
class Window:
  """One window of a document (lists over its positions, [CLS] at 0).

  Attributes:
    doc_index: position of the document in its input list.
    input_word_ids: [CLS], the wordpieces, [SEP].
    words: the document word (LitBank token) of each position (-1 for
      [CLS], [SEP]).
    basic_words: the document's basic word of each position (-1 for [CLS],
      [SEP]): the unit candidate spans start and end on.
    sentence_ids, word_start, word_end: as the module docstring.
    entities: (start, end, label) of the gold entities, positions inclusive.
    bio_labels: BIO_TAGS ids of the outermost entities, IGNORED elsewhere.

  Example:
    window = encode_document(doc, tokenizer, seq_length=256)[0]
    start, end, label = window.entities[0]
    (window.words[start], window.words[end], ENTITY_TYPES[label - 1])
  """
  doc_index: int
  input_word_ids: List[int]
  words: List[int]
  basic_words: List[int]
  sentence_ids: List[int]
  word_start: List[int]
  word_end: List[int]
  entities: List[Tuple[int, int, int]]
  bio_labels: List[int]


def document_files(input_path: str) -> List[str]:
  """The tsv files of a .tsv file, a glob or a LitBank split list
  (`<dir of the list>/../../tsv/<name>.tsv`)."""
  return split_lists.document_files(input_path, "tsv", ".tsv",
                                    litbank_tsv.TsvError)


def read_documents(paths: Sequence[str]) -> List[litbank_tsv.TsvDocument]:
  """The documents of tsv files, in order (TsvError names file:line)."""
  return [litbank_tsv.read_file(p) for p in paths]


def basic_word_pieces(tokenizer: tokenization.WordpieceTokenizer,
                      tokens: Sequence[str]) -> List[List[List[int]]]:
  """Wordpiece ids of each basic word of each token: the words the served
  signatures see (tokenizer.tokenize_words_with_offsets splits text at
  whitespace, at every punctuation character and around CJK characters), so
  `Mr.` is `Mr` and `.` whether it came from a tsv file or from natural
  text. A token that yields no piece is one [UNK] word."""
  if not tokens:
    return []
  ids = tokenizer.tokenize_words(tf.constant(list(tokens))).to_list()
  unk = tokenizer.vocab.unk_id
  return [words if words else [[unk]] for words in ids]


def encode_document(doc: litbank_tsv.TsvDocument,
                    tokenizer: tokenization.WordpieceTokenizer,
                    seq_length: int = 256, doc_index: int = 0
                    ) -> List[Window]:
  """The windows of one document.

  Word flags (word_start, word_end: where a candidate span may start and
  end) mark basic words, as served text has them; each gold entity starts
  and ends on its LitBank tokens' first and last basic words.
  """
  pieces = basic_word_pieces(tokenizer, doc.words)
  sentence_of_word = [s for s, sent in enumerate(doc.sentences) for _ in sent]
  ids, word_of, basic_of, start_flags, end_flags = [], [], [], [], []
  first, last = [], []
  for w, basic_words in enumerate(pieces):
    first.append(len(ids))
    for word_ids in basic_words:
      basic_of.extend([basic_of[-1] + 1 if basic_of else 0] * len(word_ids))
      ids.extend(word_ids)
      word_of.extend([w] * len(word_ids))
      start_flags.extend([1] + [0] * (len(word_ids) - 1))
      end_flags.extend([0] * (len(word_ids) - 1) + [1])
    last.append(len(ids) - 1)
  n = len(ids)
  sentence_end = [i == n - 1 or sentence_of_word[word_of[i + 1]] !=
                  sentence_of_word[word_of[i]] for i in range(n)]
  outer = litbank_tsv.outermost(doc.entities)
  label = {t: i + 1 for i, t in enumerate(ENTITY_TYPES)}
  windows, a = [], 0
  for b in coref.split_segments(n, sentence_end, end_flags, seq_length - 2):
    first_sentence = sentence_of_word[word_of[a]]

    def position(piece, a=a):
      return piece - a + 1  # after [CLS]

    entities = [(position(first[e.start]), position(last[e.end]),
                 label[e.type]) for e in doc.entities
                if first[e.start] >= a and last[e.end] < b]
    bio = [IGNORED] * (b - a + 2)
    for i in range(a, b):
      if start_flags[i]:
        bio[position(i)] = 0  # O
    for e in outer:
      inside = first[e.start] >= a and last[e.end] < b
      for i in range(max(a, first[e.start]), min(b, last[e.end] + 1)):
        if start_flags[i]:  # each basic word's first piece
          tag = ("B-" if i == first[e.start] else "I-") + e.type
          bio[position(i)] = BIO_TAGS.index(tag) if inside else IGNORED
    windows.append(Window(
        doc_index=doc_index,
        input_word_ids=([tokenizer.vocab.cls_id] + ids[a:b] +
                        [tokenizer.vocab.sep_id]),
        words=[-1] + word_of[a:b] + [-1],
        basic_words=[-1] + basic_of[a:b] + [-1],
        sentence_ids=([-1] + [sentence_of_word[word_of[i]] - first_sentence
                              for i in range(a, b)] + [-1]),
        word_start=[0] + start_flags[a:b] + [0],
        word_end=[0] + end_flags[a:b] + [0],
        entities=sorted(entities), bio_labels=bio))
    a = b
  return windows


def encode_documents(docs: Sequence[litbank_tsv.TsvDocument],
                     tokenizer: tokenization.WordpieceTokenizer,
                     seq_length: int = 256) -> List[Window]:
  """encode_document of each document (doc_index = its position)."""
  return [w for i, d in enumerate(docs)
          for w in encode_document(d, tokenizer, seq_length, i)]


def coverage(docs: Sequence[litbank_tsv.TsvDocument],
             windows: Sequence[Window], max_span_width: int
             ) -> Dict[str, float]:
  """What the span model can find of the gold entities: those in a window
  and of at most max_span_width wordpieces (recall percent and counts)."""
  gold = sum(len({e.key for e in d.entities}) for d in docs)
  # Positions are per window, so spans are told apart by their words.
  in_window = {(w.doc_index, w.words[s], w.words[e], k, e - s < max_span_width)
               for w in windows for s, e, k in w.entities}
  reachable = sum(ok for *_, ok in in_window)
  return {"gold": gold, "in_windows": len(in_window),
          "candidates": reachable,
          "candidate_recall": 100.0 * reachable / gold if gold else 0.0}


def to_arrays(windows: Sequence[Window], seq_length: int
              ) -> Dict[str, np.ndarray]:
  """The windows as padded int32 arrays (gold entities padded to the most
  of any window with start/end -1, label 0); `window_index` numbers them."""
  count = len(windows)
  most = max([1] + [len(w.entities) for w in windows])
  out = {n: np.zeros([count, seq_length], np.int32)
         for n in ("input_word_ids", "input_mask", "input_type_ids",
                   "word_start", "word_end")}
  out["sentence_ids"] = np.full([count, seq_length], -1, np.int32)
  out["bio_labels"] = np.full([count, seq_length], IGNORED, np.int32)
  out["gold_starts"] = np.full([count, most], -1, np.int32)
  out["gold_ends"] = np.full([count, most], -1, np.int32)
  out["gold_labels"] = np.zeros([count, most], np.int32)
  out["window_index"] = np.arange(count, dtype=np.int32)
  for i, w in enumerate(windows):
    length = len(w.input_word_ids)
    if length > seq_length:
      raise ValueError(f"window {i} has {length} positions, more than "
                       f"seq_length {seq_length}")
    out["input_word_ids"][i, :length] = w.input_word_ids
    out["input_mask"][i, :length] = 1
    for name in ("word_start", "word_end", "sentence_ids", "bio_labels"):
      out[name][i, :length] = getattr(w, name)
    for j, (s, e, k) in enumerate(w.entities):
      out["gold_starts"][i, j], out["gold_ends"][i, j] = s, e
      out["gold_labels"][i, j] = k
  return out


def dataset(windows: Sequence[Window], seq_length: int, batch_size: int,
            is_training: bool, seed: Optional[int] = None,
            features: Sequence[str] = FEATURES,
            input_context: Optional[tf.distribute.InputContext] = None
            ) -> tf.data.Dataset:
  """(features, labels) batches: `features` (the model's inputs) and LABELS.

  Training shuffles all windows each epoch, repeats and drops the last
  partial batch; evaluation keeps the order and every window.
  """
  arrays = to_arrays(windows, seq_length)
  ds = tf.data.Dataset.from_tensor_slices(
      ({n: arrays[n] for n in features}, {n: arrays[n] for n in LABELS}))
  if input_context and input_context.num_input_pipelines > 1:
    ds = ds.shard(input_context.num_input_pipelines,
                  input_context.input_pipeline_id)
    batch_size = input_context.get_per_replica_batch_size(batch_size)
  if is_training:
    ds = ds.shuffle(len(windows), seed=seed,
                    reshuffle_each_iteration=True).repeat()
  return ds.batch(batch_size, drop_remainder=is_training).prefetch(2)
