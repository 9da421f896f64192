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

  report = progress.Progress("squad features")
  report.note("reading dev-v1.1.json")
  report.start(len(questions), "questions")
  for q in questions:
    ...
    report.advance()
  report.done("wrote 12,032 features to eval.tf_record")

Lines go to stderr and start with the label and the time so far; a counted
phase reports about every 10% with an ETA from the rate so far.
"""

import sys
import time
from typing import Optional, TextIO


class Progress:
  """Progress of one piece of work, on stderr.

  Lines start with the label and the time so far: one for each stage
  (note), one about every 10% of a counted phase with an ETA (from the rate
  so far), and at the end one summary line (done).

  Args:
    label: the line prefix.
    enabled: False: print nothing.
    summary: print the summary line at the end (a caller that prints its
      own, e.g. a command-line tool on stdout, passes False).
    stream: where to write (default: sys.stderr at the time of writing).
  """

  def __init__(self, label: str, enabled: bool = True, summary: bool = True,
               stream: Optional[TextIO] = None):
    self.label = label
    self.enabled = enabled
    self._summary = summary
    self._stream = stream
    self._started = time.monotonic()
    self._total = 0
    self._done = 0
    self._shown = 0  # tenths of the total already reported
    self._what = "tensors"
    self._phase_start = self._started

  def _prefix(self) -> str:
    return f"{self.label} [{time.monotonic() - self._started:.1f} s]"

  def _write(self, line: str):
    if self.enabled:
      stream = self._stream or sys.stderr
      stream.write(line + "\n")
      stream.flush()

  def note(self, text: str):
    """A line on what the conversion does now, with the time so far."""
    self._write(f"{self._prefix()} {text}")

  def start(self, total: int, what: str = "tensors"):
    """Begins counting `total` units (e.g. the tensors to convert)."""
    self._total, self._done, self._shown = total, 0, 0
    self._what = what
    self._phase_start = time.monotonic()

  def advance(self, n: int = 1):
    """Counts `n` units; reports when another tenth is done."""
    self._done += n
    if not self._total:
      return
    tenth = min(10, self._done * 10 // self._total)
    if tenth <= self._shown:
      return
    self._shown = tenth
    rate = (time.monotonic() - self._phase_start) / self._done
    self._write(f"{self._prefix()} {self._done}/{self._total} {self._what} "
                f"({100 * self._done // self._total}%), "
                f"ETA {rate * (self._total - self._done):.1f} s")

  def elapsed(self) -> float:
    """Seconds since the work started."""
    return time.monotonic() - self._started

  def done(self, summary: str):
    """The one summary line: what was written where."""
    if self._summary:
      self._write(summary)
