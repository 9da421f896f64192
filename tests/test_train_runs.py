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

"""spanbert-train's runs in the modes its users expect.

- Progress lines with an ETA and one summary line of what was written where;
  --enable_async_checkpointing is honoured.
- Divergence is Model Garden's loss_upper_bound / recovery_max_trials rule,
  raised as TrainingDivergedError: restores first when trials are allowed,
  one `spanbert-train: error:` line from the binary; a relative bound.
- continuous_train_and_eval fine-tunes each checkpoint of a pretraining run
  (Model Garden's continuous_finetune_lib) with SpanBertTrainer.
- One line on a full disk, read-only eval, SIGTERM during evaluation.
"""

import glob
import logging
import math
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.training import checkpoint_recovery
from official_spanbert.utils import run_lock
from official_spanbert.training import train_lib
from official_spanbert.training import trainer as trainer_lib
from conftest import REPO, tiny_params
from train_helpers import TIMEOUT_S
from train_helpers import env
from train_helpers import train_cmd
from train_helpers import write_config
from train_helpers import event_steps
from train_helpers import copy_run
from train_helpers import last_error_line
from train_helpers import read_only_cmd
from train_helpers import trained  # noqa: F401  pylint: disable=unused-import


def test_binary_shows_progress_and_what_it_wrote(
    pretraining_records, cased_vocab, trained, tmp_path):
  model_dir = copy_run(trained, tmp_path)
  config = write_config(tmp_path, pretraining_records, cased_vocab, steps=16)
  result = subprocess.run(
      train_cmd(config, model_dir, "--mode=train_and_eval",
                "--enable_async_checkpointing",
                "--params_override=trainer.validation_interval=8"),
      cwd=REPO, env=env(), capture_output=True, text=True,
      timeout=TIMEOUT_S, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  # Quiet by default (console.py): progress.Progress lines (stderr is not a
  # terminal: about every 10%), one line per evaluation, no INFO logs and
  # no metric dictionaries.
  assert re.search(r"^train \[[\d.]+ s\] 12/16 steps \(75%\), ETA [\d.]+ s "
                   r"\| [\d.]+ examples/s \| loss [\d.]+ \(mlm [\d.]+, "
                   r"sbo [\d.]+\)$", result.stderr, re.M), result.stderr
  assert re.search(r"^train \[[\d.]+ s\] 16/16 steps \(100%\)",
                   result.stderr, re.M)
  assert re.search(r"^eval at step 16: \d+ batches \(\d+ examples\) in "
                   r"[\d.]+ s: .*validation_loss [\d.]+", result.stderr, re.M)
  assert not re.search(r"^I\d{4} ", result.stderr, re.M), result.stderr
  assert "'mlm_loss'" not in result.stdout + result.stderr
  # Issue 39, fault 9: a resumed run says so.
  assert re.search(rf"Resuming from {re.escape(model_dir)}/ckpt-8 \(step 8\)$",
                   result.stderr, re.M), result.stderr
  assert result.stdout.strip().splitlines()[-1] == (
      f"spanbert-train: trained to step 16: checkpoint {model_dir}/ckpt-16, "
      f"TensorBoard summaries in {model_dir}/train, config "
      f"{model_dir}/params.yaml")
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-16")
  assert os.listdir(os.path.join(model_dir, "validation"))
  assert os.path.exists(
      os.path.join(model_dir, "operative_config.train_and_eval.gin"))


def test_binary_reports_divergence_in_one_line(
    pretraining_records, cased_vocab, trained, tmp_path):
  # (16 steps: it stops at the first loop's end, 12, with ckpt-8 kept; this
  # test took over tasks/pretraining_test.py's in-process NaN run.)
  model_dir = copy_run(trained, tmp_path)
  config = write_config(tmp_path, pretraining_records, cased_vocab, steps=16)
  result = subprocess.run(
      train_cmd(config, model_dir, "--params_override=task.sbo_weight=.nan"),
      cwd=REPO, env=env(), capture_output=True, text=True,
      timeout=TIMEOUT_S, check=False)
  assert result.returncode == 1, result.stderr[-3000:]
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      "spanbert-train: error: training diverged at step 12: The loss value "
      "is NaN after training loop and it happens 1 times. Last good "
      f"checkpoint: {model_dir}/ckpt-8; lower the learning rate or check the "
      "data, then rerun to resume from it.")
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")


def test_recovery_trials_restore_the_last_checkpoint_before_stopping(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  model_dir = copy_run(trained, tmp_path)
  params = tiny_params(pretraining_records, cased_vocab, steps=16)
  params.task.sbo_weight = float("nan")
  params.trainer.recovery_max_trials = 1
  with caplog.at_level(logging.WARNING):
    with pytest.raises(train_lib.TrainingDivergedError,
                       match=r"diverged at step 12: .*NaN.* happens 2 times"):
      train_lib.run(params, model_dir)
  assert caplog.text.count(
      f"Recovering the model from checkpoint: {model_dir}/ckpt-8") == 1
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")


def test_loss_upper_bound_stops_the_run(pretraining_records, cased_vocab,
                                        trained, tmp_path):
  model_dir = copy_run(trained, tmp_path)
  params = tiny_params(pretraining_records, cased_vocab, steps=12)
  params.trainer.loss_upper_bound = 1.0  # the tiny model's loss is ~20
  with pytest.raises(train_lib.TrainingDivergedError,
                     match=r"diverged at step 12: .*larger than the bound "
                     r"1\.0.* Last good checkpoint: .*ckpt-8"):
    train_lib.run(params, model_dir)


def test_continuous_train_and_eval_fine_tunes_each_checkpoint(
    pretraining_records, cased_vocab, trained, tmp_path, monkeypatch):
  created = []
  init = trainer_lib.SpanBertTrainer.__init__

  def spy_init(self, *args, **kwargs):
    created.append(self)
    init(self, *args, **kwargs)

  monkeypatch.setattr(trainer_lib.SpanBertTrainer, "__init__", spy_init)
  model_dir = str(tmp_path / "finetune")
  params = tiny_params(pretraining_records, cased_vocab, steps=4)
  params.task.init_checkpoint = trained
  params.trainer.continuous_eval_timeout = 1
  model, logs = train_lib.run(params, model_dir,
                              mode="continuous_train_and_eval",
                              run_post_eval=True)
  assert model is None and "mlm_loss" in logs, logs
  assert created  # Model Garden's loop built SpanBertTrainer
  assert os.path.exists(os.path.join(model_dir, "metrics-8.json"))
  assert train_lib.summary(model_dir, "continuous_train_and_eval") == (
      "fine-tuned and evaluated 1 pretraining checkpoint(s): metrics in "
      f"{model_dir}/metrics-<step>.json (last {model_dir}/metrics-8.json), "
      f"TensorBoard summaries in {model_dir}/eval")


def test_diverging_pretraining_stops_at_ten_times_the_untrained_loss(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 10: lr 30 takes the loss far above 10 x ln(vocab) x (1 + SBO)."""
  model_dir = copy_run(trained, tmp_path)
  params = tiny_params(pretraining_records, cased_vocab, steps=12)
  params.trainer.optimizer_config.learning_rate.polynomial.\
      initial_learning_rate = 30.0
  bound = 10 * 2 * math.log(28996)
  with pytest.raises(train_lib.TrainingDivergedError,
                     match=rf"diverged at step 12: .*larger than the bound "
                     rf"{bound:.3f}.* Last good checkpoint: .*ckpt-8"):
    train_lib.run(params, model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")


def test_full_disk_while_saving_a_checkpoint_is_one_line(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 12: the save of ckpt-12 fails; ckpt-8 stays the one to resume."""
  def small_disk():  # writes past 2 MB fail with EFBIG, as on a full disk
    import resource  # pylint: disable=g-import-not-at-top
    resource.setrlimit(resource.RLIMIT_FSIZE, (2_000_000, 2_000_000))

  model_dir = copy_run(trained, tmp_path)
  result = subprocess.run(
      train_cmd(write_config(tmp_path, pretraining_records, cased_vocab,
                             steps=12), model_dir),
      cwd=REPO, env=env(), capture_output=True, text=True, timeout=TIMEOUT_S,
      check=False, preexec_fn=small_disk)
  last = last_error_line(result)
  # (issue 39 probe (c): the directory named, TF's op decorations gone)
  assert re.fullmatch(
      rf"spanbert-train: error: out of disk space writing to {model_dir} "
      rf"\({model_dir}/ckpt-12_temp/\S+; File too large\); the "
      f"newest checkpoint {model_dir}/ckpt-8 is intact: free space and rerun "
      "to resume from it", last), last
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")
  assert not glob.glob(os.path.join(model_dir, "ckpt-12*"))
  assert not os.path.exists(os.path.join(model_dir, run_lock.LOCK_NAME))
  # With space again (no file size limit here), the run resumes and ends.
  train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                model_dir)
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-12")
  # Step 12's summaries: of the failed run (before its save) and the resumed.
  assert event_steps(model_dir) == [4, 8, 12, 12]


def test_eval_of_a_read_only_model_dir_skips_summaries_with_a_warning(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 14 (and --eval_summary_dir, which writes them elsewhere)."""
  model_dir = copy_run(trained, tmp_path)
  config = write_config(tmp_path, pretraining_records, cased_vocab)
  cmd = read_only_cmd(model_dir,
                      train_cmd(config, model_dir, "--mode=eval"))
  result = subprocess.run(cmd, cwd=REPO, env=env(), capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert (f"{model_dir} is read-only: evaluating without writing summaries "
          "(pass --eval_summary_dir to write them elsewhere)") in result.stderr
  assert result.stdout.strip().splitlines()[-1] == (
      f"spanbert-train: evaluated {model_dir}/ckpt-8 (step 8): TensorBoard "
      "summaries in none (read-only model_dir)")
  assert not os.path.exists(os.path.join(model_dir, "validation"))
  # --eval_summary_dir: Model Garden joins model_dir with an absolute path.
  params, save_summary = train_lib._eval_summaries(
      tiny_params(pretraining_records, cased_vocab), model_dir, "eval",
      "summaries")
  assert save_summary and os.path.join(
      model_dir, params.trainer.validation_summary_subdir) == os.path.abspath(
          "summaries")


# Runs spanbert-train and sends it a SIGTERM at its first evaluation batch,
# as a scheduler would (writing the time it did to argv[1]).
SIGTERM_IN_EVAL = """
import os, signal, sys, time
from official_spanbert.training import trainer
from official_spanbert.tools import train
reduce, sent = trainer.SpanBertTrainer.eval_reduce, sys.argv[1]
def eval_reduce(self, state=None, step_outputs=None):
  with open(sent, "w") as f:
    f.write(repr(time.time()))
  os.kill(os.getpid(), signal.SIGTERM)
  return reduce(self, state, step_outputs)
trainer.SpanBertTrainer.eval_reduce = eval_reduce
sys.argv = ["spanbert-train"] + sys.argv[2:]
train.run()
"""


def test_sigterm_during_evaluation_is_one_line_and_exits_at_once(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Issue 39 probe (b): the process exited with 143 and said nothing, 7-20
  s after the signal (Python tearing down TensorFlow's objects); in --mode=
  eval it printed ten `Value in checkpoint could not be found` warnings on
  the way."""
  model_dir = copy_run(trained, tmp_path)
  sent = tmp_path / "sent"
  cmd = train_cmd(write_config(tmp_path, pretraining_records, cased_vocab),
                   model_dir, "--mode=eval")
  result = subprocess.run(
      [sys.executable, "-c", SIGTERM_IN_EVAL, str(sent)] + cmd[3:], cwd=REPO,
      env=env(), capture_output=True, text=True, timeout=TIMEOUT_S,
      check=False)
  exited = time.time()
  assert result.returncode == 128 + signal.SIGTERM, result.stderr[-3000:]
  assert exited - float(sent.read_text()) < 10
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      "spanbert-train: stopped by SIGTERM during the evaluation at step 8 (it "
      f"wrote no metrics); rerun to evaluate {model_dir}/ckpt-8")
  assert "could not be found" not in result.stderr
  # Nothing of the evaluation was written; the checkpoints are as they were.
  for f in glob.glob(os.path.join(model_dir, "validation", "events*")):
    assert not [v for e in tf.compat.v1.train.summary_iterator(f)
                for v in e.summary.value], f
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")
  checkpoint_recovery.check_latest(model_dir)
