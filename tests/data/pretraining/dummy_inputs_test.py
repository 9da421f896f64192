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

"""input_path: dummy (data/pretraining/dummy_inputs.py), and the unit tier's
committed fixtures (tests/fixtures/) feeding the real records writer and
loader."""

import inspect

import numpy as np
import pytest
import tensorflow as tf

from official.core import task_factory
from official.core import train_utils
from official_spanbert.data import tokenization
from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.tasks import pretraining
from conftest import TINY_SEQ, tiny_params

BATCH = 4
# Room for the NSP masking budget at TINY_SEQ (two segments round up).
PRED = 12


def _config(input_path, vocab_file="", nsp=False, **overrides):
  fields = dict(
      input_path=input_path, vocab_file=vocab_file, seq_length=TINY_SEQ,
      max_predictions_per_seq=PRED, global_batch_size=BATCH,
      use_next_sentence_label=nsp, masking_scheme="token" if nsp else "span",
      seed=3)
  return pdl.SpanBertPretrainDataConfig(**{**fields, **overrides})


@pytest.fixture(scope="module", params=["single", "nsp"])
def fixture_records(request, tmp_path_factory, prose_slice, small_vocab):
  """(mode, glob) of records written from the committed prose slice."""
  prefix = str(tmp_path_factory.mktemp("rec") / request.param)
  stats = pr.create_pretraining_records(
      [prose_slice], small_vocab, prefix, max_seq_length=TINY_SEQ,
      mode=request.param, progress=False)
  assert stats.documents == 3 and stats.blocks >= 2 * BATCH
  return request.param, prefix + "-*.tfrecord"


def test_fixtures_make_records_the_loader_masks(fixture_records, small_vocab):
  """The committed slice and vocab excerpt go through the real pipeline."""
  mode, records = fixture_records
  config = _config(records, small_vocab, nsp=mode == "nsp")
  batch = next(iter(pdl.SpanBertPretrainDataLoader(config).load()))
  weights = batch["masked_lm_weights"].numpy()
  assert batch["input_word_ids"].shape == (BATCH, TINY_SEQ)
  assert (weights.sum(axis=1) > 0).all()
  unk = tokenization.load_vocab(small_vocab).unk_id
  assert (batch["masked_lm_ids"].numpy()[weights > 0] != unk).all()


def test_dummy_batches_have_the_loaders_features(fixture_records,
                                                 small_vocab):
  """Same feature names, dtypes and (compatible) shapes as real batches."""
  mode, records = fixture_records
  real = pdl.SpanBertPretrainDataLoader(
      _config(records, small_vocab, nsp=mode == "nsp")).load().element_spec
  dummy = dummy_inputs.load(
      _config(dummy_inputs.DUMMY, nsp=mode == "nsp")).element_spec
  assert sorted(dummy) == sorted(real)
  for name, spec in real.items():
    assert dummy[name].dtype == spec.dtype, name
    assert spec.shape.is_compatible_with(dummy[name].shape), name


def test_dummy_batches_are_consistent_and_deterministic():
  config = _config(dummy_inputs.DUMMY, max_sbo_targets=4)
  assert dummy_inputs.is_dummy(config)
  assert not dummy_inputs.is_dummy(_config("rec-*.tfrecord"))
  first, second = list(dummy_inputs.load(config).take(2))
  again = next(iter(dummy_inputs.load(config)))
  np.testing.assert_array_equal(first["input_word_ids"],
                                again["input_word_ids"])
  assert not np.array_equal(first["input_word_ids"], second["input_word_ids"])
  ids = first["input_word_ids"].numpy()
  assert ids.min() >= 1 and ids.max() < dummy_inputs.DUMMY_VOCAB_SIZE
  pos = first["masked_lm_positions"].numpy()
  np.testing.assert_array_equal(
      first["masked_lm_ids"], np.take_along_axis(ids, pos, axis=1))
  sbo = first["sbo_weights"].numpy() > 0
  assert sbo.sum(axis=1).tolist() == [4] * BATCH
  left = first["sbo_left_positions"].numpy()[sbo]
  right = first["sbo_right_positions"].numpy()[sbo]
  assert (left < pos[sbo]).all() and (pos[sbo] < right).all()
  assert (right < TINY_SEQ).all() and (left >= 1).all()


def test_dummy_batches_per_replica():
  context = tf.distribute.InputContext(num_input_pipelines=2,
                                       input_pipeline_id=1,
                                       num_replicas_in_sync=2)
  batch = next(iter(dummy_inputs.load(_config(dummy_inputs.DUMMY), context)))
  assert batch["input_word_ids"].shape == (BATCH // 2, TINY_SEQ)


def test_too_short_sequences_are_refused():
  with pytest.raises(ValueError, match="seq_length >= 5"):
    dummy_inputs.batch(_config(dummy_inputs.DUMMY, seq_length=4), 1)


def _dummy_task():
  params = tiny_params(dummy_inputs.DUMMY, "", steps=2)
  return params, task_factory.get_task(params.task)


def test_the_task_trains_on_dummy_batches():
  params, task = _dummy_task()
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  metrics = task.build_metrics(training=True)
  batches = iter(dummy_inputs.load(params.task.train_data))
  for _ in range(2):
    logs = task.train_step(next(batches), model, optimizer, metrics)
  assert np.isfinite(float(logs["loss"]))
  assert {"mlm_loss", "sbo_loss"} <= {m.name for m in metrics}


@pytest.mark.skipif(
    "dummy_inputs" not in inspect.getsource(
        pretraining.SpanBertPretrainTask.build_inputs),
    reason="tasks/pretraining.py build_inputs does not call "
    "dummy_inputs.load for input_path: dummy yet")
def test_the_task_reads_dummy_inputs_for_input_path_dummy():
  params, task = _dummy_task()
  batch = next(iter(task.build_inputs(params.task.train_data)))
  data = params.task.train_data
  expected = dummy_inputs.batch(data, data.global_batch_size)
  for name, value in expected.items():
    np.testing.assert_array_equal(batch[name], value, err_msg=name)
