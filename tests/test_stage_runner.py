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
import sys
import types

from experiments import stage_runner


def test_resume_skips_manifest_and_committed_stages(tmp_path, monkeypatch):
  work_dir = tmp_path / "work"
  work_dir.mkdir()
  (work_dir / "manifest.json").write_text(json.dumps(
      {"stages": {"base": {"result": {"blocks": 3}}}}))
  study = types.SimpleNamespace(preset=types.SimpleNamespace(
      arms=["span"], seeds=[1]))
  plan = ["base", "pretrain:span", "finetune:span:1", "report"]
  module = types.ModuleType("fake_study")
  module.make_study = lambda preset, work_dir: study
  module.plan = lambda study, arms, seeds: plan
  # This machine's work dir has no record of the pretraining; the committed
  # results have it (its arm's fine-tuning is committed too).
  module.committed = lambda s, stage: stage == "pretrain:span"
  monkeypatch.setitem(sys.modules, "fake_study", module)
  ran = []

  def run(command, **kwargs):
    del kwargs
    ran.append(next(a for a in command if a.startswith("--stages=")))
    return types.SimpleNamespace(returncode=0)

  monkeypatch.setattr(stage_runner.subprocess, "run", run)
  stage_runner.main(["--study=fake_study", "--preset=p",
                     f"--work_dir={work_dir}"])
  assert ran == ["--stages=finetune:span:1,report"]
