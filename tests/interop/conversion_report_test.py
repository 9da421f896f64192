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

"""Conversion progress (interop/conversion_report.py): lines with an ETA, a summary."""

import io
import re

from official_spanbert.interop import conversion_report


def _lines(stream):
  return stream.getvalue().splitlines()


def test_a_line_about_every_tenth_with_an_eta_then_the_summary():
  out = io.StringIO()
  report = conversion_report.ConversionProgress("hf_to_tf", stream=out)
  report.note("read 205 tensors; building the model")
  report.start(205)
  for _ in range(205):
    report.advance()
  result = report.finish(conversion_report.ConversionResult(
      output="/tmp/out", items=["encoder", "masked_lm"], tensors=205,
      bytes_written=440_123_456))
  lines = _lines(out)
  assert re.fullmatch(r"hf_to_tf \[\d+\.\d s\] read 205 tensors; building "
                      r"the model", lines[0])
  ticks = lines[1:-1]
  assert len(ticks) == 10
  for tenth, line in enumerate(ticks, 1):
    done = re.fullmatch(r"hf_to_tf \[\d+\.\d s\] (\d+)/205 tensors "
                        r"\((\d+)%\), ETA \d+\.\d s", line)
    assert done, line
    assert int(done.group(1)) * 10 // 205 == tenth
  assert ticks[-1].startswith("hf_to_tf [") and "205/205" in ticks[-1]
  assert result.direction == "hf_to_tf" and result.seconds >= 0
  assert lines[-1] == result.summary()
  assert re.fullmatch(r"hf_to_tf: wrote encoder, masked_lm \(205 tensors, "
                      r"440\.1 MB\) to /tmp/out in \d+\.\d s", lines[-1])


def test_few_tensors_each_get_a_line_and_quiet_prints_nothing():
  out = io.StringIO()
  report = conversion_report.ConversionProgress("tf_to_hf", stream=out,
                                                summary=False)
  report.start(3)
  for _ in range(3):
    report.advance()
  report.finish(conversion_report.ConversionResult(output="o", items=["encoder"]))
  lines = _lines(out)  # no summary: the caller prints its own
  assert [re.sub(r"\[[\d.]+ s\]", "[t]", re.sub(r"ETA [\d.]+ s", "ETA e",
                                                  line)) for line in lines
          ] == [f"tf_to_hf [t] {n}/3 tensors ({p}%), ETA e"
                for n, p in ((1, 33), (2, 66), (3, 100))]
  assert lines[-1].endswith("ETA 0.0 s")
  quiet = io.StringIO()
  report = conversion_report.reporter(False, "hf_to_tf")
  report._stream = quiet  # pylint: disable=protected-access
  report.note("x")
  report.start(10)
  report.advance(10)
  report.finish(conversion_report.ConversionResult(output="o", items=[]))
  assert quiet.getvalue() == ""
  given = conversion_report.ConversionProgress("hf_to_tf")
  assert conversion_report.reporter(given, "ignored") is given
