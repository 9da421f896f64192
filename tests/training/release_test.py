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

"""release: iterators ended on threads of their own (an autotuned tf.data
iterator's end waits up to a minute), and what the exit waits for."""

import gc
import subprocess
import sys
import textwrap
import threading
import time
import weakref

from official_spanbert.training import release

from conftest import REPO
import train_helpers


class _Data:
  """A dataset whose iterators record the thread they end on."""

  def __init__(self, n):
    self.n, self.ended = n, []

  def __iter__(self):
    iterator = (i for i in range(self.n))
    weakref.finalize(iterator, lambda: self.ended.append(
        threading.current_thread().name))
    return iterator


def test_batches_end_their_iterator_on_a_release_thread():
  exhausted, left = _Data(3), _Data(100)
  assert list(release.batches(exhausted)) == [0, 1, 2]
  for i in release.batches(left):
    if i == 1:
      break
  assert release.join(10) < 10
  assert exhausted.ended == left.ended == ["release-iterator"]


_EXIT_SCRIPT = textwrap.dedent("""
    import sys, time
    from official_spanbert.training import release

    class Slow:
      def __del__(self):
        time.sleep(float(sys.argv[2]))
        print("ended", flush=True)

    garbage = [Slow()]
    if sys.argv[1] == "collect":  # a cycle: only gc.collect ends it
      garbage[0].cycle = garbage[0]
      del garbage[:]
    release.in_background(garbage, collect=sys.argv[1] == "collect")
    if sys.argv[3] == "exit_now":
      release.exit_now(3)
    if sys.argv[3] == "exit_now_message":  # as sys.exit("...") does
      release.exit_now("a message")
""")


def _exit(tmp_path, kind, sleep, how):
  """(stdout, exit status, seconds) of a process that releases a `kind`
  whose end takes `sleep` seconds, then exits `how`."""
  path = tmp_path / "exit.py"
  path.write_text(_EXIT_SCRIPT)
  start = time.monotonic()
  # The real interpreter: what is tested is its exit, and a child forked
  # from the session's server (tests/fork_server.py) ends with os._exit.
  result = subprocess.run([sys.executable, str(path), kind, sleep, how],
                          cwd=REPO, env=train_helpers.env(fresh_python=True),
                          capture_output=True, text=True, timeout=50,
                          check=False)
  return result.stdout, result.returncode, time.monotonic() - start


def test_a_normal_exit_waits_for_every_release(tmp_path):
  """An end still inside TensorFlow when the interpreter tears down aborts
  the process (status -6): the exit waits for it."""
  for kind in ("iterator", "collect"):
    assert _exit(tmp_path, kind, "1", "normal")[:2] == ("ended\n", 0), kind


def test_exit_now_waits_for_collections_not_for_iterator_ends(tmp_path):
  out, code, seconds = _exit(tmp_path, "iterator", "60", "exit_now")
  assert (out, code) == ("", 3) and seconds < 30
  assert _exit(tmp_path, "collect", "1", "exit_now")[:2] == ("ended\n", 3)


def test_exit_now_takes_a_message_as_sys_exit_does(tmp_path):
  path = tmp_path / "exit.py"
  path.write_text(_EXIT_SCRIPT)
  result = subprocess.run(
      [sys.executable, str(path), "collect", "0", "exit_now_message"],
      cwd=REPO, env=train_helpers.env(fresh_python=True),
      capture_output=True, text=True, timeout=50, check=False)
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1] == "a message"


_TRAIN_SCRIPT = textwrap.dedent("""
    import os, sys
    from official_spanbert.training import release

    def exit_now(code=0):
      print("exit_now", code, flush=True)
      os._exit(code)

    release.exit_now = exit_now
    sys.argv = ["spanbert-train"] + sys.argv[1:]
    from official_spanbert.tools import train
    train.run()
    print("returned", flush=True)
""")


def test_spanbert_train_ends_with_exit_now_and_its_status(tmp_path):
  """The binary ends through exit_now (no teardown) with the status the
  run gave: 1 and the one-line error for an unknown experiment."""
  path = tmp_path / "train.py"
  path.write_text(_TRAIN_SCRIPT)
  result = subprocess.run(
      [sys.executable, str(path), "--experiment=spanbert/squad_v3",
       "--mode=train", f"--model_dir={tmp_path / 'run'}"], cwd=REPO,
      env=train_helpers.env(fresh_python=True), capture_output=True,
      text=True, timeout=120, check=False)
  assert result.stdout == "exit_now 1\n", (result.stdout, result.stderr)
  assert result.returncode == 1
  assert result.stderr.strip().startswith(
      "spanbert-train: error: unknown experiment 'spanbert/squad_v3'")


def test_join_collecting_only_leaves_iterator_ends_queued():
  """A test that needs only the collections finished does not wait for an
  earlier iterator's end (tf.data's autotuner: up to a minute)."""
  release.join(10)
  # Earlier tests' unreachable cycles are finalised here, not by the
  # collection timed below (a tf.data iterator in one may take seconds to
  # end: CI at 81c4272 timed out here after the int8 tests).
  gc.collect()
  ended = threading.Event()
  try:
    slow = release.in_background([type("Slow", (), {
        "__del__": lambda self: ended.wait(30)})()])
    collecting = release.in_background([], collect=True)
    assert release.join(30, collecting_only=True) < 5
    assert not collecting.is_alive() and slow.is_alive()
  finally:
    ended.set()
  assert release.join(30) < 5  # the iterator end, joined now
  assert not slow.is_alive()
