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

"""The pretraining records' format: features, shard names, stats files.

Records hold unmasked wordpiece ids and word-start flags (plus segment ids and
NSP labels for `nsp`, tagged spans when written with them); shards are
`<prefix>-NNNNN-of-MMMMM.tfrecord` beside `<prefix>.stats.json` and
`<prefix>.counts.json`. Shared by the writers and the loader.
"""

import collections
import dataclasses
import glob
import json
import os
import re
from typing import Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data import tfrecord_writer

MODES = ("single", "nsp")
STATS_SUFFIX = ".stats.json"
# Beside the shards: {"vocab_fingerprint": ..., "counts": [count per id]}.
COUNTS_SUFFIX = ".counts.json"
_SHARD_SUFFIX = re.compile(r"-\d{5}-of-\d{5}\.tfrecord$")


def special_tokens(mode: str) -> int:
  """[CLS] and [SEP] of a block, and NSP's second [SEP] ("nsp" mode)."""
  return 3 if mode == "nsp" else 2


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
  """Shards of any count at a prefix (with `suffix`, e.g. the temporary
  names' atomic_io.INCOMPLETE)."""
  pattern = glob.escape(output_prefix) + "-?????-of-?????.tfrecord" + suffix
  return sorted(p for p in glob.glob(pattern) if os.path.isfile(p) and
                shard_prefix(p[:len(p) - len(suffix)]) == output_prefix)


def read_stats(output_prefix: str, suffix: str = STATS_SUFFIX
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


def block_multiset(output_prefix: str, mode: str = "single"
                   ) -> "collections.Counter":
  """How often each (input_ids, word_starts) block occurs in a prefix's shards.

  Order-free, so two writers of one corpus (e.g. the single process and the
  Beam pipeline) can be compared block for block.
  """
  spec = feature_spec(mode)
  out = collections.Counter()
  for path in existing_shards(output_prefix):
    for raw in tf.data.TFRecordDataset(path).as_numpy_iterator():
      ex = tf.io.parse_single_example(raw, spec)
      out[(tuple(ex["input_ids"].numpy()),
           tuple(ex["word_starts"].numpy()))] += 1
  return out


def serialize_block(ids: np.ndarray, word_starts: np.ndarray,
                    segment_ids: Optional[np.ndarray] = None,
                    next_sentence_label: Optional[int] = None,
                    tagged: Optional[Dict[str, np.ndarray]] = None) -> bytes:
  """Serializes one block as a tf.train.Example.

  `tagged` maps span_tagging.KINDS to [k, 2] spans in block coordinates.
  """
  feature = tfrecord_writer.int64_feature
  features = {"input_ids": feature(ids),
              "word_starts": feature(word_starts)}
  if segment_ids is not None:
    features["segment_ids"] = feature(segment_ids)
    features["next_sentence_labels"] = feature([next_sentence_label])
  for kind, spans in (tagged or {}).items():
    starts, ends = span_tagging.span_features([kind])
    features[starts] = feature(spans[:, 0])
    features[ends] = feature(spans[:, 1])
  return tfrecord_writer.example_bytes(features)


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
  # {shard_name: bytes} and {shard_name: records} of the shards these stats
  # describe; the loader compares the sizes with the shards it opens.
  shard_bytes: Dict[str, int] = dataclasses.field(default_factory=dict)
  shard_records: Dict[str, int] = dataclasses.field(default_factory=dict)


def finish_stats(stats: Stats, counters: corpus_lib.CorpusCounters,
                  seconds: float):
  """Fills in the totals and rates once every block is written."""
  specials = special_tokens(stats.mode)
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


def shard_name(path: str) -> str:
  """What Stats.shard_bytes calls a shard: its `-NNNNN-of-MMMMM.tfrecord`,
  so that the stats stay valid when the prefix is renamed."""
  return path[len(shard_prefix(path) or ""):]


def shard_sizes(sizes: Dict[str, int]) -> Dict[str, int]:
  """Stats.shard_bytes of {shard path: bytes}."""
  return {shard_name(p): int(n) for p, n in sorted(sizes.items())}


def stats_texts(stats: Stats, counts: np.ndarray, output_prefix: str,
                stats_file: Optional[str] = None) -> Dict[str, str]:
  """{path: JSON text} of the stats and counts files of finished records."""
  return {
      stats_file or output_prefix + STATS_SUFFIX:
          json.dumps(dataclasses.asdict(stats), indent=2) + "\n",
      output_prefix + COUNTS_SUFFIX: json.dumps(
          {"vocab_fingerprint": stats.vocab_fingerprint,
           "counts": counts.tolist()}) + "\n"}
