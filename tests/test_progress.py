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
