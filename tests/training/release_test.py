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


def test_the_exit_waits_for_collections_not_for_iterator_ends(tmp_path):
  """An iterator's end writes nothing: the process ends while one waits. A
  collection (a run's garbage: e.g. a summary writer's last flush) is
  waited for."""
  script = textwrap.dedent("""
      import sys, time
      from official_spanbert.training import release

      class Slow:
        def __del__(self):
          time.sleep(float(sys.argv[2]))
          print("ended", flush=True)

      garbage = [Slow()]
      if sys.argv[1] == "collect":
        garbage[0].cycle = garbage[0]
        del garbage[:]
      release.in_background(garbage, collect=sys.argv[1] == "collect")
  """)
  path = tmp_path / "exit.py"
  path.write_text(script)
  seconds = {}
  for kind, sleep in (("iterator", "60"), ("collect", "1")):
    start = time.monotonic()
    out = subprocess.run([sys.executable, str(path), kind, sleep], cwd=REPO,
                         env=train_helpers.env(), capture_output=True, text=True, timeout=50,
                         check=True).stdout
    seconds[kind] = time.monotonic() - start
    assert out == ("ended\n" if kind == "collect" else ""), kind
  assert seconds["iterator"] < 30
