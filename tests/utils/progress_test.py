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

"""official_spanbert/utils/progress.py, the package's one progress reporter:
stage lines, ETA every 10% (or one refreshed line on a terminal), rates,
sinks."""

import io
import re

from absl import logging
import pytest

from official_spanbert.utils import progress


class _Clock:
  """A monotonic clock the test moves."""

  def __init__(self, monkeypatch, start=100.0):
    self.now = start
    monkeypatch.setattr(progress.time, "monotonic", lambda: self.now)


class _Tty(io.StringIO):

  def isatty(self):
    return True


def test_counted_phase_reports_tenths_with_eta_then_one_summary():
  out = io.StringIO()
  report = progress.Progress("squad features", stream=out)
  report.note("reading dev.json")
  report.start(40, "questions")
  for _ in range(40):
    report.advance()
  report.done("wrote 41 records to eval.tf_record")
  lines = out.getvalue().splitlines()
  assert re.fullmatch(r"squad features \[\d+\.\d s\] reading dev.json",
                      lines[0])
  counted = lines[1:-1]
  assert len(counted) == 10
  assert re.fullmatch(r"squad features \[\d+\.\d s\] 4/40 questions \(10%\), "
                      r"ETA \d+\.\d s", counted[0])
  assert "40/40 questions (100%)" in counted[-1]
  assert lines[-1] == "wrote 41 records to eval.tf_record"


def test_disabled_or_summary_off_prints_accordingly():
  out = io.StringIO()
  quiet = progress.Progress("x", enabled=False, stream=out)
  quiet.note("a")
  quiet.start(2)
  quiet.advance(2)
  quiet.done("summary")
  assert out.getvalue() == ""
  out = io.StringIO()
  no_summary = progress.Progress("x", summary=False, stream=out)
  no_summary.note("stage")
  no_summary.done("summary")
  assert out.getvalue().count("\n") == 1 and "stage" in out.getvalue()


def test_timed_advances_leave_the_first_out_of_the_rate(monkeypatch):
  """A training run: the first loop also traced the train function."""
  clock = _Clock(monkeypatch)
  out = io.StringIO()
  report = progress.Progress("train", stream=out)
  report.start(12, "steps", batch=8, each=True)
  clock.now += 10.0
  report.advance(4, seconds=10.0, detail="loss 7.500")
  clock.now += 2.0
  report.advance(4, seconds=2.0)  # later loops alone: 2 steps/s
  clock.now += 2.0
  report.advance(4, seconds=2.0, detail="loss 6.250")
  assert out.getvalue().splitlines() == [
      "train [10.0 s] 4/12 steps (33%), ETA 20.0 s | 3.2 examples/s | "
      "loss 7.500",
      "train [12.0 s] 8/12 steps (66%), ETA 2.0 s | 16.0 examples/s | "
      "loss 7.500",
      "train [14.0 s] 12/12 steps (100%), ETA 0.0 s | 16.0 examples/s | "
      "loss 6.250"]


def test_a_resumed_run_counts_from_its_step_and_long_etas_read_as_hms(
    monkeypatch):
  clock = _Clock(monkeypatch)
  out = io.StringIO()
  report = progress.Progress("train", stream=out)
  report.start(10000, "steps", done=5000)
  clock.now += 50.0
  report.advance(500, seconds=50.0)  # still in the sixth tenth: no line
  clock.now += 50.0
  report.advance(500, seconds=50.0)  # 10 steps/s: 400 s left
  assert out.getvalue() == (
      "train [100.0 s] 6000/10000 steps (60%), ETA 0:06:40\n")


def test_a_run_that_goes_on_further_counts_to_its_new_total(monkeypatch):
  """A training run whose steps are set at a pause (train_lib.Pause): the
  line counts to the new total, from the tenth it had reached."""
  clock = _Clock(monkeypatch)
  out = io.StringIO()
  report = progress.Progress("train", stream=out)
  report.start(320, "steps")
  clock.now += 20.0
  report.advance(20, seconds=20.0)  # 6%: no line yet
  report.total = 40
  assert report.total == 40 and out.getvalue() == ""
  clock.now += 4.0
  report.advance(4, seconds=4.0)  # 60% of the new total
  assert out.getvalue() == "train [24.0 s] 24/40 steps (60%), ETA 16.0 s\n"


def test_unknown_total_reports_every_interval(monkeypatch):
  """An evaluation pass of unknown length: a line every 30 s."""
  clock = _Clock(monkeypatch, start=0.0)
  out = io.StringIO()
  report = progress.Progress("eval", stream=out, interval_s=30.0)
  report.start(0, "batches", batch=4)
  for _ in range(100):
    clock.now += 1.0
    report.advance()
  lines = out.getvalue().splitlines()
  assert len(lines) == 3  # at 30, 60 and 90 s
  assert lines[0] == "eval [30.0 s] 30 batches | 4.0 examples/s"
  assert report.count == 100 and report.batch == 4


def test_a_terminal_gets_one_refreshed_line(monkeypatch):
  clock = _Clock(monkeypatch)
  out = _Tty()
  report = progress.Progress("train", stream=out)
  report.start(100, "steps")
  for _ in range(100):
    clock.now += 1.0
    report.advance()
  report.done("trained to step 100")
  text = out.getvalue()
  assert text.count("\n") == 2  # the finished line, then the summary
  assert text.count("\r") == 100  # every advance (1 s apart) redraws it
  assert text.endswith("100/100 steps (100%), ETA 0.0 s\n"
                       "trained to step 100\n")


def test_auto_sink_logs_when_absl_info_is_on(monkeypatch):
  logged = []
  monkeypatch.setattr(logging, "info", lambda fmt, *a: logged.append(fmt % a))
  out = io.StringIO()
  report = progress.Progress("eval", stream=out, sink="auto")
  monkeypatch.setattr(logging, "level_info", lambda: True)
  report.start(2, "batches")
  report.advance(2)
  monkeypatch.setattr(logging, "level_info", lambda: False)
  report.note("quiet")
  assert [l.split("] ", 1)[1] for l in logged] == [
      "2/2 batches (100%), ETA 0.0 s"]
  assert out.getvalue().endswith("] quiet\n")
  with pytest.raises(ValueError, match="sink"):
    progress.Progress("x", sink="file")


def test_duration_reads_seconds_then_hms():
  assert progress.duration(9.96) == "10.0 s"
  assert progress.duration(59.0) == "59.0 s"
  assert progress.duration(3725) == "1:02:05"


def test_a_reader_counts_whole_mb_up_to_its_running_total():
  out = io.StringIO()
  report = progress.Progress("count words", stream=out, summary=False)
  report.start(progress.megabytes(2_500_000), "MB read")
  assert report.total == 3 and progress.megabytes(10) == 1
  for read in (400_000, 1_100_000, 1_200_000, 2_500_000):
    report.advance_to(read // progress.MB)
  report.advance_to(report.total)
  assert [l.split("] ", 1)[1].split(",")[0] for l in out.getvalue(
      ).splitlines()] == ["1/3 MB read (33%)", "2/3 MB read (66%)",
                          "3/3 MB read (100%)"]
