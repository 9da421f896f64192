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

r"""Does Hugging Face's BertForMaskedLM sit on the same plateau as the demo?

A check that the demo's slow learning (RESULTS.md section 8) is the budget's
and not a defect of this package: PyTorch `transformers.BertForMaskedLM` of
the demo's size (2 layers, hidden 256, 4 heads, FFN 1024, no dropout) trained
on the demo's own records (a `demo_tuning.py` data dir) with token masking
(15%, 80/10/10, at most 20 a block), batch 16 of 128, AdamW lr 1e-3 with this
package's eps, weight decay and schedule (10% warmup, linear decay:
parity_harness.hf_adamw), clip-norm 1.0, then held-out MLM accuracy and loss on
the held-out blocks (fixed masks, seed 2). Needs the interop extra.

  .venv/bin/python benchmarks/demo_hf_plateau.py \
      --data /work/runs/exp/w/data-v8000-s128 --steps 600
"""

import argparse
import glob
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_harness as harness  # pylint: disable=g-import-not-at-top,wrong-import-position


def read_blocks(pattern):
  """input_ids of every record matching pattern (the demo's records)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  blocks = []
  for record in tf.data.TFRecordDataset(sorted(glob.glob(pattern))):
    example = tf.train.Example.FromString(record.numpy())
    blocks.append(np.array(
        example.features.feature["input_ids"].int64_list.value))
  return blocks


def mask_batch(blocks, rng, ids, vocab_size, seq_length=128, max_masks=20):
  """[CLS] block [SEP], padded; 15% token masking (80/10/10); labels -100."""
  inputs = np.full((len(blocks), seq_length), ids["[PAD]"])
  labels = np.full((len(blocks), seq_length), -100)
  for b, block in enumerate(blocks):
    seq = np.concatenate([[ids["[CLS]"]], block[:seq_length - 2],
                          [ids["[SEP]"]]])
    inputs[b, :len(seq)] = seq
    candidates = np.arange(1, len(seq) - 1)
    count = min(max_masks, max(1, math.ceil(0.15 * len(candidates))))
    for p in rng.choice(candidates, count, replace=False):
      labels[b, p] = inputs[b, p]
      u = rng.random()
      if u < 0.8:
        inputs[b, p] = ids["[MASK]"]
      elif u < 0.9:
        inputs[b, p] = rng.integers(5, vocab_size)
  return inputs, (inputs != ids["[PAD]"]).astype(np.int64), labels


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--data", required=True,
                  help="a demo_tuning data dir (vocab.txt, records/)")
  ap.add_argument("--steps", type=int, default=600)
  ap.add_argument("--learning_rate", type=float, default=1e-3)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--adam_eps", type=float, default=1e-8,
                  help="1e-8 as this package; HF's own default is 1e-6")
  args = ap.parse_args()
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  torch.set_num_threads(os.cpu_count())
  torch.manual_seed(args.seed)
  rng = np.random.default_rng(args.seed)
  with open(os.path.join(args.data, "vocab.txt"), encoding="utf-8") as f:
    vocab = [line.rstrip("\n") for line in f]
  ids = {t: i for i, t in enumerate(vocab)}
  train = read_blocks(os.path.join(args.data, "records", "train-*.tfrecord"))
  heldout = read_blocks(os.path.join(args.data, "records",
                                     "heldout-*.tfrecord"))
  print(f"{len(train)} training blocks, {len(heldout)} held out, vocab "
        f"{len(vocab)}", flush=True)
  model = transformers.BertForMaskedLM(transformers.BertConfig(
      vocab_size=len(vocab), hidden_size=256, num_hidden_layers=2,
      num_attention_heads=4, intermediate_size=1024, hidden_act="gelu",
      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
      max_position_embeddings=512, type_vocab_size=2))
  optimizer, schedule = harness.hf_adamw(model, args.learning_rate,
                                         args.steps, eps=args.adam_eps)

  def evaluate():
    model.eval()
    eval_rng = np.random.default_rng(2)
    correct = total = 0
    loss_sum = 0.0
    with torch.no_grad():
      for i in range(0, len(heldout) - args.batch_size + 1, args.batch_size):
        x, m, y = (torch.tensor(a) for a in mask_batch(
            heldout[i:i + args.batch_size], eval_rng, ids, len(vocab)))
        out = model(input_ids=x, attention_mask=m, labels=y)
        sel = y != -100
        correct += (out.logits.argmax(-1)[sel] == y[sel]).sum().item()
        total += sel.sum().item()
        loss_sum += out.loss.item() * sel.sum().item()
    model.train()
    return correct / total, loss_sum / total

  start = time.time()
  for step in range(1, args.steps + 1):
    picked = rng.integers(0, len(train), args.batch_size)
    x, m, y = (torch.tensor(a) for a in mask_batch(
        [train[i] for i in picked], rng, ids, len(vocab)))
    out = model(input_ids=x, attention_mask=m, labels=y)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    if step % 100 == 0 or step == args.steps:
      print(f"step {step}/{args.steps}: training MLM loss "
            f"{out.loss.item():.3f}, {time.time() - start:.0f} s", flush=True)
  accuracy, loss = evaluate()
  print(json.dumps({"steps": args.steps, "learning_rate": args.learning_rate,
                    "heldout_mlm_accuracy": round(accuracy, 4),
                    "heldout_mlm_loss": round(loss, 4),
                    "train_s": round(time.time() - start, 1)}))


if __name__ == "__main__":
  main()
