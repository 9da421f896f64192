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

"""Corpus -> tokenized, document-bounded pretraining blocks in TFRecords.

Records hold unmasked wordpiece ids and word-start flags only; masking happens
in the data loader, fresh every epoch. Two layouts:

* `single` (SpanBERT): one block of at most max_seq_length - 2 wordpieces,
  packed greedily from consecutive lines of one document.
* `nsp` (BERT baseline): segment A and segment B (the true continuation, or
  with probability 0.5 a random span of another document) of at most
  max_seq_length - 3 wordpieces together, and the next-sentence label
  (0 = B follows A, 1 = B is random), as in BERT. The corpus is streamed:
  random segments come from a window of `nsp_buffer_documents` documents
  (nsp_windows), the only documents held in memory.

Feature names (all int64): `input_ids`, `word_starts`, and for `nsp` also
`segment_ids` (0 for A, 1 for B) and `next_sentence_labels`. With
`tag_spans` (single blocks only; span_tagging, needs spaCy) each block also
holds its named entities and/or noun phrases as `entity_starts`/`entity_ends`
and `noun_phrase_starts`/`noun_phrase_ends`: wordpiece offsets in the block,
end exclusive, whole words; a span that a block end cuts is dropped. Special
tokens ([CLS], [SEP]) are not stored; the loader frames the blocks. The stats
file `<prefix>.stats.json` records the layout, the longest block, the tagged
kinds and the vocab's fingerprint and size, which the loader and the task
check against their config. A run holds `<prefix>.lock` while it writes, so
a second run on the same prefix refuses with one line instead of removing
the first one's partial shards.
`<prefix>.counts.json` holds how often each wordpiece id occurs in the corpus,
from which the loader draws random replacement tokens (the reference's corpus
unigram distribution).
"""

import contextlib
import dataclasses
import glob
import json
import os
import re
import signal
import threading
import time
import weakref
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import official_spanbert  # noqa: F401
import tensorflow as tf

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining import packing
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization
from official_spanbert.utils import atomic_io
from official_spanbert.utils import run_lock

MODES = ("single", "nsp")
INCOMPLETE = atomic_io.INCOMPLETE
# Beside the shards: {"vocab_fingerprint": ..., "counts": [count per id]}.
COUNTS_SUFFIX = ".counts.json"
# Held by the run writing a prefix (official_spanbert/utils/run_lock.py).
LOCK_SUFFIX = ".lock"
# Documents --mode=nsp holds for its random next segments (nsp_windows).
NSP_BUFFER_DOCUMENTS = 10_000
_SHARD_SUFFIX = re.compile(r"-\d{5}-of-\d{5}\.tfrecord$")


class RecordsOutputError(ValueError):
  """The output shards cannot be written (path, permissions, disk space)."""


class TerminatedError(RuntimeError):
  """SIGTERM arrived while the shards were being written."""


def feature_spec(mode: str = "single",
                 tag_kinds: Sequence[str] = ()) -> Dict[str, object]:
  """The tf.io parsing spec of the records a mode writes.

  Args:
    mode: one of MODES.
    tag_kinds: span_tagging.KINDS whose spans to read too.
  """
  ragged = tf.io.RaggedFeature(tf.int64, row_splits_dtype=tf.int64)
  spec = {"input_ids": ragged, "word_starts": ragged}
  if mode == "nsp":
    spec["segment_ids"] = ragged
    spec["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
  for name in span_tagging.span_features(tag_kinds):
    spec[name] = ragged
  return spec


def shard_paths(output_prefix: str, num_shards: int) -> List[str]:
  return [f"{output_prefix}-{i:05d}-of-{num_shards:05d}.tfrecord"
          for i in range(num_shards)]


def shard_prefix(path: str) -> Optional[str]:
  """The output prefix of a shard path, or None if it is not named as one."""
  match = _SHARD_SUFFIX.search(path)
  return path[:match.start()] if match else None


def existing_shards(output_prefix: str, suffix: str = "") -> List[str]:
  """Shards of any count at a prefix (with `suffix`, e.g. INCOMPLETE)."""
  pattern = glob.escape(output_prefix) + "-?????-of-?????.tfrecord" + suffix
  return sorted(p for p in glob.glob(pattern) if os.path.isfile(p) and
                shard_prefix(p[:len(p) - len(suffix)]) == output_prefix)


def read_stats(output_prefix: str, suffix: str = ".stats.json"
               ) -> Optional[Dict[str, object]]:
  """The stats JSON of a prefix (or another JSON beside the shards, e.g.
  COUNTS_SUFFIX), or None when there is none.

  Raises:
    ValueError: the file is not JSON.
  """
  path = output_prefix + suffix
  if not tf.io.gfile.exists(path):
    return None
  with tf.io.gfile.GFile(path, "r") as f:
    try:
      return json.load(f)
    except ValueError as e:
      raise ValueError(f"{path} is not valid JSON ({e}); delete it or rewrite "
                       "the records") from None


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

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
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


def _int64_feature(values) -> tf.train.Feature:
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def serialize_block(ids: np.ndarray, word_starts: np.ndarray,
                    segment_ids: Optional[np.ndarray] = None,
                    next_sentence_label: Optional[int] = None,
                    tagged: Optional[Dict[str, np.ndarray]] = None) -> bytes:
  """Serializes one block as a tf.train.Example.

  `tagged` maps span_tagging.KINDS to [k, 2] spans in block coordinates.
  """
  features = {"input_ids": _int64_feature(ids),
              "word_starts": _int64_feature(word_starts)}
  if segment_ids is not None:
    features["segment_ids"] = _int64_feature(segment_ids)
    features["next_sentence_labels"] = _int64_feature([next_sentence_label])
  for kind, spans in (tagged or {}).items():
    starts, ends = span_tagging.span_features([kind])
    features[starts] = _int64_feature(spans[:, 0])
    features[ends] = _int64_feature(spans[:, 1])
  return tf.train.Example(
      features=tf.train.Features(feature=features)).SerializeToString()


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


def _with_tags(docs: Iterator[TokenizedDocument], tagger, files,
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


@dataclasses.dataclass
class Stats:
  """What create_pretraining_records did; written as JSON."""
  mode: str = "single"
  max_seq_length: int = 512
  max_block_tokens: int = 0
  vocab_file: str = ""
  vocab_fingerprint: str = ""
  vocab_size: int = 0
  lower_case: bool = False
  files: int = 0
  bytes: int = 0
  documents: int = 0
  empty_documents: int = 0
  lines: int = 0
  replaced_lines: int = 0
  split_lines: int = 0
  blocks: int = 0
  tokens: int = 0
  padding_ratio: float = 0.0
  mean_block_tokens: float = 0.0
  shards: int = 0
  seconds: float = 0.0
  mb_per_second: float = 0.0
  tokens_per_second: float = 0.0
  tag_spans: List[str] = dataclasses.field(default_factory=list)
  tagged_spans: Dict[str, int] = dataclasses.field(default_factory=dict)
  tagged_spans_cut_by_block_ends: Dict[str, int] = dataclasses.field(
      default_factory=dict)
  tagged_words: int = 0
  words_per_second: float = 0.0


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


def stats_texts(stats: Stats, counts: np.ndarray, output_prefix: str,
                stats_file: Optional[str] = None) -> Dict[str, str]:
  """{path: JSON text} of the stats and counts files of finished records."""
  return {
      stats_file or output_prefix + ".stats.json":
          json.dumps(dataclasses.asdict(stats), indent=2) + "\n",
      output_prefix + COUNTS_SUFFIX: json.dumps(
          {"vocab_fingerprint": stats.vocab_fingerprint,
           "counts": counts.tolist()}) + "\n"}


def _output_error(path: str, error: Exception) -> RecordsOutputError:
  if isinstance(error, tf.errors.OpError):
    reason = error.message.replace(f"{path}; ", "")
  else:
    reason = error.strerror or str(error)
  return RecordsOutputError(
      f"cannot write {path}: {reason}; choose a writable output_prefix with "
      "free space (no shard was left behind)")


class _SigtermGuard:
  """Turns a SIGTERM into TerminatedError at the next check() while writing.

  Only in the main thread (where Python runs signal handlers). The handler
  just notes the signal: an exception raised from it can be swallowed by
  library code (AutoGraph does). A SIGTERM no check() saw (e.g. during the
  commit) goes to the previous handler when the guard exits.
  """

  def __init__(self, what: str):
    self._what = what
    self._active = threading.current_thread() is threading.main_thread()
    self._previous = None
    self._pending = False

  def __enter__(self):
    if self._active:
      self._previous = signal.signal(signal.SIGTERM, self._handle)
    return self

  def _handle(self, signum, frame):
    del signum, frame
    self._pending = True

  def check(self):
    """Raises TerminatedError if a SIGTERM arrived since the last check."""
    if self._pending:
      self._pending = False
      raise TerminatedError(
          f"terminated by SIGTERM while writing {self._what}; partial shards "
          "removed, rerun to write them")

  def __exit__(self, *exc):
    if self._active:  # (None: the previous handler was not set from Python)
      signal.signal(signal.SIGTERM, self._previous or signal.SIG_DFL)
      if self._pending:
        signal.raise_signal(signal.SIGTERM)


def _make_dirs(path: str) -> List[str]:
  """Creates a directory and its parents; returns the new ones, deepest first.

  Raises:
    RecordsOutputError: it cannot be created.
  """
  created, p = [], os.path.abspath(path)
  while not os.path.exists(p):
    created.append(p)
    p = os.path.dirname(p)
  try:
    os.makedirs(path, exist_ok=True)
  except OSError as e:
    _remove_empty_dirs(created)
    raise RecordsOutputError(
        f"cannot create output directory {path}: {e.strerror}; choose a "
        "writable output_prefix") from None
  return created


def _remove_empty_dirs(dirs: Sequence[str]):
  for d in dirs:
    try:
      os.rmdir(d)
    except OSError:
      pass  # not empty, or never created


@contextlib.contextmanager
def _prefix_lock(output_prefix: str) -> Iterator[None]:
  """Holds `<output_prefix>.lock` for the block.

  Raises:
    RecordsOutputError: another live run writes this prefix, or the lock
      cannot be written.
  """
  path = output_prefix + LOCK_SUFFIX
  try:
    record = run_lock.acquire_file(path, "records run", output_prefix)
  except (run_lock.LockedError, run_lock.LockWriteError) as e:
    raise RecordsOutputError(str(e)) from None
  try:
    yield
  finally:
    run_lock.release_file(path, record)


def _remove(paths: Sequence[str], what: str):
  if paths:
    logging.warning("removing %d %s: %s", len(paths), what, ", ".join(paths))
  for p in paths:
    os.remove(p)


def create_pretraining_records(input_patterns: Sequence[str], vocab_file: str,
                               output_prefix: str, *, lower_case: bool = False,
                               max_seq_length: int = 512, num_shards: int = 1,
                               mode: str = "single", seed: int = 12345,
                               on_decode_error: str = "strict",
                               progress: bool = True,
                               stats_file: Optional[str] = None,
                               tag_spans: Sequence[str] = (),
                               tag_processes: int = 2,
                               nsp_buffer_documents: int =
                               NSP_BUFFER_DOCUMENTS) -> Stats:
  """Turns text corpora into sharded pretraining TFRecords.

  Args:
    input_patterns: globs (each may be comma-separated) of corpus files.
    vocab_file: WordPiece vocab.
    lower_case: uncased tokenization.
    max_seq_length: sequence length the loader will produce, [CLS] and [SEP]
      included.
    num_shards: number of output files.
    mode: "single" (SpanBERT blocks) or "nsp" (BERT segment pairs).
    seed: makes shard assignment and NSP sampling reproducible.
    on_decode_error: "strict" or "replace" (see corpus.read_documents).
    progress: show a progress bar on stderr.
    stats_file: where to write the stats JSON (default
      `<output_prefix>.stats.json`).
    tag_spans: span_tagging.KINDS to tag with spaCy and store per block
      (single mode only).
    tag_processes: spaCy worker processes.
    nsp_buffer_documents: mode "nsp": the documents held (the window the
      random next segments come from, see nsp_windows), not the corpus.

  Returns:
    The Stats also written to the stats file.

  Raises:
    corpus.CorpusError, tokenization.VocabError, ValueError: bad input; no
      shard is left behind in that case.
    span_tagging.TaggingUnavailableError (a ValueError): tag_spans without
      spaCy and its English pipeline.
  """
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
  specials = 3 if mode == "nsp" else 2
  if max_seq_length < specials + 2:
    raise ValueError(f"max_seq_length={max_seq_length} is too small")
  if num_shards < 1:
    raise ValueError(f"num_shards must be >= 1, got {num_shards}")
  if mode == "nsp" and nsp_buffer_documents < 2:
    raise ValueError("nsp_buffer_documents must be >= 2, got "
                     f"{nsp_buffer_documents}")
  tag_spans = span_tagging.parse_kinds(tag_spans)
  if tag_spans and mode != "single":
    raise ValueError("tag_spans needs mode='single' (the named_entity and "
                     "noun_phrase schemes mask single-segment blocks)")
  files = corpus_lib.expand_inputs(input_patterns)
  tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
  tagger = (span_tagging.SpanTagger(tag_spans, vocab_file, lower_case,
                                    n_process=tag_processes)
            if tag_spans else None)
  with _SigtermGuard(f"{output_prefix}-*") as guard:
    created_dirs = _make_dirs(os.path.dirname(os.path.abspath(output_prefix)))
    try:
      with _prefix_lock(output_prefix):
        stats = _write_records(files, tokenizer, output_prefix, guard,
                               lower_case=lower_case,
                               max_seq_length=max_seq_length,
                               num_shards=num_shards, mode=mode, seed=seed,
                               on_decode_error=on_decode_error,
                               progress=progress, stats_file=stats_file,
                               tagger=tagger,
                               nsp_buffer_documents=nsp_buffer_documents)
    except BaseException:
      _remove_empty_dirs(created_dirs)
      raise
  return stats


def _finish_stats(stats: Stats, counters: corpus_lib.CorpusCounters,
                  seconds: float):
  """Fills in the totals and rates once every block is written."""
  specials = 3 if stats.mode == "nsp" else 2
  stats.seconds = round(seconds, 3)
  for field in ("files", "bytes", "documents", "empty_documents", "lines",
                "replaced_lines"):
    setattr(stats, field, getattr(counters, field))
  stats.padding_ratio = round(
      1.0 - (stats.tokens + specials * stats.blocks) /
      (stats.blocks * stats.max_seq_length), 6)
  stats.mean_block_tokens = round(stats.tokens / stats.blocks, 2)
  stats.mb_per_second = round(stats.bytes / 1e6 / max(stats.seconds, 1e-9), 3)
  stats.tokens_per_second = round(stats.tokens / max(stats.seconds, 1e-9), 1)
  stats.words_per_second = round(
      stats.tagged_words / max(stats.seconds, 1e-9), 1)


def _write_records(files, tokenizer, output_prefix, guard, *, lower_case,
                   max_seq_length, num_shards, mode, seed, on_decode_error,
                   progress, stats_file, tagger,
                   nsp_buffer_documents) -> Stats:
  """create_pretraining_records once its inputs are checked."""
  specials = 3 if mode == "nsp" else 2
  max_tokens = max_seq_length - specials
  # This run holds the prefix's lock: no live run owns these.
  _remove(existing_shards(output_prefix, INCOMPLETE),
          "partial shard(s) of an earlier, interrupted run")
  counters = corpus_lib.CorpusCounters()
  vocab = tokenizer.vocab
  stats = Stats(mode=mode, max_seq_length=max_seq_length,
                vocab_file=os.path.abspath(vocab.path),
                vocab_fingerprint=vocab.fingerprint, vocab_size=vocab.size,
                lower_case=lower_case, shards=num_shards,
                tag_spans=list(tagger.kinds if tagger else ()))
  stats.tagged_spans = dict.fromkeys(stats.tag_spans, 0)
  stats.tagged_spans_cut_by_block_ends = dict.fromkeys(stats.tag_spans, 0)
  counts = np.zeros(vocab.size, np.int64)
  total_bytes = sum(os.path.getsize(f) for f in files)
  bar = None
  if progress:
    import tqdm  # pylint: disable=g-import-not-at-top
    bar = tqdm.tqdm(total=total_bytes, unit="B", unit_scale=True,
                    desc="tag+tokenize+pack" if tagger else "tokenize+pack",
                    mininterval=1.0)

  def on_progress(_):
    guard.check()
    if bar is not None:
      bar.update(counters.bytes - bar.n)

  def add(ids, record):
    guard.check()
    writer.write(int(rng.integers(num_shards)), record)
    stats.blocks += 1
    stats.tokens += len(ids)
    stats.max_block_tokens = max(stats.max_block_tokens, len(ids))

  rng = np.random.default_rng(seed)
  paths = shard_paths(output_prefix, num_shards)
  start = time.time()
  writer = tfrecord_writer.AtomicTFRecordWriter(paths, _output_error)
  try:
    docs = tokenize_documents(
        corpus_lib.read_documents(files, on_decode_error, counters),
        tokenizer, on_progress=on_progress)
    if mode == "single":
      tag_counters = corpus_lib.CorpusCounters()
      for doc, tagged in _with_tags(docs, tagger, files, on_decode_error,
                                    tag_counters):
        if tagger is not None and bar is not None:  # tagging sets the pace
          bar.update(tag_counters.bytes - bar.n)
        counts += np.bincount(doc.ids, minlength=vocab.size)
        for ids, record in single_blocks(doc, max_tokens, stats, tagged):
          add(ids, record)
      stats.tagged_words = tagger.words if tagger else 0
    else:
      for window, d in nsp_windows(docs, nsp_buffer_documents):
        counts += np.bincount(window[d].ids, minlength=vocab.size)
        for ids, starts, segs, label in nsp_instances(window, d, max_tokens,
                                                      rng):
          add(ids, serialize_block(ids, starts, segs, label))
    if stats.blocks == 0:
      raise corpus_lib.CorpusError(
          f"inputs {', '.join(files)} produced no blocks (no wordpieces)")
    _finish_stats(stats, counters, time.time() - start)
    guard.check()
    writer.commit(stats_texts(stats, counts, output_prefix, stats_file))
  except BaseException:
    writer.abort()
    raise
  finally:
    if bar is not None:
      bar.close()
  _remove([p for p in existing_shards(output_prefix) if p not in paths],
          "shard(s) of an earlier run with another num_shards")
  return stats
