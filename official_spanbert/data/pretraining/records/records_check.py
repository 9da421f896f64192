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

"""Checks that pretraining records fit the loader's data config.

Before training reads a record: the run finished (no lock, shard sizes as the
stats list), vocab fingerprint, layout, tagged kinds and longest block match,
and the unigram counts exist; a mismatch raises RecordsMismatchError.
"""

from typing import Dict, List, Optional, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data.pretraining.records import records_output
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data import tokenization


# Shards whose missing vocab fingerprint was already warned about.
_WARNED_UNCHECKED = set()
# Records read to find the longest block when no stats file gives it.
_SAMPLE_RECORDS = 256


class RecordsMismatchError(ValueError):
  """Records that do not fit the data config (vocab, layout or length)."""


def input_files(input_path) -> List[str]:
  """The files of a glob or comma-separated input_path (or a list of them).

  A Config of named inputs (Model Garden's weighted sampling) gives none.
  """
  if isinstance(input_path, str):
    patterns = input_path.split(",")
  elif isinstance(input_path, (list, tuple)):
    patterns = input_path
  else:
    return []
  files = []
  for pattern in patterns:
    if pattern.strip():
      try:
        files.extend(sorted(tf.io.gfile.glob(pattern.strip())))
      except tf.errors.NotFoundError:
        pass  # the input reader reports missing input
  return files


def _records_layout(prefix: Optional[str], path: str
                    ) -> Tuple[Optional[Dict[str, object]], str, List[int]]:
  """(stats or None, mode, block lengths) of the records of a shard prefix.

  The lengths are the longest block from the stats file or, without one, those
  of the first records of `path`.
  """
  stats = record_format.read_stats(prefix) if prefix else None
  if stats is not None:
    mode = stats.get("mode", "single")
    longest = stats.get("max_block_tokens") or (
        stats["max_seq_length"] - record_format.special_tokens(mode))
    return stats, mode, [longest]
  lengths, mode = _first_lengths(path)
  return None, mode, lengths


def _first_lengths(path: str) -> Tuple[List[int], str]:
  """(block lengths, mode) of the first _SAMPLE_RECORDS records of `path`."""
  lengths, mode = [], "single"
  for raw in tf.data.TFRecordDataset(path).take(_SAMPLE_RECORDS):
    features = tf.train.Example.FromString(raw.numpy()).features.feature
    lengths.append(len(features["input_ids"].int64_list.value))
    mode = "nsp" if "segment_ids" in features else "single"
  return lengths, mode


def _tagged_kinds(stats: Optional[Dict[str, object]], path: str
                  ) -> List[str]:
  """The span kinds the records carry (stats, else their first record)."""
  if stats is not None:
    return list(stats.get("tag_spans", []))
  for raw in tf.data.TFRecordDataset(path).take(1):
    features = tf.train.Example.FromString(raw.numpy()).features.feature
    return [k for k in span_tagging.KINDS
            if span_tagging.span_features([k])[0] in features]
  return []


def random_tokens(params, vocab: tokenization.Vocab
                  ) -> Tuple[List[int], Optional[List[int]]]:
  """(ids, weights) random replacements draw from (weights None: uniform).

  "unigram" sums `<prefix>.counts.json` over the records' shard prefixes and
  keeps every id that occurs, [UNK] included, but no other special token.

  Raises:
    RecordsMismatchError: unigram, and records without (valid) counts.
  """
  if params.random_token_distribution == "uniform":
    return vocab.ordinary_ids(), None
  files = input_files(params.input_path)
  if not files:
    return vocab.ordinary_ids(), None  # the input reader reports it
  total = np.zeros(vocab.size, np.int64)
  for prefix in sorted({record_format.shard_prefix(f) for f in files}):
    counts = (record_format.read_stats(
        prefix, record_format.COUNTS_SUFFIX) if prefix else None)
    if (counts is None or counts.get("vocab_fingerprint") != vocab.fingerprint
        or len(counts.get("counts", [])) != vocab.size):
      where = (f"{prefix}{record_format.COUNTS_SUFFIX}" if prefix
               else "not named as shards")
      raise RecordsMismatchError(
          "random_token_distribution='unigram' needs the wordpiece counts of "
          f"records {f'{prefix}-*.tfrecord' if prefix else files[0]} for "
          f"this vocab ({where}), which are missing; rewrite the records "
          "with spanbert-create-pretraining-data or set "
          "random_token_distribution='uniform'")
    total += np.asarray(counts["counts"], np.int64)
  specials = set(vocab.special_ids.values()) - {vocab.unk_id}
  ids = [i for i in np.flatnonzero(total).tolist() if i not in specials]
  return ids, total[ids].tolist()


def _check_complete(prefix: str, name: str, paths: List[str],
                    stats: Optional[Dict[str, object]]) -> None:
  """Refuses shards of a prefix whose records run has not finished (its
  lock is there: running, or killed) or that are not the shards its stats
  describe (their byte sizes, written in the stats, differ)."""
  lock = prefix + records_output.LOCK_SUFFIX
  if tf.io.gfile.exists(lock):
    raise RecordsMismatchError(
        f"records {name} are incomplete: a records run is writing them or was "
        f"killed before it finished (its lock file {lock} is there); wait for "
        "that run, or rerun spanbert-create-pretraining-data with "
        f"--output_prefix={prefix}")
  sizes = (stats or {}).get("shard_bytes")
  if not sizes:
    return  # stats written before shard sizes (or none): nothing to compare
  for path in paths:
    base = record_format.shard_name(path)
    size = tf.io.gfile.stat(path).length
    if sizes.get(base) != size:
      what = (f"{path} has {size} bytes, the stats say {sizes[base]}"
              if base in sizes else f"{path} is not among the shards it lists")
      raise RecordsMismatchError(
          f"records {name} are not the ones {prefix}{record_format.STATS_SUFFIX}"
          f" describes ({what}): shards and stats are of different runs (e.g. "
          "one killed before it finished); rerun "
          f"spanbert-create-pretraining-data with --output_prefix={prefix}")


def check_records(params,
                  vocab: tokenization.Vocab) -> None:
  """Refuses records written for another vocab, layout or a longer length.

  Each shard prefix's `<prefix>.stats.json` gives the records' vocab
  fingerprint, mode and longest block. Records without one (written before
  fingerprints, or renamed) get one warning; their first records are read
  for the mode and the block lengths.

  Raises:
    RecordsMismatchError: the records do not fit `params`.
  """
  mode = "nsp" if params.use_next_sentence_label else "single"
  capacity = params.seq_length - record_format.special_tokens(mode)
  files = {}  # (name, shard prefix or None) -> its files
  for path in input_files(params.input_path):
    prefix = record_format.shard_prefix(path)
    name = f"{prefix}-*.tfrecord" if prefix else path
    files.setdefault((name, prefix), []).append(path)
  unchecked = []
  for (name, prefix), paths in files.items():
    path = paths[0]
    stats, records_mode, lengths = _records_layout(prefix, path)
    if prefix:
      _check_complete(prefix, name, paths, stats)
    if records_mode != mode:
      raise RecordsMismatchError(
          f"records {name} are {records_mode!r} records but "
          f"use_next_sentence_label={params.use_next_sentence_label} reads "
          f"{mode!r} ones; set use_next_sentence_label="
          f"{records_mode == 'nsp'} or rewrite the records with --mode={mode}")
    kind = span_tagging.SCHEME_KIND.get(params.masking_scheme)
    if kind and kind not in _tagged_kinds(stats, path):
      raise RecordsMismatchError(
          f"records {name} were written without --tag_spans={kind}, which "
          f"masking_scheme={params.masking_scheme!r} needs; rewrite them with "
          f"spanbert-create-pretraining-data --tag_spans={kind} (needs "
          f"{span_tagging.INSTALL}) or choose another masking_scheme")
    fingerprint = (stats or {}).get("vocab_fingerprint")
    if not fingerprint:
      unchecked.append(name)
    elif fingerprint != vocab.fingerprint:
      raise RecordsMismatchError(
          f"records {name} were written with vocab {stats.get('vocab_file')} "
          f"(fingerprint {fingerprint}), not with vocab_file="
          f"{params.vocab_file} (fingerprint {vocab.fingerprint}); set "
          "vocab_file to the records' vocab or rewrite the records with "
          "this one")
    if lengths and max(lengths) > capacity:
      # How much would be cut, counted on the first records (an error
      # path: the stats hold only the longest block).
      sample = lengths if stats is None else _first_lengths(path)[0]
      cut = sum(n > capacity for n in sample)
      dropped = sum(max(n - capacity, 0) for n in sample) / max(sum(sample), 1)
      raise RecordsMismatchError(
          f"records {name} hold blocks of up to {max(lengths)} wordpieces "
          f"but seq_length={params.seq_length} keeps {capacity} (it would cut "
          f"{cut} of the first {len(sample)} blocks, dropping {dropped:.1%} "
          "of their tokens); raise seq_length or rewrite the records with "
          f"--max_seq_length={params.seq_length}")
  unchecked = [n for n in unchecked if n not in _WARNED_UNCHECKED]
  if unchecked:
    _WARNED_UNCHECKED.update(unchecked)
    logging.warning(
        "records %s carry no vocab fingerprint (no <prefix>.stats.json, or "
        "written before fingerprints), so vocab_file=%s cannot be checked "
        "against them; rewrite them with spanbert-create-pretraining-data to "
        "have it checked", ", ".join(unchecked), params.vocab_file)


def shard_count_warning(num_files: int,
                        input_context: Optional[tf.distribute.InputContext]
                        ) -> Optional[str]:
  """Why `num_files` record files are too few for the input pipelines.

  Model Garden's InputReader gives each input pipeline (host) its own files
  when there are at least as many files as pipelines; with fewer, every host
  reads every file and keeps every n-th record. So write num_shards >= the
  number of hosts, best a multiple of it (each host then reads the same
  number of files).
  """
  pipelines = input_context.num_input_pipelines if input_context else 1
  if pipelines <= 1 or num_files >= pipelines:
    return None
  return (f"{num_files} record file(s) for {pipelines} input pipelines: "
          "every host reads all of them and keeps every "
          f"{pipelines}-th record; write at least {pipelines} shards (a "
          "multiple of the number of hosts) with "
          "spanbert-create-pretraining-data --num_shards")
