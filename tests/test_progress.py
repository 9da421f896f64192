"""official_spanbert/progress.py: stage lines, ETA every 10%, summary."""

import io
import re

from official_spanbert import progress


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
