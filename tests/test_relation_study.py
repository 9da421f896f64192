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

"""experiments/relation_semeval: the plan, resuming, and the report."""

import json
import os

import pytest

from experiments import relation_semeval
from experiments import study_lib


def _result(arm, seed, f1, served_equal=2717):
  mode, pooling = relation_semeval.ARMS[arm]
  return {"arm": arm, "seed": seed, "entity_mode": mode, "pooling": pooling,
          "test_examples": 2717, "epochs": 3, "steps": 675,
          "test": {"semeval_macro_f1": f1, "tacred_micro_f1": f1 - 1},
          "best_dev": {"semeval_macro_f1": f1 + 1},
          "served": {"equal_to_offline": served_equal},
          "train_cpu_s": 1200.0, "machine": "m"}


def test_plan_runs_every_arms_first_seed_first(tmp_path):
  study = relation_semeval.make_study("semeval", str(tmp_path))
  stages = relation_semeval.plan(study, ["mask", "marker"], [1, 2])
  assert stages == ["finetune:mask:1", "finetune:marker:1",
                    "finetune:mask:2", "finetune:marker:2", "report"]
  with pytest.raises(study_lib.StudyError, match="unknown preset 'x'"):
    relation_semeval.make_study("x", str(tmp_path))


def test_a_committed_result_is_not_run_again_and_the_report_averages(
    tmp_path):
  study = relation_semeval.Study("semeval", str(tmp_path / "work"),
                                 results=str(tmp_path / "results"))
  assert not relation_semeval.committed(study, "finetune:marker:1")
  for seed, f1 in ((1, 80.0), (2, 82.0)):
    study_lib.write_json(study.result_file("marker", seed),
                         _result("marker", seed, f1, 2717 - seed))
  study_lib.write_json(study.result_file("mask", 1), _result("mask", 1, 60.0))
  assert relation_semeval.committed(study, "finetune:marker:2")
  assert not relation_semeval.committed(study, "report")
  relation_semeval.report(study)
  with open(study.results_path("summary.json"), encoding="utf-8") as f:
    summary = json.load(f)
  assert summary["marker"]["mean"] == pytest.approx(81.0)
  assert summary["marker"]["sd"] == pytest.approx(2 ** 0.5)
  assert summary["marker"]["served_equal"] == [2716, 2715]
  assert summary["mask"]["seeds"] == [1]
  report = open(study.results_path("report.md"), encoding="utf-8").read()
  assert "| marker | marker | entity_start | 2 | 81.00 ± 1.41 |" in report
  assert "2715/2717 (worst seed)" in report
  assert os.path.exists(study.results_path("summary.json"))
