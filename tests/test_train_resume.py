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

"""spanbert-train never loses a run's work: the model_dir lock, resuming.

- A second training run on a model_dir refuses to start and names the first
  (the lock in official_spanbert/utils/run_lock.py); eval runs still read it.
  No spin on a bad lock, no empty lock on a full disk.
- A truncated newest checkpoint is moved aside and training resumes from the
  newest intact one (official_spanbert/training/checkpoint_recovery.py); no
  restart from step 0 without a state file; kill -9 while a checkpoint is
  written, then resume.
- params.yaml is kept on a failed resume and on a full disk.
"""

import glob
import json
import logging
import os
import re
import resource
import signal
import socket
import subprocess
import time

import pytest
import tensorflow as tf

from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.training import checkpoint_recovery
from official_spanbert.training import config_check
from official_spanbert.utils import run_lock
from official_spanbert.training import train_lib
from conftest import REPO, dead_holder, tiny_params
from train_helpers import TIMEOUT_S
from train_helpers import env
from train_helpers import train_cmd
from train_helpers import write_config
from train_helpers import event_steps
from train_helpers import copy_run
from train_helpers import truncate
from train_helpers import last_error_line
from train_helpers import alarm  # noqa: F401  pylint: disable=unused-import
from train_helpers import trained  # noqa: F401  pylint: disable=unused-import


def test_second_training_run_refuses_the_locked_model_dir(
    pretraining_records, cased_vocab, trained, tmp_path):
  model_dir = copy_run(trained, tmp_path)
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  # The first run resumes from ckpt-8 and trains on without saving another.
  config = write_config(tmp_path, pretraining_records, cased_vocab,
                        steps=10**6, checkpoint_interval=10**6)
  with open(tmp_path / "first.log", "w") as log:  # the lock names Popen.pid
    first = subprocess.Popen(train_cmd(config, model_dir), cwd=REPO,
                             env=env(fresh_python=True), stdout=log,
                             stderr=subprocess.STDOUT)
  try:
    deadline = time.monotonic() + TIMEOUT_S
    while run_lock.holder(lock) is None:
      assert first.poll() is None and time.monotonic() < deadline, (
          (tmp_path / "first.log").read_text()[-3000:])
      time.sleep(0.5)
    holder = run_lock.holder(lock)
    assert holder["pid"] == first.pid
    assert holder["host"] == socket.gethostname()
    # Paused while the others run (it would train on both cores meanwhile):
    # a stopped process still holds its lock (its pid is alive).
    first.send_signal(signal.SIGSTOP)

    second = subprocess.Popen(train_cmd(config, model_dir), cwd=REPO,
                              env=env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    # Evaluation takes no lock: it reads the first run's checkpoints.
    train_lib.run(tiny_params(pretraining_records, cased_vocab), model_dir,
                  mode="eval")
    assert glob.glob(os.path.join(model_dir, "validation", "events*"))
    assert os.path.exists(lock)
    _, stderr = second.communicate(timeout=TIMEOUT_S)
    assert second.returncode == 1, stderr[-3000:]
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("spanbert-train: error: ") and (
        f"pid {first.pid} on {socket.gethostname()}" in last), last

    first.send_signal(signal.SIGTERM)
    first.send_signal(signal.SIGCONT)
    assert first.wait(timeout=TIMEOUT_S) == 128 + signal.SIGTERM
    assert not os.path.exists(lock)  # released on the way out
    # Issue 39 probe (b): one line says where it stopped.
    assert (tmp_path / "first.log").read_text().strip().splitlines()[-1] == (
        f"spanbert-train: stopped by SIGTERM; the newest checkpoint "
        f"{model_dir}/ckpt-8 (step 8) is intact: rerun to resume from it")
  finally:
    if first.poll() is None:
      first.kill()


def test_stale_lock_of_a_dead_process_is_taken_over(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  model_dir = copy_run(trained, tmp_path)
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  dead = dead_holder(lock)
  with caplog.at_level(logging.WARNING):
    train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                  model_dir)
  assert f"pid {dead} on {socket.gethostname()}" in caplog.text
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-12")
  assert not os.path.exists(lock)


def test_lock_names_a_live_holder(tmp_path):
  model_dir = str(tmp_path / "run")
  with run_lock.hold(model_dir):
    with pytest.raises(run_lock.ModelDirLockedError,
                       match=f"in use by another training run: pid "
                       f"{os.getpid()} on {socket.gethostname()}"):
      run_lock.acquire(model_dir)
  assert os.listdir(model_dir) == []


def test_resume_falls_back_past_a_truncated_checkpoint(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  model_dir = copy_run(trained, tmp_path)
  newest = os.path.join(model_dir, "ckpt-8")
  size = truncate(newest + ".data-00000-of-00001")
  with pytest.raises(checkpoint_recovery.CheckpointError,
                     match=f"checkpoint {newest} is broken"):
    checkpoint_recovery.check_latest(model_dir)  # what eval modes do
  # A kill while step 12 was being saved leaves its temporary folder.
  os.makedirs(os.path.join(model_dir, "ckpt-12_temp"))
  with open(os.path.join(model_dir, "ckpt-12_temp",
                         "part-00000-of-00001.data-00000-of-00001"), "wb") as f:
    f.write(b"\0" * 100)

  with caplog.at_level(logging.WARNING):
    train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                  model_dir)
  assert f"Checkpoint {newest} is broken (IndexError" in caplog.text
  assert f"Resuming from {model_dir}/ckpt-4 (step 4)" in caplog.text
  kept = os.path.join(model_dir, checkpoint_recovery.BROKEN_DIR, "ckpt-8")
  assert os.path.getsize(kept + ".data-00000-of-00001") == size
  assert os.path.exists(kept + ".index")
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-12")
  # The first run logged steps 4 and 8, the second 8 and 12: it resumed at 4.
  assert event_steps(model_dir) == [4, 8, 8, 12]


def test_recovery_without_an_intact_checkpoint_moves_nothing(tmp_path):
  model_dir = str(tmp_path / "run")
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(v=tf.Variable(tf.zeros([1000]))), model_dir, 5)
  paths = [manager.save(), manager.save()]
  for path in paths:
    truncate(path + ".data-00000-of-00001")
  with pytest.raises(checkpoint_recovery.CheckpointError,
                     match=f"no intact checkpoint in {model_dir}: "
                     f"{paths[1]} is broken .*; {paths[0]} is broken"):
    checkpoint_recovery.recover_latest(model_dir)
  assert tf.train.latest_checkpoint(model_dir) == paths[1]
  assert not os.path.exists(
      os.path.join(model_dir, checkpoint_recovery.BROKEN_DIR))


@pytest.mark.parametrize("content", [
    "null", "[]", "", '{"pid": "abc", "host": "h", "started": "s"}',
    '{"pid": 1, "started": "s"}', '{"pid": 1, "host": "h", "sta'])
def test_unreadable_lock_content_is_one_clear_error(tmp_path, alarm,
                                                    content):
  model_dir = str(tmp_path / "run")
  os.makedirs(model_dir)
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  with open(lock, "w") as f:
    f.write(content)
  alarm(10)
  with pytest.raises(run_lock.ModelDirLockedError) as e:
    run_lock.acquire(model_dir)
  assert str(e.value) == (
      f"lock file {lock} is unreadable (it holds {content!r}, not a pid, "
      f"host and start time); delete it if no training run is using "
      f"{model_dir}")
  with open(lock) as f:
    assert f.read() == content  # left for the user to judge


def test_binary_reports_a_null_lock_in_one_line(pretraining_records,
                                                cased_vocab, tmp_path):
  model_dir = str(tmp_path / "run")
  os.makedirs(model_dir)
  (tmp_path / "run" / run_lock.LOCK_NAME).write_text("null")
  result = subprocess.run(
      train_cmd(write_config(tmp_path, pretraining_records, cased_vocab),
                 model_dir),
      cwd=REPO, env=env(), capture_output=True, text=True, timeout=120,
      check=False)
  assert "is unreadable (it holds 'null'" in last_error_line(result)
  assert not os.path.exists(os.path.join(model_dir, "params.yaml"))


def test_full_disk_while_locking_leaves_no_lock(tmp_path):
  model_dir = str(tmp_path / "run")
  os.makedirs(model_dir)
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
  resource.setrlimit(resource.RLIMIT_FSIZE, (40, hard))
  try:  # writes past 40 bytes fail with EFBIG, as on a full disk
    with pytest.raises(OSError) as e:  # run_lock.LockWriteError
      run_lock.acquire(model_dir)
  finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
  # (an OSError: spanbert-train prints it as its one error line)
  assert str(e.value) == (f"cannot write the lock file {lock}: File too "
                          f"large; free space in {model_dir} and rerun")
  assert os.listdir(model_dir) == []
  with run_lock.hold(model_dir):  # the next run is not refused
    assert os.path.exists(lock)


def test_missing_state_file_resumes_from_the_newest_checkpoint(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  """Faults 1 and 11: no `checkpoint` file; partial saves of a killed run."""
  model_dir = copy_run(trained, tmp_path)
  os.remove(os.path.join(model_dir, "checkpoint"))
  index = os.path.join(model_dir, "ckpt-8.index")
  with open(index, "rb") as f:
    saved = f.read()
  partial = [os.path.join(model_dir, "ckpt-12_temp"),
             os.path.join(model_dir, "ckpt-12.index.tempstate123")]
  os.makedirs(partial[0])
  with open(os.path.join(partial[0], "part-00000-of-00001.data-00000-of-"
                         "00001.tempstate456"), "wb") as f:
    f.write(b"\0" * 2_000_000)
  with open(partial[1], "wb") as f:
    f.write(b"\0" * 100)
  with caplog.at_level(logging.WARNING):
    train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                  model_dir)
  assert (f"The checkpoint state file {model_dir}/checkpoint is missing or "
          "unreadable; found the checkpoints by listing the directory"
          ) in caplog.text
  assert "Removed 2 partial save(s) of an interrupted run (2.0 MB)" in (
      caplog.text)
  assert not any(os.path.exists(p) for p in partial)
  # Resumed at 8 (the first run logged 4 and 8), ckpt-8 left as it was.
  assert event_steps(model_dir) == [4, 8, 12]
  with open(index, "rb") as f:
    assert f.read() == saved
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-12")


@pytest.mark.parametrize("state", ["garbled", "empty", "stale"])
def test_unusable_state_file_is_rebuilt_from_the_directory(tmp_path, state,
                                                           caplog):
  model_dir = str(tmp_path / "run")
  step = tf.Variable(0, dtype=tf.int64)
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(v=tf.Variable(tf.zeros([10])), step=step),
      model_dir, 5, step_counter=step)
  for s in (5, 10):
    step.assign(s)
    manager.save(checkpoint_number=s)
  path = os.path.join(model_dir, "checkpoint")
  content = {"garbled": "model_checkpoint_path: \x00\x01 {{",
             "empty": "",
             "stale": 'model_checkpoint_path: "ckpt-5"\n'}[state]
  with open(path, "w") as f:
    f.write(content)
  with pytest.raises(checkpoint_recovery.CheckpointError,
                     match=r"state file .* is missing or unreadable or names "
                     r"an older checkpoint than .*ckpt-10; a training run"):
    checkpoint_recovery.check_latest(model_dir)  # what eval modes do
  with caplog.at_level(logging.WARNING):
    checkpoint_recovery.recover_latest(model_dir)
  assert tf.train.latest_checkpoint(model_dir) == os.path.join(model_dir,
                                                               "ckpt-10")
  assert "found the checkpoints by listing the directory" in caplog.text
  checkpoint_recovery.check_latest(model_dir)


def test_failed_resume_with_another_model_size_keeps_params(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 4."""
  model_dir = copy_run(trained, tmp_path)
  params_yaml = os.path.join(model_dir, "params.yaml")
  with open(params_yaml) as f:
    before = f.read()
  params = tiny_params(pretraining_records, cased_vocab, steps=12)
  params.task.model.encoder.bert_v2.hidden_size = 128
  with pytest.raises(ValueError, match=(
      f"{model_dir}/ckpt-8 does not fit the configured model .*shape "
      rf"\(64,\).* \(128,\).*; resume with the model settings of "
      f"{params_yaml} \\(kept\\) or train in a new model_dir")):
    train_lib.run(params, model_dir)
  with open(params_yaml) as f:
    assert f.read() == before
  assert tf.train.latest_checkpoint(model_dir).endswith("ckpt-8")


def test_full_disk_while_writing_params_keeps_the_old_ones(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Issue 39 probe (c): params.yaml was rewritten in place; a full disk
  (or a kill) left it cut short beside intact checkpoints, and the exports
  read it."""
  model_dir = copy_run(trained, tmp_path)
  path = os.path.join(model_dir, "params.yaml")
  with open(path) as f:
    before = f.read()
  soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
  resource.setrlimit(resource.RLIMIT_FSIZE, (1000, hard))
  try:  # writes past 1000 bytes fail with EFBIG, as on a full disk
    with pytest.raises((OSError, tf.errors.OpError)) as e:
      train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                    model_dir)
  finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
  assert config_check.is_disk_full(e.value)
  with open(path) as f:
    assert f.read() == before
  assert not glob.glob(path + ".*")
  assert not os.path.exists(os.path.join(model_dir, run_lock.LOCK_NAME))


def test_an_interrupted_best_checkpoint_export_does_not_stop_the_next_run(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  """Issue 39 probes (b), (c): Model Garden wrote best/info.json in place; a
  SIGTERM, kill or full disk while it did left it empty, and every later run
  of the model_dir ended `error: Expecting value: line 1 column 1 (char 0)`.
  (The exporter's other cases: training/best_checkpoint_test.py.)"""
  model_dir = copy_run(trained, tmp_path)
  os.makedirs(os.path.join(model_dir, "best"))
  info = os.path.join(model_dir, "best", "info.json")
  open(info, "w").close()
  params = tiny_params(pretraining_records, cased_vocab, steps=12)
  params.trainer.best_checkpoint_export_subdir = "best"
  params.trainer.best_checkpoint_eval_metric = "masked_lm_accuracy"
  params.trainer.validation_interval = 4
  with caplog.at_level(logging.WARNING):
    train_lib.run(params, model_dir, mode="train_and_eval")
  assert f"{info} cannot be read (an export of the best checkpoint was " in (
      caplog.text)
  with open(info) as f:
    assert json.load(f)["best_ckpt_global_step"] == 12
  assert os.path.getsize(info + ".unusable") == 0


def _newest_intact(model_dir):
  return next(p for p in reversed(checkpoint_recovery.listed(model_dir))
              if checkpoint_recovery.problem(p) is None)


def test_kill_9_while_a_checkpoint_is_written_then_resume(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Issue 39 probe (a), the riskiest of the five kills tried by hand
  (docs/reliability.md): `kill -9` while ckpt-N is being written. The next
  run takes over the lock with a warning, removes the partial save, says in
  one line which checkpoint and step it resumes from, and ends with an
  intact checkpoint."""
  model_dir = copy_run(trained, tmp_path)
  config = write_config(tmp_path, pretraining_records, cased_vocab, steps=10**6)
  with open(tmp_path / "killed.log", "w") as log:  # the lock names Popen.pid
    killed = subprocess.Popen(train_cmd(config, model_dir), cwd=REPO,
                              env=env(fresh_python=True), stdout=log,
                              stderr=subprocess.STDOUT)
  try:
    deadline = time.monotonic() + TIMEOUT_S
    while not (glob.glob(os.path.join(model_dir, "ckpt-*_temp")) or
               glob.glob(os.path.join(model_dir, "*.tempstate*"))):
      assert killed.poll() is None and time.monotonic() < deadline, (
          (tmp_path / "killed.log").read_text()[-3000:])
      time.sleep(0.001)
    killed.kill()
    assert killed.wait(timeout=60) == -signal.SIGKILL
  finally:
    if killed.poll() is None:
      killed.kill()
  assert os.path.exists(os.path.join(model_dir, run_lock.LOCK_NAME))
  newest = _newest_intact(model_dir)
  step = int(newest.rsplit("-", 1)[1])
  assert step >= 8

  result = subprocess.run(
      train_cmd(write_config(tmp_path, pretraining_records, cased_vocab,
                             steps=step + 4), model_dir),
      cwd=REPO, env=env(), capture_output=True, text=True, timeout=TIMEOUT_S,
      check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert (f"Taking over the lock {model_dir}/{run_lock.LOCK_NAME} of a "
          f"training run that is no longer running: pid {killed.pid} "
          ) in result.stderr
  assert re.search(r"Removed \d+ partial save\(s\) of an interrupted run",
                   result.stderr), result.stderr[-3000:]
  assert re.findall(r"Resuming from (\S+) \(step (\d+)\)$", result.stderr,
                    re.M) == [(newest, str(step))]
  last = tf.train.latest_checkpoint(model_dir)
  assert last == os.path.join(model_dir, f"ckpt-{step + 4}")
  assert checkpoint_recovery.problem(last) is None
  assert not glob.glob(os.path.join(model_dir, "*_temp")) + glob.glob(
      os.path.join(model_dir, "*.tempstate*"))
  assert not os.path.exists(os.path.join(model_dir, run_lock.LOCK_NAME))
