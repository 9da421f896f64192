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

r"""Continued pretraining of a real encoder, measured downstream (issue 35).

Every arm starts from the converted all-MiniLM-L6-v2 with fresh heads and
continues on the same lowercased literary prose for the same steps, batch,
schedule, data order and seed; only objective and masking differ. Arms and
presets are YAML beside this file:
`experiments/continued_arms/{none,token,span,span_sbo}.yaml` and
`{cpu,micro}.yaml`. Stages, in the queue's order (the ablation's design: a
manifest of finished stages in <work_dir>/manifest.json, one result file an
arm under continued_results/<preset>/ updated after every stage, a stopped
stage resumes from its checkpoints):

  base                    the converted MiniLM (micro: a tiny random encoder
                          in the same format)
  records:single, records:heldout   the corpus split, uncased records
  pretrain:<arm>          train_lib.run from the base, model_dir per arm
  heldout_mlm:<arm>       held-out MLM, span- and token-masked blocks
  coref:<arm>:<seed>      LitBank fold 0, the RESULTS recipe, scored on test
  finetune_records        SQuADShifts features (uncased), dev subset
  finetune:<arm>:<seed>   SQuAD v1.1 as the ablation scores it
  report                  report.md and continued.png from the result files

  .venv/bin/python -m experiments.continued --preset=cpu --threads=1 \
      --work_dir .scratch/continued
  .venv/bin/python -m experiments.continued --preset=cpu \
      --work_dir .scratch/continued --pilot_steps 30     # time the steps
  .venv/bin/python -m experiments.continued --preset=cpu \
      --work_dir .scratch/continued --stages report
"""

import argparse
import dataclasses
import os
import shlex
import shutil
import signal
import sys
import time
from typing import List, Optional

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras
import yaml

from official_spanbert import interop
from official_spanbert.interop import weight_map

from experiments import common
from experiments import finetune_coref
from experiments import continued_report
from experiments import study_lib
from experiments import study_stages
from experiments.study_lib import arm_of

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "continued_results")
ARM_NAMES = ("none", "token", "span", "span_sbo")


@dataclasses.dataclass(frozen=True)
class Arm:
  """One arm (experiments/continued_arms/<name>.yaml)."""
  label: str
  experiment: str               # "" for none: no continued pretraining
  masking_scheme: str
  records: str = "single"
  # Whether the preset's head warm-up (head_warmup_steps, a preset field of
  # experiments/continued_shifts.py) applies to this arm.
  head_warmup: bool = True


ARMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "continued_arms")


def _yaml(name: str) -> dict:
  with open(os.path.join(ARMS_DIR, f"{name}.yaml"), encoding="utf-8") as f:
    return yaml.safe_load(f)


def load_arms(names=ARM_NAMES) -> dict:
  return {name: Arm(**_yaml(name)) for name in names}


@dataclasses.dataclass(frozen=True)
class Preset:
  """experiments/continued_arms/<preset>.yaml (the same for every arm)."""
  base: str
  corpus: tuple
  heldout_every: int
  corpus_bytes: int
  seq_length: int
  batch_size: int
  max_predictions: int
  pretrain_steps: int
  learning_rate: float
  warmup_steps: int
  steps_per_loop: int
  checkpoint_interval: int
  num_shards: int
  shuffle_buffer: int
  data_seed: int
  model_seed: int
  mixed_precision: str
  seeds: tuple
  finetune_seq_length: int
  doc_stride: int
  query_length: int
  finetune_batch_size: int
  finetune_steps: int
  finetune_learning_rate: float
  eval_batch_size: int
  dev_every_article: int
  train_questions: int
  dev_questions: int
  # LitBank fine-tuning (0: a preset without coref stages).
  coref_epochs: float = 0
  coref_evaluations: int = 0
  coref_ffnn_size: int = 0
  coref_max_training_segments: int = 0
  coref_learning_rate: float = 0
  coref_head_multiplier: float = 0
  coref_max_segment_len: int = 0
  coref_max_train_docs: int = 0
  coref_max_eval_docs: int = 0
  num_gpus: int = 0
  arms: tuple = ARM_NAMES


def load_preset(name: str, cls=Preset) -> Preset:
  data = _yaml(name)
  data.update(corpus=tuple(data["corpus"]), seeds=tuple(data["seeds"]))
  if "arms" in data:
    data["arms"] = tuple(data["arms"])
  return cls(**data)


@dataclasses.dataclass
class Study(study_stages.Study):
  """A study of the continued arms, from the base encoder, its vocab."""
  arms: dict = dataclasses.field(default_factory=load_arms)
  lower_case: bool = True

  def base_dir(self) -> str:
    return self.path("base")

  def arm(self, name: str) -> Arm:
    return self.arms[name]

  def vocab_file(self) -> str:
    return os.path.join(self.base_dir(), interop.VOCAB_FILE)

  def encoder(self) -> dict:
    with open(os.path.join(self.base_dir(), interop.PARAMS_FILE),
              encoding="utf-8") as f:
      return yaml.safe_load(f)["task"]["model"]["encoder"]


def make_study(preset_name: str, work_dir: str,
               data: str = study_stages.DATA,
               **kwargs) -> Study:
  """The preset's study; its corpus and SQuAD files are read from `data`."""
  preset = load_preset(preset_name)
  corpus = ",".join(os.path.join(data, "corpus", n) for n in preset.corpus)
  study = Study(preset, work_dir, corpus=corpus, name=preset_name,
                squad_dir=os.path.join(data, "squad"),
                results_dir=os.path.join(RESULTS, preset_name), **kwargs)
  study.pretrain_init = study.base_dir()
  return study


# -------------------------------------------------------------------- stages


def stage_base(study: Study) -> dict:
  """The encoder every arm starts from, in hf_to_tf's output format."""
  out = study.base_dir()
  t0 = time.time()
  if study.preset.base == "minilm":
    interop.hf_to_tf(common.minilm_path("continued"), out)
    return {"base": "all-MiniLM-L6-v2", "seconds": time.time() - t0}
  # A tiny random encoder with MiniLM's uncased vocab (the micro preset).
  from official.nlp.configs import encoders  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(common.minilm_path("continued"), interop.VOCAB_FILE)
  config = encoders.EncoderConfig(type="bert_v2", bert_v2=dict(
      vocab_size=sum(1 for _ in open(vocab, encoding="utf-8")),
      hidden_size=64, num_layers=2, num_attention_heads=2,
      intermediate_size=128, max_position_embeddings=512))
  tf_keras.utils.set_random_seed(study.preset.model_seed)
  model = weight_map.build_model(config, "gelu", use_next_sentence=False)
  os.makedirs(out, exist_ok=True)
  prefix = tf.train.Checkpoint(**weight_map.checkpoint_items(
      model, ["encoder"])).write(os.path.join(out, "bert_model.ckpt"))
  with open(os.path.join(out, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(f'model_checkpoint_path: "{os.path.basename(prefix)}"\n')
  with open(os.path.join(out, interop.PARAMS_FILE), "w",
            encoding="utf-8") as f:
    yaml.safe_dump({"task": {"model": {"encoder": config.as_dict()}}}, f)
  shutil.copyfile(vocab, os.path.join(out, interop.VOCAB_FILE))
  return {"base": "tiny random 2x64", "seconds": time.time() - t0}


def coref_args(study: Study) -> argparse.Namespace:
  p = study.preset
  return argparse.Namespace(
      fold=0, epochs=p.coref_epochs, evaluations=p.coref_evaluations,
      learning_rate=p.coref_learning_rate,
      head_multiplier=p.coref_head_multiplier, ffnn_size=p.coref_ffnn_size,
      max_segment_len=p.coref_max_segment_len,
      max_training_segments=p.coref_max_training_segments,
      max_train_docs=p.coref_max_train_docs or None,
      max_eval_docs=p.coref_max_eval_docs or None)


def stage_coref(study: Study, arm: str, seed: int) -> dict:
  """LitBank fold 0 fine-tuning from the arm's encoder, scored on test."""
  work_dir = study.path("coref", arm)
  os.makedirs(work_dir, exist_ok=True)
  result = finetune_coref.run_seed(seed, study.base_dir(), work_dir,
                                   coref_args(study),
                                   study.init_checkpoint(arm))
  return dict(result, arm=arm)


def pilot(study: Study, steps: int) -> dict:
  """CPU seconds a pretraining step of span_sbo (the costliest arm): a run
  of steps // 3 steps (tracing included), then to `steps` (timed)."""
  model_dir = study.path("pilot")
  shutil.rmtree(model_dir, ignore_errors=True)
  points = []
  for target in (max(1, steps // 3), steps):
    params = study_stages.pretrain_params(study, "span_sbo")
    params.trainer.train_steps = target
    t0, c0 = time.time(), time.process_time()
    tf_keras.utils.set_random_seed(study.preset.model_seed)
    study_stages.train_lib.run(params, model_dir, mode="train")
    points.append((target, time.time() - t0, time.process_time() - c0))
    tf_keras.backend.clear_session()
  timed = steps - points[0][0]
  out = {"preset": study.name, "arm": "span_sbo", "timed_steps": timed,
         "wall_s_per_step": points[1][1] / timed,
         "cpu_s_per_step": points[1][2] / timed,
         "first_segment": {"steps": points[0][0], "wall_s": points[0][1],
                           "cpu_s": points[0][2]},
         "steps_in_60_cpu_min": int(3600 / (points[1][2] / timed)),
         "load": os.getloadavg()[0], "machine": common.machine(),
         "commit": study.commit, "command": study.command,
         "date": time.strftime("%Y-%m-%d %H:%M:%S")}
  study_lib.write_json(study.results_path("pilot.json"), out)
  print(out, flush=True)
  return out


# -------------------------------------------------------------------- driver


def plan(study: Study, arms: List[str], seeds: List[int]) -> List[str]:
  """Every stage, in the queue's order: arm by arm, its pretraining, held-out
  MLM, then its downstream seeds (coreference first).

  Arm by arm because a pretrained checkpoint lives in the work dir, which a
  new session does not have: an arm whose downstream stages all land in one
  session is never pretrained again (`committed`).
  """
  out = ["base", "records:single", "records:heldout", "finetune_records"]
  for a in arms:
    if study.arm(a).experiment:
      out.append(f"pretrain:{a}")
    out += ([f"heldout_mlm:{a}"] + [f"coref:{a}:{s}" for s in seeds]
            + [f"finetune:{a}:{s}" for s in seeds])
  return out + ["report"]


def needs(study: Study, stage: str) -> List[str]:
  """The stages `stage` reads the output of."""
  kind, arm = stage.partition(":")[0], arm_of(stage)
  pretrain = [f"pretrain:{arm}"] if arm and study.arm(arm).experiment else []
  return {"records": ["base"], "finetune_records": ["base"],
          "pretrain": ["records:single"],
          "heldout_mlm": ["records:heldout"] + pretrain,
          "coref": ["base"] + pretrain,
          "finetune": ["finetune_records"] + pretrain}.get(kind, [])


def committed(study: Study, stage: str, plan_fn=None) -> bool:
  """study_lib.committed; a pretraining once its arm's later stages (in
  plan_fn's plan, default this study's) are."""
  arm = arm_of(stage)
  later = [s for s in (plan_fn or plan)(study, [arm],
                                        list(study.preset.seeds))
           if arm_of(s) == arm and not s.startswith("pretrain:")
           ] if stage.startswith("pretrain:") else []
  return study_lib.committed(study, stage, later)


def run_stage(study: Study, stage: str, manifest: dict, arms: List[str]):
  kind, _, rest = stage.partition(":")
  if kind == "base":
    return stage_base(study)
  if kind == "coref":
    arm, seed = rest.split(":")
    return stage_coref(study, arm, int(seed))
  if kind in study_stages.STAGES:
    return study_stages.run_stage(study, stage, manifest)
  return continued_report.report(
      study, [a for a in ARM_NAMES
              if a in arms or os.path.exists(study.result_file(a))])


def run_study(study: Study, arms: List[str], seeds: List[int],
              tokens: Optional[List[str]] = None) -> dict:
  """Runs the selected unfinished stages in order; returns the manifest."""
  return study_lib.run_stages(
      study, plan(study, arms, seeds), tokens,
      needs=lambda s: needs(study, s), committed=lambda s: committed(study, s),
      run=lambda s, m: run_stage(study, s, m, arms), arm_of=arm_of,
      arm_result=lambda a, m: study_lib.arm_result(study, a, m))


def cli(argv, *, module: str, doc: str, make_study_fn, arm_names,
        run_study_fn, pilot_inputs) -> None:
  """The command line of a continued-pretraining study module: --preset,
  --work_dir, --arms, --stages, --seeds, --threads, --pilot_steps (the
  pilot first runs the stages `pilot_inputs`)."""
  ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
  ap.add_argument("--preset", default="cpu",
                  help="experiments/continued_arms/<preset>.yaml")
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--arms", default="", help="comma-separated arms")
  ap.add_argument("--stages", default="",
                  help="comma-separated stages or prefixes (default: all)")
  ap.add_argument("--seeds", type=int, nargs="+", default=None)
  ap.add_argument("--threads", type=int, default=0,
                  help="TensorFlow intra- and inter-op threads (0: default)")
  ap.add_argument("--pilot_steps", type=int, default=0,
                  help="time this many span_sbo steps instead of the study")
  args = ap.parse_args(argv)
  if args.threads:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
  try:
    study = make_study_fn(args.preset, args.work_dir, command=shlex.join(
        ["python", "-m", module] + (
            argv if argv is not None else sys.argv[1:])))
  except (FileNotFoundError, TypeError) as e:
    ap.error(f"preset {args.preset}: {e}")
  arms = args.arms.split(",") if args.arms else list(study.preset.arms)
  if [a for a in arms if a not in arm_names]:
    ap.error(f"unknown arms in {arms}; choose from {list(arm_names)}")
  try:
    if args.pilot_steps:
      run_study_fn(study, ["span_sbo"], [], pilot_inputs)
      pilot(study, args.pilot_steps)
      return
    run_study_fn(study, arms, args.seeds or list(study.preset.seeds),
                 args.stages.split(",") if args.stages else None)
  except study_lib.StudyError as e:
    ap.exit(1, f"{ap.prog}: error: {e}\n")


def main(argv=None):
  cli(argv, module="experiments.continued", doc=__doc__,
      make_study_fn=make_study, arm_names=ARM_NAMES, run_study_fn=run_study,
      pilot_inputs=["base", "records:single"])


if __name__ == "__main__":
  main()
