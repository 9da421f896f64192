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

"""Mask seeds and shard counts of the pretraining loader on many hosts.

The masks of a batch come from batch_seed(seed, batch index, input pipeline,
the batch's first record). Under tf.data service every worker runs the client's
graph (same pipeline id, batch indices from 0), so without the records in
the key two workers' batch i would draw the same masks; the test below uses
blocks of one length and token masking, where that shows as identical
masked positions. (4 MultiWorkerMirroredStrategy workers:
tests/test_distributed_training.py.)
"""

from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

from official.nlp.data import data_loader_factory
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr

WORDS = ("the of and to a in was her it that is not be he as had for with "
         "his she you").split()
SEQ = 32  # every document below is one block of SEQ - 2 one-piece words


def _context(pipelines, pipeline_id=0):
  return tf.distribute.InputContext(num_input_pipelines=pipelines,
                                    input_pipeline_id=pipeline_id,
                                    num_replicas_in_sync=pipelines)


@pytest.fixture(scope="module")
def same_length_records(tmp_path_factory, small_vocab):
  """64 documents of SEQ - 2 words each (one wordpiece per word, one block
  per document, all the same length) in 2 shards."""
  d = tmp_path_factory.mktemp("same_length")
  rng = np.random.default_rng(0)
  text = "\n\n".join(" ".join(rng.choice(WORDS, SEQ - 2)) for _ in range(64))
  (d / "corpus.txt").write_text(text + "\n")
  stats = pr.create_pretraining_records([str(d / "corpus.txt")], small_vocab,
                                        str(d / "r"), max_seq_length=SEQ,
                                        num_shards=2, progress=False)
  assert stats.blocks == 64 and stats.max_block_tokens == SEQ - 2
  assert stats.tokens == 64 * (SEQ - 2)
  return str(d / "r-*.tfrecord")


def _config(records, vocab, **kw):
  return pdl.SpanBertPretrainDataConfig(
      input_path=records, vocab_file=vocab, seq_length=SEQ,
      max_predictions_per_seq=5, global_batch_size=4, seed=3,
      masking_scheme="token", random_token_distribution="uniform", **kw)


def test_batch_seed_keys():
  """Every key changes the seed; the same keys give the same seed."""
  records = tf.constant([b"block a", b"block b"])
  base = pdl.batch_seed(1, 0, 0, records).numpy()
  np.testing.assert_array_equal(base, pdl.batch_seed(1, 0, 0, records))
  others = [pdl.batch_seed(*keys) for keys in (
      (2, 0, 0, records), (1, 1, 0, records), (1, 0, 1, records),
      (1, 1024, 0, records), (1, 0, 0, tf.constant([b"block c", b"block b"])),
      (1, 0, 0, records[::-1]))]
  keys = {tuple(base)} | {tuple(o.numpy()) for o in others}
  assert len(keys) == 1 + len(others)
  # The rows after the first do not enter: a batch cut short keeps its seed.
  np.testing.assert_array_equal(base, pdl.batch_seed(1, 0, 0, records[:1]))


def test_shard_count_rule_and_warning(same_length_records, small_vocab):
  """Fewer files than input pipelines: one warning naming the rule."""
  assert pdl.shard_count_warning(2, None) is None
  assert pdl.shard_count_warning(4, _context(4)) is None
  message = pdl.shard_count_warning(2, _context(4))
  assert "2 record file(s) for 4 input pipelines" in message
  assert "at least 4 shards" in message
  loader = data_loader_factory.get_data_loader(
      _config(same_length_records, small_vocab))
  with mock.patch.object(pdl.logging, "warning") as warning:
    loader.load(_context(4, 1))
    loader.load(_context(2, 1))
  assert [c.args[1] for c in warning.call_args_list] == [message]


def test_loaders_of_the_same_settings_share_one_traced_batch_function(
    same_length_records, small_vocab):
  """A second loader of the same settings (a resumed run, each arm's
  held-out scoring) builds its dataset without tracing the batch function
  again and masks as the first; another seed or diagnostics get their own."""
  def first_batch(loader, **kw):
    return next(loader.load(**kw).as_numpy_iterator())
  first = pdl.SpanBertPretrainDataLoader(_config(same_length_records,
                                                 small_vocab))
  expected = first_batch(first)
  fn = first._batch_fn(0, False, False)
  traces = fn.experimental_get_tracing_count()
  again = pdl.SpanBertPretrainDataLoader(_config(same_length_records,
                                                 small_vocab))
  assert again._batch_fn(0, False, False) is fn
  got = first_batch(again)
  assert fn.experimental_get_tracing_count() == traces
  assert expected.keys() == got.keys()
  for k in expected:
    np.testing.assert_array_equal(expected[k], got[k], err_msg=k)
  reseeded = _config(same_length_records, small_vocab)
  reseeded.seed = 4
  other = pdl.SpanBertPretrainDataLoader(reseeded)
  assert other._batch_fn(0, False, False) is not fn
  assert again._batch_fn(1, False, False) is not fn  # another pipeline
  np.testing.assert_array_equal(first_batch(other)["input_word_ids"][:, 0],
                                expected["input_word_ids"][:, 0])  # [CLS]
  assert not np.array_equal(first_batch(other)["masked_lm_positions"],
                            expected["masked_lm_positions"])
  diagnosed = first_batch(again, diagnostics=True)
  assert again._batch_fn(0, True, False) is not fn
  assert "original_word_ids" in diagnosed and "original_word_ids" not in got


def test_tf_data_service_workers_draw_different_masks(same_length_records,
                                                      small_vocab):
  """What two tf.data service workers run: the client's pipeline (Model
  Garden's InputReader with enable_tf_data_service: unseeded shuffle, no
  sharding, the client's pipeline id), each counting batches from 0. Their
  batch i holds other blocks and must draw other masked positions, though
  all blocks have one length. (Built in-process: a real service's client
  may read a run of batches from one worker first.)"""
  params = _config(same_length_records, small_vocab,
                   enable_tf_data_service=True)
  workers = [list(data_loader_factory.get_data_loader(params).load(
      _context(1)).take(8).as_numpy_iterator()) for _ in range(2)]
  # The unseeded shuffles start a pair of batches with the same block about
  # one time in 64 (then their masks coincide, as batch_seed says); every
  # pair that starts differently must mask differently.
  apart = 0
  for a, b in zip(*workers):
    assert np.all(a["masked_lm_weights"].sum(1) == 5)
    if np.array_equal(a["input_word_ids"][0], b["input_word_ids"][0]):
      continue
    apart += 1
    assert not np.array_equal(a["masked_lm_positions"],
                              b["masked_lm_positions"])
  assert apart >= 6, apart


def test_bucketed_batches_keep_the_padded_batches_masks(prose_records,
                                                        small_vocab):
  """length_buckets: each batch holds blocks of one bucket and is cut to its
  width after masking. Cut or not, the same batches carry the same masked
  ids, positions, labels and SBO boundaries; every position indexes a real
  token below the cut, and every block has ceil(15%) of its wordpieces
  masked (at most max_predictions_per_seq)."""
  config = pdl.SpanBertPretrainDataConfig(
      input_path=prose_records(), vocab_file=small_vocab, seq_length=64,
      max_predictions_per_seq=12, global_batch_size=4, is_training=False,
      drop_remainder=False, masking_scheme="span", seed=5, length_buckets=4,
      use_xla_masking=False)
  loader = pdl.SpanBertPretrainDataLoader(config)
  assert loader.bucket_widths == (16, 32, 48, 64)
  assert loader.prediction_widths == (3, 5, 7, 10)  # ceil(15% of width - 2)
  files = sorted(tf.io.gfile.glob(config.input_path))
  cut, padded = (list(loader.transform_and_batch(
      tf.data.TFRecordDataset(files), diagnostics=True,
      trim=trim).as_numpy_iterator()) for trim in (True, False))
  assert len(cut) == len(padded) >= 8
  widths = set()
  for a, b in zip(cut, padded):
    width = a["input_word_ids"].shape[1]
    lengths = b["input_mask"].sum(1)
    widths.add(width)
    # The smallest bucket width that holds the longest block; one bucket.
    assert width == min(w for w in loader.bucket_widths
                        if w >= lengths.max())
    assert all(min(w for w in loader.bucket_widths if w >= n) == width
               for n in lengths)
    predictions = loader.prediction_widths[
        loader.bucket_widths.index(width)]
    assert set(a) == set(b)
    for key, value in b.items():
      cut = {64: width, 12: predictions}.get(
          value.shape[1] if value.ndim >= 2 else None)
      if cut:
        # [batch, seq_length] or [batch, max_predictions_per_seq]: what is
        # cut off is padding.
        np.testing.assert_array_equal(a[key], value[:, :cut], key)
        assert not value[:, cut:].any() or key == "input_word_ids", key
      else:
        np.testing.assert_array_equal(a[key], value, key)
    for key in ("masked_lm_positions", "sbo_left_positions",
                "sbo_right_positions"):
      assert (a[key] < lengths[:, None]).all(), key
    np.testing.assert_array_equal(
        a["masked_lm_weights"].sum(1),
        np.minimum(np.ceil(0.15 * a["maskable"].sum(1)), 12))
  assert len(widths) >= 3


def test_bucketed_training_batches_take_few_shapes(prose_records,
                                                   small_vocab):
  """A training pipeline (shuffled, repeated, full batches) yields at most
  length_buckets shapes, each a bucket width."""
  config = _config(prose_records(), small_vocab, length_buckets=3,
                   shuffle_buffer_size=100).replace(
                       seq_length=64, max_predictions_per_seq=10)
  loader = pdl.SpanBertPretrainDataLoader(config)
  shapes = {(b["input_word_ids"].shape, b["masked_lm_ids"].shape)
            for b in loader.load().take(40).as_numpy_iterator()}
  assert loader.bucket_widths == (24, 48, 64)
  assert loader.prediction_widths == (4, 7, 10)
  assert {s[1] for s in shapes} <= {(4, p) for p in (4, 7, 10)}
  assert {s[0] for s in shapes} <= {(4, w) for w in (24, 48, 64)}
  assert 2 <= len(shapes) <= 3
  with pytest.raises(ValueError, match="length_buckets must be >= 0"):
    pdl.SpanBertPretrainDataLoader(config.replace(length_buckets=-1))
