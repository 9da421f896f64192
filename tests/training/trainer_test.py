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

"""What the trainer adds to progress.Progress: the loss of a training loop
and the one line an evaluation pass ends with; Orbit's prints go to the
log (issue 24)."""

import io
import os

import numpy as np
import pytest
from orbit import controller as orbit_controller

from official_spanbert.utils import progress
from official_spanbert.training import trainer


def test_the_training_line_carries_the_losses():
  logs = {"training_loss": np.float32(15.2644), "mlm_loss": np.float32(7.622),
          "sbo_loss": np.float32(7.6423), "masked_lm_accuracy": 0.05,
          "learning_rate": 0.001}
  assert trainer.loss_detail(logs) == "loss 15.264 (mlm 7.622, sbo 7.642)"
  assert trainer.loss_detail({"mlm_loss": 2.0}) == "mlm 2.000"
  assert trainer.loss_detail({"learning_rate": 0.1}) == ""


def test_an_evaluation_ends_with_its_size_time_and_metrics(monkeypatch):
  clock = [10.0]
  monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
  report = progress.Progress("eval", stream=io.StringIO())
  report.start(20, "batches", batch=8)
  for _ in range(20):
    clock[0] += 0.5
    report.advance()
  line = trainer.eval_summary(report, 1200, {
      "validation_loss": np.float32(12.3456), "masked_lm_accuracy": 0.12345,
      "per_class": np.zeros([3])})  # not a scalar: left out
  assert line == ("eval at step 1200: 20 batches (160 examples) in 10.0 s: "
                  "masked_lm_accuracy 0.1235, validation_loss 12.35")


def test_orbit_logs_instead_of_printing_inside_the_scope(capsys):
  original = orbit_controller._log  # pylint: disable=protected-access
  with trainer.scope():
    orbit_controller._log("train | step: 1 | output: {...}")  # pylint: disable=protected-access
  assert orbit_controller._log is original  # pylint: disable=protected-access
  assert capsys.readouterr().out == ""


def test_a_run_traces_its_train_step_once_and_counts_no_flops(
    tmp_path, monkeypatch):
  """The optimizer's slots exist before the first step, so the train loop's
  tf.function is not traced a second time after creating them; and Model
  Garden's FLOP count (the model traced again and frozen) is skipped during
  the run, restored after it.

  The run has a train_lib.Pause (the demo's warm-up, pick and training in
  one run): it stops at step 4 with the summaries so far readable and no
  checkpoint there, goes on to the step the pause returns in the same
  traced loop, and its learning rate decays over those steps."""
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import dummy_inputs  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import evaluation  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from conftest import tiny_params  # pylint: disable=g-import-not-at-top
  params = tiny_params(dummy_inputs.DUMMY, "", steps=12, steps_per_loop=2,
                       checkpoint_interval=12)
  params.task.model.encoder.bert_v2.vocab_size = 128  # dummy ids < 100
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.decay_steps = 12
  opt.learning_rate.polynomial.end_learning_rate = 0.0
  opt.warmup.polynomial.warmup_steps = 1
  traces = []
  build = task_factory.get_task

  def counted(config, **kwargs):
    task = build(config, **kwargs)
    step = task.train_step
    monkeypatch.setattr(task, "train_step",
                        lambda *a, **k: traces.append(1) or step(*a, **k))
    return task

  monkeypatch.setattr(task_factory, "get_task", counted)
  flops = []
  monkeypatch.setattr(train_utils, "try_count_flops",
                      lambda *a, **k: flops.append(1))
  count = train_utils.try_count_flops
  model_dir = str(tmp_path / "run")
  seen = {}

  def then(trainer):
    seen.update(
        step=int(trainer.global_step.numpy()), trainer=trainer,
        checkpoint=tf.train.latest_checkpoint(model_dir),
        losses=evaluation.read_scalars(os.path.join(model_dir, "train"),
                                       ("training_loss",))["training_loss"])
    return 6

  with pytest.raises(ValueError, match="needs mode train"):
    train_lib.run(params, model_dir, mode="eval",
                  pause=train_lib.Pause(4, then))
  model, _ = train_lib.run(params, model_dir, mode="train",
                           pause=train_lib.Pause(4, then))
  assert len(traces) == 1
  assert not flops and train_utils.try_count_flops is count
  # Orbit saves after the first loop (step 2), then at the end only.
  assert seen["step"] == 4 and seen["checkpoint"].endswith("ckpt-2")
  assert [step for step, _ in sorted(seen["losses"])] == [2, 4]
  trainer = seen["trainer"]
  assert model is trainer.model and int(trainer.global_step.numpy()) == 6
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-6")
  # 1e-3 decayed linearly to 0 over 6 steps, not over the configured 12.
  schedule = trainer.optimizer.learning_rate
  assert float(schedule(3)) == pytest.approx(1e-3 * (1 - 3 / 6))
  assert float(schedule(6)) == pytest.approx(0.0)


def test_nested_and_concurrent_runs_restore_the_flop_count():
  import threading  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  count = train_utils.try_count_flops
  inside, release = threading.Event(), threading.Event()

  def other_run():
    with train_lib._without_flop_count():  # pylint: disable=protected-access
      inside.set()
      release.wait(10)

  thread = threading.Thread(target=other_run)
  with train_lib._without_flop_count():  # pylint: disable=protected-access
    thread.start()
    assert inside.wait(10)
    with train_lib._without_flop_count():  # pylint: disable=protected-access
      assert train_utils.try_count_flops(None) is None
  assert train_utils.try_count_flops is not count  # the other run goes on
  release.set()
  thread.join(10)
  assert train_utils.try_count_flops is count


def test_the_while_loop_runs_its_steps_traced_without_autograph():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  steps = tf.Variable(0)
  seen = tf.Variable(0)
  dataset = iter(tf.data.Dataset.range(100))

  def step(iterator):
    seen.assign_add(tf.cast(next(iterator), tf.int32))
    steps.assign_add(1)

  loop = tf.function(trainer.while_loop_fn(step), autograph=False)
  loop(dataset, tf.constant(3))
  loop(dataset, tf.constant(2))
  assert (int(steps.numpy()), int(seen.numpy())) == (5, 0 + 1 + 2 + 3 + 4)
  with pytest.raises(ValueError, match="num_steps should be a tf.Tensor"):
    loop(dataset, 3)


def test_evaluations_end_their_iterators_after_the_caller_goes_on(
    tmp_path, monkeypatch):
  """An iterator's end may wait (tf.data's autotuning thread sleeps up to a
  minute, release.py): here each evaluation's iterator ends only once the
  code after its evaluate() ran, so evaluate() must return first, the end
  being on a thread of its own. Two evaluations at the same weights read the
  same batches (each from the data's start), and the run's training
  iterator ends on such a thread too, not in the collection of its
  garbage."""
  import threading  # pylint: disable=g-import-not-at-top
  import weakref  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import dummy_inputs  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from conftest import tiny_params  # pylint: disable=g-import-not-at-top
  params = tiny_params(dummy_inputs.DUMMY, "", steps=2, steps_per_loop=2,
                       checkpoint_interval=2)
  params.task.model.encoder.bert_v2.vocab_size = 128  # dummy ids < 100
  ended = {"train": [], "eval": []}  # (thread, whether the caller went on)
  went_on = []  # an Event an evaluation's caller sets when it goes on

  class Tracked:
    """A dataset whose iterators record where they end; an evaluation's
    waits (at most 10 s) for its caller to go on."""

    def __init__(self, dataset, kind):
      self.dataset, self.kind = dataset, kind

    def __iter__(self):
      iterator = iter(self.dataset)
      event = threading.Event()
      if self.kind == "eval":
        went_on.append(event)
      weakref.finalize(iterator, self.end, self.kind, event)
      return iterator

    @staticmethod
    def end(kind, event):
      waited = event.wait(10) if kind == "eval" else None
      ended[kind].append((threading.current_thread().name, waited))

  for kind in ("train", "eval"):
    prop = getattr(trainer.SpanBertTrainer, f"{kind}_dataset")
    monkeypatch.setattr(
        trainer.SpanBertTrainer, f"{kind}_dataset",
        property(lambda self, p=prop, k=kind: Tracked(p.fget(self), k)))
  logs = []

  def then(run_trainer):
    for _ in range(2):
      logs.append(run_trainer.evaluate(tf.constant(2)))
      went_on[-1].set()
    return 2

  train_lib.join_releases(30)
  # Evaluating needs a trainer that evaluates: run_post_eval (a run with a
  # Pause does not post-evaluate).
  train_lib.run(params, str(tmp_path / "run"), mode="train",
                run_post_eval=True, pause=train_lib.Pause(2, then))
  assert train_lib.join_releases(30) < 30
  assert ended["eval"] == [("release-iterators", True)] * 2
  assert ended["train"] == [("release-iterators", None)]
  assert logs[0].keys() == logs[1].keys() and "validation_loss" in logs[0]
  for key, value in logs[0].items():
    assert float(logs[1][key]) == float(value), key
