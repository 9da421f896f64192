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

"""The demo's flags, checked before any work (issue 55, items 4 and 7).

`--train_steps=0`, `-1` or `20` (the head warm-up's count), an
`--output_dir` that is a file or read-only were ~30-line tracebacks, some
after minutes of work; a second demo started in the same --output_dir
deleted the first one's live model directory.
"""

import os
import subprocess
import sys

import pytest

from official_spanbert.demo import pipeline
from official_spanbert.utils import run_lock
from conftest import REPO
from train_helpers import read_only_cmd


@pytest.fixture
def demo(capsys, monkeypatch):
  """Runs pipeline.main with flags; returns (exit status, stderr lines).
  Any work past the checks fails the test."""
  def no_work(*args, **kwargs):
    raise AssertionError("the demo started working")

  monkeypatch.setattr(pipeline, "run_demo", no_work)
  monkeypatch.setattr(pipeline, "run_continued", no_work)

  def run(*flags):
    pipeline.FLAGS.unparse_flags()
    # Each flag parsed alone: FLAGS(argv) would also run the validators of
    # every other tool imported in this process (spanbert-convert-checkpoint
    # requires --direction), which the demo binary never registers.
    for flag in flags:
      name, _, value = flag[2:].partition("=")
      pipeline.FLAGS[name].parse(value)
    pipeline.FLAGS.mark_as_parsed()
    try:
      rc = pipeline.main([])
    finally:
      pipeline.FLAGS.unparse_flags()
    return rc, capsys.readouterr().err.splitlines()
  return run


@pytest.mark.parametrize("flags,message", [
    (["--train_steps=0"], "--train_steps=0: give a positive number of "
     "steps, or leave it out (picked from the measured throughput)"),
    (["--train_steps=-1", "--act=scratch"], "--train_steps=-1: give a "
     "positive number of steps, or leave it out (picked from the measured "
     "throughput)"),
    (["--train_steps=20"], "--train_steps=20: the second act needs more "
     "than its 20 head warm-up steps (--train_steps counts them too)"),
    (["--train_steps=30", "--warmup_steps=30", "--act=both"],
     "--train_steps=30: the second act needs more than its 30 head warm-up "
     "steps (--train_steps counts them too)"),
    (["--warmup_steps=0"], "--warmup_steps=0: the head warm-up needs at "
     "least 1 step"),
], ids=["zero", "negative", "warmup", "warmup_flag", "no_warmup"])
def test_step_counts_that_cannot_run_are_one_line(demo, tmp_path, flags,
                                                  message):
  rc, err = demo(f"--output_dir={tmp_path / 'out'}", *flags)
  assert rc == 1
  assert err == [f"spanbert-demo: error: {message}"]
  assert not (tmp_path / "out").exists()


def test_an_output_dir_that_is_a_file_is_one_line(demo, tmp_path):
  path = tmp_path / "out"
  path.write_text("mine\n")
  rc, err = demo(f"--output_dir={path}", "--train_steps=40")
  assert rc == 1
  assert err == [f"spanbert-demo: error: --output_dir={path} is a file, not "
                 "a directory; choose a directory (new or the demo's own)"]
  assert path.read_text() == "mine\n"


def test_a_second_demo_in_the_same_output_dir_is_refused(demo, tmp_path):
  """The first one's lock (here this process's): its model dir stays."""
  out = tmp_path / "out"
  (out / "model").mkdir(parents=True)
  (out / "model" / "ckpt-20.index").write_text("live")
  lock = str(out / pipeline.LOCK_FILE)
  record = run_lock.acquire_file(lock, "demo", str(out))
  try:
    rc, err = demo(f"--output_dir={out}", "--train_steps=40")
  finally:
    run_lock.release_file(lock, record)
  assert rc == 1
  assert err == [
      f"spanbert-demo: error: {out} is in use by another demo: pid "
      f"{record['pid']} on {record['host']}, started {record['started']} "
      f"(lock file {lock}; delete it if that run is no longer running)"]
  assert (out / "model" / "ckpt-20.index").read_text() == "live"


def test_the_lock_is_released_when_the_demo_ends(demo, tmp_path,
                                                 monkeypatch):
  out = tmp_path / "out"
  seen = []
  monkeypatch.setattr(pipeline, "run_continued", lambda *a, **k: seen.append(
      os.path.exists(out / pipeline.LOCK_FILE)))
  rc, err = demo(f"--output_dir={out}", "--train_steps=40")
  assert (rc, err, seen) == (0, [], [True])
  assert os.listdir(out) == []


def test_a_read_only_output_dir_is_one_line_before_any_work(tmp_path):
  out = str(tmp_path / "out")
  os.makedirs(out)
  cmd = read_only_cmd(out, [sys.executable, "-m", "official_spanbert.demo",
                            f"--output_dir={out}", "--train_steps=40"])
  result = subprocess.run(
      cmd, env=dict(os.environ, PYTHONPATH=REPO, TF_CPP_MIN_LOG_LEVEL="3"),
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 1, result.stderr[-2000:]
  reason = ("Read-only file system" if os.geteuid() == 0
            else "Permission denied")
  assert result.stderr.splitlines() == [
      f"spanbert-demo: error: --output_dir={out} is not writable ({reason}); "
      "choose a writable directory"], result.stderr[-2000:]
  assert result.stdout == ""
