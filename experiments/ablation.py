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

r"""The paper's ablations (Tables 6 and 7) as one resumable study.

Every arm pretrains the same encoder for the same steps, batch, schedule, data
order and seed; only the masking scheme or objective differs:

  random_init   no pretraining (the floor)
  token         bert/token_single: subword tokens, one sequence, MLM
  token_nsp     bert/token_nsp: subword tokens, two segments, MLM + NSP
  whole_word    spanbert/no_sbo, masking_scheme=whole_word
  named_entity  spanbert/no_sbo, masking_scheme=named_entity (tagged records)
  noun_phrase   spanbert/no_sbo, masking_scheme=noun_phrase (tagged records)
  span          spanbert/no_sbo: geometric spans, MLM
  span_sbo      spanbert/pretraining: geometric spans, MLM + SBO

Then each arm is fine-tuned with `spanbert/squad_v1` (encoder restored through
task.init_checkpoint) on all SQuADShifts training questions (new_wiki +
amazon_reviews + reddit) with several seeds and scored on SQuAD v1.1 dev with
the official metric; and its MLM accuracy is measured on span-masked blocks
of a held-out slice of the corpus (every `heldout_every`-th document, counted
over the corpus files in sorted order; pretraining never sees them).

Arms and presets are YAML beside this file (experiments/ablation_arms/<arm>.yaml
and {cpu,gpu,micro}.yaml; the preset files say how each was sized). The stages
are study_stages', run by study_lib.run_stages. In order (a manifest of
finished ones is <work_dir>/manifest.json; finished stages are skipped, a
stopped stage resumes from its checkpoints):

  records:single, records:nsp, records:tagged, records:heldout
      the train/held-out corpus split and pretraining records at the preset's
      sequence length (tagged: --tag_spans=entities,noun_phrases; without
      spaCy the named_entity/noun_phrase arms are pending)
  finetune_records        SQuADShifts training features, the dev JSON
  pretrain:<arm>          official_spanbert.training.train_lib.run, model_dir per arm
  heldout_mlm:<arm>       held-out span-masked MLM accuracy
  finetune:<arm>:<seed>   train + one evaluation on dev
  report                  report.md and ablation.png beside the result
                          files, rebuilt from them (ablation_report)

A stopped pretraining or fine-tuning stage resumes from its last checkpoint
(checked here: pretrain:span_sbo killed with SIGKILL after ckpt-100 resumed
from step 100). A SIGTERM exits (releasing the model_dir lock) only once the
current loop of steps_per_loop steps ends.

--stages takes stage names or their prefixes (`records`, `pretrain`,
`finetune:span`); --arms restricts the arms.

  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation
  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation \
      --arms span,span_sbo --stages pretrain,heldout_mlm
  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation \
      --stages report

micro is the test's preset (1 layer, hidden 64, a few steps and questions).
"""

import argparse
import dataclasses
import os
import shlex
import signal
import sys
import time
from typing import List, Optional

import official_spanbert  # noqa: F401  (before tensorflow)
import tf_keras
import yaml

from official_spanbert.training import train_lib

from experiments import ablation_report
from experiments import study_lib
from experiments import study_stages
from experiments.study_lib import MANIFEST, arm_of  # noqa: F401

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "ablation_results")
ARM_NAMES = ("random_init", "token", "token_nsp", "whole_word",
             "named_entity", "noun_phrase", "span", "span_sbo")
ARMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "ablation_arms")


def _yaml(name: str) -> dict:
  with open(os.path.join(ARMS_DIR, f"{name}.yaml"), encoding="utf-8") as f:
    return yaml.safe_load(f)


@dataclasses.dataclass(frozen=True)
class Arm:
  """One arm (experiments/ablation_arms/<name>.yaml)."""
  experiment: str = ""          # "" for random_init
  masking_scheme: str = ""
  records: str = ""             # records:<kind> it pretrains on
  label: str = ""
  # The paper's SQuAD 2.0 dev F1 (Joshi et al., 2020), for direction only:
  # arXiv 1907.10529v3 Table 6/7 (BERT-large-size checkpoints at 1.2M steps,
  # footnote 10). Every Table 6 row is bi-sequence with NSP, so whole_word,
  # named_entity and noun_phrase match their row in masking scheme only.
  paper_squad2_f1: str = ""


ARMS = {name: Arm(**_yaml(name)) for name in ARM_NAMES}


@dataclasses.dataclass(frozen=True)
class Preset:
  """Sizes and budgets of one study (the same for every arm)."""
  layers: int
  hidden: int
  heads: int
  ffn: int
  seq_length: int
  batch_size: int
  pretrain_steps: int
  learning_rate: float
  warmup_steps: int
  steps_per_loop: int
  checkpoint_interval: int
  max_predictions: int
  finetune_seq_length: int
  doc_stride: int
  query_length: int
  finetune_batch_size: int
  finetune_steps: int
  finetune_learning_rate: float
  seeds: tuple = (1, 2, 3)
  arms: tuple = ARM_NAMES
  num_shards: int = 8
  shuffle_buffer: int = 20_000
  corpus_bytes: int = 0         # per corpus file; 0: whole files
  heldout_every: int = 50
  train_questions: int = 0      # per SQuADShifts file; 0: all
  dev_questions: int = 0        # 0: the full dev set
  eval_batch_size: int = 64
  data_seed: int = 1
  model_seed: int = 1
  mixed_precision: str = ""
  num_gpus: int = 0
  vocab_size: int = 0           # 0: the cased BERT vocab; else one learned
  vocab_max_lines: int = 0      # on this many training lines (0: all)
  dev_every_article: int = 0    # score every n-th dev article (0: all)


def load_preset(name: str) -> Preset:
  data = _yaml(name)
  for key in ("seeds", "arms"):
    if key in data:
      data[key] = tuple(data[key])
  return Preset(**data)


PRESETS = {name: load_preset(name) for name in ("cpu", "gpu", "micro")}


@dataclasses.dataclass
class Study(study_stages.Study):
  """A study of the ablation's arms."""
  arms: dict = dataclasses.field(default_factory=lambda: dict(ARMS))


def committed(study: Study, stage: str) -> bool:
  """study_lib.committed; a pretraining once its arm's later stages are."""
  arm = arm_of(stage)
  later = ([f"heldout_mlm:{arm}"] + [f"finetune:{arm}:{s}"
                                     for s in study.preset.seeds]
           if stage.startswith("pretrain:") else [])
  return study_lib.committed(study, stage, later)


# --------------------------------------------------------------------- pilot


def shape_preset(preset: Preset, shape: str) -> Preset:
  """"LxH": L layers of hidden H, H/64 heads, FFN 4H."""
  layers, hidden = (int(x) for x in shape.split("x"))
  return dataclasses.replace(preset, layers=layers, hidden=hidden,
                             heads=hidden // 64, ffn=4 * hidden)


def pilot(study: Study, shapes: List[str], cpu_budget_s: float,
          segment_steps: int, heldout_batches: int) -> dict:
  """Which encoder shape learns fastest per CPU-second.

  For each shape, span_sbo pretrains on this study's records in segments of
  `segment_steps` (each resumes from the last checkpoint; the schedule is the
  preset's, so every shape is at the same point of it at the same step)
  until the process has spent `cpu_budget_s` CPU seconds training; after
  every segment the held-out span-masked MLM loss on the first
  `heldout_batches` held-out batches (not counted).
  """
  results = {}
  for shape in shapes:
    sized = dataclasses.replace(study, preset=shape_preset(study.preset,
                                                           shape))
    model_dir = study.path("pilot", shape)
    points, cpu, wall, step = [], 0.0, 0.0, 0
    while cpu < cpu_budget_s and step < study.preset.pretrain_steps:
      step += segment_steps
      params = study_stages.pretrain_params(sized, "span_sbo")
      params.trainer.train_steps = step
      params.trainer.checkpoint_interval = segment_steps
      t0, c0 = time.time(), time.process_time()
      tf_keras.utils.set_random_seed(study.preset.model_seed)
      train_lib.run(params, model_dir, mode="train")
      cpu += time.process_time() - c0
      wall += time.time() - t0
      tf_keras.backend.clear_session()
      held = study_stages.heldout_mlm(sized, "span_sbo", "span",
                                      heldout_batches, checkpoint=model_dir)
      tf_keras.backend.clear_session()
      points.append({"step": step, "train_cpu_s": round(cpu, 1),
                     "train_wall_s": round(wall, 1),
                     "heldout_mlm_loss": held["mlm_loss"],
                     "heldout_mlm_accuracy": held["masked_lm_accuracy"]})
      print(f"pilot {shape} step {step}: {cpu:.0f} CPU s, held-out MLM "
            f"loss {held['mlm_loss']:.3f}", flush=True)
    results[shape] = points
    study_lib.write_json(study.results_path("pilot.json"), {
        "preset": study.name, "budget_cpu_s": cpu_budget_s,
        "segment_steps": segment_steps, "heldout_batches": heldout_batches,
        "commit": study.commit, "command": study.command, "shapes": results})
  return results


# -------------------------------------------------------------------- driver


def plan(arms: List[str], seeds: List[int], vocab: bool = False
         ) -> List[str]:
  """Every stage of a study of `arms`, in order (vocab: learn one first)."""
  kinds = {ARMS[a].records for a in arms if ARMS[a].records}
  stages = ["records:vocab"] if vocab else []
  stages += [f"records:{k}" for k in ("single", "nsp", "tagged") if k in kinds]
  stages += ["records:heldout", "finetune_records"]
  stages += [f"pretrain:{a}" for a in arms if ARMS[a].experiment]
  stages += [f"heldout_mlm:{a}" for a in arms]
  stages += [f"finetune:{a}:{s}" for a in arms for s in seeds]
  return stages + ["report"]


def needs(stage: str) -> List[str]:
  """The stages `stage` reads the output of."""
  kind, _, rest = stage.partition(":")
  arm = rest.split(":")[0]
  if kind == "pretrain":
    return [f"records:{ARMS[arm].records}"]
  if kind == "heldout_mlm":
    return ["records:heldout"] + (
        [f"pretrain:{arm}"] if ARMS[arm].experiment else [])
  if kind == "finetune":
    return ["finetune_records"] + (
        [f"pretrain:{arm}"] if ARMS[arm].experiment else [])
  return []


def run_stage(study: Study, stage: str, manifest: dict, arms: List[str]):
  if stage == "report":
    return ablation_report.stage_report(study, arms)
  return study_stages.run_stage(study, stage, manifest)


def run_study(study: Study, arms: List[str], seeds: List[int],
              tokens: Optional[List[str]] = None) -> dict:
  """Runs the selected unfinished stages; returns the manifest."""
  vocab = bool(study.preset.vocab_size)

  def inputs(stage: str) -> List[str]:
    return needs(stage) + (["records:vocab"] if vocab and (
        stage.startswith("records:") and stage != "records:vocab"
        or stage == "finetune_records") else [])

  return study_lib.run_stages(
      study, plan(arms, seeds, vocab=vocab), tokens, needs=inputs,
      committed=lambda stage: committed(study, stage),
      run=lambda stage, manifest: run_stage(study, stage, manifest, arms),
      arm_of=arm_of,
      arm_result=lambda arm, manifest: study_lib.arm_result(study, arm,
                                                            manifest))


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu",
                  help="experiments/ablation_arms/<preset>.yaml")
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--arms", default="",
                  help="comma-separated arms (default: the preset's)")
  ap.add_argument("--stages", default="",
                  help="comma-separated stages or prefixes (default: all)")
  ap.add_argument("--seeds", type=int, nargs="+", default=None,
                  help="fine-tuning seeds (default: the preset's)")
  ap.add_argument("--corpus", default=Study.corpus)
  ap.add_argument("--results_dir", default=None,
                  help="the arms' result files, report.md and ablation.png "
                  "(default: experiments/ablation_results/<preset>, committed)")
  ap.add_argument("--tag_processes", type=int, default=2)
  ap.add_argument("--pilot", default="",
                  help="comma-separated shapes LxH (e.g. 2x256,4x256): run "
                  "the shape pilot on this work dir's records instead")
  ap.add_argument("--pilot_cpu_s", type=float, default=300)
  ap.add_argument("--pilot_segment_steps", type=int, default=100)
  ap.add_argument("--pilot_heldout_batches", type=int, default=16)
  args = ap.parse_args(argv)
  # A SIGTERM unwinds like an error, so train_lib.run releases its model_dir lock.
  signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
  preset = PRESETS[args.preset]
  arms = args.arms.split(",") if args.arms else list(preset.arms)
  unknown = [a for a in arms if a not in ARMS]
  if unknown:
    ap.error(f"unknown arms {unknown}; choose from {list(ARMS)}")
  study = Study(preset, args.work_dir, corpus=args.corpus,
                tag_processes=args.tag_processes, name=args.preset,
                results_dir=args.results_dir or os.path.join(
                    RESULTS, args.preset),
                command=shlex.join(["python", "-m", "experiments.ablation"] + (
                    argv if argv is not None else sys.argv[1:])))
  try:
    if args.pilot:
      run_study(study, ["span_sbo"], [], ["records"])
      pilot(study, args.pilot.split(","), args.pilot_cpu_s,
            args.pilot_segment_steps, args.pilot_heldout_batches)
      return
    run_study(study, arms, args.seeds or list(preset.seeds),
              args.stages.split(",") if args.stages else None)
  except study_lib.StudyError as e:
    ap.exit(1, f"{ap.prog}: error: {e}\n")


if __name__ == "__main__":
  main()
