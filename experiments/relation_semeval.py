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

r"""Relation extraction study: all-MiniLM-L6-v2 on SemEval-2010 Task 8.

Each stage `finetune:<arm>:<seed>` converts the real all-MiniLM-L6-v2
(uncased; once per work dir), writes the TACRED-format records of the arm's
entity mode (train.json for training, dev.json for model selection; the
test records separately), fine-tunes with the registered `spanbert/tacred`
experiment and configs/experiments/semeval2010.yaml through `train_lib.run`
(`spanbert-train --mode=train_and_eval`), evaluating on dev after every
epoch and keeping the best checkpoint by dev SemEval macro-F1. That
checkpoint alone is then scored on the 2,717 test sentences (never used for
a choice): offline from the records, and served -- exported for TF Serving
and `classify_relation` called on the raw sentences of the release's
TEST_FILE_FULL.TXT with the nominals as character offsets -- and the two
compared prediction by prediction. The stage's result goes to
experiments/relation_results/<preset>/<arm>_seed<seed>.json; `report`
writes summary.json and report.md (mean ± sd over seeds) from those files.
Finished stages are skipped, so a rerun resumes; stages run in the plan's
order (every arm's seed 1 first).

Arms, in the plan's order: typed_marker (Zhou & Chen's typed markers,
entity start), mask (SpanBERT's entity masking, [CLS]), marker ([E1] ..
[/E1], entity start) and typed_marker_cls (typed markers, [CLS]: the
pooling comparison).

  nice -n 19 .venv/bin/python -m experiments.stage_runner \
      --study experiments.relation_semeval --preset semeval --threads 1 \
      --work_dir .scratch/semeval --commit_to /work/main
  .venv/bin/python -m experiments.relation_semeval --preset smoke \
      --work_dir /tmp/semeval_smoke            # a few steps, small slices
"""

import argparse
import dataclasses
import json
import os
import shlex
import statistics
import sys
import time
from typing import Dict, List, Optional

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official_spanbert.training import release

from experiments import common
from experiments import study_lib

RESULTS = os.path.join(common.REPO, "experiments", "relation_results")
SEMEVAL = common.data_path("relation", "semeval2010")
RECIPE = os.path.join(common.REPO, "configs", "experiments",
                      "semeval2010.yaml")
# arm -> (entity mode, pooling), in the order the plan runs them
ARMS = {
    "typed_marker": ("typed_marker", "entity_start"),
    "mask": ("mask", "cls"),
    "marker": ("marker", "entity_start"),
    "typed_marker_cls": ("typed_marker", "cls"),
}


@dataclasses.dataclass(frozen=True)
class Preset:
  """A study's budget (the recipe's YAML holds the rest)."""
  arms: tuple = tuple(ARMS)
  seeds: tuple = (1, 2, 3)
  epochs: int = 3
  learning_rate: float = 1e-4
  batch_size: int = 32
  max_train: Optional[int] = None
  max_dev: Optional[int] = None
  max_test: Optional[int] = None


PRESETS = {
    "semeval": Preset(),
    "smoke": Preset(arms=("marker",), seeds=(1,), epochs=1, max_train=64,
                    max_dev=32, max_test=32),
}


class Study:
  """Where a preset's study keeps its work and its results."""

  def __init__(self, name: str, work_dir: str, results: str = RESULTS):
    if name not in PRESETS:
      raise study_lib.StudyError(f"unknown preset {name!r}; one of "
                                 f"{', '.join(PRESETS)}")
    self.name, self.preset, self.work_dir = name, PRESETS[name], work_dir
    self.results = os.path.join(results, name)
    self.commit = study_lib.git_commit()
    self.command = " ".join(shlex.quote(a) for a in [
        "python", "-m", "experiments.relation_semeval"] + sys.argv[1:])

  def results_path(self, name: str) -> str:
    return os.path.join(self.results, name)

  def result_file(self, arm: str, seed: int) -> str:
    return self.results_path(f"{arm}_seed{seed}.json")


def make_study(preset: str, work_dir: str) -> Study:
  return Study(preset, work_dir)


def plan(study: Study, arms: List[str], seeds: List[int]) -> List[str]:
  """Every arm's seed 1, then seed 2, ...; the report last."""
  return [f"finetune:{a}:{s}" for s in seeds for a in arms] + ["report"]


def committed(study: Study, stage: str) -> bool:
  """Whether a finished stage's result file is in the results folder."""
  kind, _, rest = stage.partition(":")
  if kind != "finetune":
    return False
  arm, seed = rest.split(":")
  return os.path.exists(study.result_file(arm, int(seed)))


# ------------------------------------------------------------------ inputs


def _limited(path: str, limit: Optional[int], work_dir: str,
             labels: Optional[List[str]] = None) -> str:
  """The TACRED-format file, or a copy of its first `limit` records (of
  `labels` only, if given: a slice for a smoke run)."""
  if not limit:
    return path
  with open(path, encoding="utf-8") as f:
    records = [r for r in json.load(f)
               if labels is None or r["relation"] in labels][:limit]
  out = os.path.join(work_dir, f"{limit}-{os.path.basename(path)}")
  with open(out, "w", encoding="utf-8") as f:
    json.dump(records, f)
  return out


def records(study: Study, converted: str, mode: str) -> Dict[str, dict]:
  """{"dev": meta, "test": meta} of the mode's records (written once)."""
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import classification_records  # pylint: disable=g-import-not-at-top
  p = study.preset
  train = _limited(os.path.join(SEMEVAL, "train.json"), p.max_train,
                   study.work_dir)
  out = {}
  for split, limit in (("dev", p.max_dev), ("test", p.max_test)):
    # The test records take the train + dev records' label ids and markers.
    folder = os.path.join(study.work_dir, "records", f"{mode}_{split}")
    meta_file = os.path.join(folder, "meta_data.json")
    if not os.path.exists(meta_file):
      classification_records.create_finetuning_data(
          "tacred", os.path.join(converted, interop.VOCAB_FILE), folder,
          train_file=train,
          eval_file=_limited(os.path.join(SEMEVAL, f"{split}.json"), limit,
                             study.work_dir,
                             out["dev"]["labels"] if out else None),
          lower_case=True, max_seq_length=128, entity_mode=mode,
          labels_from=out.get("dev"))
    out[split] = study_lib.read_json(meta_file)
    out[split]["folder"] = folder
  for key in ("labels", "entity_markers", "entity_start_ids"):
    if out["dev"][key] != out["test"][key]:
      raise study_lib.StudyError(f"the dev and test records differ in {key}")
  return out


def make_params(study: Study, converted: str, folder: str, pooling: str,
                seed: int, train_size: int):
  """The recipe's config for one run: converted MiniLM + semeval2010.yaml."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  p = study.preset
  params = exp_factory.get_exp_config("spanbert/tacred")
  for path in (os.path.join(converted, interop.PARAMS_FILE), RECIPE):
    params = params_dict.override_params_dict(params, path, is_strict=True)
  task = params.task
  task.init_checkpoint = converted
  task.model.pooling = pooling
  task.train_data.input_path = os.path.join(folder, "train.tf_record")
  task.validation_data.input_path = os.path.join(folder, "eval.tf_record")
  task.train_data.global_batch_size = p.batch_size
  task.train_data.seed = seed
  per_epoch = max(1, train_size // p.batch_size)
  steps = per_epoch * p.epochs
  t = params.trainer
  t.train_steps = steps
  t.checkpoint_interval = t.validation_interval = per_epoch
  t.steps_per_loop = t.summary_interval = min(75, per_epoch)
  opt = t.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = p.learning_rate
  opt.learning_rate.polynomial.decay_steps = steps
  opt.warmup.polynomial.warmup_steps = max(1, steps // 10)
  return params


# ------------------------------------------------------------------ scoring


def offline_predictions(params, checkpoint: str, folder: str) -> np.ndarray:
  """Label ids the checkpoint predicts for the records' eval.tf_record, in
  file order."""
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import checkpoints  # pylint: disable=g-import-not-at-top
  task_config = params.task
  task_config.validation_data.input_path = os.path.join(folder,
                                                        "eval.tf_record")
  task = task_factory.get_task(task_config)
  model = task.build_model()
  checkpoints.restore(model, checkpoint)
  data = task.build_inputs(task_config.validation_data)
  predict = tf.function(lambda x: model(x, training=False),
                        reduce_retracing=True)
  out = []
  for batch in release.batches(data):
    logits = predict({k: batch[k] for k in (
        "input_word_ids", "input_mask", "input_type_ids")})
    out.append(np.argmax(logits.numpy(), axis=-1))
  return np.concatenate(out)


def served_predictions(export_dir: str, examples, batch: int = 64
                       ) -> np.ndarray:
  """Label ids of the exported `classify_relation` on raw sentences."""
  loaded = tf.saved_model.load(export_dir)
  fn = loaded.signatures["classify_relation"]
  out = []
  for i in range(0, len(examples), batch):
    part = examples[i:i + batch]
    ints = lambda name: tf.constant([getattr(e, name) for e in part],  # pylint: disable=unnecessary-lambda-assignment,cell-var-from-loop
                                    tf.int32)
    result = fn(text=tf.constant([e.text for e in part]),
                subject_start=ints("subj_start"),
                subject_end=ints("subj_end"),
                object_start=ints("obj_start"), object_end=ints("obj_end"),
                subject_type=tf.constant(["ENTITY"] * len(part)),
                object_type=tf.constant(["ENTITY"] * len(part)))
    out.append(result["label_id"].numpy())
  return np.concatenate(out)


def scores(labels: List[str], gold: np.ndarray, predicted: np.ndarray
           ) -> dict:
  from official_spanbert.metrics import relation_f1  # pylint: disable=g-import-not-at-top
  semeval = relation_f1.semeval_scores([labels[i] for i in gold],
                                       [labels[i] for i in predicted])
  tacred = relation_f1.tacred_scores(predicted, gold, 0)
  return {"semeval_macro_f1": 100 * semeval["macro_f1"],
          "tacred_micro_f1": 100 * tacred["f1"],
          "tacred_precision": 100 * tacred["precision"],
          "tacred_recall": 100 * tacred["recall"],
          "accuracy": 100 * float(np.mean(gold == predicted)),
          "per_type_f1": {t: round(100 * v["f1"], 2)
                          for t, v in semeval["per_type"].items()}}


def dev_curve(model_dir: str) -> List[list]:
  """[(step, dev SemEval macro-F1 in percent)] of the run's evaluations."""
  values = study_lib.scalars(model_dir, "validation").get(
      "semeval_macro_f1", [])
  return [[step, round(100 * v, 2)] for step, v in values]


# ------------------------------------------------------------------ stages


def cpu_flags() -> List[str]:
  """The processor's matrix-relevant flags (what a speed figure depends on)."""
  try:
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      flags = next((line.split(":", 1)[1].split() for line in f
                    if line.startswith("flags")), [])
  except OSError:
    return []
  return sorted(set(flags) & {"avx2", "avx512f", "avx512_bf16",
                              "avx512_vnni", "amx_bf16", "amx_int8"})


def stage_finetune(study: Study, arm: str, seed: int) -> dict:
  """Trains one arm and seed, scores its best dev checkpoint on test."""
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import semeval2010  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  mode, pooling = ARMS[arm]
  converted = common.convert_minilm(study.work_dir, "relation_semeval")
  metas = records(study, converted, mode)
  dev, test = metas["dev"], metas["test"]
  params = make_params(study, converted, dev["folder"], pooling, seed,
                       dev["train_data_size"])
  model_dir = os.path.join(study.work_dir, "runs", f"{arm}_seed{seed}")
  tf.keras.utils.set_random_seed(seed)
  t0, c0 = time.time(), time.process_time()
  train_lib.run(params, model_dir, mode="train_and_eval")
  train_s, train_cpu = time.time() - t0, time.process_time() - c0
  best = os.path.join(model_dir, "best_ckpt")
  info = study_lib.read_json(os.path.join(best, "info.json")) or {}
  checkpoint = tf.train.latest_checkpoint(best)
  if not checkpoint:
    raise study_lib.StudyError(f"{best} holds no checkpoint")
  labels = list(test["labels"])
  gold = []
  for raw in tf.data.TFRecordDataset(os.path.join(test["folder"],
                                                  "eval.tf_record")):
    example = tf.train.Example.FromString(raw.numpy())
    gold.append(example.features.feature["label_ids"].int64_list.value[0])
  gold = np.array(gold)
  offline = offline_predictions(params, checkpoint, test["folder"])
  # Served: the export of that checkpoint, on the raw test sentences.
  export = registry.export(
      registry.Run(params, checkpoint_path=checkpoint), {},
      os.path.join(study.work_dir, "exports", f"{arm}_seed{seed}"))
  export_dir = export["model"]
  raw = semeval2010.read_semeval(os.path.join(SEMEVAL, "raw",
                                              "TEST_FILE_FULL.TXT"))
  if study.preset.max_test:
    raw = [e for e in raw if e.label in labels][:study.preset.max_test]
  if [labels.index(e.label) for e in raw] != gold.tolist():
    raise study_lib.StudyError("the raw test file and test.json disagree")
  t1 = time.time()
  served = served_predictions(export_dir, raw)
  served_s = time.time() - t1
  return {
      "arm": arm, "seed": seed, "entity_mode": mode, "pooling": pooling,
      "preset": dataclasses.asdict(study.preset),
      "train_examples": dev["train_data_size"],
      "dev_examples": dev["eval_data_size"],
      "test_examples": int(len(gold)),
      "steps": params.trainer.train_steps,
      "epochs": study.preset.epochs,
      "dev_curve": dev_curve(model_dir),
      "best_dev": {"step": info.get("best_ckpt_global_step"),
                   "semeval_macro_f1": 100 * float(
                       info.get("semeval_macro_f1", float("nan")))},
      "test": scores(labels, gold, offline),
      "served": dict(scores(labels, gold, served),
                     equal_to_offline=int(np.sum(served == offline)),
                     seconds=round(served_s, 1)),
      "train_wall_s": round(train_s, 1), "train_cpu_s": round(train_cpu, 1),
      "machine": common.machine(), "cpu_flags": cpu_flags(),
      "commit": study.commit,
      "command": study.command,
  }


def report(study: Study) -> dict:
  """summary.json and report.md from every committed result file."""
  rows = {}
  for arm in ARMS:
    runs = [study_lib.read_json(study.result_file(arm, s))
            for s in range(1, 10)]
    runs = [r for r in runs if r]
    if not runs:
      continue
    def values(path):
      out = []
      for r in runs:
        v = r
        for k in path:
          v = v[k]
        out.append(v)
      return out
    f1 = values(("test", "semeval_macro_f1"))
    rows[arm] = {
        "entity_mode": runs[0]["entity_mode"], "pooling": runs[0]["pooling"],
        "seeds": [r["seed"] for r in runs],
        "test_semeval_macro_f1": f1,
        "mean": statistics.mean(f1),
        "sd": statistics.stdev(f1) if len(f1) > 1 else 0.0,
        "test_tacred_micro_f1": values(("test", "tacred_micro_f1")),
        "best_dev_semeval_macro_f1": values(("best_dev", "semeval_macro_f1")),
        "served_equal": values(("served", "equal_to_offline")),
        "test_examples": runs[0]["test_examples"],
        "epochs": runs[0]["epochs"], "steps": runs[0]["steps"],
        "train_cpu_min": [round(r["train_cpu_s"] / 60, 1) for r in runs],
        "machines": sorted({r["machine"] for r in runs})}
  study_lib.write_json(study.results_path("summary.json"), rows)
  lines = ["| arm | entities | reads | seeds | test macro-F1 (SemEval) | "
           "test micro-F1 (TACRED) | best dev macro-F1 | served = offline | "
           "CPU-min a run |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
  for arm, r in rows.items():
    lines.append(
        f"| {arm} | {r['entity_mode']} | {r['pooling']} | "
        f"{len(r['seeds'])} | {study_lib.mean_sd(r['test_semeval_macro_f1'])}"
        f" | {study_lib.mean_sd(r['test_tacred_micro_f1'])} | "
        f"{study_lib.mean_sd(r['best_dev_semeval_macro_f1'])} | "
        f"{min(r['served_equal'])}/{r['test_examples']} (worst seed) | "
        f"{statistics.mean(r['train_cpu_min']):.0f} |")
  os.makedirs(study.results, exist_ok=True)
  with open(study.results_path("report.md"), "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
  print("\n".join(lines))
  return {"arms": len(rows)}


# ------------------------------------------------------------------ driver


def run_stage(study: Study, stage: str) -> dict:
  kind, _, rest = stage.partition(":")
  if kind == "report":
    return report(study)
  if kind != "finetune":
    raise study_lib.StudyError(f"unknown stage {stage!r}")
  arm, seed = rest.split(":")
  if arm not in ARMS:
    raise study_lib.StudyError(f"unknown arm {arm!r}; one of "
                               f"{', '.join(ARMS)}")
  result = stage_finetune(study, arm, int(seed))
  study_lib.write_json(study.result_file(arm, int(seed)), result)
  return {"f1": result["test"]["semeval_macro_f1"],
          "steps": result["steps"]}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--preset", default="semeval", choices=sorted(PRESETS))
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--threads", type=int, default=1)
  ap.add_argument("--stages", default="",
                  help="comma-separated stages (default: all unfinished)")
  ap.add_argument("--results_dir", default=RESULTS)
  args = ap.parse_args(argv)
  tf.config.threading.set_intra_op_parallelism_threads(args.threads)
  tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  try:
    study = Study(args.preset, args.work_dir, args.results_dir)
    stages = plan(study, list(study.preset.arms), list(study.preset.seeds))
    chosen = [s for s in args.stages.split(",") if s] or stages
    manifest = study_lib.read_manifest(args.work_dir)
    for stage in chosen:
      if stage != "report" and committed(study, stage):
        print(f"{stage}: done ({study.results})")
        continue
      manifest["stages"][stage] = study_lib.timed_stage(
          study, stage, lambda: run_stage(study, stage))  # pylint: disable=cell-var-from-loop
      study_lib.write_json(os.path.join(args.work_dir, study_lib.MANIFEST),
                           manifest)
  except study_lib.StudyError as e:
    sys.exit(f"relation_semeval: error: {e}")


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  release.exit_now()
