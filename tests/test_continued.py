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

"""experiments/continued.py: the micro study end to end, resume, the report."""

import json
import os

import conftest
import pytest

from experiments import continued
from experiments import continued_report
from experiments import study_stages


def _study(work_dir, results_dir):
  study = continued.make_study("micro", str(work_dir),
                               data=conftest.data_dir(), command="test")
  study.results_dir = str(results_dir)
  return study


def test_arms_and_presets_are_yaml():
  arms = continued.load_arms()
  assert list(arms) == ["none", "token", "span", "span_sbo"]
  assert arms["none"].experiment == ""
  assert arms["span_sbo"].experiment == "spanbert/pretraining"
  assert {a.masking_scheme for n, a in arms.items() if n != "none"} == {
      "token", "span"}
  cpu, micro = continued.load_preset("cpu"), continued.load_preset("micro")
  assert cpu.base == "minilm" and micro.base == "tiny"
  assert len(cpu.seeds) >= 3 and cpu.corpus == ("austen.txt", "kjv.txt")
  with pytest.raises(SystemExit):
    continued.main(["--preset=nope", "--work_dir=/nonexistent"])


def test_micro_study_resumes_and_reports(tmp_path):
  """Every stage kind once (LitBank for span_sbo only: it is the costly one),
  a stopped pretraining resumed, then a new session that reruns nothing."""
  study = _study(tmp_path / "work", tmp_path / "results")
  arms, seeds = ["none", "span_sbo"], [1]
  stages = ["base", "records", "pretrain", "heldout_mlm", "coref:span_sbo",
            "finetune_records", "finetune", "report"]
  continued.run_study(study, arms, seeds, ["base", "records"])
  # A pretraining stage stopped at step 2: it resumes from ckpt-2.
  params = study_stages.pretrain_params(study, "span_sbo")
  assert params.task.init_checkpoint == study.base_dir()
  params.trainer.train_steps = 2
  study_stages.train_lib.run(params, study.pretrain_dir("span_sbo"),
                             mode="train")
  manifest = continued.run_study(study, arms, seeds, stages)
  assert list(manifest["stages"]) == [
      s for s in continued.plan(study, arms, seeds) if s != "coref:none:1"]
  assert manifest["stages"]["pretrain:span_sbo"]["result"]["start_step"] == 2
  for arm in arms:
    with open(study.result_file(arm), encoding="utf-8") as f:
      result = json.load(f)
    assert result["arm"] == arm and result["command"] == "test"
    assert set(result["heldout_mlm_accuracy"]) == {"span", "token"}
    assert [r["seed"] for r in result["squad"]] == seeds
    assert all({"exact_match", "f1"} <= set(r) for r in result["squad"])
  coref = json.load(open(study.result_file("span_sbo")))["coref"]
  assert [r["seed"] for r in coref] == seeds
  assert {"muc", "b_cubed", "ceafe"} <= set(coref[0]["test"])
  assert 0 <= coref[0]["test"]["conll_f1"] <= 100
  restored = manifest["stages"]["heldout_mlm:none"]["result"]["span"]
  assert restored["restored_from"] == study.base_dir()
  pretraining = json.load(open(study.result_file("span_sbo")))["pretraining"]
  assert pretraining["steps"] == study.preset.pretrain_steps
  assert "sbo_loss" in pretraining["curves"]

  report = os.path.join(study.results_dir, "report.md")
  rows = {}
  with open(report, encoding="utf-8") as f:
    # The results table comes first; the stage-timing table repeats the arms.
    for line in f.read().splitlines():
      if line.startswith("| none |") or line.startswith("| span_sbo |"):
        rows.setdefault(line.split(" | ")[0][2:], line)
  assert rows["span_sbo"].count(" ± ") == 6, rows  # 4 LitBank, EM, F1
  assert rows["none"].count(" ± ") == 2 and rows["none"].endswith("| 1 |")
  with open(os.path.join(study.results_dir, "continued.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"

  # A new session (no work dir): nothing reruns, the report is rebuilt.
  os.remove(report)
  fresh = _study(tmp_path / "fresh", study.results_dir)
  manifest = continued.run_study(fresh, arms, seeds, [
      "pretrain", "heldout_mlm", "coref:span_sbo", "finetune", "report"])
  assert list(manifest["stages"]) == ["report"]
  assert os.path.exists(report)


def test_verdict_compares_against_the_seed_spread():
  def row(arm, coref, squad):
    return {"arm": arm, "coref": [{"test": {"conll_f1": v}} for v in coref],
            "squad": [{"f1": v} for v in squad]}
  lines = continued_report.verdict([row("none", [40, 41, 42], [10, 10.5, 11]),
                             row("token", [44, 45, 46], [10, 11, 10.5]),
                             row("span_sbo", [41, 42, 43], [9, 9.5, 10])])
  assert "- LitBank CoNLL F1, token vs none: +4.00 (largest seed sd 1.00): " \
         "beats none" in lines
  assert "- LitBank CoNLL F1, span_sbo vs none: +1.00 (largest seed sd " \
         "1.00): within the seed spread" in lines
  assert any(line.startswith("- SQuAD F1, paper's order span_sbo >= token: "
                             "does not hold (9.50, 10.50; steps -1.00")
             for line in lines)


def test_another_preset_is_one_error_line(tmp_path, capsys):
  (tmp_path / "manifest.json").write_text(
      json.dumps({"preset": {"pretrain_steps": 1}, "stages": {}}))
  with pytest.raises(SystemExit) as stop:
    continued.main(["--preset=micro", f"--work_dir={tmp_path}",
                    "--stages=report"])
  assert stop.value.code == 1
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "holds a study with another preset" in err[0]


def test_missing_corpus_is_one_error_line(tmp_path, monkeypatch, capsys):
  make_study = continued.make_study
  monkeypatch.setattr(continued, "make_study", lambda name, work_dir, **kw:
                      make_study(name, work_dir, data=str(tmp_path / "no"),
                                 **kw))
  with pytest.raises(SystemExit) as stop:
    continued.main(["--preset=micro", f"--work_dir={tmp_path / 'work'}",
                    "--stages=base,records"])
  assert stop.value.code == 1
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "matches no file; set SPANBERT_DATA_DIR" in err[0]
  assert not (tmp_path / "work" / "corpus" / "split.json").exists()
