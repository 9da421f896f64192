"""Tests of the pretraining task and the training binary on real blocks."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official.modeling.hyperparams import params_dict
from official_spanbert import train as train_lib
from official_spanbert.configs import experiments  # noqa: F401
from official_spanbert.data import pretraining_records as pr
from conftest import REPO, data_path, first_lines

SEQ, PRED = 64, 10


@pytest.fixture(scope="module")
def records(tmp_path_factory, cased_vocab):
  d = tmp_path_factory.mktemp("rec")
  files = [first_lines(data_path("corpus", n), 120_000, str(d / n))
           for n in ("austen.txt", "linux-doc.txt")]
  pr.create_pretraining_records(files, cased_vocab, str(d / "r"),
                                max_seq_length=SEQ, progress=False)
  return str(d / "r-*.tfrecord")


def tiny_params(records, vocab, experiment="spanbert/pretraining", steps=8,
                **trainer):
  params = exp_factory.get_exp_config(experiment)
  for f in ("configs/models/tiny.yaml", "configs/experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, os.path.join(REPO, f),
                                              is_strict=True)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = 64, 128, 1
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file = records, vocab
    data.seq_length, data.max_predictions_per_seq = SEQ, PRED
    data.global_batch_size = 8
  params.trainer.train_steps = steps
  params.trainer.steps_per_loop = trainer.pop("steps_per_loop", 4)
  params.trainer.checkpoint_interval = trainer.pop("checkpoint_interval", 4)
  params.trainer.summary_interval = params.trainer.steps_per_loop
  params.trainer.validation_steps = 2
  params.trainer.optimizer_config.learning_rate.polynomial.decay_steps = 200
  params.trainer.optimizer_config.warmup.polynomial.warmup_steps = 5
  return params


def test_tiny_model_lowers_mlm_and_sbo_loss(records, cased_vocab):
  params = tiny_params(records, cased_vocab)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  metrics = task.build_metrics(training=True)
  step = tf.function(lambda x: task.train_step(x, model, optimizer, metrics))
  it = iter(task.build_inputs(params.task.train_data))
  history = []
  for _ in range(120):
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


def test_binary_resumes_from_checkpoint_and_logs_summaries(records,
                                                           cased_vocab,
                                                           tmp_path):
  model_dir = str(tmp_path / "run")
  train_lib.run(tiny_params(records, cased_vocab, steps=4), model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-4")
  reader = tf.train.load_checkpoint(model_dir)
  saved_m = {k: reader.get_tensor(k) for k, _ in
             tf.train.list_variables(model_dir) if "/m/" in k}
  assert saved_m and any(np.any(v != 0) for v in saved_m.values())

  train_lib.run(tiny_params(records, cased_vocab, steps=8), model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")
  tags = _events(model_dir)
  for tag in ("mlm_loss", "sbo_loss", "masked_lm_accuracy", "sbo_accuracy",
              "learning_rate", "gradient_norm", "examples_per_second",
              "training_loss"):
    assert tag in tags, sorted(tags)
  # The second run started at step 4: it logged steps 8 only (not 4 again).
  assert sorted(tags["mlm_loss"]) == [4, 8]
  reader = tf.train.load_checkpoint(model_dir)
  assert reader.get_tensor("global_step/.ATTRIBUTES/VARIABLE_VALUE") == 8
  # Optimizer state came back too: its step counter continued from 4.
  iters = [k for k, _ in tf.train.list_variables(model_dir)
           if k.startswith("optimizer/iter")]
  assert reader.get_tensor(iters[0]) == 8


def test_nan_loss_stops_with_clear_error_and_keeps_last_checkpoint(
    records, cased_vocab, tmp_path):
  model_dir = str(tmp_path / "nan")
  train_lib.run(tiny_params(records, cased_vocab, steps=4), model_dir)
  params = tiny_params(records, cased_vocab, steps=12)
  params.task.sbo_weight = float("nan")
  with pytest.raises(train_lib.TrainingDivergedError,
                     match=r"diverged at step 8: .*NaN.*Last good checkpoint: "
                     r".*ckpt-4"):
    train_lib.run(params, model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-4")


def test_init_checkpoint_restores_encoder(records, cased_vocab, tmp_path):
  params = tiny_params(records, cased_vocab)
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
def test_ablation_experiments_build(records, cased_vocab, experiment, heads):
  params = tiny_params(records, cased_vocab, experiment)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  assert set(model.checkpoint_items) == heads
  batch = next(iter(task.build_inputs(params.task.train_data)))
  loss = task.build_losses(batch, model(batch))
  assert np.isfinite(float(loss))
