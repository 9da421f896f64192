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


"""train_lib's release of a finished run's garbage (release_in_background):
a finished run's tf.data iterator ends only after tf.data's autotuning
thread wakes, up to about a minute, so run() collects it on a thread of its
own."""

import gc
import threading

import pytest

from official_spanbert.training import train_lib


def test_unreachable_cycles_are_finalised_on_the_release_thread():
  finalised = []

  class Node:

    def __del__(self):
      finalised.append(threading.current_thread().name)

  # An earlier test's release may still be collecting: a gc.collect() that
  # starts during another returns at once, leaving this cycle alone. (Its
  # iterator ends, up to a minute each, do not matter here: not waited for.)
  train_lib.join_releases(collecting_only=True)
  gc.collect()  # earlier tests' cycles, whose finalisers may be slow
  gc.disable()  # no automatic collection on this thread in between
  try:
    cycle = [Node(), Node()]
    cycle[0].other, cycle[1].other = cycle[1], cycle[0]
    del cycle
    release = train_lib.release_in_background()
    assert train_lib.join_releases(timeout=60, collecting_only=True) >= 0
  finally:
    gc.enable()
  assert not release.is_alive()
  assert finalised == ["release-training-run"] * 2
  # No collection left to wait for.
  assert train_lib.join_releases(collecting_only=True) < 1


def test_run_starts_a_release_as_it_returns(monkeypatch):
  """Also when the run fails: its frames' garbage is the caller's then."""
  started = []
  monkeypatch.setattr(train_lib, "release_in_background",
                      lambda: started.append(True))

  def failing(*args):
    raise ValueError("bad config")

  monkeypatch.setattr(train_lib, "_run", failing)
  with pytest.raises(ValueError, match="^bad config$"):
    train_lib.run(None, "/nonexistent")
  assert started == [True]
