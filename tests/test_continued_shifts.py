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

"""Study 2 of continued pretraining (experiments/continued_shifts.py): its
contexts corpus, its arms' head warm-up and the micro preset end to end."""

import json
import os

import conftest
from experiments import continued_shifts
from experiments import study_lib
from experiments import study_stages


def _squad(path, articles):
  with open(path, "w", encoding="utf-8") as f:
    json.dump({"version": "1.0", "data": [
        {"title": title, "paragraphs": [
            {"context": c, "qas": [{"id": f"{title}{i}",
                                    "question": f"QUESTION {c}?",
                                    "answers": [{"text": "x",
                                                 "answer_start": 0}]}]}
            for i, c in enumerate(contexts)]}
        for title, contexts in articles]}, f)
  return str(path)


def test_contexts_corpus_is_each_context_once_and_no_question(tmp_path):
  wiki = _squad(tmp_path / "wiki.json", [("A", ["a one.", "a\ntwo."]),
                                         ("B", ["b one."])])
  reddit = _squad(tmp_path / "reddit.json", [
      ("R", [f"comment {i}." for i in range(201)] + ["a one."])])
  out = str(tmp_path / "corpus" / "contexts.txt")
  counts = continued_shifts.contexts_corpus([wiki, reddit], out)
  with open(out, encoding="utf-8") as f:
    text = f.read()
  documents = [d.split("\n") for d in text.strip("\n").split("\n\n")]
  # An article is a document; the 202-context article one a context; the
  # repeated "a one." is written once; newlines inside a context go.
  assert documents[:2] == [["a one.", "a two."], ["b one."]]
  assert documents[2:] == [[f"comment {i}."] for i in range(201)]
  assert "QUESTION" not in text and not os.path.exists(out + ".incomplete")
  assert counts == {"documents": 203, "contexts": 204, "duplicates": 1,
                    "bytes": len(text.encode()) - 203}


def test_arms_get_the_presets_head_warmup_unless_they_opt_out(tmp_path):
  study = continued_shifts.make_study("shifts_micro", str(tmp_path))
  assert list(study.arms) == list(continued_shifts.ARM_NAMES)
  for arm, steps in (("span_sbo", 2), ("token", 2),
                     ("span_sbo_no_warmup", 0)):
    warmup = study_stages.head_warmup(study.preset, study.arm(arm))
    assert warmup.get("head_warmup_steps", 0) == steps, arm
  assert study_stages.head_warmup(
      continued_shifts.continued.load_preset("cpu"), study.arm("span")) == {}


def test_micro_study_runs_every_stage_and_reports(tmp_path):
  study = continued_shifts.make_study(
      "shifts_micro", str(tmp_path / "work"), data=conftest.data_dir(),
      command="test")
  study.results_dir = str(tmp_path / "results")
  # span_sbo_no_warmup runs span_sbo's stages with other params (checked
  # below): test_continued's micro study runs the stages themselves.
  arms = ["none", "span_sbo"]
  manifest = continued_shifts.run_study(study, arms, [1])
  assert list(manifest["stages"]) == continued_shifts.plan(study, arms, [1])
  for stage in manifest["stages"]:  # one small JSON a finished stage
    with open(study_lib.stage_file(study, stage), encoding="utf-8") as f:
      assert json.load(f)["stage"] == stage
  corpus = manifest["stages"]["corpus"]["result"]
  assert corpus["contexts"] > 5000 and corpus["duplicates"] >= 1
  for arm in arms:
    with open(study.result_file(arm), encoding="utf-8") as f:
      result = json.load(f)
    assert [r["seed"] for r in result["squad"]] == [1], arm
    assert set(result["heldout_mlm_accuracy"]) == {"span", "token"}
  params = {a: study_stages.pretrain_params(study, a)
            for a in ("span_sbo", "span_sbo_no_warmup")}
  assert params["span_sbo"].task.head_warmup_steps == 2
  assert params["span_sbo_no_warmup"].task.head_warmup_steps == 0
  with open(os.path.join(study.results_dir, "report.md"),
            encoding="utf-8") as f:
    report = f.read()
  assert "| span_sbo |" in report and "LitBank" not in report
  with open(os.path.join(study.results_dir, "continued.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
  # A new session with the committed results only: nothing reruns.
  fresh = continued_shifts.make_study(
      "shifts_micro", str(tmp_path / "fresh"), data=conftest.data_dir(),
      command="test")
  fresh.results_dir = study.results_dir
  manifest = continued_shifts.run_study(fresh, arms, [1], [
      "pretrain", "heldout_mlm", "finetune"])
  assert manifest["stages"] == {}
