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

"""Finished tf.data iterators and runs, ended on threads of their own.

The end of an autotuned tf.data iterator joins tf.data's autotuning thread
(`tf_data_model`), which sleeps between optimizations for a period that
doubles from 10 ms up to about a minute and is not woken by the iterator's
cancellation (TF 2.20): the end waits out the sleep under way, with no CPU
used and the GIL released -- up to a minute for each autotuned root
iterator, two for a distribution strategy's (docs/demo.md, "The export's
wait"). Ended where the caller goes on, an iterator stops it that long: an
evaluation's (78 s idle between its metrics and a binary's result), a
finished run's (a demo's export, a second run's checkpoint save).

    iterators = [iterator]        # the only reference left
    del iterator
    release.in_background(iterators)

`batches(dataset)` iterates that way; `join()` waits for the threads.

A normal exit waits for them (120 s each): a thread that wakes inside
TensorFlow while the interpreter tears down is ended by pthread_exit, which
aborts the process ("FATAL: exception not rethrown", exit status -6: four
test binaries, 2026-12-07). A binary whose results are written ends with
`exit_now()`: its collections joined, no teardown, no wait for iterator ends.
"""

import atexit
import gc
import os
import sys
import threading
import time
from typing import Iterator, List, Optional, Union

# The threads in_background started, until join: (thread, whether it
# collects).
_RELEASES = []
# exit_now is ending the process: no interpreter teardown follows.
_EXITING = []


def in_background(garbage: Optional[List] = None, collect: bool = False,
                  name: str = "release-iterator") -> threading.Thread:
  """Starts a thread that empties `garbage` (a list holding the last
  references to what is to end, e.g. iterators) and, with `collect`, runs
  gc.collect() (a finished run's reference cycles); returns it.

  Joined at exit (up to 120 s, as `join`); exit_now joins only those that
  collect (what a collection ends, e.g. a summary writer, may still write).
  """
  garbage = garbage if garbage is not None else []

  def release():
    garbage.clear()
    if collect:
      gc.collect()

  thread = threading.Thread(target=release, name=name, daemon=True)
  thread.start()
  _RELEASES.append((thread, collect))
  return thread


def batches(dataset) -> Iterator:
  """Yields `dataset`'s elements; its iterator ends on a thread of its own
  when they are exhausted or the loop is left (break, error).

    for batch in release.batches(dataset.take(10)):
      step(batch)
  """
  iterators = [iter(dataset)]
  try:
    yield from iterators[0]
  finally:
    in_background(iterators)


def join(timeout: Optional[float] = None, at_exit: bool = False,
         collecting_only: bool = False) -> float:
  """Waits for the threads in_background started (each up to `timeout`
  seconds); returns the seconds waited. `at_exit` (run at exit, 120 s each):
  under exit_now, only for those that collect. `collecting_only`: only for
  those that collect; the others (iterator ends, up to a minute each) stay
  to be joined later."""
  start = time.time()
  later = []
  while _RELEASES:
    thread, collect = _RELEASES.pop(0)
    if collecting_only and not collect:
      later.append((thread, collect))
    elif collect or not (at_exit and _EXITING):
      thread.join(timeout)
  _RELEASES[:0] = [(t, c) for t, c in later if t.is_alive()]
  return time.time() - start


def exit_now(code: Union[int, str, None] = 0) -> None:
  """Ends the process with `code` as a normal exit would (non-daemon threads
  joined, atexit functions run, the collections of in_background joined),
  but without the interpreter's teardown (5-20 s of TensorFlow's objects,
  docs/pretraining.md) and without waiting for iterator ends: nothing is
  left inside TensorFlow to wake during a teardown. `code` as sys.exit
  takes it (None: 0; a string: printed to stderr, status 1). For a
  binary's end, once its results are written and closed:

    if __name__ == "__main__":
      main()
      release.exit_now()
  """
  if code is None:
    code = 0
  elif not isinstance(code, int):
    print(code, file=sys.stderr)
    code = 1
  _EXITING.append(True)
  threading._shutdown()  # pylint: disable=protected-access
  atexit._run_exitfuncs()  # pylint: disable=protected-access
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except (AttributeError, OSError, ValueError):
      pass
  os._exit(code)  # pylint: disable=protected-access


atexit.register(join, 120.0, True)
