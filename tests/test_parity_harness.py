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

"""The parity scripts' shared table and verdicts (experiments/parity_*.py)."""

import pytest

from experiments import parity_harness
from experiments import parity_rte
from experiments import parity_squad


def _run(side, seed, f1, accuracy=0.5):
  return dict(side=side, seed=seed, f1=f1, exact_match=f1 / 2,
              accuracy=accuracy, train_examples_per_s_loops=2.0,
              train_wall_s=100.0, train_cpu_s=150.0, eval_wall_s=10.0,
              load_before=[1.0, 1.0, 1.0], load_after=[2.0, 2.0, 2.0])


def test_table_has_a_row_per_run_and_a_mean_row_per_side():
  results = [_run("pkg", 1, 20.0), _run("pkg", 2, 30.0), _run("hf", 1, 26.0)]
  lines = parity_harness.table(results, parity_squad.METRICS).splitlines()
  assert lines[0].startswith("| side | seed | F1 | EM | train ex/s (loops) |")
  assert len(lines) == 2 + 3 + 2
  assert all(line.count("|") == lines[0].count("|") for line in lines[:5])
  assert lines[5].startswith("| pkg | mean ± sd | 25.00 ± 7.07 | 12.50 ± 3.54 |")
  assert lines[6].startswith("| hf | mean ± sd | 26.00 ± 0.00 |")


def test_rte_table_scales_accuracy_to_percent():
  table = parity_harness.table([_run("pkg", 1, 0.0, accuracy=0.5776)],
                               parity_rte.METRICS)
  assert "| pkg | 1 | 57.76 |" in table


@pytest.mark.parametrize("pkg, hf, expected", [
    ([24.0, 25.0], [25.0, 25.5], "target met"),
    ([10.0, 11.0], [25.0, 25.5], "target NOT met"),
    ([10.0, 30.0], [25.0, 26.0], "target met (only because"),
])
def test_squad_verdict(pkg, hf, expected):
  results = ([_run("pkg", i, f) for i, f in enumerate(pkg)] +
             [_run("hf", i, f) for i, f in enumerate(hf)])
  assert expected in parity_squad.verdict(results, 1.5)


def test_verdicts_wait_for_both_sides():
  assert parity_squad.verdict([_run("pkg", 1, 20.0)], 1.5) == "incomplete"
  assert parity_rte.verdict([_run("hf", 1, 0, 0.5)], 2.0) == "incomplete"
  rte = [_run("pkg", 1, 0, 0.55), _run("hf", 1, 0, 0.56)]
  assert parity_rte.verdict(rte, 2.0).endswith(": met")
  rte = [_run("pkg", 1, 0, 0.50), _run("hf", 1, 0, 0.56)]
  assert parity_rte.verdict(rte, 2.0).endswith("NOT met")


def test_hf_adamw_trains_as_the_package():
  pytest.importorskip("torch")
  transformers = pytest.importorskip("transformers")
  model = transformers.BertForMaskedLM(transformers.BertConfig(
      vocab_size=100, hidden_size=32, num_hidden_layers=1,
      num_attention_heads=2, intermediate_size=64))
  optimizer, scheduler = parity_harness.hf_adamw(model, 1e-3, 50)
  decayed = [p for n, p in model.named_parameters()
             if "bias" not in n and "LayerNorm.weight" not in n]
  assert ([id(p) for p in optimizer.param_groups[0]["params"]] ==
          [id(p) for p in decayed])
  assert [g["weight_decay"] for g in optimizer.param_groups] == [0.01, 0.0]
  assert optimizer.defaults["eps"] == 1e-8
  assert optimizer.defaults["betas"] == (0.9, 0.999)
  seen = []
  for _ in range(50):
    seen.append(optimizer.param_groups[0]["lr"])
    optimizer.step()
    scheduler.step()
  # Model Garden's warmup (5 steps) into linear decay, as lr_factor says.
  assert seen == pytest.approx(
      [1e-3 * parity_harness.lr_factor(s, 5, 50) for s in range(50)])
