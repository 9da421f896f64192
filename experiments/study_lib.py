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

"""What the resumable studies share (experiments/ablation.py, continued.py).

A study is a list of named stages run in order. Finished stages are kept in
<work_dir>/manifest.json and skipped; a stage whose arm has a committed
result file holding it is skipped too (a new session has no work dir); a
stopped stage resumes from its own checkpoints. After every stage of an arm,
its result file is rewritten (atomically) from the manifest.

  manifest = study_lib.run_stages(study, ["records", "pretrain:a", "report"],
                                  None, needs=..., committed=..., run=...,
                                  arm_of=..., arm_result=...)
"""

import dataclasses
import glob
import json
import os
import statistics
import subprocess
import time
from typing import Callable, Dict, List, Optional, Sequence

import tensorflow as tf
import tf_keras

from official_spanbert.utils import atomic_io

MANIFEST = "manifest.json"


class StudyError(ValueError):
  """A study that cannot run as asked (the binaries print it as one line)."""

# Stage kinds whose results are one row a seed, and the result file's list.
SEED_ROWS = {"finetune": "squad", "coref": "coref"}


def stage_file(study, stage: str) -> str:
  """A finished stage's own result file, beside the committed results
  (stages/<stage with : as _>.json), for a study with stage_files set."""
  return study.results_path(os.path.join("stages",
                                         stage.replace(":", "_") + ".json"))


def read_manifest(work_dir: str) -> dict:
  """<work_dir>/manifest.json ({"stages": {}} if there is none).

  Raises:
    StudyError: the file is corrupt (named, with what to do).
  """
  path = os.path.join(work_dir, MANIFEST)
  manifest = read_json(path)
  if manifest is None:
    return {"stages": {}}
  stages = manifest.get("stages")
  if not isinstance(stages, dict) or not all(
      isinstance(e, dict) and "result" in e for e in stages.values()):
    raise StudyError(f"{path} has no \"stages\" object of finished stages "
                     f"with their results; {_CORRUPT_ADVICE}")
  return manifest


def write_json(path: str, value):
  """Writes JSON atomically (a stop never leaves half a file)."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with atomic_io.writing(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
    json.dump(value, f, indent=1)


_CORRUPT_ADVICE = ("the file is corrupt: restore it from git if it is "
                   "committed, or delete it (its stages then run again)")


def read_json(path: str) -> Optional[dict]:
  """The JSON object in `path`; None if there is no such file.

  Raises:
    StudyError: not a JSON object (one line naming the file).
  """
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8", errors="replace") as f:
    text = f.read()
  try:
    value = json.loads(text)
  except ValueError as e:
    raise StudyError(f"{path} is not valid JSON ({e}); {_CORRUPT_ADVICE}"
                     ) from None
  if not isinstance(value, dict):
    raise StudyError(f"{path} holds {text.strip()[:40]!r}, not a JSON "
                     f"object; {_CORRUPT_ADVICE}")
  return value


def selected(stage: str, tokens: Optional[List[str]]) -> bool:
  """Whether --stages (names or prefixes such as `pretrain`) takes it."""
  return not tokens or any(stage == t or stage.startswith(t + ":")
                           for t in tokens)


def preset_config(preset) -> dict:
  """The preset as the manifest and the result files record it."""
  config = dataclasses.asdict(preset)
  return {k: list(v) if isinstance(v, tuple) else v
          for k, v in config.items()}


def timed_stage(study, stage: str, run: Callable[[], dict]) -> dict:
  """Runs one stage; its manifest entry (result, wall and CPU seconds, when
  it finished, the study's commit and command)."""
  print(f"{time.strftime('%H:%M:%S')} {stage}: running", flush=True)
  t0, c0 = time.time(), time.process_time()
  result = run()
  return {"result": result, "wall_s": time.time() - t0,
          "cpu_s": time.process_time() - c0,
          "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
          "commit": study.commit, "command": study.command}


def run_stages(study, stages: List[str], tokens: Optional[List[str]], *,
               needs: Callable[[str], List[str]],
               committed: Callable[[str], bool],
               run: Callable[[str, dict], dict],
               arm_of: Callable[[str], Optional[str]],
               arm_result: Callable[[str, dict], dict]) -> dict:
  """Runs the selected unfinished `stages` in order; returns the manifest.

  A study's work dir and result files hold one preset: another is refused.
  """
  os.makedirs(study.work_dir, exist_ok=True)
  manifest = read_manifest(study.work_dir)
  config = preset_config(study.preset)
  if manifest.get("preset", config) != config:
    raise StudyError(f"{study.work_dir} holds a study with another preset "
                     f"({manifest['preset']}); use a new --work_dir")
  manifest["preset"] = config
  path = os.path.join(study.work_dir, MANIFEST)
  for arm in sorted({arm_of(s) for s in stages if arm_of(s)}):
    budget = (read_json(study.result_file(arm)) or {}).get("budget", config)
    if budget != config:
      raise StudyError(f"{study.result_file(arm)} holds a result with "
                       f"another preset ({budget}); use another --results_dir")
  for stage in stages:
    if not selected(stage, tokens):
      continue
    done = manifest["stages"].get(stage, {})
    if done and stage != "report" and "pending" not in done["result"]:
      print(f"{stage}: done ({manifest['stages'][stage]['finished']})")
      continue
    if committed(stage):
      print(f"{stage}: done (in {study.result_file(arm_of(stage))})")
      continue
    inputs = needs(stage)
    missing = [s for s in inputs if s not in manifest["stages"]
               and not committed(s)]
    pending = [s for s in inputs if "pending" in manifest["stages"].get(
        s, {}).get("result", {})]
    if pending:
      print(f"{stage}: skipped, {pending[0]} is pending")
      continue
    if missing:
      raise StudyError(f"stage {stage} needs {', '.join(missing)} first")
    manifest["stages"][stage] = timed_stage(study, stage,
                                            lambda: run(stage, manifest))
    write_json(path, manifest)
    if getattr(study, "stage_files", False):
      write_json(stage_file(study, stage), dict(manifest["stages"][stage],
                                                stage=stage))
    if arm_of(stage):
      write_json(study.result_file(arm_of(stage)),
                 arm_result(arm_of(stage), manifest))
    tf_keras.backend.clear_session()
    print(f"{time.strftime('%H:%M:%S')} {stage}: done in "
          f"{manifest['stages'][stage]['wall_s']:.0f} s", flush=True)
  return manifest


# ------------------------------------------------------------ result files

# The code a study runs (experiments/...): a result names its commit, with
# "+dirty" when any of these or the library differ from it.
CODE = ("ablation.py", "ablation_report.py", "continued.py",
        "continued_report.py", "continued_shifts.py", "study_lib.py",
        "study_stages.py", "common.py", "finetune_coref.py",
        "finetune_squad.py", "finetune_glue.py", "finetune_ner.py")


def git_commit() -> str:
  """The repository's HEAD (with "+dirty" if tracked files changed)."""
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  try:
    head = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12",
                           "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", repo, "diff", "--quiet", "HEAD", "--",
         "official_spanbert", "configs", "benchmarks/common.py"] + [
             os.path.join("experiments", f) for f in CODE],
        check=False).returncode
  except (OSError, subprocess.CalledProcessError):
    return "unknown"
  return head + ("+dirty" if dirty else "")


def arm_of(stage: str) -> Optional[str]:
  """The arm a stage belongs to (None for records, report...)."""
  kind, _, rest = stage.partition(":")
  if kind in ("pretrain", "heldout_mlm") or kind in SEED_ROWS:
    return rest.split(":")[0]
  return None


def scalars(model_dir: str, subdir: str = "train") -> Dict[str, List]:
  """{tag: [(step, value)]} from a run's event files (last write wins)."""
  values = {}
  for path in sorted(glob.glob(os.path.join(model_dir, subdir, "events*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for v in event.summary.value:
        if v.HasField("tensor"):
          values.setdefault(v.tag, {})[event.step] = float(
              tf.make_ndarray(v.tensor))
  return {tag: sorted(steps.items()) for tag, steps in values.items()}


def mean_sd(values: List[float]) -> str:
  """"mean ± sd" of per-seed values ("—" for none)."""
  if not values:
    return "—"
  sd = statistics.stdev(values) if len(values) > 1 else 0.0
  return f"{statistics.mean(values):.2f} ± {sd:.2f}"


def arm_result(study, arm: str, manifest: dict) -> dict:
  """The arm's committed result file, updated with the manifest's stages.

  What an earlier session committed is kept (its scratch manifest is gone);
  a stage finished in this work dir replaces its part.
  """
  spec = study.arm(arm)
  out = read_json(study.result_file(arm)) or {
      "arm": arm, "preset": study.name, "label": spec.label,
      "experiment": spec.experiment or None,
      "masking_scheme": spec.masking_scheme or None,
      "budget": manifest["preset"], "pretraining": None,
      "heldout_mlm_accuracy": {}, "heldout_mlm_loss": {}, "squad": [],
      "stages": {}}
  stages = manifest["stages"]
  if "records:vocab" in stages:
    out["vocab"] = stages["records:vocab"]["result"]
  for name, stage in stages.items():
    if arm_of(name) != arm:
      continue
    out["stages"][name] = {k: stage.get(k) for k in (
        "wall_s", "cpu_s", "finished", "commit", "command")}
    result = stage["result"]
    if name.startswith("pretrain:"):
      curves = scalars(study.pretrain_dir(arm))
      out["pretraining"] = {
          "steps": result["steps"], "start_step": result["start_step"],
          "final_loss": result["final"].get("training_loss"),
          "final": result["final"],
          "wall_s": stage["wall_s"], "cpu_s": stage["cpu_s"],
          "examples_per_s": result["examples_per_s"],
          "curves": {tag: curves[tag] for tag in (
              "training_loss", "mlm_loss", "sbo_loss", "masked_lm_accuracy",
              "next_sentence_loss") if tag in curves}}
    elif name.startswith("heldout_mlm:"):
      for scheme, metrics in result.items():
        out["heldout_mlm_accuracy"][scheme] = metrics["masked_lm_accuracy"]
        out["heldout_mlm_loss"][scheme] = metrics["mlm_loss"]
      out["heldout"] = result
    elif name.partition(":")[0] in SEED_ROWS:
      key = SEED_ROWS[name.partition(":")[0]]
      row = dict(result, wall_s=stage["wall_s"], cpu_s=stage["cpu_s"])
      out[key] = sorted([r for r in out.get(key, [])
                         if r["seed"] != row["seed"]] + [row],
                        key=lambda r: r["seed"])
  first = min(out["stages"].values(), key=lambda st: st["finished"] or "",
              default={})
  out["commit"], out["command"] = first.get("commit"), first.get("command")
  return out


def committed(study, stage: str, later: Sequence[str] = ()) -> bool:
  """Whether the committed result file already holds `stage`'s result.

  A pretraining stage counts only if its checkpoint is here or all `later`
  stages of its arm are committed (a new session has no checkpoints).
  """
  arm = arm_of(stage)
  result = read_json(study.result_file(arm)) if arm else None
  if not result:
    return False
  kind, _, rest = stage.partition(":")
  if kind == "heldout_mlm":
    return set(result["heldout_mlm_accuracy"]) >= {"span", "token"}
  if kind in SEED_ROWS:
    return int(rest.split(":")[1]) in {
        r["seed"] for r in result.get(SEED_ROWS[kind], [])}
  if kind == "pretrain" and result["pretraining"]:
    if tf.train.latest_checkpoint(study.pretrain_dir(arm)):
      return True
    return all(committed(study, s) for s in later)
  return False
