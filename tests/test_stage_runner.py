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

"""experiments/stage_runner.py resumes a study: stages in the work dir's
manifest or already in the committed results run no process."""

import json
import os
import sys
import types

import pytest

from experiments import stage_runner
from experiments import study_lib
from official_spanbert.utils import run_lock


def test_resume_skips_manifest_and_committed_stages(tmp_path, monkeypatch):
  work_dir = tmp_path / "work"
  work_dir.mkdir()
  (work_dir / "manifest.json").write_text(json.dumps(
      {"stages": {"base": {"result": {"blocks": 3}}}}))
  # This machine's work dir has no record of the pretraining; the committed
  # results have it (its arm's fine-tuning is committed too).
  ran = _fake_study(monkeypatch,
                    lambda s, stage: stage == "pretrain:span",
                    ["base", "pretrain:span", "finetune:span:1", "report"])
  stage_runner.main(["--study=fake_study", "--preset=p",
                     f"--work_dir={work_dir}"])
  assert ran == ["--stages=finetune:span:1,report"]


def _fake_study(monkeypatch, committed=None,
                plan=("base", "finetune:span:1", "report")):
  """A study module of `plan`; returns the --stages of the processes run."""
  study = types.SimpleNamespace(preset=types.SimpleNamespace(
      arms=["span"], seeds=[1]))
  module = types.ModuleType("fake_study")
  module.make_study = lambda preset, work_dir: study
  module.plan = lambda study, arms, seeds: list(plan)
  if committed:
    module.committed = committed
  monkeypatch.setitem(sys.modules, "fake_study", module)
  ran = []

  def run(command, **kwargs):
    del kwargs
    ran.append(next(a for a in command if a.startswith("--stages=")))
    return types.SimpleNamespace(returncode=0)

  monkeypatch.setattr(stage_runner.subprocess, "run", run)
  return ran


# Issue 55, item 7: a corrupt manifest or result file was a traceback naming
# no file, and two runners on one work dir ran the same stage at once.


def _runner(work_dir, capsys):
  """(exit status, stderr lines) of the runner on work_dir."""
  try:
    stage_runner.main(["--study=fake_study", "--preset=p",
                       f"--work_dir={work_dir}"])
    rc = 0
  except SystemExit as e:
    rc = e.code
  return rc, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("content,what", [
    ('{"stages": {"base": {"result": {"blocks": 3}}', "is not valid JSON "
     "(Expecting ',' delimiter: line 1 column 46 (char 45))"),
    ("", "is not valid JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[]", "holds '[]', not a JSON object"),
    ('{"stages": {"base": 3}}', 'has no "stages" object of finished stages '
     "with their results"),
], ids=["truncated", "empty", "list", "no_result"])
def test_a_corrupt_manifest_is_one_line_naming_it(tmp_path, monkeypatch,
                                                  capsys, content, what):
  ran = _fake_study(monkeypatch)
  (tmp_path / "manifest.json").write_text(content)
  rc, err = _runner(tmp_path, capsys)
  assert rc == 1 and ran == []
  assert err == [
      f"stage_runner: error: {tmp_path}/manifest.json {what}; the file is "
      "corrupt: restore it from git if it is committed, or delete it (its "
      "stages then run again)"]
  assert sorted(os.listdir(tmp_path)) == ["manifest.json"]


def test_a_corrupt_result_file_is_one_line_naming_it(tmp_path, monkeypatch,
                                                     capsys):
  result = tmp_path / "results" / "span.json"
  result.parent.mkdir()
  result.write_text('{"squad": [')

  def committed(study, stage):
    del study, stage
    return study_lib.committed(types.SimpleNamespace(
        result_file=lambda arm: str(result)), "finetune:span:1")

  ran = _fake_study(monkeypatch, committed)
  rc, err = _runner(tmp_path / "work", capsys)
  assert rc == 1 and ran == []
  assert len(err) == 1 and err[0].startswith(
      f"stage_runner: error: {result} is not valid JSON ("), err


def test_a_second_runner_on_the_work_dir_is_refused(tmp_path, monkeypatch,
                                                    capsys):
  ran = _fake_study(monkeypatch)
  lock = str(tmp_path / stage_runner.LOCK_FILE)
  record = run_lock.acquire_file(lock, "stage runner", str(tmp_path))
  try:
    rc, err = _runner(tmp_path, capsys)
  finally:
    run_lock.release_file(lock, record)
  assert rc == 1 and ran == []
  assert err == [
      f"stage_runner: error: {tmp_path} is in use by another stage runner: "
      f"pid {record['pid']} on {record['host']}, started "
      f"{record['started']} (lock file {lock}; delete it if that run is no "
      "longer running)"]
  rc, err = _runner(tmp_path, capsys)  # the first one has ended
  assert rc == 0 and ran == ["--stages=base,report",
                             "--stages=finetune:span:1,report"]
  assert not os.path.exists(lock)
