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

"""run_lock.py on filelock: what its docstring says filelock does, checked.

The binaries' messages are tested where they are raised (test_train_resume,
test_input_reliability, test_demo_flags, test_stage_runner,
test_conversion_reliability).
"""

import logging
import os
import socket
import subprocess

import pytest

from official_spanbert.utils import run_lock

from conftest import dead_holder


def test_a_dead_holder_is_taken_over_with_a_warning(tmp_path, caplog):
  lock = str(tmp_path / "x.lock")
  dead = dead_holder(lock)
  with caplog.at_level(logging.WARNING):
    with run_lock.hold_file(lock, "records run", "x"):
      assert run_lock.holder(lock)["pid"] == os.getpid()
  assert (f"Taking over the lock {lock} of a records run that is no longer "
          f"running: pid {dead} on {socket.gethostname()}, started "
          ) in caplog.text
  assert os.listdir(tmp_path) == []


def test_a_live_pid_of_another_process_is_not_the_holder(tmp_path, caplog):
  """A recycled pid: alive, but started after the holder wrote its record."""
  lock = str(tmp_path / "x.lock")
  dead_holder(lock)
  with open(lock, encoding="utf-8") as f:
    _, host, start, _ = f.read().split("\n")
  with subprocess.Popen(["sleep", "60"]) as other:
    try:
      with open(lock, "w", encoding="utf-8") as f:
        f.write(f"{other.pid}\n{host}\n{start}\n")
      with caplog.at_level(logging.WARNING):
        held = run_lock.acquire_file(lock, "run", "x")
      assert held["pid"] == os.getpid()
      assert f"no longer running: pid {other.pid}" in caplog.text
      run_lock.release_file(lock, held)
    finally:
      other.kill()


def test_another_host_is_never_taken_over(tmp_path):
  lock = str(tmp_path / "x.lock")
  with open(lock, "w", encoding="utf-8") as f:
    f.write("1234\nother-host\n")
  with pytest.raises(run_lock.LockedError,
                     match=r"^x is in use by another run: pid 1234 on "
                     r"other-host, started [^;]+ \(lock file "):
    run_lock.acquire_file(lock, "run", "x")
  assert os.path.exists(lock)


def test_a_replaced_lock_is_left_with_a_warning(tmp_path, caplog):
  lock = str(tmp_path / "x.lock")
  held = run_lock.acquire_file(lock, "run", "x")
  os.remove(lock)
  with open(lock, "w", encoding="utf-8") as f:
    f.write("1234\nother-host\n")
  with caplog.at_level(logging.WARNING):
    run_lock.release_file(lock, held)
  assert f"The lock {lock} no longer names this run" in caplog.text
  with open(lock, encoding="utf-8") as f:
    assert f.read() == "1234\nother-host\n"


def test_a_remote_path_is_not_locked(caplog):
  with caplog.at_level(logging.WARNING):
    assert run_lock.acquire_file("gs://b/x.lock", "run", "gs://b/x") is None
  assert "gs://b/x is not a local path" in caplog.text
