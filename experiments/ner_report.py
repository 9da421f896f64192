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

"""The nested NER table of benchmarks/RESULTS.md from the result files.

Reads experiments/ner_results/*.json (experiments/finetune_ner.py, one run
each) and prints, per model, test P / R / F1 and the recall of nested
entities as mean ± sd over its seeds, then one row per run.

  python -m experiments.ner_report
"""

import glob
import json
import os

from experiments import finetune_ner
from experiments import study_lib

MODELS = (("span", "span classifier (`head: span`)"),
          ("flat", "flat BIO tagger (`head: flat`)"))


def load(results_dir: str = finetune_ner.RESULTS):
  runs = []
  for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
    with open(path, encoding="utf-8") as f:
      runs.append(json.load(f))
  return runs


def table(runs) -> str:
  rows = ["| MiniLM-L6 + spanbert/span_ner, fold 0 test | seeds | precision | "
          "recall | F1 | nested recall |", "|---|---|---:|---:|---:|---:|"]
  for model, name in MODELS:
    mine = sorted((r for r in runs if r["model"] == model),
                  key=lambda r: r["seed"])
    if not mine:
      continue
    cells = [study_lib.mean_sd([r["test"][k] for r in mine])
             for k in ("precision", "recall", "f1")]
    cells.append(study_lib.mean_sd([r["test_nested_recall"] for r in mine]))
    seeds = ", ".join(str(r["seed"]) for r in mine)
    rows.append(f"| {name} | {seeds} | " + " | ".join(cells) + " |")
  rows += ["", "| run | best dev F1 (step) | test P / R / F1 | nested recall | "
           "candidate recall | train+dev s | commit |",
           "|---|---:|---|---:|---:|---:|---|"]
  for r in sorted(runs, key=lambda r: (r["seed"], r["model"])):
    t = r["test"]
    rows.append(
        f"| {r['model']} seed {r['seed']} | {r['best_dev_f1']:.2f} "
        f"({r['best_step']:.0f}) | {t['precision']:.2f} / {t['recall']:.2f} / "
        f"{t['f1']:.2f} | {r['test_nested_recall']:.2f} | "
        f"{r['test_candidate_recall']:.2f} | {r['train_and_dev_eval_s']:.0f} | "
        f"{r['commit']} |")
  return "\n".join(rows)


def main():
  print(table(load()))


if __name__ == "__main__":
  main()
