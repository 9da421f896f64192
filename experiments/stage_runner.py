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

r"""Runs a long study one stage a process, committing each stage's results.

For a study that runs for many hours from a pinned checkout (a git worktree
at the commit whose code it runs) while work goes on in another: every
unfinished stage of the plan runs as its own process (`python -m <study>
--stages <stage>,report`, so report.md and the PNG follow every stage); when
it has finished, the study's result directory is copied into --commit_to (a
worktree of the branch the results belong on) and committed there, those
files only, with the stage's name and numbers in the message. A failed
stage stops the runner (exit 1); rerunning the same command resumes: stages
in the work dir's manifest, and those whose results are already committed
(the study module's `committed(study, stage)`, where it has one: a new
machine's work dir), are skipped without a process. One runner a work dir
(<work_dir>/stage_runner.lock); a corrupt manifest or result file is one
error line naming it.

  nice -n 19 .venv/bin/python -m experiments.stage_runner \
      --study experiments.continued_shifts --preset shifts --threads 1 \
      --work_dir .scratch/shifts --commit_to /work/wt-warmup
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import time

import official_spanbert  # noqa: F401  (before tensorflow: study_lib's)

from experiments import study_lib
from official_spanbert.utils import run_lock

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCK_FILE = "stage_runner.lock"


def log(message: str):
  print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", flush=True)


def summary(stage: str, entry: dict) -> str:
  """A few numbers of a finished stage for the commit message."""
  result = entry.get("result", {})
  keys = ("f1", "exact_match", "blocks", "documents", "contexts",
          "train_questions", "train_features", "dev_questions", "steps")
  parts = [f"{k} {result[k]:.2f}" if isinstance(result[k], float)
           else f"{k} {result[k]}" for k in keys if k in result]
  final = result.get("final", {})
  parts += [f"{k} {final[k]:.3f}" for k in ("mlm_loss", "sbo_loss")
            if k in final]
  if stage.startswith("heldout_mlm:"):
    parts += [f"{s} acc {result[s]['masked_lm_accuracy']:.4f}"
              for s in ("span", "token") if s in result]
  parts.append(f"{entry.get('cpu_s', 0) / 60:.0f} CPU-min")
  return ", ".join(parts)


def commit(results_dir: str, commit_to: str, stage: str, entry: dict):
  """Copies the results into commit_to and commits them (those files)."""
  rel = os.path.relpath(results_dir, REPO)
  dst = os.path.join(commit_to, rel)
  shutil.copytree(results_dir, dst, dirs_exist_ok=True)
  dup = subprocess.run(["duplicates", "--change"], cwd=commit_to,
                       capture_output=True, text=True, check=False)
  log(f"duplicates --change: {dup.stdout.strip()}")
  message = (f"{rel}: stage {stage} finished ({summary(stage, entry)}); "
             f"run by {entry.get('commit')}: {entry.get('command')}")
  for args in (["add", "--", rel], ["commit", "-q", "-m", message, "--", rel]):
    for attempt in range(5):  # another git command may hold the index lock
      done = subprocess.run(["git", "-C", commit_to] + args,
                            capture_output=True, text=True, check=False)
      if done.returncode == 0 or any(
            s in done.stdout + done.stderr for s in ("nothing", "no changes")):
        break
      log(f"git {args[0]} failed ({done.stderr.strip()}); retrying")
      time.sleep(30 * (attempt + 1))
  log(f"committed {rel} in {commit_to}: {stage}")


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--study", default="experiments.continued_shifts",
                  help="the study module (make_study, plan, main)")
  ap.add_argument("--preset", required=True)
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--threads", type=int, default=1)
  ap.add_argument("--commit_to", default="",
                  help="a worktree to copy the results into and commit "
                       "(default: none)")
  args = ap.parse_args(argv)
  module = importlib.import_module(args.study)
  study = module.make_study(args.preset, args.work_dir)
  stages = module.plan(study, list(study.preset.arms),
                       list(study.preset.seeds))
  log(f"{len(stages)} stages: {', '.join(stages)}")
  try:
    os.makedirs(args.work_dir, exist_ok=True)
    with run_lock.hold_file(os.path.join(args.work_dir, LOCK_FILE),
                            "stage runner", args.work_dir):
      _run(args, module, study, stages)
  except (study_lib.StudyError, run_lock.LockedError,
          run_lock.LockWriteError) as e:
    sys.stderr.write(f"stage_runner: error: {e}\n")
    sys.exit(1)
  log("all stages finished")


def _run(args, module, study, stages):
  """Runs the unfinished stages, each in a process (see the docstring)."""
  committed = getattr(module, "committed", None)
  for stage in stages:
    manifest = study_lib.read_manifest(args.work_dir)
    done = manifest["stages"].get(stage, {})
    if stage == "report" or (done and "pending" not in done["result"]):
      continue
    if committed is not None and committed(study, stage):
      log(f"{stage}: committed before, skipped")
      continue
    log(f"{stage}: starting")
    command = [sys.executable, "-m", args.study, f"--preset={args.preset}",
               f"--threads={args.threads}", f"--work_dir={args.work_dir}",
               f"--stages={stage},report"]
    if subprocess.run(command, cwd=REPO, check=False).returncode:
      log(f"{stage}: failed; rerun this command to resume")
      sys.exit(1)
    entry = study_lib.read_manifest(args.work_dir)["stages"].get(stage, {})
    log(f"{stage}: finished, {json.dumps(summary(stage, entry))}")
    if args.commit_to:
      commit(study.results_path(""), args.commit_to, stage, entry)


if __name__ == "__main__":
  main()
