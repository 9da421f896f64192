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

"""The continued-pretraining study's report: a table, a verdict and a PNG
from the arms' result files alone (continued_results/<preset>/).

  print(continued_report.markdown([study_lib.read_json("none.json"), ...]))
"""

import os
import statistics
from typing import List

from experiments import study_lib


def _scores(row: dict) -> dict:
  """{task: [per-seed score]} of one result file."""
  return {"coref": [r["test"]["conll_f1"] for r in row.get("coref", [])],
          "squad": [r["f1"] for r in row.get("squad", [])]}


def verdict(rows: List[dict]) -> List[str]:
  """Each continued arm against `none`, and the paper's order (span_sbo >=
  span >= token), per task, against the largest seed sd."""
  lines = []
  for task, name in (("coref", "LitBank CoNLL F1"), ("squad", "SQuAD F1")):
    scores = {r["arm"]: _scores(r)[task] for r in rows
              if len(_scores(r)[task]) >= 2}
    if "none" in scores:
      base = scores["none"]
      for arm in (a for a in ("token", "span", "span_sbo") if a in scores):
        gap = statistics.mean(scores[arm]) - statistics.mean(base)
        spread = max(statistics.stdev(scores[arm]), statistics.stdev(base))
        lines.append(f"- {name}, {arm} vs none: {gap:+.2f} (largest seed sd "
                     f"{spread:.2f}): " + ("beats none" if gap > spread else
                                           "below none" if -gap > spread else
                                           "within the seed spread"))
    order = [a for a in ("span_sbo", "span", "token") if a in scores]
    if len(order) > 1:
      means = [statistics.mean(scores[a]) for a in order]
      spread = max(statistics.stdev(scores[a]) for a in order)
      gaps = [x - y for x, y in zip(means, means[1:])]
      lines.append(
          f"- {name}, paper's order {' >= '.join(order)}: "
          + ("holds" if all(g >= 0 for g in gaps) else "does not hold")
          + f" ({', '.join(f'{m:.2f}' for m in means)}; steps "
          + ", ".join(f"{g:+.2f}" for g in gaps)
          + f"; largest seed sd {spread:.2f})")
  return lines or ["- too few seeds scored yet"]


def markdown(rows: List[dict]) -> str:
  lines = ["| arm | objective | steps | final MLM loss | held-out MLM acc "
           "span / token | LitBank MUC / B³ / CEAF-e F1 | LitBank CoNLL F1 "
           "| seeds | SQuAD v1.1 EM | SQuAD v1.1 F1 | seeds |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
  for r in rows:
    pre = r.get("pretraining") or {}
    loss = pre.get("final", {}).get("mlm_loss")
    acc = " / ".join(f"{100 * r['heldout_mlm_accuracy'][k]:.2f}%"
                     if k in r["heldout_mlm_accuracy"] else "—"
                     for k in ("span", "token"))
    coref = r.get("coref", [])
    parts = " / ".join(study_lib.mean_sd(
        [c["test"][m]["f1"] for c in coref]) for m in (
            "muc", "b_cubed", "ceafe"))
    lines.append(
        f"| {r['arm']} | {r['label']} | {pre.get('steps', 0)} | "
        f"{'—' if loss is None else f'{loss:.3f}'} | {acc} | {parts} | "
        f"{study_lib.mean_sd(_scores(r)['coref'])} | {len(coref)} | "
        f"{study_lib.mean_sd([s['exact_match'] for s in r['squad']])} | "
        f"{study_lib.mean_sd(_scores(r)['squad'])} | {len(r['squad'])} |")
  lines += ["", "| arm | stage | wall s | CPU s | finished | commit |",
            "|---|---|---|---|---|---|"]
  lines += [f"| {r['arm']} | {n} | {st['wall_s']:.0f} | {st['cpu_s']:.0f} | "
            f"{st['finished']} | {st['commit']} |"
            for r in rows for n, st in r.get("stages", {}).items()]
  commands = sorted({r.get("command") for r in rows if r.get("command")})
  lines += ["", "Verdict (mean ± sd over seeds; a difference counts when it "
            "exceeds the larger seed sd):"] + verdict(rows)
  lines += ["", "Commands:"] + [f"- `{c}`" for c in commands]
  return "\n".join(lines) + "\n"


def figure(rows: List[dict], path: str):
  """Continued-pretraining MLM loss; LitBank and SQuAD F1 with sd bars."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
  for r in rows:
    curve = (r.get("pretraining") or {}).get("curves", {}).get("mlm_loss")
    if curve:
      axes[0].plot(*zip(*curve), label=r["arm"])
  axes[0].set(xlabel="step", ylabel="training MLM loss",
              title="Continued pretraining from MiniLM")
  if axes[0].lines:
    axes[0].legend(fontsize=8)
  for ax, task, title in ((axes[1], "coref", "LitBank fold 0 test CoNLL F1"),
                          (axes[2], "squad", "SQuAD v1.1 dev F1")):
    scored = [(r["arm"], _scores(r)[task]) for r in rows if _scores(r)[task]]
    ax.bar(range(len(scored)), [statistics.mean(v) for _, v in scored],
           yerr=[statistics.stdev(v) if len(v) > 1 else 0
                 for _, v in scored], capsize=4)
    ax.set_xticks(range(len(scored)), [a for a, _ in scored])
    ax.set(ylabel="F1 (mean ± sd over seeds)", title=title)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def report(study, arms: List[str]) -> dict:
  """report.md and continued.png beside the result files, from them alone."""
  rows = [study_lib.read_json(study.result_file(a)) or {
      "arm": a, "label": study.arm(a).label + " (not run yet)",
      "heldout_mlm_accuracy": {}, "squad": [], "coref": []} for a in arms]
  text = markdown(rows)
  out = {"report": study.results_path("report.md"),
         "figure": study.results_path("continued.png")}
  os.makedirs(os.path.dirname(out["report"]), exist_ok=True)
  with open(out["report"], "w", encoding="utf-8") as f:
    f.write(f"# Continued pretraining from MiniLM, preset {study.name}\n\n"
            + text)
  figure(rows, out["figure"])
  print(text)
  return out
