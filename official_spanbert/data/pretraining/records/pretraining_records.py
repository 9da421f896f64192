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

`create_pretraining_records` is the one-process writer of the `single`
(SpanBERT) and `nsp` (BERT baseline) layouts of record_format.py, with the
stats, counts and prefix lock beside the shards. See docs/pretraining.md,
"Pretraining records".
"""

import os
import time
from typing import Optional, Sequence

import numpy as np

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining.records import record_blocks
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data.pretraining.records import records_output
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization
from official_spanbert.utils import atomic_io
from official_spanbert.utils import progress as progress_lib

# What create_pretraining_records raises besides bad input (ValueError).
RecordsOutputError = records_output.RecordsOutputError
TerminatedError = records_output.TerminatedError
# Documents --mode=nsp holds for its random next segments (nsp_windows).
NSP_BUFFER_DOCUMENTS = 10_000


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
                               NSP_BUFFER_DOCUMENTS) -> record_format.Stats:
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
    progress: report progress on stderr (utils/progress.py).
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
  if mode not in record_format.MODES:
    raise ValueError(f"mode must be one of {record_format.MODES}, not "
                     f"{mode!r}")
  specials = record_format.special_tokens(mode)
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
  tokenizer = record_blocks.wordpiece_tokenizer(vocab_file, lower_case)
  tagger = (span_tagging.SpanTagger(tag_spans, vocab_file, lower_case,
                                    n_process=tag_processes)
            if tag_spans else None)
  with records_output.SigtermGuard(f"{output_prefix}-*") as guard:
    created_dirs = records_output.make_dirs(
        os.path.dirname(os.path.abspath(output_prefix)))
    try:
      with records_output.prefix_lock(output_prefix):
        stats = _write_records(files, tokenizer, output_prefix, guard,
                               lower_case=lower_case,
                               max_seq_length=max_seq_length,
                               num_shards=num_shards, mode=mode, seed=seed,
                               on_decode_error=on_decode_error,
                               progress=progress, stats_file=stats_file,
                               tagger=tagger,
                               nsp_buffer_documents=nsp_buffer_documents)
    except BaseException:
      records_output.remove_empty_dirs(created_dirs)
      raise
  return stats


def _write_records(files, tokenizer, output_prefix, guard, *, lower_case,
                   max_seq_length, num_shards, mode, seed, on_decode_error,
                   progress, stats_file, tagger,
                   nsp_buffer_documents) -> record_format.Stats:
  """create_pretraining_records once its inputs are checked."""
  specials = record_format.special_tokens(mode)
  max_tokens = max_seq_length - specials
  # This run holds the prefix's lock: no live run owns these.
  records_output.remove(
      record_format.existing_shards(output_prefix, atomic_io.INCOMPLETE),
      "partial shard(s) of an earlier, interrupted run")
  counters = corpus_lib.CorpusCounters()
  vocab = tokenizer.vocab
  stats = record_format.Stats(mode=mode, max_seq_length=max_seq_length,
                vocab_file=os.path.abspath(vocab.path),
                vocab_fingerprint=vocab.fingerprint, vocab_size=vocab.size,
                lower_case=lower_case, shards=num_shards,
                tag_spans=list(tagger.kinds if tagger else ()))
  stats.tagged_spans = dict.fromkeys(stats.tag_spans, 0)
  stats.tagged_spans_cut_by_block_ends = dict.fromkeys(stats.tag_spans, 0)
  counts = np.zeros(vocab.size, np.int64)
  total_bytes = sum(os.path.getsize(f) for f in files)
  report = progress_lib.Progress(
      "tag+tokenize+pack" if tagger else "tokenize+pack", enabled=progress,
      summary=False)
  report.start(progress_lib.megabytes(total_bytes), "MB read")

  def on_progress(_):
    guard.check()
    report.advance_to(counters.bytes // progress_lib.MB)

  def add(ids, record):
    guard.check()
    shard = int(rng.integers(num_shards))
    writer.write(shard, record)
    shard_records[shard] += 1
    stats.blocks += 1
    stats.tokens += len(ids)
    stats.max_block_tokens = max(stats.max_block_tokens, len(ids))

  rng = np.random.default_rng(seed)
  paths = record_format.shard_paths(output_prefix, num_shards)
  shard_records = [0] * num_shards
  start = time.time()
  writer = tfrecord_writer.AtomicTFRecordWriter(paths,
                                                records_output.output_error)
  try:
    docs = record_blocks.tokenize_documents(
        corpus_lib.read_documents(files, on_decode_error, counters),
        tokenizer, on_progress=on_progress)
    if mode == "single":
      tag_counters = corpus_lib.CorpusCounters()
      for doc, tagged in record_blocks.with_tags(docs, tagger, files,
                                                 on_decode_error,
                                                 tag_counters):
        if tagger is not None:  # tagging sets the pace
          report.advance_to(tag_counters.bytes // progress_lib.MB)
        counts += np.bincount(doc.ids, minlength=vocab.size)
        for ids, record in record_blocks.single_blocks(doc, max_tokens, stats,
                                                       tagged):
          add(ids, record)
      stats.tagged_words = tagger.words if tagger else 0
    else:
      for window, d in record_blocks.nsp_windows(docs, nsp_buffer_documents):
        counts += np.bincount(window[d].ids, minlength=vocab.size)
        for ids, starts, segs, label in record_blocks.nsp_instances(
            window, d, max_tokens, rng):
          add(ids, record_format.serialize_block(ids, starts, segs, label))
    if stats.blocks == 0:
      raise corpus_lib.CorpusError(
          f"inputs {', '.join(files)} produced no blocks (no wordpieces)")
    record_format.finish_stats(stats, counters, time.time() - start)
    report.advance_to(report.total)  # all read
    stats.shard_bytes = record_format.shard_sizes(writer.close_records())
    stats.shard_records = dict(zip(stats.shard_bytes, shard_records))
    guard.check()
    writer.commit(record_format.stats_texts(stats, counts, output_prefix,
                                            stats_file))
  except BaseException:
    writer.abort()
    raise
  finally:
    report.close_line()
  records_output.remove(
      [p for p in record_format.existing_shards(output_prefix)
       if p not in paths],
      "shard(s) of an earlier run with another num_shards")
  return stats
