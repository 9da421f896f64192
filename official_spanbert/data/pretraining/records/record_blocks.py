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

"""Documents -> tokenized documents -> the blocks of both record layouts.

`tokenize_documents` tokenizes in batches through tf.text, `single_blocks`
packs one document greedily, and `nsp_instances` cuts BERT's segment pairs
from a streamed window of documents (`nsp_windows`).
"""

import dataclasses
import functools
import weakref
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining import packing
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data.pretraining.records.record_format import serialize_block
from official_spanbert.data.pretraining.records.record_format import Stats
from official_spanbert.data import tokenization


@dataclasses.dataclass
class TokenizedDocument:
  """A document after tokenization.

  Attributes:
    ids: all its wordpieces, lines concatenated.
    word_starts: matching 0/1 flags.
    line_lengths: wordpieces per line.
  """
  ids: np.ndarray
  word_starts: np.ndarray
  line_lengths: np.ndarray


@functools.lru_cache(maxsize=8)
def _shared_tokenizer(vocab_file: str, lower_case: bool, fingerprint: str
                      ) -> tokenization.WordpieceTokenizer:
  del fingerprint  # in the key only: a rewritten vocab gets a new tokenizer
  return tokenization.WordpieceTokenizer(vocab_file, lower_case)


def wordpiece_tokenizer(vocab_file: str, lower_case: bool = False
                        ) -> tokenization.WordpieceTokenizer:
  """The WordpieceTokenizer of a vocab, shared by the calls of a process.

  Keyed by the file, lower_case and the vocab's fingerprint (a file
  rewritten with other tokens gets a new tokenizer). tokenize_documents
  traces its tokenizer function once a tokenizer, ~0.6 CPU-s: every
  records run of a process (tests, notebooks, Beam DoFns in one worker)
  after the first reuses the trace.

  Example:
    assert wordpiece_tokenizer(vocab) is wordpiece_tokenizer(vocab)

  Raises:
    tokenization.VocabError: the vocab is missing or unusable.
  """
  vocab = tokenization.load_vocab(vocab_file)
  return _shared_tokenizer(vocab_file, lower_case, vocab.fingerprint)


# WordpieceTokenizer -> its tf.function of (flat ids, line lengths, flat
# word starts), reused by every tokenize_documents call (e.g. one per Beam
# batch of documents).
_flat_tokenizers = weakref.WeakKeyDictionary()


def tokenize_documents(documents: Iterator[corpus_lib.Document],
                       tokenizer: tokenization.WordpieceTokenizer,
                       batch_lines: int = 2048,
                       on_progress=None,
                       pipelined: bool = True) -> Iterator[TokenizedDocument]:
  """Tokenizes documents in batches of lines through tf.data and tf.text.

  Args:
    documents: documents to tokenize.
    tokenizer: the WordPiece tokenizer.
    batch_lines: lines per tokenizer call (whole documents are kept together,
      so a batch may be larger).
    on_progress: called after each batch with the number of its documents.
    pipelined: tokenize in a tf.data pipeline (overlaps reading and
      tokenizing; ~0.5 s to set up), else batch by batch in this thread
      (for callers that tokenize a few documents at a time, e.g. a Beam
      DoFn).

  Yields:
    One TokenizedDocument per input document, in order.

  Raises:
    Whatever reading the documents raised (e.g. corpus_lib.CorpusError).
  """
  failure = []

  def batches():
    lines, counts = [], []
    try:
      for doc in documents:
        lines.extend(doc.lines)
        counts.append(len(doc.lines))
        if len(lines) >= batch_lines:
          yield np.array(lines, dtype=object), np.array(counts, np.int64)
          lines, counts = [], []
    except Exception as e:  # pylint: disable=broad-except
      failure.append(e)  # re-raised below, outside tf.data
      return
    if lines:
      yield np.array(lines, dtype=object), np.array(counts, np.int64)

  flat_tokenize = _flat_tokenizers.get(tokenizer)
  if flat_tokenize is None:  # traced once per tokenizer, not once per call

    # autograph=False: the tokenizer (ours and tf.text's) is TF ops under
    # Python control flow on Python values; converting it cost ~1.5 CPU-s
    # in every process that writes records, for the same graph.
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)],
                 autograph=False)
    def flat_tokenize(lines):
      ids, word_starts = tokenizer.tokenize(lines)
      return ids.flat_values, ids.row_lengths(), word_starts.flat_values

    _flat_tokenizers[tokenizer] = flat_tokenize

  def tokenize(lines, doc_line_counts):
    return flat_tokenize(lines) + (doc_line_counts,)

  if pipelined:
    dataset = tf.data.Dataset.from_generator(
        batches, output_signature=(tf.TensorSpec([None], tf.string),
                                   tf.TensorSpec([None], tf.int64)))
    outputs = dataset.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE,
                          deterministic=True).prefetch(2).as_numpy_iterator()
  else:
    outputs = ([t.numpy() for t in flat_tokenize(tf.constant(lines))] +
               [counts] for lines, counts in batches())
  for flat_ids, line_lengths, flat_starts, doc_line_counts in outputs:
    line_bounds = np.concatenate([[0], np.cumsum(doc_line_counts)])
    token_bounds = np.concatenate([[0], np.cumsum(line_lengths)])
    for d in range(len(doc_line_counts)):
      l0, l1 = line_bounds[d], line_bounds[d + 1]
      t0, t1 = token_bounds[l0], token_bounds[l1]
      yield TokenizedDocument(flat_ids[t0:t1].astype(np.int32),
                              flat_starts[t0:t1].astype(np.int8),
                              line_lengths[l0:l1])
    if on_progress:
      on_progress(len(doc_line_counts))
  if failure:
    raise failure[0]


def _truncate_pair(a: List[np.ndarray], b: List[np.ndarray], max_tokens: int,
                   rng: np.random.Generator) -> None:
  """BERT's truncation: drop from the front or back of the longer segment.

  `a` and `b` are [ids, word_starts] pairs, modified in place.
  """
  while len(a[0]) + len(b[0]) > max_tokens:
    longer = a if len(a[0]) > len(b[0]) else b
    if rng.random() < 0.5:
      longer[0], longer[1] = longer[0][1:], longer[1][1:]
    else:
      longer[0], longer[1] = longer[0][:-1], longer[1][:-1]


def nsp_instances(docs: Sequence[TokenizedDocument], doc_index: int,
                  max_tokens: int, rng: np.random.Generator
                  ) -> Iterator[Tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
  """BERT's segment-pair instances of one document.

  Args:
    docs: all documents (random next segments are drawn from the others).
    doc_index: the document to cut into instances.
    max_tokens: capacity of A + B (max_seq_length - 3).
    rng: random generator.

  Yields:
    (ids, word_starts, segment_ids, next_sentence_label).
  """
  doc = docs[doc_index]
  line_bounds = np.concatenate([[0], np.cumsum(doc.line_lengths)])
  lines = [(line_bounds[i], line_bounds[i + 1])
           for i in range(len(doc.line_lengths))
           if line_bounds[i + 1] > line_bounds[i]]
  chunk, length, i = [], 0, 0
  while i < len(lines):
    chunk.append(lines[i])
    length += lines[i][1] - lines[i][0]
    if i == len(lines) - 1 or length >= max_tokens:
      a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
      a_lo, a_hi = chunk[0][0], chunk[a_end - 1][1]
      a = [doc.ids[a_lo:a_hi], doc.word_starts[a_lo:a_hi]]
      if (len(chunk) == 1 or rng.random() < 0.5) and len(docs) > 1:
        label = 1
        other = int(rng.integers(0, len(docs) - 1))
        other += other >= doc_index
        o = docs[other]
        start = int(rng.integers(0, max(len(o.line_lengths), 1)))
        o_bounds = np.concatenate([[0], np.cumsum(o.line_lengths)])
        b_lo = o_bounds[start]
        # Whole lines until B reaches its target length (at least one line);
        # _truncate_pair then balances A and B, as in BERT.
        target_b = b_lo + max(max_tokens - (a_hi - a_lo), 1)
        end_line = min(int(np.searchsorted(o_bounds, target_b)),
                       len(o_bounds) - 1)
        b_hi = max(o_bounds[end_line], o_bounds[min(start + 1,
                                                    len(o_bounds) - 1)])
        b = [o.ids[b_lo:b_hi], o.word_starts[b_lo:b_hi]]
        i -= len(chunk) - a_end  # the unused lines start the next chunk
      else:
        label = 0
        b_lo, b_hi = chunk[a_end][0], chunk[-1][1]
        b = [doc.ids[b_lo:b_hi], doc.word_starts[b_lo:b_hi]]
      _truncate_pair(a, b, max_tokens, rng)
      if len(a[0]) and len(b[0]):
        ids = np.concatenate([a[0], b[0]])
        starts = np.concatenate([a[1], b[1]]).copy()
        starts[0] = starts[len(a[0])] = 1  # truncation may cut a word
        segs = np.concatenate([np.zeros(len(a[0]), np.int64),
                               np.ones(len(b[0]), np.int64)])
        yield ids, starts, segs, label
      chunk, length = [], 0
    i += 1


def nsp_windows(docs: Iterator[TokenizedDocument], size: int
                ) -> Iterator[Tuple[List[TokenizedDocument], int]]:
  """Streams the non-empty documents with the window NSP draws from.

  Yields (window, d) once per document, in corpus order: the document is
  window[d], and its random next segments come from the other documents of
  the window, a ring of at most `size` consecutive documents (so memory is
  bounded by `size` tokenized documents). While the corpus lasts, a
  document is cut when it is the oldest of a full window (drawing from the
  size - 1 documents after it); the last `size` documents share the final
  window. A corpus of at most `size` documents is one window, as BERT's
  whole-corpus draw, and gives the same instances as holding it all.

  Args:
    docs: tokenized documents (empty ones are skipped).
    size: documents in the window, >= 2.
  """
  if size < 2:
    raise ValueError(f"nsp_buffer_documents must be >= 2, got {size}")
  window, oldest = [], 0
  for doc in docs:
    if not len(doc.ids):
      continue
    if len(window) < size:
      window.append(doc)
      continue
    yield window, oldest
    window[oldest] = doc
    oldest = (oldest + 1) % size
  for i in range(len(window)):
    yield window, (oldest + i) % len(window)


def with_tags(docs: Iterator[TokenizedDocument], tagger, files,
               on_decode_error, tag_counters: corpus_lib.CorpusCounters
               ) -> Iterator[Tuple[TokenizedDocument, Dict[str, np.ndarray]]]:
  """Each document with its tagged spans ({} without a tagger).

  The tagger reads the corpus on its own (counting into tag_counters) and is
  asked first, so its worker processes start before tf.data's threads do.
  """
  if tagger is None:
    for doc in docs:
      yield doc, {}
    return
  tags = tagger.tag(corpus_lib.read_documents(files, on_decode_error,
                                              tag_counters))
  for i, ((tagged, length), doc) in enumerate(zip(tags, docs)):
    if length != len(doc.ids):  # the same tokenizer, so the text changed
      raise corpus_lib.CorpusError(
          f"the inputs changed while they were read (once to tag, once to "
          f"tokenize): document {i + 1} has {length} wordpieces in one read "
          f"and {len(doc.ids)} in the other; rerun on files that are not "
          "being written")
    yield doc, tagged


def single_blocks(doc: TokenizedDocument, max_tokens: int, stats: Stats,
                  tagged: Optional[Dict[str, np.ndarray]] = None
                  ) -> Iterator[Tuple[np.ndarray, bytes]]:
  """The single-layout blocks of one document, in document order.

  Args:
    doc: the tokenized document.
    max_tokens: block capacity (max_seq_length - 2).
    stats: gets the document's split lines and tagged span counts.
    tagged: span_tagging.KINDS -> [k, 2] spans of the document, if tagged.

  Yields:
    (ids, serialized tf.train.Example) per block.
  """
  blocks, split = packing.pack_document(doc.line_lengths, doc.word_starts,
                                        max_tokens)
  stats.split_lines += split
  for s, e in blocks:
    block_tags = {}
    for kind, spans in (tagged or {}).items():
      block_tags[kind], cut = span_tagging.block_spans(spans, s, e)
      stats.tagged_spans[kind] += len(block_tags[kind])
      stats.tagged_spans_cut_by_block_ends[kind] += cut
    yield doc.ids[s:e], serialize_block(doc.ids[s:e], doc.word_starts[s:e],
                                        tagged=block_tags)
