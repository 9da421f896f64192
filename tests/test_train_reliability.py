"""spanbert-train never loses a run's work and reports bad configs in a line.

- A second training run on a model_dir refuses to start and names the first
  (the lock in official_spanbert/run_lock.py); eval runs still read it.
- A truncated newest checkpoint is moved aside and training resumes from the
  newest intact one (official_spanbert/checkpoint_recovery.py).
- Configuration errors print `spanbert-train: error: <message>`, exit 1.
"""

import glob
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official.modeling.hyperparams import params_dict
from official_spanbert import checkpoint_recovery
from official_spanbert import run_lock
from official_spanbert import train as train_lib
from conftest import REPO, tiny_params

TIMEOUT_S = 300


def _env():
  """This process's sys.path (checkout or Bazel runfiles), quiet TF logs."""
  return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
              TF_CPP_MIN_LOG_LEVEL="3")


def _train_cmd(config, model_dir, *flags):
  return [sys.executable, "-m", "official_spanbert.train",
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
    assert first.wait(timeout=TIMEOUT_S) == 128 + signal.SIGTERM
    assert not os.path.exists(lock)  # released on the way out
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
  assert f"Resuming from {model_dir}/ckpt-4" in caplog.text
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


@pytest.mark.parametrize("override,message,flags", [
    ("task.train_data.masking_rate=1.5",
     r"masking_rate must be in \(0, 1\), got 1.5$", ()),
    ("task.train_data.masking_rate=abc",
     r"task.train_data.masking_rate must be a number, got 'abc'$", ()),
    ("task.train_data.input_path=/nonexistent/r-*.tfrecord",
     r"/nonexistent/r-\*.tfrecord does not match any files", ()),
    ("task.train_data.masking_rate=1.5",
     r"masking_rate must be in \(0, 1\), got 1.5$", ("--verbosity=1",)),
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
