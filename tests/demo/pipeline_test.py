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

"""The `make demo` pipeline's first act (--act=scratch), end to end, on a
short schedule, as a user runs it (`python -m official_spanbert.demo`): quiet
output and the summary. The second act, and -v: demo/continued_test.py."""

import json
import os
import re
import subprocess
import sys

import pytest

from official_spanbert.demo import pipeline
from official_spanbert.demo import summary as demo_summary

from conftest import REPO

STEPS = 4
MAX_LINES = 60  # issue 24: the default `make demo` prints at most this many


def _demo(output_dir, *args):
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  env.update(PYTHONPATH=REPO, TF_NUM_INTRAOP_THREADS="1",
             TF_NUM_INTEROP_THREADS="1")
  result = subprocess.run(
      [sys.executable, "-m", "official_spanbert.demo",
       f"--output_dir={output_dir}", "--act=scratch", "--vocab_size=3000",
       *args],
      env=env, capture_output=True, text=True, timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return result


@pytest.fixture(scope="module")
def quiet_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("demo"))
  result = _demo(out, f"--train_steps={STEPS}")
  with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
    return out, result, json.load(f)


def test_default_output_is_what_a_person_reads(quiet_run):
  _, result, _ = quiet_run
  text = result.stdout + result.stderr
  lines = text.splitlines()
  assert len(lines) <= MAX_LINES, text
  for stage in range(1, 6):
    assert re.search(rf"^== {stage}/5 ", result.stdout, re.M), result.stdout
  # One progress line for training (stderr is not a terminal: it would be
  # refreshed in place on one), with the loss and the rate.
  assert re.search(rf"^train \[[\d.]+ s\] {STEPS}/{STEPS} steps \(100%\)"
                   r".*examples/s \| loss [\d.]+ \(mlm [\d.]+, sbo [\d.]+\)$",
                   result.stderr, re.M), result.stderr
  for noise in ("cuInit", "oneDNN", "pkg_resources", "unseeded", "INFO",
                "Compiled cluster", "'mlm_loss'", "deprecated",
                "learning step", "fewer than the"):
    assert noise not in text, noise
  assert not re.search(r"^[IW]\d{4} ", text, re.M), text
  for row in ("untrained model", "unigram baseline", f"after {STEPS} steps"):
    assert re.search(rf"^   {row} +[\d.]+% +[\d.]+ +[\d.]+% +[\d.]+$",
                     result.stdout, re.M), (row, result.stdout)
  assert re.search(r"^      true '\w+': MLM [+-] .+ \| SBO [+-] ",
                   result.stdout, re.M)
  last = result.stdout.strip().splitlines()
  assert last[-3].startswith("spanbert-demo: held-out MLM accuracy ")
  assert re.match(r"   \d+ s in all: corpus \d+ s, vocab \d+ s, ", last[-2])


def test_summary_has_before_after_unigram_and_fills(quiet_run):
  out, _, s = quiet_run
  assert s["corpus"]["documents"] > 100
  assert s["corpus"]["heldout_documents"] >= 5
  for part in ("train", "heldout"):
    assert s["records"][part]["blocks"] > 0
  # 19 of every 20 documents are training text.
  assert s["records"]["train"]["tokens"] > 5 * s["records"]["heldout"]["tokens"]
  assert s["precision"] == pipeline.resolve_precision("auto")
  # The same masked held-out blocks for every row.
  masked = s["before"]["masked_tokens"]
  assert masked > 100
  for row in ("before", "unigram", "after"):
    m = s[row]
    assert m["masked_tokens"] == masked and m["sbo_targets"] > 0
    for k in ("masked_lm_accuracy", "sbo_accuracy"):
      assert 0.0 <= m[k] <= 1.0
    for k in ("mlm_loss", "sbo_loss"):
      assert 0.0 < m[k] < 20.0
  # An untrained model is worse than predicting by frequency (~ln V).
  assert s["before"]["mlm_loss"] > s["unigram"]["mlm_loss"] + 1.0
  assert s["before"]["mlm_loss"] != s["after"]["mlm_loss"]
  assert len(s["heldout_fills"]) == 4
  for fill in s["heldout_fills"]:
    assert fill["masked"].count("[MASK]") == 1
    assert fill["word"] not in fill["masked"].split()
    for head in ("mlm", "sbo"):
      assert len(fill[f"{head}_top5"]) == 5
      assert fill[f"{head}_hit"] == (fill["word"] in fill[f"{head}_top5"])
  # The default sentence has one [MASK]: it gets MLM and SBO top-5.
  assert [c["mask"] for c in s["candidates"]] == [1]
  assert len(s["candidates"][0]["mlm_top5"]) == 5
  assert len(s["candidates"][0]["sbo_top5"]) == 5
  for stage in ("corpus", "vocab", "records", "measure_before", "training",
                "measure_after", "export", "fill", "total"):
    assert s["seconds"][stage] >= 0.0
  assert os.path.exists(os.path.join(s["export"]["model"], "saved_model.pb"))
  assert os.path.exists(os.path.join(s["export"]["model"], "assets.extra",
                                     "tf_serving_warmup_requests"))
  with open(os.path.join(out, "loss_curves.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_bf16_is_the_default_only_where_the_cpu_has_it(tmp_path,
                                                      monkeypatch):
  monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
  with_bf16 = tmp_path / "bf16"
  with_bf16.write_text("processor: 0\nflags\t\t: fpu avx512f avx512_bf16 "
                       "sse\n")
  without = tmp_path / "plain"
  without.write_text("processor: 0\nflags\t\t: fpu avx2 avx512f\n")
  amx = tmp_path / "amx"
  amx.write_text("flags\t\t: fpu amx_bf16 amx_tile\n")
  assert pipeline.cpu_has_bf16(str(with_bf16))
  assert pipeline.cpu_has_bf16(str(amx))
  assert not pipeline.cpu_has_bf16(str(without))
  assert not pipeline.cpu_has_bf16(str(tmp_path / "missing"))
  # Capped at AVX2, oneDNN has no bf16 matmul: auto must pick float32.
  monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
  assert not pipeline.cpu_has_bf16(str(with_bf16))
  assert pipeline.resolve_precision("auto") == "float32"
  assert pipeline.resolve_precision("float32") == "float32"
  # An explicit bfloat16 under the cap is a one-line error, not an abort.
  read = pipeline.cpu_features.read
  monkeypatch.setattr(pipeline.cpu_features, "read",
                      lambda *_: read(str(with_bf16)))
  with pytest.raises(pipeline.precision_check.UnsupportedPrecisionError,
                     match="--precision=float32"):
    pipeline.resolve_precision("bfloat16")
  monkeypatch.delenv("ONEDNN_MAX_CPU_ISA")
  assert pipeline.resolve_precision("bfloat16") == "bfloat16"
  with pytest.raises(ValueError):
    pipeline.resolve_precision("fp16")
  params = pipeline.build_params("p", "h", "v.txt", 100, 10,
                                 precision="bfloat16")
  assert params.runtime.mixed_precision_dtype == "bfloat16"
  params = pipeline.build_params("p", "h", "v.txt", 100, 10)
  assert not params.runtime.mixed_precision_dtype


def test_the_verdict_reads_the_loss_against_the_unigram_baseline():
  unigram, verdict = {"mlm_loss": 6.7}, demo_summary.verdict
  assert "below the unigram" in verdict({"mlm_loss": 6.3}, unigram)
  assert "at the unigram" in verdict({"mlm_loss": 6.68}, unigram)
  assert "above the unigram" in verdict({"mlm_loss": 7.2}, unigram)


def test_the_pilots_resume_warning_is_dropped_and_nothing_else(caplog):
  """After the 40 pilot steps the demo resumes training by design: the
  trainer's "Resuming from" warning is not shown without -v."""
  from absl import logging  # pylint: disable=g-import-not-at-top
  absl_logger = logging.get_absl_logger()
  notice = pipeline._DropResumeNotice()  # pylint: disable=protected-access
  absl_logger.addFilter(notice)
  try:
    with caplog.at_level("WARNING"):
      logging.warning(pipeline.train_lib.RESUME_MESSAGE,
                      "demo_out/model/ckpt-40", 40)
      logging.warning("Removed 1 partial save(s) of an interrupted run")
  finally:
    absl_logger.removeFilter(notice)
  assert [r.getMessage() for r in caplog.records] == [
      "Removed 1 partial save(s) of an interrupted run"]
