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

r"""The end-to-end demo behind `make demo` and `spanbert-demo`.

Runs the whole pipeline on an embedded default that needs no network and no
downloaded data: real English prose from the docstrings of the Python standard
library installed with the interpreter (one module per document).

  python -m official_spanbert.demo --output_dir=demo_out

1. build the corpus (official_spanbert/demo/corpus.py) and keep every 20th
   document out of training;
2. learn a cased WordPiece vocab from the training documents (tf.text);
3. write pretraining records (seq 128) for both parts;
4. measure held-out MLM accuracy of the untrained model, pretrain a small
   SpanBERT (span masking + SBO), measure it again and plot the MLM/SBO loss
   curves to <output_dir>/loss_curves.png; a rerun resumes from the checkpoint;
5. export it for TF Serving and fill masked words of held-out sentences (and
   --sentence) through the exported SavedModel, printing the top candidates.
"""

import dataclasses
import json
import os
import shutil
import time
from typing import Dict

from absl import app
from absl import flags

import official_spanbert  # noqa: F401
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import train as train_lib
from official_spanbert.configs import experiments  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.data.pretraining import pretraining_records
from official_spanbert.data import tokenization
from official_spanbert.data.pretraining import vocab_builder
from official_spanbert.demo import corpus as demo_corpus
from official_spanbert.demo import evaluation
from official_spanbert.serving import export as export_lib

FLAGS = flags.FLAGS
DEFAULT_STEPS = 1200
flags.DEFINE_string("output_dir", "demo_out", "Where everything is written.")
flags.DEFINE_integer("train_steps", DEFAULT_STEPS, "Pretraining steps.")
flags.DEFINE_integer("vocab_size", 8000, "Target vocab size.")
DEFAULT_SENTENCE = ("The module provides functions for working with [MASK] "
                    "and directories.")
flags.DEFINE_string("sentence", DEFAULT_SENTENCE,
                    "Sentence with masked words ([MASK]) to fill.")
HELDOUT_EVERY = 20  # every 20th document is kept out of training


def _say(msg):
  print(f"\n== {msg}", flush=True)


def _pct(metrics, name):
  return f"{100 * metrics.get(name, float('nan')):.1f}%"


def build_params(prefix, heldout_prefix, vocab_path, vocab_size, train_steps,
                 experiment: str = "spanbert/pretraining"):
  """The demo's params: `experiment` with models/demo.yaml, demo_tiny.yaml."""
  params = exp_factory.get_exp_config(experiment)
  for name in ("models/demo.yaml", "experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, yaml_files.path(name),
                                              is_strict=True)
  params.task.model.encoder.bert_v2.vocab_size = vocab_size
  for data, records in ((params.task.train_data, prefix),
                        (params.task.validation_data, heldout_prefix)):
    data.input_path = records + "-*.tfrecord"
    data.vocab_file = vocab_path
  trainer = params.trainer
  trainer.train_steps = train_steps
  trainer.optimizer_config.learning_rate.polynomial.decay_steps = train_steps
  trainer.optimizer_config.warmup.polynomial.warmup_steps = max(
      1, train_steps // 10)
  trainer.validation_interval = train_steps
  trainer.checkpoint_interval = min(trainer.checkpoint_interval, train_steps)
  trainer.steps_per_loop = min(trainer.steps_per_loop, train_steps)
  trainer.summary_interval = trainer.steps_per_loop
  return params


@dataclasses.dataclass
class DemoData:
  """What prepare_data wrote: text, vocab and records of both parts."""
  corpus: Dict[str, int]  # corpus and split statistics
  train_text: str
  heldout_text: str
  vocab_path: str
  vocab: tokenization.Vocab
  train_prefix: str  # records: <prefix>-*.tfrecord
  heldout_prefix: str
  records: Dict[str, Dict[str, float]]  # "train"/"heldout" -> record stats


def prepare_data(output_dir: str, vocab_size: int = 8000,
                 seq_length: int = 128, log=print) -> DemoData:
  """Stages 1-3 of the demo: corpus and split, vocab, records.

  An existing <output_dir>/vocab.txt is reused; records are always rewritten
  (a few seconds), so they match the vocab and seq_length asked for.
  """
  os.makedirs(output_dir, exist_ok=True)
  corpus_path = os.path.join(output_dir, "stdlib_docstrings.txt")
  train_text = os.path.join(output_dir, "train.txt")
  heldout_text = os.path.join(output_dir, "heldout.txt")
  log("\n== 1/5 building the corpus from standard-library docstrings")
  stats = demo_corpus.build_demo_corpus(corpus_path)
  stats.update(evaluation.split_documents(corpus_path, train_text,
                                          heldout_text, HELDOUT_EVERY))
  log(f"{stats['documents']} documents, {stats['lines']} lines, "
      f"{stats['bytes'] / 1e6:.2f} MB -> {corpus_path}; "
      f"{stats['heldout_documents']} (every {HELDOUT_EVERY}th) held out -> "
      f"{heldout_text}")

  vocab_path = os.path.join(output_dir, "vocab.txt")
  log("\n== 2/5 learning a cased WordPiece vocab from the training documents")
  if not os.path.exists(vocab_path):
    vocab_builder.build_vocab([train_text], vocab_path,
                              vocab_size=vocab_size, min_token_count=3,
                              progress=False)
  vocab = tokenization.load_vocab(vocab_path)
  log(f"{vocab.size} tokens -> {vocab_path}")

  log(f"\n== 3/5 creating pretraining records (seq {seq_length}, unmasked "
      "blocks)")
  prefixes = {"train": os.path.join(output_dir, "records", "train"),
              "heldout": os.path.join(output_dir, "records", "heldout")}
  records = {}
  for part, text in (("train", train_text), ("heldout", heldout_text)):
    rec = pretraining_records.create_pretraining_records(
        [text], vocab_path, prefixes[part], max_seq_length=seq_length,
        num_shards=2 if part == "train" else 1, progress=False)
    records[part] = {k: getattr(rec, k) for k in (
        "documents", "lines", "blocks", "tokens", "padding_ratio")}
    log(f"{part}: " + json.dumps(records[part]))
  return DemoData(stats, train_text, heldout_text, vocab_path, vocab,
                  prefixes["train"], prefixes["heldout"], records)


def run_demo(output_dir: str, train_steps: int = DEFAULT_STEPS,
             vocab_size: int = 8000,
             sentence: str = DEFAULT_SENTENCE) -> dict:
  """Runs the demo; returns what it printed as a dict."""
  start = time.time()
  data = prepare_data(output_dir, vocab_size)
  prefix, heldout_prefix = data.train_prefix, data.heldout_prefix
  heldout_text, vocab_path, vocab = (data.heldout_text, data.vocab_path,
                                     data.vocab)
  stats, heldout_blocks = data.corpus, data.records["heldout"]["blocks"]

  params = build_params(prefix, heldout_prefix, vocab_path, vocab.size,
                         train_steps)
  batch = params.task.validation_data.global_batch_size
  eval_steps = max(1, heldout_blocks // batch)
  enc = params.task.model.encoder.bert_v2
  _say(f"4/5 pretraining a SpanBERT ({enc.num_layers} layers, hidden "
       f"{enc.hidden_size}) for {train_steps} steps of "
       f"{params.task.train_data.global_batch_size} blocks (CPU)")
  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  before = evaluation.heldout_metrics(task, task.build_model(),
                                      params.task.validation_data, eval_steps)
  print(f"held-out MLM accuracy before training: "
        f"{_pct(before, 'masked_lm_accuracy')} ({eval_steps * batch} "
        "held-out blocks, span-masked)")
  model_dir = os.path.join(output_dir, "model")
  model, _ = train_lib.run(params, model_dir, mode="train")
  after = evaluation.heldout_metrics(task, model, params.task.validation_data,
                                     eval_steps)
  summary = {k: round(float(after[k]), 4) for k in (
      "mlm_loss", "sbo_loss", "masked_lm_accuracy", "sbo_accuracy")
             if k in after}
  png = os.path.join(output_dir, "loss_curves.png")
  evaluation.plot_losses(model_dir, png, f"demo SpanBERT, {train_steps} steps")
  print(f"held-out MLM accuracy: {_pct(before, 'masked_lm_accuracy')} before "
        f"-> {_pct(after, 'masked_lm_accuracy')} after training (SBO "
        f"{_pct(before, 'sbo_accuracy')} -> {_pct(after, 'sbo_accuracy')})")
  print(f"loss curves (MLM and SBO): {png}")

  _say("5/5 exporting for TF Serving and filling masked words")
  export_base = os.path.join(output_dir, "export", "spanbert")
  for base in (export_base, export_base + "_preprocessing"):
    shutil.rmtree(base, ignore_errors=True)
  paths = export_lib.export(model, vocab_path, export_base, seq_length=128,
                            top_k=5, max_masks=8, version=1)
  print(f"SavedModel: {paths['model']}  preprocessing: "
        f"{paths['preprocessing']}")
  loaded = tf.saved_model.load(paths["model"])
  fills = evaluation.fill_sentences(
      loaded, evaluation.pick_sentences(heldout_text, vocab.tokens))
  for f in fills:
    mark = "+" if f["hit"] else " "
    print(f"{mark} held-out: {f['masked']}\n    true: {f['word']!r}  "
          f"MLM top-5: {', '.join(f['mlm_top5'])}")
  out = loaded.signatures["fill_spans"](text=tf.constant([sentence]))
  n = int(out["masked_weights"].numpy()[0].sum())
  print(f"input:  {sentence}")
  print(f"filled: {out['filled_text'].numpy()[0].decode()}")
  candidates = []
  for i in range(n):
    mlm = [t.decode() for t in out["mlm_top_k_tokens"].numpy()[0, i]]
    line = {"mask": i + 1, "mlm_top5": mlm}
    if "sbo_top_k_tokens" in out:
      line["sbo_top5"] = [t.decode()
                          for t in out["sbo_top_k_tokens"].numpy()[0, i]]
    candidates.append(line)
    print(json.dumps(line))
  hits = sum(f["hit"] for f in fills)
  print(f"\nspanbert-demo: held-out MLM accuracy "
        f"{_pct(before, 'masked_lm_accuracy')} -> "
        f"{_pct(after, 'masked_lm_accuracy')}, {hits}/{len(fills)} held-out "
        f"words in the top 5, in {time.time() - start:.0f} s; model "
        f"{model_dir}, export {paths['model']}, curves {png}")
  return {"corpus": stats, "records": data.records, "eval": summary, "before": before, "after": after,
          "export": paths, "candidates": candidates, "heldout_fills": fills,
          "loss_curves": png}


def main(argv):
  del argv
  run_demo(FLAGS.output_dir, FLAGS.train_steps, FLAGS.vocab_size,
           FLAGS.sentence)
  return 0


def console_main():
  app.run(main)
