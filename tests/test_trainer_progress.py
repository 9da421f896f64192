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

"""Progress lines of training loops and evaluation passes (issue 16)."""

from absl import logging

from official_spanbert import trainer


def test_eval_progress_reports_tenths_with_eta_and_a_summary(monkeypatch):
  clock = [100.0]
  monkeypatch.setattr(trainer.time, "time", lambda: clock[0])
  lines = []
  monkeypatch.setattr(logging, "info", lambda fmt, *a: lines.append(fmt % a))
  progress = trainer._EvalProgress(total=20, batch=8)
  for _ in range(20):
    clock[0] += 0.5
    progress.step()
  assert len(lines) == 10  # every 10% of 20 batches
  assert lines[0] == ("eval progress: batch 2/20 (10%) | 16.0 examples/s | "
                      "ETA 0:00:09")
  assert lines[-1].startswith("eval progress: batch 20/20 (100%)")
  assert "ETA" not in lines[-1]
  assert progress.summary() == "eval: 20 batches (160 examples) in 10.0 s"


def test_eval_progress_without_a_total_reports_every_30_seconds(monkeypatch):
  clock = [0.0]
  monkeypatch.setattr(trainer.time, "time", lambda: clock[0])
  lines = []
  monkeypatch.setattr(logging, "info", lambda fmt, *a: lines.append(fmt % a))
  progress = trainer._EvalProgress(total=None, batch=4)
  for _ in range(100):
    clock[0] += 1.0
    progress.step()
  assert len(lines) == 3  # at 30, 60 and 90 s
  assert lines[0] == "eval progress: batch 30 | 4.0 examples/s"
