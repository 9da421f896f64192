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

"""The ablation's report: report.md and ablation.png from the result files.

  rows = ablation_report.collect(study, ["random_init", "span_sbo"])
  print(ablation_report.markdown(rows, {"span_sbo": "86.8 (T7 ...)"}))
"""

import os
import statistics
from typing import Dict, List

from experiments import study_lib


def collect(study, arms: List[str]) -> List[dict]:
  """The committed result file of each arm (a row saying so if absent)."""
  stages = study_lib.read_manifest(study.work_dir)["stages"]
  rows = []
  for arm in arms:
    result = study_lib.read_json(study.result_file(arm))
    if result is None:
      records = stages.get(f"records:{study.arm(arm).records}", {})
      result = {"arm": arm, "label": study.arm(arm).label,
                "pretraining": None,
                "heldout_mlm_accuracy": {}, "squad": [],
                "status": ("pending: install .[linguistic]" if "pending" in
                           records.get("result", {}) else "not run yet")}
    rows.append(result)
  return rows


def verdict(rows: List[dict]) -> List[str]:
  """Each pretrained arm against the floor's mean + sd, and the paper's
  order (span_sbo >= span >= token on QA)."""
  f1 = {r["arm"]: [s["f1"] for s in r["squad"]] for r in rows
        if len(r["squad"]) >= 2}
  lines = []
  if "random_init" in f1:
    floor = f1["random_init"]
    bar = statistics.mean(floor) + statistics.stdev(floor)
    for arm, values in f1.items():
      if arm == "random_init":
        continue
      gap = statistics.mean(values) - statistics.mean(floor)
      lines.append(
          f"- {arm}: mean F1 {statistics.mean(values):.2f}, "
          f"{gap:+.2f} over the floor ({statistics.mean(floor):.2f} ± "
          f"{statistics.stdev(floor):.2f}); "
          + ("above the floor's mean + sd" if statistics.mean(values) > bar
             else "NOT above the floor's mean + sd: a defect to find"))
  order = [a for a in ("span_sbo", "span", "token") if a in f1]
  if len(order) > 1:
    means = [statistics.mean(f1[a]) for a in order]
    spread = max(statistics.stdev(f1[a]) for a in order)
    holds = all(x >= y for x, y in zip(means, means[1:]))
    lines.append(
        f"- paper's order {' >= '.join(order)}: "
        + ("holds" if holds else "does not hold")
        + f" ({', '.join(f'{m:.2f}' for m in means)}; largest seed sd "
        f"{spread:.2f}, largest difference "
        f"{max(means) - min(means):.2f})")
  return lines


def markdown(rows: List[dict], paper: Dict[str, str]) -> str:
  """The table (paper: each arm's published SQuAD 2.0 F1), stages, verdict."""
  lines = [
      "| arm | masking / objective | steps | final loss | held-out MLM acc "
      "span / token | SQuAD v1.1 EM | SQuAD v1.1 F1 | seeds | paper SQuAD "
      "2.0 F1 (direction only) |", "|---|---|---|---|---|---|---|---|---|"]
  for r in rows:
    pre = r.get("pretraining") or {}
    loss = (f"{pre['final_loss']:.3f}" if pre.get("final_loss") is not None
            else "—")
    acc = " / ".join(
        f"{100 * r['heldout_mlm_accuracy'][k]:.2f}%"
        if k in r["heldout_mlm_accuracy"] else "—" for k in ("span", "token"))
    label = r["label"] + (f" ({r['status']})" if r.get("status") else "")
    lines.append(
        f"| {r['arm']} | {label} | {pre.get('steps', 0)} | {loss} | {acc} | "
        f"{study_lib.mean_sd([s['exact_match'] for s in r['squad']])} | "
        f"{study_lib.mean_sd([s['f1'] for s in r['squad']])} | {len(r['squad'])} | "
        f"{paper.get(r['arm']) or '—'} |")
  lines += ["", "| arm | stage | wall s | CPU s | finished | commit |",
            "|---|---|---|---|---|---|"]
  for r in rows:
    for name, stage in r.get("stages", {}).items():
      lines.append(f"| {r['arm']} | {name} | {stage['wall_s']:.0f} | "
                   f"{stage['cpu_s']:.0f} | {stage['finished']} | "
                   f"{stage['commit']} |")
  commands = sorted({r.get("command") for r in rows if r.get("command")})
  lines += ["", "Verdict:"] + (verdict(rows) or ["- too few arms scored"])
  lines += ["", "Commands:"] + [f"- `{c}`" for c in commands]
  return "\n".join(lines) + "\n"


def figure(rows: List[dict], path: str):
  """Pretraining MLM loss curves; SQuAD F1 per arm with sd error bars."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
  curves = [(r["arm"], (r.get("pretraining") or {}).get("curves", {}).get(
      "mlm_loss")) for r in rows]
  for arm, curve in curves:
    if curve:
      steps, values = zip(*curve)
      left.plot(steps, values, label=arm)
  left.set(xlabel="step", ylabel="training MLM loss",
           title="Pretraining (equal compute)")
  if any(curve for _, curve in curves):
    left.legend(fontsize=8)
  scored = [r for r in rows if r["squad"]]
  f1 = [[s["f1"] for s in r["squad"]] for r in scored]
  right.bar(range(len(scored)), [statistics.mean(v) for v in f1],
            yerr=[statistics.stdev(v) if len(v) > 1 else 0 for v in f1],
            capsize=4)
  right.set_xticks(range(len(scored)), [r["arm"] for r in scored],
                   rotation=30, ha="right")
  right.set(ylabel="F1 (mean ± sd over seeds)", title="SQuAD v1.1 dev")
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def stage_report(study, arms: List[str]) -> dict:
  """report.md and ablation.png beside the result files, from them alone:
  the arms asked for and every other arm with a result file there (a run of
  one arm does not drop the others from the report)."""
  arms = [a for a in study.arms
          if a in arms or os.path.exists(study.result_file(a))]
  rows = collect(study, arms)
  text = markdown(rows, {a: study.arm(a).paper_squad2_f1 for a in arms})
  folder = os.path.dirname(study.result_file(arms[0]))
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "report.md"), "w", encoding="utf-8") as f:
    f.write(f"# Ablation, preset {study.name}\n\n" + text)
  figure(rows, os.path.join(folder, "ablation.png"))
  print(text)
  return {"report": os.path.join(folder, "report.md"),
          "figure": os.path.join(folder, "ablation.png")}
