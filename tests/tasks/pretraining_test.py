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

"""Tests of the pretraining task and the training binary on real blocks."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import task_factory
from official.core import train_utils
from official_spanbert.training import train_lib
from conftest import tiny_params
from train_helpers import copy_run
from train_helpers import trained  # noqa: F401  pylint: disable=unused-import

def test_tiny_model_lowers_mlm_and_sbo_loss(pretraining_records, cased_vocab):
  params = tiny_params(pretraining_records, cased_vocab)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  metrics = task.build_metrics(training=True)
  step = tf.function(lambda x: task.train_step(x, model, optimizer, metrics))
  it = iter(task.build_inputs(params.task.train_data))
  history = []
  for _ in range(60):  # mlm and sbo losses fall by ~2.5 in 60 steps
    for m in metrics:
      m.reset_states()
    step(next(it))
    history.append({m.name: float(m.result()) for m in metrics})
  first = {k: np.mean([h[k] for h in history[:10]]) for k in history[0]}
  last = {k: np.mean([h[k] for h in history[-10:]]) for k in history[0]}
  assert last["mlm_loss"] < first["mlm_loss"] - 1.0, (first, last)
  assert last["sbo_loss"] < first["sbo_loss"] - 1.0, (first, last)
  assert last["masked_lm_accuracy"] > first["masked_lm_accuracy"]
  assert np.isfinite(last["gradient_norm"]) and last["gradient_norm"] > 0


def _events(model_dir, sub="train"):
  tags = {}
  for f in glob.glob(os.path.join(model_dir, sub, "events*")):
    for e in tf.compat.v1.train.summary_iterator(f):
      for v in e.summary.value:
        tags.setdefault(v.tag, []).append(e.step)
  return tags


def test_binary_resumes_from_checkpoint_and_logs_summaries(
    pretraining_records, cased_vocab, trained, tmp_path):
  # train_helpers' run of 8 steps (ckpt-4, ckpt-8), shared with the
  # test_train_* files: this test resumes it.
  model_dir = copy_run(trained, tmp_path)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")
  reader = tf.train.load_checkpoint(model_dir)
  saved_m = {k: reader.get_tensor(k) for k, _ in
             tf.train.list_variables(model_dir) if "/m/" in k}
  assert saved_m and any(np.any(v != 0) for v in saved_m.values())

  train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-12")
  tags = _events(model_dir)
  for tag in ("mlm_loss", "sbo_loss", "masked_lm_accuracy", "sbo_accuracy",
              "learning_rate", "gradient_norm", "examples_per_second",
              "examples_per_cpu_second", "training_loss"):
    assert tag in tags, sorted(tags)
  # The second run started at step 8: it logged step 12 only (not 4 or 8
  # again).
  assert sorted(tags["mlm_loss"]) == [4, 8, 12]
  reader = tf.train.load_checkpoint(model_dir)
  assert reader.get_tensor("global_step/.ATTRIBUTES/VARIABLE_VALUE") == 12
  # Optimizer state came back too: its step counter continued from 8.
  iters = [k for k, _ in tf.train.list_variables(model_dir)
           if k.startswith("optimizer/iter")]
  assert reader.get_tensor(iters[0]) == 12


def test_init_checkpoint_restores_encoder(pretraining_records, cased_vocab,
                                          tmp_path):
  params = tiny_params(pretraining_records, cased_vocab)
  task = task_factory.get_task(params.task)
  src = task.build_model()
  path = tf.train.Checkpoint(encoder=src.encoder_network).save(
      str(tmp_path / "enc" / "ckpt"))
  params.task.init_checkpoint = path
  task = task_factory.get_task(params.task)
  dst = task.build_model()
  task.initialize(dst)
  for a, b in zip(src.encoder_network.weights, dst.encoder_network.weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  bad = tf.train.Checkpoint(other=tf.Variable(1.0)).save(
      str(tmp_path / "bad" / "ckpt"))
  params.task.init_checkpoint = bad
  with pytest.raises(ValueError, match="holds none of"):
    task_factory.get_task(params.task).initialize(dst)


@pytest.mark.parametrize("experiment,heads", [
    ("spanbert/no_sbo", {"encoder", "masked_lm"}),
    ("bert/token_single", {"encoder", "masked_lm"}),
])
def test_ablation_experiments_build(pretraining_records, cased_vocab,
                                    experiment, heads):
  params = tiny_params(pretraining_records, cased_vocab, experiment)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  assert set(model.checkpoint_items) == heads
  batch = next(iter(task.build_inputs(params.task.train_data)))
  loss = task.build_losses(batch, model(batch))
  assert np.isfinite(float(loss))


def test_a_run_builds_each_loader_once(pretraining_records, cased_vocab,
                                       tmp_path, monkeypatch):
  """Issue 56 item 2: the checks before a run built the train and validation
  loaders (vocab, stats, unigram counts) and the run built them again; the
  run now reads through the loaders its config's validate() built."""
  from official_spanbert.data.pretraining import pretrain_dataloader as pdl  # pylint: disable=g-import-not-at-top
  built = []
  init = pdl.SpanBertPretrainDataLoader.__init__

  def counting(self, params):
    built.append(params.is_training)
    init(self, params)

  monkeypatch.setattr(pdl.SpanBertPretrainDataLoader, "__init__", counting)
  params = tiny_params(pretraining_records, cased_vocab, steps=2,
                       steps_per_loop=2, checkpoint_interval=2)
  params.trainer.validation_interval = 2
  train_lib.run(params, str(tmp_path / "run"), mode="train_and_eval")
  assert sorted(built) == [False, True]
  assert tf.train.latest_checkpoint(str(tmp_path / "run"))


def test_max_sbo_targets_is_one_setting_the_models(pretraining_records,
                                                   cased_vocab):
  """Issue 56 item 2: task.model.max_sbo_targets sets the SBO targets per
  span of the model and of the data (a different model value was refused
  until the data's two copies were set too); an older params.yaml that sets
  the data's equal to the model's still loads."""
  params = tiny_params(pretraining_records, cased_vocab)
  params.task.model.max_sbo_targets = 4
  params.task.validate(("train_data",))
  task = task_factory.get_task(params.task)
  batch = next(iter(task.build_inputs(params.task.train_data)))
  rel = batch["sbo_relative_positions"].numpy()[
      batch["sbo_weights"].numpy() > 0]
  assert rel.size and rel.max() == 3  # targets 0..3 of each span
  outputs = task.build_model()(batch)
  assert outputs["sbo_logits"].shape[:2] == batch["sbo_weights"].shape
  # A params.yaml written before: max_sbo_targets in all three places.
  for data in (params.task.train_data, params.task.validation_data):
    data.max_sbo_targets = 4
  params.task.validate(("train_data", "validation_data"))
  params.task.validation_data.max_sbo_targets = 15
  with pytest.raises(ValueError, match=(
      r"^task.validation_data.max_sbo_targets=15 differs from task.model."
      r"max_sbo_targets=4, .*; remove task.validation_data.max_sbo_targets")):
    params.task.validate(("train_data",))


def test_bucketed_batches_keep_the_padded_batches_losses(prose_records,
                                                         small_vocab):
  """length_buckets: a batch cut to its bucket's width has the MLM and SBO
  losses and the gradients of the same batch padded to seq_length (float32,
  dropout off), and each block run alone, cut to its own length, gives its
  share of them: no block sees another or the padding."""
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import pretrain_dataloader as pdl  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import pretraining  # pylint: disable=g-import-not-at-top
  params = tiny_params(prose_records(), small_vocab)
  params.task.model.encoder.bert_v2.vocab_size = tokenization.load_vocab(
      small_vocab).size
  params = params_dict.override_params_dict(  # as a YAML file sets it
      params, "task: {validation_data: {length_buckets: 4}}", is_strict=True)
  data = pretraining.loader_config(
      params.task, params.task.validation_data.replace(
          drop_remainder=False, seed=2, use_xla_masking=False),
      "validation_data")
  loader = pdl.SpanBertPretrainDataLoader(data)
  files = sorted(tf.io.gfile.glob(data.input_path))
  cut, padded = (list(loader.transform_and_batch(
      tf.data.TFRecordDataset(files), trim=trim)) for trim in (True, False))
  # The first batch of each width.
  pairs = {int(a["input_word_ids"].shape[1]): (a, b)
           for a, b in reversed(list(zip(cut, padded)))}
  assert len(pairs) >= 3 and min(pairs) < 64
  task = task_factory.get_task(params.task)
  model = task.build_model()

  def losses_and_grads(batch):
    with tf.GradientTape() as tape:
      losses = task.compute_losses(batch, model(batch, training=False))
    grads = tape.gradient(losses["total"], model.trainable_variables)
    return losses, [None if g is None else tf.convert_to_tensor(g)
                    for g in grads]  # None: the unused pooler

  for width in sorted(pairs, reverse=True):
    a, b = pairs[width]
    (la, ga), (lb, gb) = losses_and_grads(a), losses_and_grads(b)
    for key in ("mlm_loss", "sbo_loss", "total"):
      np.testing.assert_allclose(la[key], lb[key], rtol=1e-5, err_msg=key)
    for x, y, v in zip(ga, gb, model.trainable_variables):
      assert (x is None) == (y is None), v.name
      if x is not None:
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6,
                                   err_msg=v.name)
  # One block at a time (of the narrowest batch), each cut to its own length.
  lengths = a["input_mask"].numpy().sum(1)
  sums = {"mlm_loss": 0.0, "sbo_loss": 0.0}
  for row, length in enumerate(lengths):
    one = {k: v[row:row + 1, :length] if v.shape[1] == a[
        "input_word_ids"].shape[1] else v[row:row + 1] for k, v in a.items()}
    alone = task.compute_losses(one, model(one, training=False))
    for key, weights in (("mlm_loss", "masked_lm_weights"),
                         ("sbo_loss", "sbo_weights")):
      sums[key] += float(alone[key]) * float(tf.reduce_sum(one[weights]))
  for key, weights in (("mlm_loss", "masked_lm_weights"),
                       ("sbo_loss", "sbo_weights")):
    np.testing.assert_allclose(sums[key] / float(tf.reduce_sum(a[weights])),
                               la[key], rtol=1e-5)


def test_frozen_word_embeddings_stay_and_the_rest_trains(pretraining_records,
                                                        cased_vocab):
  """task.freeze_word_embeddings: a train step leaves the word embedding
  table (the MLM and SBO output projections tied to it) bit-identical, with
  no Adam slots, though the loss has a gradient there; the output biases and
  the encoder's layers move."""
  params = tiny_params(pretraining_records, cased_vocab)
  params.task.freeze_word_embeddings = True
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  batch = next(iter(task.build_inputs(params.task.train_data)))
  table = model.encoder_network.get_embedding_table()
  with tf.GradientTape() as tape:
    loss = task.compute_losses(batch, model(batch, training=True))["total"]
  assert float(tf.norm(tf.convert_to_tensor(tape.gradient(loss, table)))) > 0
  before = {v.ref(): v.numpy() for v in model.trainable_variables}
  task.train_step(batch, model, optimizer)
  moved = {v.name for v in model.trainable_variables
           if not np.array_equal(v.numpy(), before[v.ref()])}
  assert table.name not in moved
  assert "output_bias" in " ".join(moved), moved
  assert any("transformer" in n for n in moved), moved
  slots = [v.name for v in optimizer.variables()]
  assert len(slots) > 2 and not any(
      table.name.split(":")[0] in n for n in slots), slots
