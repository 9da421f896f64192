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

r"""The head warm-up's effect over the first few hundred steps (issue 47).

From the converted all-MiniLM-L6-v2 (no MLM head: the MLM and SBO heads start
random) on the SQuADShifts contexts (study 2's base, corpus and records, made
by experiments/continued_shifts.py's stages in --work_dir), span_sbo is
continued twice on identical batches from identical initial weights, with
identical lr schedules: without the head warm-up (issue 35's recipe) and
with task.head_warmup_steps / encoder_warmup_steps. Every --eval_every steps
it records, for each run:

  heldout   MLM (and SBO) loss and accuracy on fixed held-out blocks
            (span-masked with study_stages.HELDOUT_SEED: the same masks
            for both runs and every evaluation)
  train     the training metrics averaged since the last evaluation
  drift     the encoder's relative distance from MiniLM, |theta - theta_0|
            / |theta_0| over all its variables (word embeddings included):
            how far the pretrained weights were moved

The result (small JSON) is experiments/continued_results/head_warmup_effect.json.

  .venv/bin/python -m experiments.head_warmup_effect --threads=1 \
      --work_dir .scratch/shifts_timing --preset=shifts_timing
"""

import argparse
import os
import shlex
import sys
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf
import tf_keras

from official.core import task_factory
from official.core import train_utils
from official_spanbert.training import release

from experiments import common
from experiments import continued
from experiments import continued_shifts
from experiments import study_lib
from experiments import study_stages

RESULTS_DIR = continued.RESULTS
OUT = os.path.join(RESULTS_DIR, "head_warmup_effect.json")


def run_params(study, args, warmup: bool):
  """span_sbo's pretraining params of the study, at this script's sizes."""
  params = study_stages.pretrain_params(study, "span_sbo")
  params.task.train_data.global_batch_size = args.batch
  params.task.head_warmup_steps = args.head_warmup_steps if warmup else 0
  params.task.encoder_warmup_steps = (args.encoder_warmup_steps if warmup
                                      else 0)
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = args.lr
  opt.learning_rate.polynomial.decay_steps = args.steps
  opt.warmup.polynomial.warmup_steps = args.warmup
  params.trainer.train_steps = args.steps
  return params


def heldout_batches(study, args):
  """The fixed held-out batches (span-masked, HELDOUT_SEED)."""
  params = study_stages.heldout_params(study, "span_sbo", "span")
  params.task.validation_data.global_batch_size = args.batch
  task = task_factory.get_task(params.task)
  return list(task.build_inputs(params.task.validation_data).take(
      args.eval_batches))


def run(study, args, warmup: bool, heldout) -> dict:
  """One run: its curve of evaluations and what it cost."""
  params = run_params(study, args, warmup)
  task = task_factory.get_task(params.task)
  tf_keras.utils.set_random_seed(study.preset.model_seed)
  model = task.build_model()
  task.initialize(model)  # MiniLM's encoder; the heads stay random
  optimizer = train_utils.create_optimizer(task, params)
  train_metrics = task.build_metrics(training=True)
  eval_metrics = task.build_metrics(training=False)
  train_step = tf.function(
      lambda x: task.train_step(x, model, optimizer, train_metrics))
  eval_step = tf.function(
      lambda x: task.validation_step(x, model, eval_metrics))
  encoder = model.encoder_network.trainable_variables
  start = [v.numpy() for v in encoder]
  start_norm = np.sqrt(sum(float(np.sum(a.astype(np.float64) ** 2))
                           for a in start))

  def evaluate(step):
    for m in eval_metrics:
      m.reset_states()
    for batch in heldout:
      eval_step(batch)
    drift = np.sqrt(sum(float(np.sum((v.numpy() - a).astype(np.float64) ** 2))
                        for v, a in zip(encoder, start))) / start_norm
    point = {"step": step,
             "heldout": {m.name: float(m.result()) for m in eval_metrics},
             "train": {m.name: float(m.result()) for m in train_metrics},
             "encoder_drift": drift}
    for m in train_metrics:
      m.reset_states()
    print(f"  {'warmup' if warmup else 'no_warmup':9s} step {step:4d}: "
          f"held-out MLM loss {point['heldout']['mlm_loss']:.3f} acc "
          f"{point['heldout']['masked_lm_accuracy']:.4f}, drift "
          f"{drift:.2e}", flush=True)
    return point

  curve = [evaluate(0)]
  ids = []
  t0, c0 = time.time(), time.process_time()
  batches = release.batches(task.build_inputs(params.task.train_data))
  for step in range(1, args.steps + 1):
    batch = next(batches)
    ids.append(batch["input_word_ids"].numpy())
    train_step(batch)
    if step % args.eval_every == 0 or step == args.steps:
      curve.append(evaluate(step))
  return {"head_warmup_steps": params.task.head_warmup_steps,
          "encoder_warmup_steps": params.task.encoder_warmup_steps,
          "curve": curve, "wall_s": time.time() - t0,
          "cpu_s": time.process_time() - c0,
          "batches_digest": int(np.sum([np.sum(a.astype(np.int64) * (i + 1))
                                        for i, a in enumerate(ids)]))}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--preset", default="shifts",
                  help="a continued_shifts preset: corpus, model, seq length")
  ap.add_argument("--work_dir", required=True,
                  help="the study work dir (base, corpus, records made here "
                       "if missing)")
  ap.add_argument("--steps", type=int, default=300)
  ap.add_argument("--batch", type=int, default=16)
  ap.add_argument("--lr", type=float, default=1e-4)
  ap.add_argument("--warmup", type=int, default=30,
                  help="the schedule's warm-up (both runs, the heads')")
  ap.add_argument("--head_warmup_steps", type=int, default=100)
  ap.add_argument("--encoder_warmup_steps", type=int, default=30)
  ap.add_argument("--eval_every", type=int, default=25)
  ap.add_argument("--eval_batches", type=int, default=8)
  ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--out", default=OUT)
  args = ap.parse_args(argv)
  if args.threads:
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  command = shlex.join(["python", "-m", "experiments.head_warmup_effect"] + (
      argv if argv is not None else sys.argv[1:]))
  study = continued_shifts.make_study(args.preset, args.work_dir,
                                      command=command)
  continued_shifts.run_study(study, ["span_sbo"], [], [
      "base", "corpus", "records:single", "records:heldout"])
  heldout = heldout_batches(study, args)
  out = {"what": "span_sbo from the converted all-MiniLM-L6-v2 on the "
                 "SQuADShifts contexts, with and without the head warm-up; "
                 "held-out MLM on fixed span-masked blocks",
         "args": vars(args), "preset": study.name,
         "heldout_blocks": sum(int(b["input_word_ids"].shape[0])
                               for b in heldout),
         "machine": common.machine(), "commit": study.commit,
         "command": command, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
         "runs": {}}
  for name, warmup in (("no_warmup", False), ("warmup", True)):
    out["runs"][name] = run(study, args, warmup, heldout)
    tf_keras.backend.clear_session()
    study_lib.write_json(args.out, out)
  digests = {r["batches_digest"] for r in out["runs"].values()}
  out["same_batches"] = len(digests) == 1
  study_lib.write_json(args.out, out)
  print(f"wrote {args.out}; identical training batches: "
        f"{out['same_batches']}")


if __name__ == "__main__":
  main()
