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

"""experiments/ablation.py: a micro study end to end, resume, the gpu configs."""

import dataclasses
import json
import os

import conftest
from official.core import task_factory
from official_spanbert.data.pretraining import pretrain_dataloader
import pytest
import tf_keras

from experiments import ablation
from experiments import study_stages


def _study(work_dir, preset=ablation.PRESETS["micro"], results_dir=None):
  return ablation.Study(
      preset, str(work_dir),
      corpus=os.path.join(conftest.data_path("corpus"), "*.txt"),
      vocab=conftest.data_path("vocab", "bert-base-cased-vocab.txt"),
      squad_dir=conftest.data_path("squad"), tag_processes=1, name="micro",
      results_dir=str(results_dir or os.path.join(work_dir, "results")),
      command="test")


def _checkpoints(model_dir):
  return sorted(f for f in os.listdir(model_dir) if f.endswith(".index"))


def test_micro_study_resumes_and_reports(tmp_path):
  study = _study(tmp_path / "study")
  arms, seeds = ["random_init", "span_sbo"], [1, 2]
  ablation.run_study(study, arms, seeds, ["records", "finetune_records"])

  # A pretraining stage stopped at step 2: a checkpoint, no manifest entry.
  params = study_stages.pretrain_params(study, "span_sbo")
  params.trainer.train_steps = 2
  ablation.train_lib.run(params, study.pretrain_dir("span_sbo"), mode="train")
  assert _checkpoints(study.pretrain_dir("span_sbo")) == ["ckpt-2.index"]
  manifest = ablation.run_study(study, arms, seeds, ["pretrain"])
  pretrain = manifest["stages"]["pretrain:span_sbo"]
  assert pretrain["result"]["start_step"] == 2
  assert pretrain["result"]["steps"] == study.preset.pretrain_steps
  assert "ckpt-6.index" in _checkpoints(study.pretrain_dir("span_sbo"))

  # Finished stages are skipped: nothing reruns, the manifest is unchanged.
  again = ablation.run_study(study, arms, seeds, ["records", "pretrain"])
  assert again["stages"] == manifest["stages"]

  manifest = ablation.run_study(study, arms, seeds)
  assert list(manifest["stages"]) == ablation.plan(arms, seeds, vocab=True)
  with open(os.path.join(study.work_dir, ablation.MANIFEST)) as f:
    assert json.load(f)["stages"].keys() == manifest["stages"].keys()
  # The vocab was learned on the training split and every arm uses it.
  vocab = manifest["stages"]["records:vocab"]["result"]
  assert 0 < vocab["vocab_size"] <= study.preset.vocab_size
  assert study_stages.pretrain_params(
      study, "span_sbo").task.model.encoder.bert_v2.vocab_size == vocab[
          "vocab_size"]
  for scheme in ("span", "token"):
    heldout = manifest["stages"]["heldout_mlm:span_sbo"]["result"][scheme]
    assert heldout["restored_from"] == study.pretrain_dir("span_sbo")
    assert heldout["blocks"] > 0 and 0 <= heldout["masked_lm_accuracy"] <= 1

  # One result file an arm, in the schema.
  for arm in arms:
    with open(study.result_file(arm), encoding="utf-8") as f:
      result = json.load(f)
    assert result["arm"] == arm and result["preset"] == "micro"
    assert result["command"] == "test" and result["commit"]
    assert set(result["heldout_mlm_accuracy"]) == {"span", "token"}
    assert [r["seed"] for r in result["squad"]] == seeds
    assert all({"exact_match", "f1"} <= set(r) for r in result["squad"])
  pretraining = json.load(open(study.result_file("span_sbo")))["pretraining"]
  assert pretraining["steps"] == study.preset.pretrain_steps
  assert pretraining["final_loss"] > 0 and pretraining["cpu_s"] > 0
  assert pretraining["curves"]["mlm_loss"][-1][0] == study.preset.pretrain_steps
  assert json.load(open(study.result_file("random_init")))[
      "pretraining"] is None

  report_md = os.path.join(study.results_dir, "report.md")
  with open(report_md, encoding="utf-8") as f:
    report = f.read()
  for arm in arms:
    row = next(line for line in report.splitlines()
               if line.startswith(f"| {arm} |"))
    assert " ± " in row and "| 2 |" in row, row
  assert "- span_sbo: mean F1" in report
  with open(os.path.join(study.results_dir, "ablation.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"

  # A new session: another work dir (scratch is gone), the committed result
  # files. Nothing is rerun, and the report is rebuilt from them alone.
  os.remove(report_md)
  fresh = _study(study.work_dir + "-fresh", results_dir=study.results_dir)
  manifest = ablation.run_study(fresh, arms, seeds, ["pretrain", "finetune",
                                                     "heldout_mlm"])
  assert not [s for s in manifest["stages"] if ablation.arm_of(s)]
  ablation.main(["--preset=micro", f"--work_dir={fresh.work_dir}",
                 f"--results_dir={study.results_dir}",
                 "--stages=report", "--arms=random_init,span_sbo"])
  assert os.path.exists(report_md)
  # A report asked for one arm keeps every arm with a result file.
  ablation.main(["--preset=micro", f"--work_dir={fresh.work_dir}",
                 f"--results_dir={study.results_dir}",
                 "--stages=report", "--arms=span_sbo"])
  with open(report_md, encoding="utf-8") as f:
    lines = f.read().splitlines()
  assert any(line.startswith("| random_init |") for line in lines)
  assert any(line.startswith("| span_sbo |") for line in lines)
  with open(study.result_file("span_sbo"), encoding="utf-8") as f:
    assert json.load(f)["pretraining"] == pretraining

  # Another preset in the same work dir is refused.
  other = dataclasses.replace(study.preset, pretrain_steps=8)
  with pytest.raises(ValueError, match="another preset"):
    ablation.run_study(_study(study.work_dir, other), arms, seeds, ["report"])


def test_stage_needs_its_inputs(tmp_path):
  with pytest.raises(ValueError, match="needs records:single first"):
    ablation.run_study(_study(tmp_path), ["span"], [1], ["pretrain"])


def test_tagged_arms_pending_without_spacy(tmp_path, monkeypatch):
  def unavailable(*args, **kwargs):
    raise study_stages.span_tagging.TaggingUnavailableError("no spaCy here")
  monkeypatch.setattr(study_stages.span_tagging, "SpanTagger", unavailable)
  study = _study(tmp_path, dataclasses.replace(ablation.PRESETS["micro"],
                                               vocab_size=0))
  manifest = ablation.run_study(study, ["noun_phrase"], [1],
                                ["records:tagged", "pretrain", "report"])
  assert "no spaCy here" in manifest["stages"]["records:tagged"]["result"][
      "pending"]
  assert "pretrain:noun_phrase" not in manifest["stages"]
  with open(os.path.join(study.results_dir, "report.md"),
            encoding="utf-8") as f:
    assert "(pending: install .[linguistic])" in f.read()


def test_gpu_preset_configs_dry_run(tmp_path):
  """Every arm's gpu-preset experiment is built and validated and its task
  and input pipeline are constructed on tiny records (the named_entity and
  noun_phrase arms only where spaCy is installed); token_nsp then trains 2
  steps in mixed_bfloat16 on CPU and is scored on held-out blocks. Only
  sizes are overridden."""
  preset = dataclasses.replace(
      ablation.PRESETS["gpu"], layers=1, hidden=64, heads=2, ffn=128,
      seq_length=64, batch_size=4, max_predictions=11, pretrain_steps=2,
      warmup_steps=1, steps_per_loop=1, num_gpus=0, corpus_bytes=10_000,
      heldout_every=5, num_shards=1, shuffle_buffer=10)
  assert preset.mixed_precision == "bfloat16"
  study = _study(tmp_path, preset)
  kinds = {k: study_stages.stage_records(study, k)
           for k in ("single", "nsp", "tagged", "heldout")}
  for arm, spec in ablation.ARMS.items():
    if spec.experiment and "pending" not in kinds[spec.records]:
      params = study_stages.pretrain_params(study, arm)
      assert params.runtime.mixed_precision_dtype == "bfloat16"
      assert params.task.model.encoder.bert_v2.num_layers == 1
      task_factory.get_task(params.task)
      pretrain_dataloader.SpanBertPretrainDataLoader(params.task.train_data)
    study_stages.heldout_params(study, arm).validate()
    study_stages.finetune_params(study, arm, 1, "dev.json")
  try:
    result = study_stages.stage_pretrain(study, "token_nsp")
    assert tf_keras.mixed_precision.global_policy().name == "mixed_bfloat16"
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  assert result["steps"] == 2 and result["final"]["next_sentence_loss"] > 0
  # Held-out MLM restores the NSP arm's encoder and MLM head without NSP.
  heldout = study_stages.stage_heldout_mlm(study, "token_nsp")
  for scheme in ("span", "token"):
    assert heldout[scheme]["blocks"] > 0
    assert "next_sentence_accuracy" not in heldout[scheme]
