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

"""What the spanbert-train reliability tests share: the binary's command,
a tiny config, a run trained for 8 steps and ways to break one."""

import glob
import os
import shlex
import shutil
import signal
import subprocess
import sys

import pytest
import tensorflow as tf

from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.training import train_lib
from conftest import built_once
from conftest import tiny_params

TIMEOUT_S = 300


def env(fresh_python=False):
  """This process's sys.path (checkout or Bazel runfiles), quiet TF logs.

  fresh_python: the process runs the real interpreter, not a child forked
  from the session's server (conftest.fresh_python, for one process of a
  test: the one whose pid the test compares).
  """
  extra = {"SPANBERT_FRESH_PYTHON": "1"} if fresh_python else {}
  return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
              TF_CPP_MIN_LOG_LEVEL="3", **extra)


def train_cmd(config, model_dir, *flags):
  """spanbert-train on a pretraining config file."""
  return [sys.executable, "-m", "official_spanbert.tools.train",
          "--experiment=spanbert/pretraining", f"--config_file={config}",
          "--mode=train", f"--model_dir={model_dir}", *flags]


def write_config(tmp_path, records, vocab, **kwargs):
  """tmp_path/params.yaml of conftest.tiny_params; returns its path."""
  path = str(tmp_path / "params.yaml")
  params_dict.save_params_dict_to_yaml(tiny_params(records, vocab, **kwargs),
                                       path)
  return path


def event_steps(model_dir):
  """The steps of the mlm_loss summaries, sorted (repeats kept)."""
  steps = []
  for f in glob.glob(os.path.join(model_dir, "train", "events*")):
    for e in tf.compat.v1.train.summary_iterator(f):
      steps += [e.step for v in e.summary.value if v.tag == "mlm_loss"]
  return sorted(steps)


# One run per pytest run (conftest.built_once: not one per xdist worker) for
# the test_train_* files, tasks/pretraining_test.py and
# test_nan_and_empty_results.py; the tests copy it before changing it.
@pytest.fixture(scope="session")
def trained(pretraining_records, cased_vocab, tmp_path_factory):
  """A model_dir trained for 8 steps: ckpt-4 and ckpt-8."""
  def train(model_dir):
    train_lib.run(tiny_params(pretraining_records, cased_vocab, steps=8),
                  model_dir)
  return built_once(tmp_path_factory, "trained_8_steps", train)


def copy_run(model_dir, tmp_path):
  """A copy of a run's model_dir in tmp_path/run."""
  return shutil.copytree(model_dir, str(tmp_path / "run"))


def truncate(path):
  """Cuts a file to half its size; returns the new size."""
  os.truncate(path, os.path.getsize(path) // 2)
  return os.path.getsize(path)


def last_error_line(result):
  """The `spanbert-train: error:` line a failed run ends with."""
  assert result.returncode == 1, result.stderr[-3000:]
  assert "Traceback" not in result.stderr, result.stderr[-3000:]
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("spanbert-train: error: "), last
  return last


class Alarm(Exception):
  """Raised by the alarm fixture."""


@pytest.fixture
def alarm():
  """Interrupts the test after the given seconds (a loop that never ends)."""
  def on_alarm(*_):
    raise Alarm()
  previous = signal.signal(signal.SIGALRM, on_alarm)
  yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
  signal.setitimer(signal.ITIMER_REAL, 0)
  signal.signal(signal.SIGALRM, previous)


def read_only_cmd(model_dir, cmd):
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
