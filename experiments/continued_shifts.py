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

r"""Study 2 of continued pretraining (issue 47): SQuADShifts text, head warm-up.

Issue 35's study (experiments/continued.py) continued all-MiniLM-L6-v2 on
literary prose with fresh heads trained through the encoder from step 0, and
fine-tuned SQuAD for 0.05 epoch: every arm lost ~10 F1 against `none`. This
one changes three things: the corpus is the text the downstream task reads
(the SQuADShifts training contexts: new_wiki, reddit, amazon_reviews;
contexts only, deduplicated, never a question; the SQuAD dev sets stay
unseen), the MLM/SBO heads warm up alone first (task.head_warmup_steps,
modeling/head_warmup.py), and SQuAD is fine-tuned for whole epochs of a
subset of the SQuADShifts questions, scored on a fixed slice of SQuAD v1.1
dev.

Arms (experiments/continued_arms/<arm>.yaml), every one from the converted
MiniLM, at equal compute (the same steps, batch, schedule, data order and
seed; a warm-up step costs what any step costs):

  none                the converted MiniLM as it is
  token, span, span_sbo   continued with the head warm-up
  span_sbo_no_warmup  span_sbo with heads and encoder trained from step 0
                      (issue 35's recipe), the warm-up's control

Stages, in order (the machinery of continued.py, study_stages.py and
study_lib.py: a manifest of finished stages in <work_dir>/manifest.json, one
result file an arm under continued_results/<preset>/, rewritten after each
of its stages and committed; a stopped stage resumes from its checkpoints;
checkpoints stay in the work dir):

  base                    the converted all-MiniLM-L6-v2 (continued.stage_base)
  corpus                  the deduplicated SQuADShifts contexts, one document
                          an article (a reddit comment is one of its own)
  records:single, records:heldout   the corpus split (every heldout_every-th
                          document held out), uncased records
  finetune_records        the SQuADShifts question subset's features, the
                          fixed dev slice
  pretrain:<arm>          train_lib.run from the base
  heldout_mlm:<arm>       held-out MLM, span- and token-masked blocks
  finetune:<arm>:<seed>   SQuAD fine-tuning, scored once on the dev slice
  report                  report.md and continued.png from the result files

The plan of preset `shifts` (experiments/continued_arms/shifts.yaml, the
queue in its `arms` order: none, span_sbo, span_sbo_no_warmup, span, token;
seeds 1-3), and each stage's CPU time estimated from the timing run (preset
`shifts_timing` at commit 2e87549, 2026-12-04 04:04-04:35, one TensorFlow
thread, load 7-8 on the 2-core EPYC; continued_results/shifts_timing/:
pilot.json, manifest.json):

  stage                 measured in the timing run        estimate (shifts)
  base                  3 CPU-s (9 s wall)                 < 0.01 h
  corpus                < 1 s: 5,664 contexts, 2 dups      < 0.01 h
  records:single, :heldout  5 CPU-s: 10,557 + 168 blocks   < 0.01 h
  finetune_records      3 CPU-s: 3,007 q, 7,622 features   < 0.01 h
  pretrain:<arm> (x4)   6.96 CPU-s a step (pilot, 20 timed
                        steps of 32 x 128, span_sbo)        300 steps: 0.6 h
  heldout_mlm:<arm> (x5)  33 CPU-s (2 x 160 blocks)        0.01 h
  finetune:<arm>:<s> (x15)  193 CPU-s for 30 steps and 303
                        questions: ~4 CPU-s a step,
                        ~0.04 CPU-s a dev feature           239 steps + 2,524
                                                            questions: 0.35 h
  report                1 CPU-s                            < 0.01 h
  total                                                    ~7.7 CPU-hours

At this machine's load a niced run gets about a third of a core: ~23 hours
of wall time, an arm's results landing every ~4-5 hours (none first, in
~3.5 h). experiments/stage_runner.py runs it one stage a process and commits
each stage's results as they land.

  # the study, from a worktree pinned to the commit it runs (rerun the same
  # command to resume it, in any session):
  nice -n 19 .venv/bin/python -m experiments.stage_runner \
      --study experiments.continued_shifts --preset shifts --threads 1 \
      --work_dir .scratch/shifts --commit_to <the branch's worktree>
  # or all stages in one process:
  .venv/bin/python -m experiments.continued_shifts --preset=shifts \
      --threads=1 --work_dir .scratch/shifts

  # the report alone, from the committed result files:
  .venv/bin/python -m experiments.continued_shifts --preset=shifts \
      --work_dir .scratch/shifts --stages report
"""

import dataclasses
import json
import os
from typing import List, Optional

from experiments import continued
from experiments import continued_report
from experiments import study_lib
from experiments import study_stages
from experiments.study_lib import arm_of

ARM_NAMES = ("none", "token", "span", "span_sbo", "span_sbo_no_warmup")
# The verdict's extra comparison: the warm-up against its control.
CONTRASTS = (("span_sbo", "span_sbo_no_warmup"),)
CORPUS_FILE = "squadshifts_contexts.txt"


@dataclasses.dataclass(frozen=True)
class Preset(continued.Preset):
  """continued.Preset plus the head warm-up of every arm that has it; its
  `corpus` names SQuADShifts files (under <data>/squad/)."""
  head_warmup_steps: int = 0
  encoder_warmup_steps: int = 0
  arms: tuple = ARM_NAMES


def make_study(preset_name: str, work_dir: str,
               data: str = study_stages.DATA, **kwargs) -> continued.Study:
  """The preset's study: its corpus is built from `data`/squad by the corpus
  stage."""
  preset = continued.load_preset(preset_name, Preset)
  study = continued.Study(
      preset, work_dir, corpus=os.path.join(work_dir, "source", CORPUS_FILE),
      name=preset_name, squad_dir=os.path.join(data, "squad"),
      results_dir=os.path.join(continued.RESULTS, preset_name),
      arms=continued.load_arms(ARM_NAMES), stage_files=True, **kwargs)
  study.pretrain_init = study.base_dir()
  return study


# -------------------------------------------------------------------- stages


def contexts_corpus(squad_files: List[str], out: str) -> dict:
  """The contexts of SQuAD files as a corpus (BERT format: one paragraph a
  line, a blank line between documents), each context once (the first time
  it appears; questions and answers are never read). A document is an
  article's contexts in order, but an article of more than 200 contexts (the
  reddit file's single `Filtered_Reddit_Comments`) gives one document a
  context: its comments are unrelated."""
  seen, counts = set(), {"documents": 0, "contexts": 0, "duplicates": 0,
                         "bytes": 0}
  os.makedirs(os.path.dirname(out), exist_ok=True)
  tmp = out + ".incomplete"
  with open(tmp, "w", encoding="utf-8") as f:
    for path in squad_files:
      with open(path, encoding="utf-8") as src:
        articles = json.load(src)["data"]
      for article in articles:
        lines = []
        for paragraph in article["paragraphs"]:
          text = " ".join(paragraph["context"].split())
          if not text or text in seen:
            counts["duplicates"] += bool(text)
            continue
          seen.add(text)
          lines.append(text)
        documents = ([[line] for line in lines] if len(
            article["paragraphs"]) > 200 else [lines] if lines else [])
        for doc in documents:
          f.write("\n".join(doc) + "\n\n")
          counts["documents"] += 1
          counts["contexts"] += len(doc)
          counts["bytes"] += sum(len(line.encode()) + 1 for line in doc)
  os.replace(tmp, out)
  return counts


def stage_corpus(study: continued.Study) -> dict:
  files = [os.path.join(study.squad_dir, n) for n in study.preset.corpus]
  missing = [f for f in files if not os.path.exists(f)]
  if missing:
    raise study_lib.StudyError(f"{missing[0]} does not exist; set "
                               "SPANBERT_DATA_DIR to the data folder")
  return dict(contexts_corpus(files, study.corpus),
              files=list(study.preset.corpus))


# -------------------------------------------------------------------- driver


def plan(study: continued.Study, arms: List[str],
         seeds: List[int]) -> List[str]:
  """Every stage in the queue's order: the shared inputs, then arm by arm its
  pretraining, held-out MLM and fine-tuning seeds (see continued.plan)."""
  out = ["base", "corpus", "records:single", "records:heldout",
         "finetune_records"]
  for a in arms:
    if study.arm(a).experiment:
      out.append(f"pretrain:{a}")
    out += [f"heldout_mlm:{a}"] + [f"finetune:{a}:{s}" for s in seeds]
  return out + ["report"]


def needs(study: continued.Study, stage: str) -> List[str]:
  """The stages `stage` reads the output of."""
  if stage.startswith("records:"):
    return ["base", "corpus"]
  return continued.needs(study, stage)


def run_stage(study: continued.Study, stage: str, manifest: dict,
              arms: List[str]):
  kind = stage.partition(":")[0]
  if kind == "base":
    return continued.stage_base(study)
  if kind == "corpus":
    return stage_corpus(study)
  if kind in study_stages.STAGES:
    return study_stages.run_stage(study, stage, manifest)
  return continued_report.report(
      study, [a for a in ARM_NAMES
              if a in arms or os.path.exists(study.result_file(a))],
      CONTRASTS)


def committed(study: continued.Study, stage: str) -> bool:
  """Whether `stage`'s result is in the committed result files (a
  pretraining once its arm's later stages are, or its checkpoint is here)."""
  return continued.committed(study, stage, plan)


def run_study(study: continued.Study, arms: List[str], seeds: List[int],
              tokens: Optional[List[str]] = None) -> dict:
  """Runs the selected unfinished stages in order; returns the manifest."""
  return study_lib.run_stages(
      study, plan(study, arms, seeds), tokens,
      needs=lambda s: needs(study, s),
      committed=lambda s: committed(study, s),
      run=lambda s, m: run_stage(study, s, m, arms), arm_of=arm_of,
      arm_result=lambda a, m: study_lib.arm_result(study, a, m))


def main(argv=None):
  continued.cli(argv, module="experiments.continued_shifts", doc=__doc__,
                make_study_fn=make_study, arm_names=ARM_NAMES,
                run_study_fn=run_study,
                pilot_inputs=["base", "corpus", "records:single"])


if __name__ == "__main__":
  main()
