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

r"""Two SQuAD parity checks that need no training: labels and dropout.

* labels: builds the training features both ways, HF (`parity_squad.hf_features`:
  fast tokenizer, offset mapping) and the package (`squad.convert_examples`:
  BERT's word-level mapping and `_improve_answer_span`), and counts features
  whose start/end positions and input ids agree, printing the first that differ.
* dropout: on one real training batch, with the same weights on both sides (the
  package's QA head copied into HF's `qa_outputs`), the loss in eval mode and in
  training mode (8 dropout draws): the two sides' dropout should move the loss
  alike.

  HF_HUB_OFFLINE=1 .venv/bin/python -m experiments.parity_squad_checks \
      --work_dir /work/runs/parity/checks
"""

import argparse
import collections
import json
import os

from experiments import common
from experiments import parity_squad


def check_labels(args, converted: str, tokenizer) -> dict:
  """Counts HF / package training features that agree."""
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import squad  # pylint: disable=g-import-not-at-top

  _, hf = parity_squad.hf_features(tokenizer, args.train_json, args, True)
  data = parity_squad.pkg_params(args, converted).task.train_data
  pkg_tokenizer = tokenization.WordpieceTokenizer(
      data.vocab_file, lower_case=data.do_lower_case)
  pkg = squad.convert_examples(
      squad.read_examples(args.train_json, True), pkg_tokenizer,
      max_seq_length=args.max_seq_length, doc_stride=args.doc_stride,
      max_query_length=args.max_query_length, is_training=True)
  if len(hf) != len(pkg):
    return {"hf_features": len(hf), "pkg_features": len(pkg)}
  agree = collections.Counter()
  differing = []
  for h, p in zip(hf, pkg):
    same = (h["start_position"] == p.start_position
            and h["end_position"] == p.end_position)
    agree["labels"] += same
    agree["input_ids"] += h["input_ids"] == list(p.input_ids)
    if not same and len(differing) < 10:
      hf_text = " ".join(tokenizer.convert_ids_to_tokens(
          h["input_ids"][h["start_position"]:h["end_position"] + 1]))
      pkg_text = " ".join(p.tokens[p.start_position:p.end_position + 1])
      differing.append({"example": h["example_index"],
                        "hf": [h["start_position"], h["end_position"], hf_text],
                        "pkg": [p.start_position, p.end_position, pkg_text]})
  return {"features": len(hf), "same_labels": agree["labels"],
          "same_input_ids": agree["input_ids"], "first_differing": differing}


def check_dropout(args, converted: str, path: str) -> dict:
  """Eval-mode loss and training-mode losses on one batch, both sides."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top

  params = parity_squad.pkg_params(args, converted)
  task = task_factory.get_task(params.task, logging_dir=args.work_dir)
  model = task.build_model()
  features, labels = next(iter(task.build_inputs(params.task.train_data)))
  model(features, training=False)
  task.initialize(model)
  hf = transformers.BertForQuestionAnswering.from_pretrained(path)
  parity_squad.copy_qa_head(model, hf)
  hf_inputs = {
      "input_ids": features["input_word_ids"],
      "attention_mask": features["input_mask"],
      "token_type_ids": features["input_type_ids"],
      "start_positions": labels["start_positions"],
      "end_positions": labels["end_positions"]}
  hf_inputs = {k: torch.tensor(v.numpy(), dtype=torch.long)
               for k, v in hf_inputs.items()}

  def pkg_loss(training):
    return float(task.build_losses(labels, model(features, training=training)))

  def hf_loss(training):
    hf.train(training)
    with torch.no_grad():
      return float(hf(**hf_inputs).loss)

  out = {}
  for side, loss in (("pkg", pkg_loss), ("hf", hf_loss)):
    eval_loss = loss(False)
    shifts = [loss(True) - eval_loss for _ in range(args.draws)]
    out[side] = {"eval_loss": eval_loss,
                 "train_minus_eval_mean": float(np.mean(shifts)),
                 "train_minus_eval_sd": float(np.std(shifts))}
  return out


def main():
  # A binary registers the experiments (library modules do not).
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--train_json", default=os.path.join(
      parity_squad.DATA, "squad", "new_wiki_v1.0.json"))
  ap.add_argument("--max_seq_length", type=int, default=192)
  ap.add_argument("--doc_stride", type=int, default=128)
  ap.add_argument("--max_query_length", type=int, default=64)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--draws", type=int, default=8)
  ap.add_argument("--checks", nargs="+", default=["labels", "dropout"],
                  choices=["labels", "dropout"])
  args = ap.parse_args()
  # What pkg_params needs besides the above (one batch is read, no training).
  args.dev_json, args.train_steps, args.learning_rate = "", 160, 1e-4
  args.pkg_shuffle_buffer, args.seed = 0, 1
  os.environ["HF_HUB_OFFLINE"] = "1"
  import transformers  # pylint: disable=g-import-not-at-top

  os.makedirs(args.work_dir, exist_ok=True)
  converted = common.convert_minilm(args.work_dir)
  path = common.minilm_path("parity_squad_checks")
  result = {}
  if "labels" in args.checks:
    result["labels"] = check_labels(
        args, converted, transformers.BertTokenizerFast.from_pretrained(path))
  if "dropout" in args.checks:
    result["dropout"] = check_dropout(args, converted, path)
  print(json.dumps(result, indent=1))
  with open(os.path.join(args.work_dir, "checks.json"), "w",
            encoding="utf-8") as f:
    json.dump(result, f, indent=1)


if __name__ == "__main__":
  main()
