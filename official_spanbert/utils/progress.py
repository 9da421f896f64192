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

"""Progress a person reads on long work: stage lines, ETA, one summary line.

The one progress reporter of the package (tools, converters, trainer,
corpus readers). Not tqdm, measured with tqdm 4.70.1: on a stream that is
not a terminal (a log file, a pipe, a scheduler's capture) tqdm either
prints nothing (`disable=None`) or joins its redraws with carriage returns
into one physical line (100 updates over 5 s at `mininterval=1`: 7 redraws,
386 characters, 1 newline), where this writes one whole line each tenth
(tests/utils/progress_test.py), or absl log lines in verbose runs. On a
terminal both redraw one line. Sinks and line format: docs/architecture.md,
"What a command prints".

Example:
  report = progress.Progress("squad features")
  report.start(len(questions), "questions")
  for q in questions:
    report.advance()
  report.done("wrote 12,032 features to eval.tf_record")
"""

import datetime
import sys
import time
from typing import Optional, TextIO

SINKS = ("stream", "log", "auto")
REFRESH_S = 0.25  # least time between two refreshes of a terminal line
MB = 10**6


def megabytes(num_bytes: int) -> int:
  """The MB a reader's progress counts for `num_bytes` (at least 1)."""
  return max(1, -(-num_bytes // MB))


def duration(seconds: float) -> str:
  """'12.3 s' under a minute, else H:MM:SS."""
  if seconds < 60:
    return f"{seconds:.1f} s"
  return str(datetime.timedelta(seconds=round(seconds)))


class Progress:
  """Progress of one piece of work (see the module docstring).

  Args:
    label: the line prefix.
    enabled: False: print nothing.
    summary: print the summary line at the end (a caller that prints its
      own, e.g. a command-line tool on stdout, passes False).
    stream: where "stream" lines go (default: sys.stderr at the time of
      writing).
    sink: "stream", "log" or "auto" (see the module docstring).
    interval_s: also report when this many seconds passed since the last
      line (None: only every 10%).
  """

  def __init__(self, label: str, enabled: bool = True, summary: bool = True,
               stream: Optional[TextIO] = None, sink: str = "stream",
               interval_s: Optional[float] = None):
    if sink not in SINKS:
      raise ValueError(f"sink={sink!r}: expected one of {SINKS}")
    self.label = label
    self.enabled = enabled
    self._summary = summary
    self._stream = stream
    self._sink = sink
    self._interval_s = interval_s
    self._started = time.monotonic()
    self._open = False  # a refreshed terminal line awaits its newline
    self._last_write = 0.0
    self.start(0)

  # -- where lines go -------------------------------------------------------

  def _resolved_sink(self) -> str:
    if self._sink != "auto":
      return self._sink
    from absl import logging  # pylint: disable=g-import-not-at-top
    return "log" if logging.level_info() else "stream"

  def _out(self) -> TextIO:
    return self._stream or sys.stderr

  def _refreshing(self) -> bool:
    """Whether counted lines are refreshed in place (a terminal stream)."""
    if self._resolved_sink() != "stream":
      return False
    isatty = getattr(self._out(), "isatty", None)
    try:
      return bool(isatty and isatty())
    except ValueError:  # a closed stream
      return False

  def _write(self, line: str, refresh: bool = False):
    """Writes a line; `refresh`: in place of the open one, on a terminal."""
    if not self.enabled:
      return
    self._last_write = time.monotonic()
    if self._resolved_sink() == "log":
      from absl import logging  # pylint: disable=g-import-not-at-top
      logging.info("%s", line)
      return
    stream = self._out()
    if refresh:
      pad = max(0, getattr(self, "_open_len", 0) - len(line))
      stream.write("\r" + line + " " * pad)
      self._open, self._open_len = True, len(line)
    else:
      stream.write(("\n" if self._open else "") + line + "\n")
      self._open = False
    stream.flush()

  def close_line(self):
    """Ends a refreshed terminal line (the next output starts below it)."""
    if self._open and self.enabled:
      stream = self._out()
      stream.write("\n")
      stream.flush()
    self._open = False

  # -- what is reported -----------------------------------------------------

  def _prefix(self) -> str:
    return f"{self.label} [{time.monotonic() - self._started:.1f} s]"

  def note(self, text: str):
    """A line on what the work does now, with the time so far."""
    self._write(f"{self._prefix()} {text}")

  def start(self, total: int, what: str = "tensors", batch: int = 0,
            done: int = 0, each: bool = False):
    """Begins counting `total` units (0: unknown).

    Args:
      total: the units of the phase (e.g. the tensors to convert).
      what: their name in the line.
      batch: examples a unit: adds "N examples/s" to the line.
      done: units already done (a resumed run), left out of the rate.
      each: report every advance, not every 10%.
    """
    self._total, self._done, self._what = total or 0, done, what
    self._batch, self._each = batch, each
    self._shown = (10 * done // self._total) if self._total else 0
    self._phase_start = time.monotonic()
    self._counted = 0  # units and seconds counted since start()
    self._timed_first = None  # (units, seconds) of the first timed advance
    self._timed_later = [0, 0.0]  # of the timed advances after it
    self._detail = ""

  def _timing(self):
    """(units, seconds) the rate is taken from (see rate())."""
    if self._timed_first is not None:
      return (self._timed_later if self._timed_later[0]
              else self._timed_first)
    return self._counted, time.monotonic() - self._phase_start

  def rate(self) -> float:
    """Units per second of this phase.

    With timed advances (`advance(seconds=...)`), from their seconds alone,
    leaving out the first once a later one exists (it e.g. traced the train
    function); else from the wall time since start().
    """
    units, seconds = self._timing()
    return units / seconds if seconds > 0 else 0.0

  def line(self) -> str:
    """The progress line: done/total, ETA, rate, the caller's detail."""
    text = f"{self._prefix()} {self._done}"
    if self._total:
      text += (f"/{self._total} {self._what} "
               f"({100 * self._done // self._total}%)")
    else:
      text += f" {self._what}"
    units, seconds = self._timing()
    if self._total and units > 0:
      left = max(0, self._total - self._done)
      text += f", ETA {duration(seconds / units * left)}"
    if self._batch:
      text += f" | {self.rate() * self._batch:.1f} examples/s"
    if self._detail:
      text += f" | {self._detail}"
    return text

  def advance(self, n: int = 1, seconds: Optional[float] = None,
              detail: str = ""):
    """Counts `n` units; reports when another tenth is done (see above).

    Args:
      n: units done.
      seconds: the time they took (default: the wall time since start()).
      detail: text at the end of the line (e.g. "loss 6.12").
    """
    self._done += n
    self._counted += n
    if seconds is not None:
      if self._timed_first is None:
        self._timed_first = (n, seconds)
      else:
        self._timed_later[0] += n
        self._timed_later[1] += seconds
    if detail:
      self._detail = detail
    finished = bool(self._total) and self._done >= self._total
    if self._refreshing():
      now = time.monotonic()
      if finished or self._each or now - self._last_write >= REFRESH_S:
        self._write(self.line(), refresh=True)
        if finished:
          self.close_line()
      return
    tenth = min(10, 10 * self._done // self._total) if self._total else 0
    due = self._each or tenth > self._shown or (
        self._interval_s is not None and
        time.monotonic() - max(self._last_write, self._phase_start) >=
        self._interval_s)
    if due:
      self._shown = max(self._shown, tenth)
      self._write(self.line())

  def advance_to(self, done: int):
    """Counts up to `done` units in all (e.g. the MB a reader has read)."""
    if done > self._done:
      self.advance(done - self._done)

  @property
  def total(self) -> int:
    """Units of this phase (`start`'s `total`; 0: unknown)."""
    return self._total

  @total.setter
  def total(self, total: int):
    """A new total for the phase under way (e.g. a run that goes on
    further): the tenths already reported stay reported."""
    self._total = total or 0
    self._shown = (10 * self._done // self._total) if self._total else 0

  @property
  def count(self) -> int:
    """Units done in this phase (with `start`'s `done`)."""
    return self._done

  @property
  def batch(self) -> int:
    """Examples a unit (`start`'s `batch`)."""
    return self._batch

  def elapsed(self) -> float:
    """Seconds since the work started."""
    return time.monotonic() - self._started

  def done(self, summary: str):
    """The one summary line: what was written where."""
    if self._summary:
      self._write(summary)


def _register_log_frames():
  """absl's log lines name the caller of Progress, not progress.py."""
  from absl import logging  # pylint: disable=g-import-not-at-top
  for name in ("_write", "note", "advance", "done"):
    logging.ABSLLogger.register_frame_to_skip(__file__, name)


_register_log_frames()
