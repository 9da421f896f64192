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

"""Loads pretraining records and masks them in tf.data, fresh every epoch."""

import dataclasses
import hashlib
import random
from typing import Dict, Optional, Tuple

from absl import logging
import numpy as np
import tensorflow as tf

from official.core import config_definitions as cfg
from official.core import input_reader
from official.nlp.data import data_loader
from official.nlp.data import data_loader_factory
from official_spanbert.data import batch_trimming
from official_spanbert.data.pretraining.masking import masking
from official_spanbert.data.pretraining.masking import masking_config
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data.pretraining.records import records_check
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data import tokenization


RANDOM_TOKEN_DISTRIBUTIONS = ("unigram", "uniform")
# The [batch, seq_length] outputs a bucketed batch is cut in (positions,
# labels and SBO boundaries index real tokens, so they stay as they are).
_SEQUENCE_KEYS = batch_trimming.SEQUENCE_KEYS + ("original_word_ids",
                                                 "maskable")
# The [batch, max_predictions_per_seq] outputs (real predictions first), cut
# to the most a block of the bucket's width can mask.
_PREDICTION_KEYS = ("masked_lm_positions", "masked_lm_ids",
                    "masked_lm_weights", "sbo_left_positions",
                    "sbo_right_positions", "sbo_relative_positions",
                    "sbo_weights")

# transform_and_batch's map functions by what their graphs depend on
# (SpanBertPretrainDataLoader._batch_key): one traced function for every
# loader of the same settings in a process.
_BATCH_FNS = {}

# The records checks (records_check.py), under the names callers use.
RecordsMismatchError = records_check.RecordsMismatchError
check_records = records_check.check_records
random_tokens = records_check.random_tokens
shard_count_warning = records_check.shard_count_warning


@dataclasses.dataclass
class SpanBertPretrainDataConfig(cfg.DataConfig, masking_config.MaskingConfig):
  """Pretraining data: records from spanbert-create-pretraining-data.

  The masking settings (masking_scheme, masking_rate, geometric_p,
  span_lower, span_upper, mask_token_prob, random_token_prob,
  tagged_span_prob, use_xla_masking) are masking_config.MaskingConfig's,
  inherited: set them here, e.g. `task.train_data.masking_rate`.

  Attributes:
    input_path: record files (glob or comma-separated).
    seq_length: framed length, [CLS]/[SEP] included.
    max_predictions_per_seq: size of masked_lm_* (and sbo_*) features.
    vocab_file: vocab of the records; gives the [CLS]/[SEP]/[MASK] ids.
    random_token_distribution: "unigram" (the reference: random tokens drawn
      by their frequency in the records' corpus, from `<prefix>.counts.json`;
      specials other than [UNK] never) or "uniform" (over the vocab's
      ordinary tokens).
    use_next_sentence_label: read two-segment NSP records (BERT baseline).
    shuffle_buffer_size: records shuffled before batching (training). 10,000,
      not Model Garden's 100: records are written in corpus order, and with
      100 a batch holds blocks of a few neighbouring documents; on the demo's
      records a full shuffle lowered held-out MLM loss by 0.04-0.09 nats at
      300-1,200 steps (benchmarks/RESULTS.md, "Pretraining parity"). About
      3 KB a block at seq 512 (30 MB).
    length_buckets: 0 (default): every batch is padded to seq_length. N > 0:
      blocks are grouped by their framed length into N buckets of even width
      (batch_trimming.bucket_widths: 64, 128, ..., 512 for N = 8 at 512)
      before batching, and each batch, once masked, is cut to its bucket's
      width, and its masked_lm_* and sbo_* features to the most positions a
      block of that width masks (ceil(15%)): no encoder or MLM/SBO head
      compute on most of the padding, N batch shapes at most. Masks, labels
      and SBO boundaries are the padded batch's (masking runs before the cut,
      which keeps every real token and prediction); the losses too.
      Off by default: it changes which blocks share a batch (similar
      lengths together), so the run's batches, and its curve, are not a
      padded run's. docs/pretraining.md, "Batches without padding".
    max_sbo_targets: not a setting: the pretraining task fills it with the
      model's, task.model.max_sbo_targets (the one setting). A params.yaml
      written before sets it here too; the task refuses it if it differs.
      Unset in a loader built without the task: 15 (MaskingParams').
  """
  input_path: str = ""
  shuffle_buffer_size: int = 10_000
  global_batch_size: int = 256
  is_training: bool = True
  seq_length: int = 512
  max_predictions_per_seq: int = 80
  vocab_file: str = ""
  random_token_distribution: str = "unigram"
  use_next_sentence_label: bool = False
  file_type: str = "tfrecord"
  length_buckets: int = 0
  max_sbo_targets: Optional[int] = None


def masking_params(params: SpanBertPretrainDataConfig,
                   vocab: tokenization.Vocab) -> masking_config.MaskingParams:
  """Validated MaskingParams of a data config (raises MaskingConfigError)."""
  specials = record_format.special_tokens(
      "nsp" if params.use_next_sentence_label else "single")
  if params.random_token_distribution not in RANDOM_TOKEN_DISTRIBUTIONS:
    raise masking_config.MaskingConfigError(
        "masking config: random_token_distribution must be one of "
        f"{RANDOM_TOKEN_DISTRIBUTIONS}, not "
        f"{params.random_token_distribution!r}")
  if (params.masking_scheme in masking_config.TAGGED_SCHEMES and
      params.use_next_sentence_label):
    raise masking_config.MaskingConfigError(
        f"masking config: masking_scheme={params.masking_scheme!r} masks "
        "single-segment blocks; set use_next_sentence_label=False")
  settings = {f.name: getattr(params, f.name)
              for f in dataclasses.fields(masking_config.MaskingConfig)}
  return masking_config.MaskingParams(
      **settings, max_predictions_per_seq=params.max_predictions_per_seq,
      seq_length=params.seq_length, mask_id=vocab.mask_id,
      max_sbo_targets=masking_config.sbo_targets(params)).validate(
          params.seq_length - specials, segments=specials - 1)


def batch_seed(seed: int, index: tf.Tensor, pipeline_id: int,
               serialized: tf.Tensor) -> tf.Tensor:
  """The [2] int64 stateless seed of one batch's masks.

  `seed` is folded with the batch index (fresh masks every epoch), the input
  pipeline (host) and a fingerprint of the batch's first record. The
  fingerprint keeps the masks of different batches apart where the other
  keys coincide: under tf.data service every worker runs the client's
  graph, so all of them share the pipeline id and count batches from 0.
  (The first record only: a row's masks do not depend on the rows after
  it, so a batch cut short at the end of the data keeps its rows' masks,
  and one epoch masks as the first epoch of two does. The price: two
  workers whose batch i starts with the same record mask its rows of equal
  length alike - about one batch in N on a corpus of N blocks.)

  Args:
    seed: the data config's seed.
    index: the batch's position in its pipeline.
    pipeline_id: the input pipeline's id.
    serialized: [batch] the batch's serialized records.
  """
  key = tf.stack([tf.constant(seed, tf.int64), tf.constant(0, tf.int64)])
  for data in (tf.cast(index, tf.int64), tf.constant(pipeline_id, tf.int64),
               tf.strings.to_hash_bucket_fast(
                   tf.strings.reduce_join(serialized[:1]), 2**62)):
    key = tf.random.experimental.stateless_fold_in(key, data)
  return key


@data_loader_factory.register_data_loader_cls(SpanBertPretrainDataConfig)
class SpanBertPretrainDataLoader(data_loader.DataLoader):
  """Reads unmasked blocks, frames them and masks each batch in the graph.

  The random stream of a batch is keyed by (seed, batch index, input
  pipeline, the batch's first record) (batch_seed), so a run is reproducible
  from `params.seed`, every epoch sees new masks, and hosts, replicas and
  tf.data service workers draw different masks. Without a seed one is drawn
  at random.

  Raises (at construction): masking_config.MaskingConfigError,
  tokenization.VocabError or RecordsMismatchError for unusable configs.

  Example:
    params = SpanBertPretrainDataConfig(
        input_path=records, vocab_file=vocab_file, seq_length=64,
        global_batch_size=2, max_predictions_per_seq=10, seed=1)
    batch = next(iter(SpanBertPretrainDataLoader(params).load()))
    assert batch["masked_lm_positions"].shape == (2, 10)
  """

  def __init__(self, params: SpanBertPretrainDataConfig):
    if not params.vocab_file:
      raise masking_config.MaskingConfigError(
          "masking config: vocab_file is required (it gives the [MASK] id)")
    self._params = params
    self._vocab = tokenization.load_vocab(params.vocab_file)
    self._masking = masking_params(params, self._vocab)
    check_records(params, self._vocab)
    self._random_ids, self._random_weights = random_tokens(params,
                                                           self._vocab)
    kind = span_tagging.SCHEME_KIND.get(params.masking_scheme)
    self._tag_kinds = (kind,) if kind else ()
    self._seed = (params.seed if params.seed is not None
                  else random.randint(0, 2**31 - 1))
    self._mode = "nsp" if params.use_next_sentence_label else "single"
    if params.length_buckets < 0:
      raise masking_config.MaskingConfigError(
          f"data config: length_buckets must be >= 0 (0: off), not "
          f"{params.length_buckets}")
    self._widths = tuple(batch_trimming.bucket_widths(
        params.seq_length, params.length_buckets)
                         if params.length_buckets else ())
    specials = record_format.special_tokens(self._mode)
    self._prediction_widths = tuple(
        min(params.max_predictions_per_seq,
            self._masking.max_budget(w - specials, segments=specials - 1))
        for w in self._widths)

  @property
  def masking(self) -> masking_config.MaskingParams:
    return self._masking

  @property
  def bucket_widths(self) -> Tuple[int, ...]:
    """The widths bucketed batches are cut to (() without length_buckets)."""
    return self._widths

  @property
  def prediction_widths(self) -> Tuple[int, ...]:
    """Each bucket's masked_lm_* and sbo_* width: the most a block of its
    width masks (the masking budget), at most max_predictions_per_seq."""
    return self._prediction_widths

  def _cut(self, batch: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """A masked batch cut to its bucket's widths (see length_buckets)."""
    batch = batch_trimming.trim_batch(batch, _SEQUENCE_KEYS, self._widths)
    width = tf.shape(batch["input_word_ids"])[1:2]
    bucket = tf.searchsorted(tf.constant(self._widths, tf.int32), width)[0]
    predictions = tf.gather(tf.constant(self._prediction_widths, tf.int32),
                            bucket)
    return {k: v[:, :predictions] if k in _PREDICTION_KEYS else v
            for k, v in batch.items()}

  def _framed_length(self, serialized: tf.Tensor) -> tf.Tensor:
    """One record's length once framed (as _frame frames it), int32."""
    ids = tf.io.parse_single_example(
        serialized, {"input_ids": record_format.feature_spec()["input_ids"]})
    return tf.minimum(
        tf.size(ids["input_ids"], out_type=tf.int32) +
        record_format.special_tokens(self._mode), self._params.seq_length)

  def _bucketed_batches(self, dataset: tf.data.Dataset, batch_size: int
                        ) -> tf.data.Dataset:
    """Batches of serialized records of one length bucket each, in the
    order the buckets fill (tf.data's group_by_window)."""
    widths = tf.constant(self._widths, tf.int32)

    def bucket(length, unused_serialized):
      return tf.cast(tf.searchsorted(widths, tf.reshape(length, [1]))[0],
                     tf.int64)

    dataset = dataset.map(lambda x: (self._framed_length(x), x),
                          num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.group_by_window(
        key_func=bucket, window_size=batch_size,
        reduce_func=lambda unused_key, window: window.batch(
            batch_size, drop_remainder=self._params.drop_remainder))
    return dataset.map(lambda unused_lengths, serialized: serialized)

  def _frame(self, records: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    """[CLS] A [SEP] (B [SEP]), padded; plus what masking needs."""
    seq_length = self._params.seq_length
    ids = tf.cast(records["input_ids"], tf.int32)
    starts = tf.cast(records["word_starts"], tf.int32)
    batch = ids.nrows()

    def col(value):
      return tf.fill([batch, 1], tf.constant(value, tf.int32))

    def ragged_const(value, like):
      return tf.ones_like(like) * value

    if self._mode == "single":
      ids, starts = ids[:, :seq_length - 2], starts[:, :seq_length - 2]
      word_ids = tf.concat([col(self._vocab.cls_id), ids,
                            col(self._vocab.sep_id)], axis=1)
      word_starts = tf.concat([col(1), starts, col(1)], axis=1)
      maskable = tf.concat([col(0), ragged_const(1, ids), col(0)], axis=1)
      type_ids = tf.zeros_like(word_ids)
    else:
      seg = tf.cast(records["segment_ids"], tf.int32)
      a_ids = tf.ragged.boolean_mask(ids, seg == 0)[:, :seq_length - 4]
      a_starts = tf.ragged.boolean_mask(starts, seg == 0)[:, :seq_length - 4]
      room = seq_length - 3 - a_ids.row_lengths()
      b_keep = tf.ragged.boolean_mask(ids, seg == 1)
      keep = tf.ragged.range(b_keep.row_lengths()) < tf.expand_dims(room, 1)
      b_ids = tf.ragged.boolean_mask(b_keep, keep)
      b_starts = tf.ragged.boolean_mask(
          tf.ragged.boolean_mask(starts, seg == 1), keep)
      sep = col(self._vocab.sep_id)
      word_ids = tf.concat([col(self._vocab.cls_id), a_ids, sep, b_ids, sep],
                           axis=1)
      word_starts = tf.concat([col(1), a_starts, col(1), b_starts, col(1)],
                              axis=1)
      maskable = tf.concat([col(0), ragged_const(1, a_ids), col(0),
                            ragged_const(1, b_ids), col(0)], axis=1)
      type_ids = tf.concat([col(0), ragged_const(0, a_ids), col(0),
                            ragged_const(1, b_ids), col(1)], axis=1)

    def dense(x, pad):
      return x.to_tensor(default_value=pad, shape=[None, seq_length])

    word_ids = dense(word_ids, self._vocab.pad_id)
    features = {
        "input_word_ids": word_ids,
        "input_mask": dense(tf.ones_like(type_ids), 0),
        "input_type_ids": dense(type_ids, 0),
        "word_starts": dense(word_starts, 1),
        "maskable": dense(maskable, 0),
    }
    if self._mode == "nsp":
      features["next_sentence_labels"] = tf.cast(
          tf.reshape(records["next_sentence_labels"], [-1]), tf.int32)
    if self._tag_kinds:  # single blocks only (masking_params checks)
      features["tagged_spans"] = self._tagged_spans(records,
                                                    ids.row_lengths())
    return features

  def _tagged_spans(self, records: Dict[str, tf.Tensor], lengths: tf.Tensor
                    ) -> tf.Tensor:
    """[batch, seq_length - 2, 2] framed (start, end) of the tagged spans.

    Spans past a truncated block are dropped; the rest is (0, 0) padding.
    """
    starts, ends = (tf.cast(records[name], tf.int32) for name in
                    span_tagging.span_features(self._tag_kinds))
    keep = ends <= tf.cast(lengths, tf.int32)[:, tf.newaxis]
    spans = tf.stack([tf.ragged.boolean_mask(starts, keep) + 1,
                      tf.ragged.boolean_mask(ends, keep) + 1], axis=2)
    return spans.to_tensor(shape=[None, self._params.seq_length - 2, 2])

  # Not converted by autograph, nor is anything it calls (masking included):
  # their control flow is Python's over Python values, and converting them
  # cost ~3 s of CPU in every process that reads pretraining data.
  @tf.autograph.experimental.do_not_convert
  def _parse_frame_mask(self, index: tf.Tensor, serialized: tf.Tensor,
                        pipeline_id: int,
                        diagnostics: bool = False) -> Dict[str, tf.Tensor]:
    records = tf.io.parse_example(
        serialized,
        record_format.feature_spec(self._mode, self._tag_kinds))
    framed = self._frame(records)
    seed = batch_seed(self._seed, index, pipeline_id, serialized)
    masked = masking.mask_batch(
        framed["input_word_ids"], framed["maskable"] > 0,
        framed["word_starts"] > 0, seed, self._masking, self._random_ids,
        diagnostics=diagnostics,
        segment_ids=(framed["input_type_ids"] if self._mode == "nsp"
                     else None),
        random_weights=self._random_weights,
        tagged_spans=framed.get("tagged_spans"))
    out = {k: v for k, v in framed.items()
           if k not in ("word_starts", "maskable", "tagged_spans")}
    out.update(masked)
    if diagnostics:
      out["original_word_ids"] = framed["input_word_ids"]
      out["maskable"] = framed["maskable"]
      if "tagged_spans" in framed:
        out["tagged_spans"] = framed["tagged_spans"]
    return out

  def transform_and_batch(self, dataset: tf.data.Dataset,
                          input_context: Optional[tf.distribute.InputContext]
                          = None, diagnostics: bool = False,
                          trim: bool = True) -> tf.data.Dataset:
    """Batches serialized records, then parses, frames and masks each batch
    (with length_buckets: batches one bucket's records, and cuts each masked
    batch to its bucket's width unless `trim` is False)."""
    batch_size = (input_context.get_per_replica_batch_size(
        self._params.global_batch_size) if input_context
                  else self._params.global_batch_size)
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    if self._widths:
      dataset = self._bucketed_batches(dataset, batch_size)
    else:
      dataset = dataset.batch(batch_size,
                              drop_remainder=self._params.drop_remainder)
    cut = bool(self._widths) and trim
    return dataset.enumerate().map(
        self._batch_fn(pipeline_id, diagnostics, cut),
        num_parallel_calls=tf.data.AUTOTUNE)

  def _batch_key(self, pipeline_id: int, diagnostics: bool,
                 cut: bool) -> tuple:
    """What the graph of transform_and_batch's map function depends on."""
    def digest(array):
      if array is None:
        return None
      array = np.asarray(array)
      return (array.dtype.str, array.shape,
              hashlib.sha1(array.tobytes()).hexdigest())
    vocab = self._vocab
    return (self._mode, self._tag_kinds, self._params.seq_length,
            vocab.cls_id, vocab.sep_id, vocab.pad_id, self._seed,
            self._masking, digest(self._random_ids),
            digest(self._random_weights), pipeline_id, diagnostics, cut,
            self._widths, self._prediction_widths)

  def _batch_fn(self, pipeline_id: int, diagnostics: bool, cut: bool):
    """The tf.function that parses, frames, masks (and cuts) one batch,
    shared by every loader of the same settings in this process.

    tf.data traces a map function each time a dataset is built (~1-2 s of
    CPU for this one at seq 64, more at 512); a loader built again with the
    same settings (a resumed or second run, held-out scoring of each arm)
    now reuses the first one's traces.
    """
    key = self._batch_key(pipeline_id, diagnostics, cut)
    fn = _BATCH_FNS.get(key)
    if fn is None:
      @tf.autograph.experimental.do_not_convert  # see _parse_frame_mask
      def parse_frame_mask(index, serialized):
        out = self._parse_frame_mask(index, serialized, pipeline_id,
                                     diagnostics)
        return self._cut(out) if cut else out
      fn = _BATCH_FNS.setdefault(
          key, tf.function(parse_frame_mask, autograph=False))
    return fn

  def load(self, input_context: Optional[tf.distribute.InputContext] = None,
           diagnostics: bool = False) -> tf.data.Dataset:
    """Returns a tf.data.Dataset of masked batches.

    Args:
      input_context: distribution input context, if any.
      diagnostics: add `span_length_histogram`, `unit_decisions`,
        `original_word_ids` and `maskable` (for tests and analysis).
    """
    warning = (None if self._params.enable_tf_data_service else
               shard_count_warning(
                   len(records_check.input_files(self._params.input_path)),
                   input_context))
    if warning:
      logging.warning("%s", warning)
    reader = input_reader.InputReader(
        params=self._params,
        dataset_fn=tf.data.TFRecordDataset,
        transform_and_batch_fn=lambda ds, ctx: self.transform_and_batch(
            ds, ctx, diagnostics))
    return reader.read(input_context)
