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

"""spanbert-train never loses a run's work, reports errors in a line and
runs Model Garden's runner in the modes its users expect.

- A second training run on a model_dir refuses to start and names the first
  (the lock in official_spanbert/utils/run_lock.py); eval runs still read it.
- A truncated newest checkpoint is moved aside and training resumes from the
  newest intact one (official_spanbert/training/checkpoint_recovery.py).
- Configuration errors print `spanbert-train: error: <message>`, exit 1.
- Divergence is Model Garden's loss_upper_bound / recovery_max_trials rule,
  raised as TrainingDivergedError: restores first when trials are allowed,
  one `spanbert-train: error:` line from the binary.
- Progress lines with an ETA and one summary line of what was written where;
  --enable_async_checkpointing is honoured.
- continuous_train_and_eval fine-tunes each checkpoint of a pretraining run
  (Model Garden's continuous_finetune_lib) with SpanBertTrainer.
- Issue 26: no restart from step 0 without a state file, no spin on a bad
  lock, no empty lock on a full disk, params.yaml kept, build-time checks,
  a relative divergence bound, one line on a full disk, read-only eval.
"""

import gc
import glob
import json
import logging
import math
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.training import checkpoint_recovery
from official_spanbert.training import config_check
from official_spanbert.utils import run_lock
from official_spanbert.training import train_lib
from official_spanbert.training import trainer as trainer_lib
from conftest import REPO, tiny_params

TIMEOUT_S = 300


def _env():
  """This process's sys.path (checkout or Bazel runfiles), quiet TF logs."""
  return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
              TF_CPP_MIN_LOG_LEVEL="3")


def _train_cmd(config, model_dir, *flags):
  return [sys.executable, "-m", "official_spanbert.tools.train",
          "--experiment=spanbert/pretraining", f"--config_file={config}",
          "--mode=train", f"--model_dir={model_dir}", *flags]


def _config(tmp_path, records, vocab, **kwargs):
  path = str(tmp_path / "params.yaml")
  params_dict.save_params_dict_to_yaml(tiny_params(records, vocab, **kwargs),
                                       path)
  return path


def _events(model_dir):
  steps = []
  for f in glob.glob(os.path.join(model_dir, "train", "events*")):
    for e in tf.compat.v1.train.summary_iterator(f):
      steps += [e.step for v in e.summary.value if v.tag == "mlm_loss"]
  return sorted(steps)


@pytest.fixture(scope="module")
def trained(pretraining_records, cased_vocab, tmp_path_factory):
  """A model_dir trained for 8 steps: ckpt-4 and ckpt-8."""
  model_dir = str(tmp_path_factory.mktemp("trained") / "run")
  train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=8),
                model_dir)
  return model_dir


def _copy(model_dir, tmp_path):
  return shutil.copytree(model_dir, str(tmp_path / "run"))


def _truncate(path):
  os.truncate(path, os.path.getsize(path) // 2)
  return os.path.getsize(path)


def test_second_training_run_refuses_the_locked_model_dir(
    pretraining_records, cased_vocab, trained, tmp_path):
  model_dir = _copy(trained, tmp_path)
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  # The first run resumes from ckpt-8 and trains on without saving another.
  config = _config(tmp_path, pretraining_records, cased_vocab, steps=10**6,
                   checkpoint_interval=10**6)
  with open(tmp_path / "first.log", "w") as log:
    first = subprocess.Popen(_train_cmd(config, model_dir), cwd=REPO,
                             env=_env(), stdout=log, stderr=subprocess.STDOUT)
  try:
    deadline = time.monotonic() + TIMEOUT_S
    while not os.path.exists(lock):
      assert first.poll() is None and time.monotonic() < deadline, (
          (tmp_path / "first.log").read_text()[-3000:])
      time.sleep(0.5)
    with open(lock) as f:
      holder = json.load(f)
    assert holder["pid"] == first.pid
    assert holder["host"] == socket.gethostname()
    # Paused while the others run (it would train on both cores meanwhile):
    # a stopped process still holds its lock (its pid is alive).
    first.send_signal(signal.SIGSTOP)

    second = subprocess.Popen(_train_cmd(config, model_dir), cwd=REPO,
                              env=_env(), stdout=subprocess.DEVNULL,
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
  model_dir = _copy(trained, tmp_path)
  dead = subprocess.Popen(["true"])
  dead.wait()
  lock = os.path.join(model_dir, run_lock.LOCK_NAME)
  with open(lock, "w") as f:
    json.dump({"pid": dead.pid, "host": socket.gethostname(),
               "started": "2020-01-01 00:00:00 +0000"}, f)
  with caplog.at_level(logging.WARNING):
    train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=12),
                  model_dir)
  assert f"pid {dead.pid} on {socket.gethostname()}" in caplog.text
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
  model_dir = _copy(trained, tmp_path)
  newest = os.path.join(model_dir, "ckpt-8")
  size = _truncate(newest + ".data-00000-of-00001")
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
  assert _events(model_dir) == [4, 8, 8, 12]


def test_recovery_without_an_intact_checkpoint_moves_nothing(tmp_path):
  model_dir = str(tmp_path / "run")
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(v=tf.Variable(tf.zeros([1000]))), model_dir, 5)
  paths = [manager.save(), manager.save()]
  for path in paths:
    _truncate(path + ".data-00000-of-00001")
  with pytest.raises(checkpoint_recovery.CheckpointError,
                     match=f"no intact checkpoint in {model_dir}: "
                     f"{paths[1]} is broken .*; {paths[0]} is broken"):
    checkpoint_recovery.recover_latest(model_dir)
  assert tf.train.latest_checkpoint(model_dir) == paths[1]
  assert not os.path.exists(
      os.path.join(model_dir, checkpoint_recovery.BROKEN_DIR))


# One binary run per message source (each run is a TensorFlow import, ~12 s
# of CPU); the checks behind the messages are tested in-process below.
@pytest.mark.parametrize("override,message,flags", [
    ("task.train_data.masking_rate=1.5",
     r"^spanbert-train: error: masking config: masking_rate must be in "
     r"\(0, 1\), got 1.5$", ()),
    ("task.train_data.masking_rate=abc",
     r"task.train_data.masking_rate must be a number, got 'abc'$", ()),
    ("task.train_data.input_path=/nonexistent/r-*.tfrecord",
     r"/nonexistent/r-\*.tfrecord does not match any files", ()),
    ("task.train_data.global_batch_size=0",
     r"^spanbert-train: error: task.train_data.global_batch_size must be a "
     r"positive integer, got 0$", ("--verbosity=1",)),
])
def test_configuration_error_is_one_line(pretraining_records, cased_vocab,
                                         tmp_path, override, message, flags):
  config = _config(tmp_path, pretraining_records, cased_vocab)
  result = subprocess.run(
      _train_cmd(config, str(tmp_path / "run"),
                 f"--params_override={override}", *flags),
      cwd=REPO, env=_env(), capture_output=True, text=True,
      timeout=TIMEOUT_S, check=False)
  assert result.returncode == 1, result.stderr[-3000:]
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("spanbert-train: error: "), result.stderr[-3000:]
  assert "In call to configurable" not in last
  assert re.search(message, last), last
  assert ("Traceback" in result.stderr) == bool(flags)


REGISTERED = ("bert/token_nsp", "bert/token_single", "spanbert/classification",
              "spanbert/coref", "spanbert/glue", "spanbert/no_sbo",
              "spanbert/pretraining", "spanbert/span_ner", "spanbert/squad_v1",
              "spanbert/squad_v2", "spanbert/tacred")


def test_an_unknown_experiment_is_one_line_naming_the_registered_ones(
    tmp_path):
  """Issue 48 item 9: `--experiment=spanbert/squad_v3` printed 37 lines of
  Model Garden's LookupError, which lists no experiment."""
  model_dir = str(tmp_path / "run")
  result = subprocess.run(
      [sys.executable, "-m", "official_spanbert.tools.train",
       "--experiment=spanbert/squad_v3", "--mode=train",
       f"--model_dir={model_dir}"], cwd=REPO, env=_env(),
      capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
  assert result.returncode == 1
  (line,) = result.stderr.strip().splitlines()
  match = re.fullmatch(r"spanbert-train: error: unknown experiment "
                       r"'spanbert/squad_v3'; the registered experiments, "
                       r"nearest first: (.+)", line)
  assert match, line
  names = match.group(1).split(", ")
  assert names[:2] == ["spanbert/squad_v1", "spanbert/squad_v2"], line
  assert sorted(names) == list(REGISTERED)
  assert not os.path.exists(model_dir)


def test_a_typo_d_key_names_its_path_file_line_and_the_nearest_key(
    tmp_path):
  """Issue 48 item 11: a typo'd key gave Model Garden's `The key
  'seq_lenght' does not exist in <class ...QADataConfig>. To extend the
  existing keys, use override with is_strict = False` (which would drop it)."""
  config = tmp_path / "mine.yaml"
  config.write_text("task:\n  train_data:\n    global_batch_size: 4\n"
                    "    seq_lenght: 128\n")
  model_dir = str(tmp_path / "run")
  result = subprocess.run(
      [sys.executable, "-m", "official_spanbert.tools.train",
       "--experiment=spanbert/squad_v1", "--mode=train",
       f"--model_dir={model_dir}", f"--config_file={config}"], cwd=REPO,
      env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
      check=False)
  assert result.returncode == 1
  (line,) = result.stderr.strip().splitlines()
  assert line == (
      f"spanbert-train: error: {config}:4: unknown key "
      "task.train_data.seq_lenght; did you mean task.train_data.seq_length?")
  assert not os.path.exists(model_dir)
  # The exporters read overrides through the same check.
  from official_spanbert.serving import export_lib  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError) as e:
    export_lib.load_params("spanbert/squad_v1", None, (),
                           "task.model.encodr.type=bert_v2")
  assert str(e.value) == ("--params_override: unknown key task.model.encodr; "
                          "did you mean task.model.encoder?")
  with pytest.raises(ValueError, match=r"unknown key task\.zzz; task has "
                     r"allow_image_summary, .*train_data"):
    export_lib.load_params("spanbert/squad_v1", None, (), "task.zzz=1")


def test_binary_shows_progress_and_what_it_wrote(
    pretraining_records, cased_vocab, trained, tmp_path):
  model_dir = _copy(trained, tmp_path)
  config = _config(tmp_path, pretraining_records, cased_vocab, steps=16)
  result = subprocess.run(
      _train_cmd(config, model_dir, "--mode=train_and_eval",
                 "--enable_async_checkpointing",
                 "--params_override=trainer.validation_interval=8"),
      cwd=REPO, env=_env(), capture_output=True, text=True,
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
  model_dir = _copy(trained, tmp_path)
  config = _config(tmp_path, pretraining_records, cased_vocab, steps=12)
  result = subprocess.run(
      _train_cmd(config, model_dir, "--params_override=task.sbo_weight=.nan"),
      cwd=REPO, env=_env(), capture_output=True, text=True,
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
  model_dir = _copy(trained, tmp_path)
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
  model_dir = _copy(trained, tmp_path)
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


# Issue 26 -------------------------------------------------------------------


def _last_error_line(result):
  assert result.returncode == 1, result.stderr[-3000:]
  assert "Traceback" not in result.stderr, result.stderr[-3000:]
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("spanbert-train: error: "), last
  return last


class _Alarm(Exception):
  pass


@pytest.fixture
def alarm():
  """Interrupts the test after the given seconds (a loop that never ends)."""
  def on_alarm(*_):
    raise _Alarm()
  previous = signal.signal(signal.SIGALRM, on_alarm)
  yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
  signal.setitimer(signal.ITIMER_REAL, 0)
  signal.signal(signal.SIGALRM, previous)


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
      _train_cmd(_config(tmp_path, pretraining_records, cased_vocab),
                 model_dir),
      cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120,
      check=False)
  assert "is unreadable (it holds 'null'" in _last_error_line(result)
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
  model_dir = _copy(trained, tmp_path)
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
  assert _events(model_dir) == [4, 8, 12]
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
  model_dir = _copy(trained, tmp_path)
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


def test_best_checkpoint_metric_is_checked_at_build(
    pretraining_records, cased_vocab, tmp_path):
  """Fault 7: a metric the evaluation does not report."""
  params = tiny_params(pretraining_records, cased_vocab)
  params.trainer.best_checkpoint_export_subdir = "best"
  params.trainer.best_checkpoint_eval_metric = "f1"
  model_dir = str(tmp_path / "run")
  with pytest.raises(ValueError, match=(
      r"trainer.best_checkpoint_eval_metric='f1' is not reported by the "
      r"evaluation of this task, which reports masked_lm_accuracy, mlm_loss, "
      r"sbo_accuracy, sbo_loss, validation_loss; set it to one of these")):
    train_lib.run(params, model_dir, mode="train_and_eval")
  assert not glob.glob(os.path.join(model_dir, "ckpt-*"))
  # The names the evaluation does report pass.
  task = train_lib.task_factory.get_task(params.task)
  for name in ("sbo_accuracy", "validation_loss"):
    params.trainer.best_checkpoint_eval_metric = name
    train_lib._check_best_checkpoint_metric(params, task)


def test_diverging_pretraining_stops_at_ten_times_the_untrained_loss(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 10: lr 30 takes the loss far above 10 x ln(vocab) x (1 + SBO)."""
  model_dir = _copy(trained, tmp_path)
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

  model_dir = _copy(trained, tmp_path)
  result = subprocess.run(
      _train_cmd(_config(tmp_path, pretraining_records, cased_vocab,
                         steps=12), model_dir),
      cwd=REPO, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
      check=False, preexec_fn=small_disk)
  last = _last_error_line(result)
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
  assert _events(model_dir) == [4, 8, 12, 12]


def _read_only_cmd(model_dir, cmd):
  """`cmd` with model_dir read-only: chmod for a user, a read-only bind
  mount in a mount namespace of its own for root (who ignores modes)."""
  if os.geteuid() != 0:
    for d, _, files in os.walk(model_dir):
      for name in files + [""]:
        os.chmod(os.path.join(d, name), 0o555 if not name else 0o444)
    return cmd
  if not shutil.which("unshare"):
    pytest.skip("root without unshare: cannot make a read-only model_dir")
  probe = subprocess.run(["unshare", "-m", "true"], capture_output=True,
                         check=False)
  if probe.returncode:
    pytest.skip(f"unshare -m: {probe.stderr.decode()[-200:]}")
  d = shlex.quote(model_dir)
  return ["unshare", "-m", "sh", "-c",
          f"mount --bind {d} {d} && mount -o remount,ro,bind {d} {d} && "
          f"exec {shlex.join(cmd)}"]


def test_eval_of_a_read_only_model_dir_skips_summaries_with_a_warning(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Fault 14 (and --eval_summary_dir, which writes them elsewhere)."""
  model_dir = _copy(trained, tmp_path)
  config = _config(tmp_path, pretraining_records, cased_vocab)
  cmd = _read_only_cmd(model_dir,
                       _train_cmd(config, model_dir, "--mode=eval"))
  result = subprocess.run(cmd, cwd=REPO, env=_env(), capture_output=True,
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


def test_config_values_that_cannot_work_are_refused(
    pretraining_records, cased_vocab, tmp_path):
  """Fault 15: a list in a float field; a negative number of steps."""
  params = params_dict.override_params_dict(
      tiny_params(pretraining_records, cased_vocab),
      "task.train_data.masking_rate=[0.1]", is_strict=True)
  with pytest.raises(config_check.ConfigTypeError, match=(
      r"^task.train_data.masking_rate must be a number, got \[0.1\]$")):
    config_check.check_value_types(params)
  params = tiny_params(pretraining_records, cased_vocab, steps=-5)
  model_dir = str(tmp_path / "run")
  with pytest.raises(config_check.ConfigValueError, match=(
      r"^trainer.train_steps must be a positive number of steps, got -5$")):
    train_lib.run(params, model_dir)
  assert not os.path.exists(model_dir)  # no ckpt-0
  config_check.check_values(params, "eval")  # eval does not train


@pytest.mark.parametrize("field,value", [
    ("train_data.global_batch_size", 0), ("train_data.global_batch_size", -4),
    ("train_data.seq_length", 0), ("validation_data.max_predictions_per_seq",
                                   -1)])
def test_sizes_that_cannot_work_are_refused_before_anything_is_written(
    pretraining_records, cased_vocab, tmp_path, field, value):
  """Issue 39, fault 4: raw op text ("Batch size must be greater than zero",
  "Dimension -4 must be >= 0") after params.yaml was written."""
  params = params_dict.override_params_dict(
      tiny_params(pretraining_records, cased_vocab), f"task.{field}={value}",
      is_strict=True)
  model_dir = str(tmp_path / "run")
  with pytest.raises(config_check.ConfigValueError, match=(
      rf"^task.{field} must be a positive integer, got {value}$")):
    train_lib.run(params, model_dir, mode="train_and_eval")
  assert not os.path.exists(model_dir)


def test_masking_errors_come_before_anything_is_built(
    pretraining_records, cased_vocab, tmp_path, monkeypatch):
  """Issue 39, fault 8: a masking typo was reported after the strategy,
  task and model were built (60-200 s on the loaded machine)."""
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(task_factory, "get_task", None)  # not reached
  params = params_dict.override_params_dict(
      tiny_params(pretraining_records, cased_vocab),
      "task.train_data.masking_rate=1.5", is_strict=True)
  with pytest.raises(ValueError, match=(
      r"^masking config: masking_rate must be in \(0, 1\), got 1.5$")):
    train_lib.run(params, str(tmp_path / "run"))
  assert not os.path.exists(tmp_path / "run")


def test_missing_init_checkpoint_leaves_no_params(
    pretraining_records, cased_vocab, tmp_path):
  """Issue 39, fault 8 probe: reported at task build, params.yaml left."""
  params = tiny_params(pretraining_records, cased_vocab)
  params.task.init_checkpoint = str(tmp_path / "none" / "ckpt")
  model_dir = str(tmp_path / "run")
  with pytest.raises(ValueError, match=(
      rf"^checkpoint {tmp_path}/none/ckpt does not exist$")):
    train_lib.run(params, model_dir)
  assert not os.path.exists(os.path.join(model_dir, "params.yaml"))


_CONTEXT = "Denver won the game. The Broncos were happy."


def _squad(*paragraphs):
  return {"version": "1.1", "data": [{"title": "t", "paragraphs":
                                      list(paragraphs)}]}


def _question(qid, text="Denver", start=0, **fields):
  return dict({"id": qid, "question": "Who won?",
               "answers": [{"text": text, "answer_start": start}]}, **fields)


_GOOD_SQUAD = _squad({"context": _CONTEXT, "qas": [
    _question("q1"), _question("q2", "The Broncos", 21)]})


def _squad_params(tmp_path, vocab, train, validation=_GOOD_SQUAD):
  """spanbert/squad_v1 on the tiny encoder, SQuAD JSON for both splits."""
  params = params_dict.override_params_dict(
      exp_factory.get_exp_config("spanbert/squad_v1"),
      yaml_files.path("models/tiny.yaml"), is_strict=True)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = 32, 64, 1
  params.runtime.distribution_strategy = "one_device"
  params.runtime.num_gpus = 0
  params.trainer.train_steps, params.trainer.steps_per_loop = 2, 1
  params.trainer.checkpoint_interval = params.trainer.validation_interval = 2
  paths = {}
  for name, content in (("train", train), ("dev", validation)):
    paths[name] = str(tmp_path / f"{name}.json")
    with open(paths[name], "w", encoding="utf-8") as f:
      json.dump(content, f)
  for data, name in ((params.task.train_data, "train"),
                     (params.task.validation_data, "dev")):
    data.input_path, data.vocab_file = paths[name], vocab
    data.seq_length, data.query_length, data.doc_stride = 64, 16, 32
    data.global_batch_size = 2
  return params


@pytest.mark.parametrize("train,validation,message", [
    (_squad({"context": _CONTEXT}), _GOOD_SQUAD,
     r"train\.json: article 0, paragraph 0 needs a string 'context' and a "
     r"list 'qas'"),
    (_squad({"context": None, "qas": [_question("q1")]}), _GOOD_SQUAD,
     r"train\.json: article 0, paragraph 0 needs a string 'context'"),
    (_squad({"context": _CONTEXT, "qas": [_question("q1"), _question("q1")]}),
     _GOOD_SQUAD, r"train\.json: question id q1 appears twice"),
    ({"version": "1.1", "data": []}, _GOOD_SQUAD,
     r"train\.json: no usable questions"),
    (_squad({"context": _CONTEXT, "qas": [_question("q1", "Carolina")]}),
     _GOOD_SQUAD, r"train\.json: no usable questions"),
    (_squad({"context": _CONTEXT, "qas": [
        _question("q1"), dict(_question("q2"), answers=[],
                              is_impossible=True)]}), _GOOD_SQUAD,
     r"train\.json: question q2 is_impossible, but the task is SQuAD v1\.1"),
    (_GOOD_SQUAD, _squad({"context": _CONTEXT, "qas": [
        _question("q1"), _question("q1")]}),
     r"dev\.json: question id q1 appears twice"),
], ids=["no_qas", "null_context", "duplicate_ids", "empty", "no_answer",
        "v2_in_v1", "eval_duplicate_ids"])
def test_squad_data_errors_leave_nothing_in_the_model_dir(
    cased_vocab, tmp_path, train, validation, message):
  """Issue 48 item 7: these errors left params.yaml and eval.tf_record in
  the model dir; the data is now read before anything is written."""
  params = _squad_params(tmp_path, cased_vocab, train, validation)
  model_dir = tmp_path / "run"
  with pytest.raises(ValueError, match=message):
    train_lib.run(params, str(model_dir))
  assert not model_dir.exists()


def test_a_run_that_fails_before_its_first_checkpoint_removes_what_it_wrote(
    cased_vocab, tmp_path, monkeypatch):
  """Issue 48 item 7 (the fallback): a data error found only while the task
  prepares its inputs -- here one of the tokenizer -- leaves neither
  params.yaml nor the prepared records; a model_dir that was there stays."""
  from official_spanbert.data.finetuning import squad  # pylint: disable=g-import-not-at-top
  prepare = squad.prepare

  def fails_for_training(path, tokenizer, output, is_training, **kwargs):
    if is_training:
      raise squad.SquadFormatError(f"{path}: no features")
    return prepare(path, tokenizer, output, is_training, **kwargs)

  monkeypatch.setattr(squad, "prepare", fails_for_training)
  params = _squad_params(tmp_path, cased_vocab, _GOOD_SQUAD)
  model_dir = tmp_path / "run"
  with pytest.raises(ValueError, match="no features"):
    train_lib.run(params, str(model_dir))
  assert not model_dir.exists()
  model_dir.mkdir()
  (model_dir / "notes.txt").write_text("mine")
  with pytest.raises(ValueError, match="no features"):
    train_lib.run(params, str(model_dir))
  assert os.listdir(model_dir) == ["notes.txt"]


def test_an_init_checkpoint_of_another_size_is_one_error_and_no_warnings(
    pretraining_records, cased_vocab, trained, tmp_path, caplog):
  """Issue 48 item 7: ~50 (here 78) `Value in checkpoint could not be
  found` warnings beside TF's "Received incompatible tensor" error, and
  params.yaml left in the model dir."""
  params = tiny_params(pretraining_records, cased_vocab)
  params.task.model.encoder.bert_v2.hidden_size = 32
  params.task.model.encoder.bert_v2.intermediate_size = 64
  params.task.init_checkpoint = trained
  model_dir = tmp_path / "run"
  # An earlier test's checkpoint objects (an optimizer's slots) would log
  # their own unrestored values when collected inside the block below.
  gc.collect()
  with caplog.at_level(logging.WARNING):
    with pytest.raises(ValueError) as e:
      train_lib.run(params, str(model_dir))
    gc.collect()  # TF logs unrestored values when the checkpoint goes
  assert config_check.one_line(e.value) == (
      f"checkpoint {trained}/ckpt-8 does not fit the model the config "
      "builds: encoder/_embedding_norm_layer/beta has shape [64] there but "
      "[32] in the model (35 of its 38 weights differ); build the model "
      "with the checkpoint's sizes (those of the run or conversion that "
      "wrote it) or use another checkpoint"), str(e.value)
  # Only the model's values count: under xdist another test's legacy-Adam
  # checkpoint object (optimizer.iter, beta_1, beta_2, decay; none of this
  # run's) was collected inside the block in two CI runs, after gc.collect()
  # above too. A restore of this run's model would name (root).model values.
  ours = [line for line in caplog.text.splitlines()
          if "could not be found" in line and "(root).optimizer." not in line]
  assert not ours, caplog.text
  assert not model_dir.exists()


def test_full_disk_while_writing_params_keeps_the_old_ones(
    pretraining_records, cased_vocab, trained, tmp_path):
  """Issue 39 probe (c): params.yaml was rewritten in place; a full disk
  (or a kill) left it cut short beside intact checkpoints, and the exports
  read it."""
  model_dir = _copy(trained, tmp_path)
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
  (The exporter's other cases: test_best_checkpoint.py.)"""
  model_dir = _copy(trained, tmp_path)
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
  model_dir = _copy(trained, tmp_path)
  config = _config(tmp_path, pretraining_records, cased_vocab, steps=10**6)
  with open(tmp_path / "killed.log", "w") as log:
    killed = subprocess.Popen(_train_cmd(config, model_dir), cwd=REPO,
                              env=_env(), stdout=log, stderr=subprocess.STDOUT)
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
      _train_cmd(_config(tmp_path, pretraining_records, cased_vocab,
                         steps=step + 4), model_dir),
      cwd=REPO, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
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
  model_dir = _copy(trained, tmp_path)
  sent = tmp_path / "sent"
  cmd = _train_cmd(_config(tmp_path, pretraining_records, cased_vocab),
                   model_dir, "--mode=eval")
  result = subprocess.run(
      [sys.executable, "-c", SIGTERM_IN_EVAL, str(sent)] + cmd[3:], cwd=REPO,
      env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
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


def test_task_config_errors_come_before_anything_is_written(
    pretraining_records, cased_vocab, tmp_path, monkeypatch):
  """Issue 39 probe (e): seq_length above max_position_embeddings (and the
  task's other checks) was reported when the task was built, after the
  model_dir and params.yaml were written."""
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(task_factory, "get_task", None)  # not reached
  params = tiny_params(pretraining_records, cased_vocab)
  params.task.train_data.seq_length = 1024
  params.task.train_data.max_predictions_per_seq = 160  # the masking budget
  with pytest.raises(ValueError, match=(
      r"^task.train_data.seq_length=1024 is larger than the encoder's "
      r"max_position_embeddings=512; lower task.train_data.seq_length or "
      r"raise task.model.encoder.bert_v2.max_position_embeddings$")):
    train_lib.run(params, str(tmp_path / "run"))
  assert not os.path.exists(tmp_path / "run")
