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


def _versus(name: str, scores: dict, arm: str, base: str) -> str:
  """One verdict line: arm's mean minus base's, against the larger sd."""
  gap = statistics.mean(scores[arm]) - statistics.mean(scores[base])
  spread = max(statistics.stdev(scores[arm]), statistics.stdev(scores[base]))
  return (f"- {name}, {arm} vs {base}: {gap:+.2f} (largest seed sd "
          f"{spread:.2f}): " + (f"beats {base}" if gap > spread else
                                f"below {base}" if -gap > spread else
                                "within the seed spread"))


def verdict(rows: List[dict], contrasts=()) -> List[str]:
  """Each continued arm against `none`, each (arm, other) of `contrasts`,
  and the paper's order (span_sbo >= span >= token), per task, against the
  largest seed sd."""
  lines = []
  for task, name in (("coref", "LitBank CoNLL F1"), ("squad", "SQuAD F1")):
    scores = {r["arm"]: _scores(r)[task] for r in rows
              if len(_scores(r)[task]) >= 2}
    if "none" in scores:
      lines += [_versus(name, scores, arm, "none")
                for arm in ("token", "span", "span_sbo") if arm in scores]
    lines += [_versus(name, scores, arm, other) for arm, other in contrasts
              if arm in scores and other in scores]
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


def markdown(rows: List[dict], contrasts=()) -> str:
  """The results table (LitBank columns only if an arm has coref rows), the
  stage timings, the verdict and the commands."""
  with_coref = any(r.get("coref") for r in rows)
  head = ["arm", "objective", "steps", "final MLM loss",
          "held-out MLM acc span / token"]
  if with_coref:
    head += ["LitBank MUC / B³ / CEAF-e F1", "LitBank CoNLL F1", "seeds"]
  head += ["SQuAD v1.1 EM", "SQuAD v1.1 F1", "seeds"]
  lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
  for r in rows:
    pre = r.get("pretraining") or {}
    loss = pre.get("final", {}).get("mlm_loss")
    acc = " / ".join(f"{100 * r['heldout_mlm_accuracy'][k]:.2f}%"
                     if k in r["heldout_mlm_accuracy"] else "—"
                     for k in ("span", "token"))
    cells = [r["arm"], r["label"], str(pre.get("steps", 0)),
             "—" if loss is None else f"{loss:.3f}", acc]
    if with_coref:
      coref = r.get("coref", [])
      cells += [" / ".join(study_lib.mean_sd(
          [c["test"][m]["f1"] for c in coref]) for m in (
              "muc", "b_cubed", "ceafe")),
                study_lib.mean_sd(_scores(r)["coref"]), str(len(coref))]
    cells += [study_lib.mean_sd([s["exact_match"] for s in r["squad"]]),
              study_lib.mean_sd(_scores(r)["squad"]), str(len(r["squad"]))]
    lines.append("| " + " | ".join(cells) + " |")
  lines += ["", "| arm | stage | wall s | CPU s | finished | commit |",
            "|---|---|---|---|---|---|"]
  lines += [f"| {r['arm']} | {n} | {st['wall_s']:.0f} | {st['cpu_s']:.0f} | "
            f"{st['finished']} | {st['commit']} |"
            for r in rows for n, st in r.get("stages", {}).items()]
  commands = sorted({r.get("command") for r in rows if r.get("command")})
  lines += ["", "Verdict (mean ± sd over seeds; a difference counts when it "
            "exceeds the larger seed sd):"] + verdict(rows, contrasts)
  lines += ["", "Commands:"] + [f"- `{c}`" for c in commands]
  return "\n".join(lines) + "\n"


def figure(rows: List[dict], path: str):
  """Continued-pretraining MLM loss; LitBank (if any arm has it) and SQuAD
  F1 with sd bars."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  tasks = [("squad", "SQuAD v1.1 dev F1")]
  if any(r.get("coref") for r in rows):
    tasks.insert(0, ("coref", "LitBank fold 0 test CoNLL F1"))
  fig, axes = plt.subplots(1, 1 + len(tasks),
                           figsize=(5 * (1 + len(tasks)), 4.5))
  for r in rows:
    curve = (r.get("pretraining") or {}).get("curves", {}).get("mlm_loss")
    if curve:
      axes[0].plot(*zip(*curve), label=r["arm"])
  axes[0].set(xlabel="step", ylabel="training MLM loss",
              title="Continued pretraining from MiniLM")
  if axes[0].lines:
    axes[0].legend(fontsize=8)
  for ax, (task, title) in zip(axes[1:], tasks):
    scored = [(r["arm"], _scores(r)[task]) for r in rows if _scores(r)[task]]
    ax.bar(range(len(scored)), [statistics.mean(v) for _, v in scored],
           yerr=[statistics.stdev(v) if len(v) > 1 else 0
                 for _, v in scored], capsize=4)
    ax.set_xticks(range(len(scored)), [a for a, _ in scored],
                  rotation=20 if len(scored) > 4 else 0)
    ax.set(ylabel="F1 (mean ± sd over seeds)", title=title)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def report(study, arms: List[str], contrasts=()) -> dict:
  """report.md and continued.png beside the result files, from them alone;
  `contrasts`: (arm, other) pairs the verdict also compares."""
  rows = [study_lib.read_json(study.result_file(a)) or {
      "arm": a, "label": study.arm(a).label + " (not run yet)",
      "heldout_mlm_accuracy": {}, "squad": [], "coref": []} for a in arms]
  text = markdown(rows, contrasts)
  out = {"report": study.results_path("report.md"),
         "figure": study.results_path("continued.png")}
  os.makedirs(os.path.dirname(out["report"]), exist_ok=True)
  with open(out["report"], "w", encoding="utf-8") as f:
    f.write(f"# Continued pretraining from MiniLM, preset {study.name}\n\n"
            + text)
  figure(rows, out["figure"])
  print(text)
  return out
