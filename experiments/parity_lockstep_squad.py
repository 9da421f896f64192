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

r"""SQuAD fine-tuning in lockstep: is the package's training math HF's?

parity_squad.py compares the two sides end to end, where dropout, the head's
initialisation and the batch order are random and differ. This script takes
the randomness out and compares one step at a time:

* the same converted all-MiniLM-L6-v2 encoder on both sides, dropout 0;
* the package's QA head weights (Model Garden's BertSpanLabeler, seeded) copied
  into BertForQuestionAnswering's `qa_outputs`;
* the same batches: the package's own training features (its tf.text
  tokenization, windows and labels), fed as ids to both models;
* the same AdamW (betas, eps, weight decay 0.01 except biases and LayerNorm,
  clip-norm 1.0) and learning-rate schedule (parity_harness.lr_factor).

It prints the start/end logits' largest difference before training and both
sides' loss at every step; the package's step is `task.train_step` (what
`spanbert-train` runs), the HF step is the usual PyTorch loop. If the math is
the same the losses agree to float32 noise, growing slowly with the steps.
With --dev_json, both trained models are then scored on it with the official
metric, each through its own evaluation path (the package: its tf.text
features, validation_step and n-best post-processing; HF: parity_squad.py's
offset-mapping features and post-processing), which compares the evaluation
pipelines on (nearly) the same weights.

  HF_HUB_OFFLINE=1 .venv/bin/python -m experiments.parity_lockstep_squad \
      --work_dir /work/runs/parity/lockstep --steps 30
"""

import argparse
import json
import os

from experiments import common
from experiments.common import DATA


def main():
  # A binary registers the experiments (library modules do not).
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--steps", type=int, default=30)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--learning_rate", type=float, default=1e-4)
  ap.add_argument("--max_seq_length", type=int, default=192)
  ap.add_argument("--doc_stride", type=int, default=128)
  ap.add_argument("--max_query_length", type=int, default=64)
  ap.add_argument("--dev_json", default=None,
                  help="score both trained models on this SQuAD v1.1 file")
  ap.add_argument("--train_json",
                  default=os.path.join(DATA, "squad", "new_wiki_v1.0.json"))
  args = ap.parse_args()
  os.environ["HF_HUB_OFFLINE"] = "1"

  import numpy as np  # pylint: disable=g-import-not-at-top
  from experiments import parity_harness  # pylint: disable=g-import-not-at-top
  from experiments import parity_squad  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top

  os.makedirs(args.work_dir, exist_ok=True)
  converted = common.convert_minilm(args.work_dir)
  # The end-to-end comparison's params, with training seed 1 and no dropout.
  params = parity_squad.pkg_params(argparse.Namespace(
      **vars(args), train_steps=args.steps, seed=1, pkg_shuffle_buffer=0),
                                   converted)
  params.override({"task": {
      "model": {"encoder": {"bert_v2": {"dropout_rate": 0.0,
                                        "attention_dropout_rate": 0.0}}},
      "validation_data": {"global_batch_size": 64}}}, is_strict=True)
  steps, warmup = args.steps, max(1, args.steps // 10)
  opt_cfg = params.trainer.optimizer_config
  adamw = opt_cfg.optimizer.adamw
  print(f"package AdamW: eps {adamw.epsilon}, weight decay "
        f"{adamw.weight_decay_rate}, excluded {adamw.exclude_from_weight_decay},"
        f" clip {adamw.gradient_clip_norm}", flush=True)

  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task, logging_dir=args.work_dir)
  model = task.build_model()
  batches = list(task.build_inputs(params.task.train_data).take(steps))
  def features(batch):  # the QA loader yields (features, labels)
    return batch[0] if isinstance(batch, tuple) else batch

  def labels(batch):
    return batch[1] if isinstance(batch, tuple) else batch

  model(features(batches[0]), training=False)
  task.initialize(model)
  optimizer = task.create_optimizer(opt_cfg, params.runtime)

  path = common.minilm_path("parity_lockstep_squad")
  hf = transformers.BertForQuestionAnswering.from_pretrained(
      path, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
  parity_squad.copy_qa_head(model, hf)
  torch_opt, scheduler = parity_harness.hf_adamw(
      hf, args.learning_rate, steps, eps=adamw.epsilon,
      betas=(adamw.beta_1, adamw.beta_2),
      weight_decay=adamw.weight_decay_rate, warmup=warmup)

  def hf_inputs(batch):
    batch = features(batch)
    return dict(
        input_ids=torch.tensor(batch["input_word_ids"].numpy(),
                               dtype=torch.long),
        attention_mask=torch.tensor(batch["input_mask"].numpy(),
                                    dtype=torch.long),
        token_type_ids=torch.tensor(batch["input_type_ids"].numpy(),
                                    dtype=torch.long))

  pkg_start, pkg_end = model(features(batches[0]), training=False)
  hf.eval()
  with torch.no_grad():
    out = hf(**hf_inputs(batches[0]))
  mask = features(batches[0])["input_mask"].numpy() > 0
  diff = max(np.abs(pkg_start.numpy() - out.start_logits.numpy())[mask].max(),
             np.abs(pkg_end.numpy() - out.end_logits.numpy())[mask].max())
  print(f"before training: largest start/end logit difference {diff:.2e}",
        flush=True)

  rows = []
  hf.train()
  for step, batch in enumerate(batches):
    logs = task.train_step(batch, model, optimizer, metrics=[])
    pkg_loss = float(logs[task.loss])
    out = hf(**hf_inputs(batch),
             start_positions=torch.tensor(
                 labels(batch)["start_positions"].numpy(), dtype=torch.long),
             end_positions=torch.tensor(
                 labels(batch)["end_positions"].numpy(), dtype=torch.long))
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(hf.parameters(), adamw.gradient_clip_norm)
    torch_opt.step()
    scheduler.step()
    torch_opt.zero_grad()
    hf_loss = float(out.loss.item())
    rows.append({"step": step + 1, "pkg_loss": pkg_loss, "hf_loss": hf_loss})
    print(f"step {step + 1:3d}: package loss {pkg_loss:.5f}  HF loss "
          f"{hf_loss:.5f}  relative difference "
          f"{abs(pkg_loss - hf_loss) / hf_loss:.1e}", flush=True)
  worst = max(abs(r["pkg_loss"] - r["hf_loss"]) / r["hf_loss"] for r in rows)
  summary = {"logit_difference_before": float(diff), "steps": rows,
             "largest_relative_loss_difference": worst}
  print(f"largest relative loss difference over {steps} steps: {worst:.1e}")
  if args.dev_json:
    summary["dev"] = {"package": evaluate_pkg(task, model, params),
                      "hf": evaluate_hf(hf, args)}
    print(f"dev ({args.dev_json}): package {summary['dev']['package']}, "
          f"HF {summary['dev']['hf']}")
  with open(os.path.join(args.work_dir, "lockstep.json"), "w",
            encoding="utf-8") as f:
    json.dump(summary, f, indent=1)


def evaluate_pkg(task, model, params) -> dict:
  """EM/F1 through the package's validation step and post-processing."""
  from official_spanbert.training import release  # pylint: disable=g-import-not-at-top
  state = None
  for batch in release.batches(
      task.build_inputs(params.task.validation_data)):
    outputs = task.validation_step(batch, model, metrics=[])
    state = task.aggregate_logs(state, {k: (v,) for k, v in outputs.items()})
  metrics = task.reduce_aggregated_logs(state)
  return {k: round(metrics[k], 2) for k in ("exact_match", "f1")}


def evaluate_hf(hf, args) -> dict:
  """EM/F1 through parity_squad.py's HF features and post-processing."""
  from experiments import parity_squad  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  tokenizer = transformers.BertTokenizerFast.from_pretrained(
      common.minilm_path("parity_lockstep_squad"))
  metrics, _, _ = parity_squad.hf_score(hf, tokenizer, argparse.Namespace(
      dev_json=args.dev_json, max_seq_length=args.max_seq_length,
      doc_stride=128, max_query_length=64))
  return {k: round(float(metrics[k]), 2) for k in ("exact_match", "f1")}


if __name__ == "__main__":
  main()
