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

"""Single-segment pretraining records on Apache Beam, for large corpora.

The same blocks, stats and counts as pretraining_records (mode `single`),
written by a Beam pipeline on every core or on a cluster; shard assignment is
Beam's, not seeded. Needs `pip install 'official-spanbert[beam]'`. See
docs/data_at_scale.md.
"""

import logging
import os
import re
import shutil
import time
from typing import Dict, Iterator, Optional, Sequence, Tuple

import numpy as np

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining.records import record_blocks
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data.pretraining.records import records_output
from official_spanbert.data import tfrecord_writer
from official_spanbert.data import tokenization

INSTALL = "pip install 'official-spanbert[beam]'"
# Documents per tokenizer call (tokenize_documents batches their lines).
_MIN_BATCH, _MAX_BATCH = 8, 256
_COUNTERS = "counters"
# Fields summed over partial totals (max_block_tokens is a maximum).
_SUMMED = ("files", "bytes", "documents", "empty_documents", "lines",
           "replaced_lines", "split_lines", "blocks", "tokens")


class BeamUnavailableError(ValueError):
  """apache_beam is not installed."""


def _beam():
  try:
    import apache_beam  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise BeamUnavailableError(
        f"runners other than the single-process tool need Apache Beam: "
        f"{INSTALL}") from None
  return apache_beam


def merge_totals(a: Dict[str, object], b: Dict[str, object]
                 ) -> Dict[str, object]:
  """Adds partial totals b into a (sums, max_block_tokens, counts)."""
  for key, value in b.items():
    if key == "max_block_tokens":
      a[key] = max(a.get(key, 0), value)
    elif key == "counts":
      a[key] = value.copy() if a.get(key) is None else a[key] + value
    else:
      a[key] = a.get(key, 0) + value
  return a


def read_file(item: Tuple[int, str], on_decode_error: str
              ) -> Iterator[object]:
  """Documents of one corpus file keyed (file, document) in reading order,
  then its counters as a tagged `counters` output."""
  beam = _beam()
  index, path = item
  counters = corpus_lib.CorpusCounters()
  for d, doc in enumerate(corpus_lib.read_documents([path], on_decode_error,
                                                    counters)):
    yield (index, d), doc
  yield beam.pvalue.TaggedOutput(_COUNTERS, {
      k: getattr(counters, k) for k in _SUMMED if hasattr(counters, k)})


class PackDocuments:
  """DoFn body: a batch of (key, document) -> serialized blocks, in each
  document's order, plus the batch's totals as a tagged `counters` output.

  Built lazily in each worker (the tokenizer is a tf.Module).
  """

  def __init__(self, vocab_file: str, lower_case: bool, max_tokens: int):
    self._args = (vocab_file, lower_case)
    self._max_tokens = max_tokens
    self._tokenizer = None

  def setup(self):
    self._tokenizer = record_blocks.wordpiece_tokenizer(*self._args)

  def process(self, batch: Sequence[Tuple[Tuple[int, int],
                                          corpus_lib.Document]]
              ) -> Iterator[object]:
    beam = _beam()
    batch = sorted(batch, key=lambda kv: kv[0])
    stats = record_format.Stats()
    counts = np.zeros(self._tokenizer.vocab.size, np.int64)
    for doc in record_blocks.tokenize_documents((doc for _, doc in batch),
                                                self._tokenizer,
                                                pipelined=False):
      counts += np.bincount(doc.ids, minlength=len(counts))
      for ids, record in record_blocks.single_blocks(doc, self._max_tokens,
                                                     stats):
        stats.blocks += 1
        stats.tokens += len(ids)
        stats.max_block_tokens = max(stats.max_block_tokens, len(ids))
        yield record
    yield beam.pvalue.TaggedOutput(_COUNTERS, dict(
        split_lines=stats.split_lines, blocks=stats.blocks,
        tokens=stats.tokens, max_block_tokens=stats.max_block_tokens,
        counts=counts))


def finished_stats(totals: Dict[str, object], base: record_format.Stats,
                   seconds: float) -> record_format.Stats:
  """The Stats of the whole run from its combined totals."""
  stats = record_format.Stats(**{k: getattr(base, k) for k in (
      "mode", "max_seq_length", "vocab_file", "vocab_fingerprint",
      "vocab_size", "lower_case", "shards")})
  for key in ("split_lines", "blocks", "tokens", "max_block_tokens"):
    setattr(stats, key, int(totals.get(key, 0)))
  if not stats.blocks:
    raise corpus_lib.CorpusError("inputs produced no blocks (no wordpieces)")
  counters = corpus_lib.CorpusCounters(**{
      k: int(totals.get(k, 0)) for k in _SUMMED
      if hasattr(corpus_lib.CorpusCounters, k)})
  record_format.finish_stats(stats, counters, seconds)
  return stats


def build_pipeline(pipeline, files: Sequence[str], base: record_format.Stats,
                   output_prefix: str, *, on_decode_error: str = "strict",
                   stats_file: Optional[str] = None,
                   start: Optional[float] = None):
  """Adds the records pipeline to `pipeline` (a beam.Pipeline).

  Args:
    pipeline: the Beam pipeline.
    files: corpus files (expanded).
    base: the run's settings (mode, max_seq_length, vocab, shards) as Stats.
    output_prefix: prefix of the shards.
    on_decode_error: "strict" or "replace".
    stats_file: stats JSON (default `<output_prefix>.stats.json`).
    start: time.time() the run started, for the stats' rates.
  """
  beam = _beam()
  start = time.time() if start is None else start
  max_tokens = base.max_seq_length - 2
  read = (pipeline
          | "Files" >> beam.Create(list(enumerate(files)))
          | "ReadDocuments" >> beam.FlatMap(
              read_file, on_decode_error).with_outputs(_COUNTERS,
                                                       main="docs"))
  packed = (read.docs
            | "SpreadDocuments" >> beam.Reshuffle()
            | "BatchDocuments" >> beam.BatchElements(
                min_batch_size=_MIN_BATCH, max_batch_size=_MAX_BATCH)
            | "TokenizeAndPack" >> beam.ParDo(
                _dofn(PackDocuments(base.vocab_file, base.lower_case,
                                    max_tokens))).with_outputs(
                                        _COUNTERS, main="records"))
  written = packed.records | "WriteShards" >> beam.io.WriteToTFRecord(
      output_prefix, file_name_suffix=".tfrecord",
      num_shards=base.shards, shard_name_template="-SSSSS-of-NNNNN")

  def write_stats(totals, shards):
    del shards  # a side input only so that this runs once they are in place
    stats = finished_stats(totals, base, time.time() - start)  # blocks > 0
    stats.shard_bytes = record_format.shard_sizes({
        p: os.path.getsize(p)
        for p in record_format.shard_paths(output_prefix, base.shards)
        if os.path.exists(p)})
    writer = tfrecord_writer.AtomicTFRecordWriter(
        [], records_output.output_error)
    writer.commit(record_format.stats_texts(stats, totals["counts"],
                                            output_prefix, stats_file))

  _ = ((read[_COUNTERS], packed[_COUNTERS])
       | "AllTotals" >> beam.Flatten()
       | "CombineTotals" >> beam.CombineGlobally(_fold)
       | "WriteStats" >> beam.Map(write_stats,
                                  beam.pvalue.AsList(written)))


def _fold(parts) -> Dict[str, object]:
  totals = {}
  for part in parts:
    merge_totals(totals, part)
  return totals


def _dofn(body: PackDocuments):
  """PackDocuments as a beam.DoFn (defined here: beam is optional)."""
  beam = _beam()

  class _PackDoFn(beam.DoFn):

    def setup(self):
      body.setup()

    def process(self, batch):
      yield from body.process(batch)

  return _PackDoFn()


def remove_beam_temp(output_prefix: str) -> None:
  """Removes the `beam-temp-<name>-<uuid>` folders WriteToTFRecord leaves
  beside the shards of `output_prefix` when a run fails or is killed (the
  caller holds the prefix's lock, so no live run uses them)."""
  folder, name = os.path.split(os.path.abspath(output_prefix))
  pattern = re.compile(rf"^beam-temp-{re.escape(name)}-[0-9a-f]{{32}}$")
  stale = [os.path.join(folder, d) for d in sorted(os.listdir(folder))
           if pattern.match(d) and os.path.isdir(os.path.join(folder, d))]
  if stale:
    logging.getLogger(__name__).warning(
        "removing %d temporary folder(s) of a failed or killed Beam run: %s",
        len(stale), ", ".join(stale))
  for d in stale:
    shutil.rmtree(d, ignore_errors=True)


def _original_error(error: Exception) -> Exception:
  """A corpus or vocab error a worker raised, unwrapped from the runner's
  error (which carries the worker's traceback as text); else `error`."""
  match = re.search(r"(?:CorpusError|VocabError): ([^\n]+)", str(error))
  return corpus_lib.CorpusError(match.group(1)) if match else error


def create_pretraining_records(input_patterns: Sequence[str], vocab_file: str,
                               output_prefix: str, *,
                               pipeline_args: Sequence[str] = (),
                               lower_case: bool = False,
                               max_seq_length: int = 512, num_shards: int = 1,
                               on_decode_error: str = "strict",
                               stats_file: Optional[str] = None
                               ) -> record_format.Stats:
  """Writes single-segment pretraining records with a Beam pipeline.

  Args:
    input_patterns: globs (each may be comma-separated) of corpus files.
    vocab_file: WordPiece vocab (readable by every worker).
    output_prefix: prefix of the output shards (writable by every worker).
    pipeline_args: Beam pipeline options, e.g. ["--runner=DirectRunner",
      "--direct_num_workers=2", "--direct_running_mode=multi_processing"].
    lower_case: uncased tokenization.
    max_seq_length: sequence length the loader will produce.
    num_shards: number of output files.
    on_decode_error: "strict" or "replace" (see corpus.read_documents).
    stats_file: where to write the stats JSON (default
      `<output_prefix>.stats.json`).

  Returns:
    The Stats written to the stats file.

  Raises:
    corpus.CorpusError, tokenization.VocabError, ValueError: bad input.
    BeamUnavailableError: apache_beam is not installed.
  """
  beam = _beam()
  # pylint: disable-next=g-import-not-at-top
  from apache_beam.options import pipeline_options
  if max_seq_length < 4:
    raise ValueError(f"max_seq_length={max_seq_length} is too small")
  if num_shards < 1:
    raise ValueError(f"num_shards must be >= 1, got {num_shards}")
  if on_decode_error not in corpus_lib.DECODE_ERROR_MODES:
    raise corpus_lib.CorpusError(
        f"on_decode_error must be one of {corpus_lib.DECODE_ERROR_MODES}, "
        f"not {on_decode_error!r}")
  files = [os.path.abspath(f)
           for f in corpus_lib.expand_inputs(input_patterns)]
  # What the workers would find only after the runner's startup (minutes).
  corpus_lib.check_heads(files, on_decode_error)
  vocab = tokenization.load_vocab(vocab_file)
  base = record_format.Stats(mode="single", max_seq_length=max_seq_length,
                             vocab_file=os.path.abspath(vocab.path),
                             vocab_fingerprint=vocab.fingerprint,
                             vocab_size=vocab.size, lower_case=lower_case,
                             shards=num_shards)
  options = pipeline_options.PipelineOptions(list(pipeline_args))
  # The runner's per-bundle INFO lines would bury the tool's one summary.
  logging.getLogger("apache_beam").setLevel(logging.WARNING)
  options.view_as(pipeline_options.SetupOptions).save_main_session = False
  created = records_output.make_dirs(
      os.path.dirname(os.path.abspath(output_prefix)))
  paths = record_format.shard_paths(output_prefix, num_shards)
  try:
    with records_output.prefix_lock(output_prefix):
      remove_beam_temp(output_prefix)  # of a killed run: no live run owns it
      start = time.time()
      try:
        with beam.Pipeline(options=options) as pipeline:
          build_pipeline(pipeline, files, base, output_prefix,
                         on_decode_error=on_decode_error,
                         stats_file=stats_file, start=start)
      except Exception as e:  # pylint: disable=broad-except
        for p in paths:  # shards the failed run may have put in place
          if os.path.exists(p):
            os.remove(p)
        remove_beam_temp(output_prefix)
        raise _original_error(e) from None
      records_output.remove(
          [p for p in record_format.existing_shards(output_prefix)
           if p not in paths],
          "shard(s) of an earlier run with another num_shards")
  except BaseException:
    records_output.remove_empty_dirs(created)
    raise
  stats_path = stats_file or output_prefix + record_format.STATS_SUFFIX
  stats = record_format.read_stats(stats_path, suffix="")
  return record_format.Stats(**stats)
