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

r"""Served `classify_relation` on SemEval's raw test sentences = the records.

For each entity mode and vocab (the cased BERT vocab, MiniLM's uncased one),
a small classifier (1 layer, hidden 32, seeded; [CLS] for mask, the entity
start markers otherwise) is built by the `spanbert/tacred` task from the
records' meta_data.json; its logits on the test records are compared with
ClassifyModule's `classify_relation` on the raw sentences of the release's
TEST_FILE_FULL.TXT, the nominals as character offsets. Trained models are
compared the same way, on all 2,717 sentences, by relation_semeval.py.

  python -m experiments.relation_served_check        # all 2,717, 6 settings
  python -m experiments.relation_served_check --n 120 --modes marker
"""

import argparse
import json
import os
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from experiments import common

SEMEVAL = common.data_path("relation", "semeval2010")
MODES = ("mask", "marker", "typed_marker")


def uncased_vocab() -> str:
  return os.path.join(common.minilm_path("relation_served_check"),
                      "vocab.txt")


def compare(vocab: str, lower_case: bool, mode: str, n: int,
            work_dir: str) -> dict:
  """Served and offline probabilities of the first `n` test sentences."""
  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory
  from official.core import task_factory
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=unused-import
  from official_spanbert.data import tokenization
  from official_spanbert.data.finetuning import classification_records
  from official_spanbert.data.finetuning import semeval2010
  from official_spanbert.serving import classify_module
  from official_spanbert.training import release
  # pylint: enable=g-import-not-at-top
  records = os.path.join(work_dir, f"records_{mode}_{int(lower_case)}")
  meta = classification_records.create_finetuning_data(
      "tacred", vocab, records, train_file=os.path.join(SEMEVAL, "train.json"),
      eval_file=os.path.join(SEMEVAL, "test.json"), lower_case=lower_case,
      max_seq_length=128, max_train_examples=16, max_eval_examples=n,
      entity_mode=mode)
  params = exp_factory.get_exp_config("spanbert/tacred")
  params.override({"task": {"model": {
      "pooling": "cls" if mode == "mask" else "entity_start",
      "encoder": {"bert_v2": {
          "vocab_size": tokenization.load_vocab(vocab).size,
          "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
          "num_attention_heads": 2}}}}}, is_strict=True)
  task_config = params.task
  task_config.train_data.input_path = f"{records}/train.tf_record"
  task_config.validation_data.input_path = f"{records}/eval.tf_record"
  task_config.validation_data.trim_batch_padding = True
  tf.keras.utils.set_random_seed(3)
  task = task_factory.get_task(task_config)
  model = task.build_model()
  offline = []
  for batch in release.batches(
      task.build_inputs(task_config.validation_data)):
    batch.pop("label_ids")
    offline.append(task.inference_step(batch, model).numpy())
  offline = tf.nn.softmax(np.concatenate(offline)).numpy()
  module = classify_module.ClassifyModule(
      model, vocab, lower_case=lower_case, seq_length=128,
      label_names=meta["labels"], entity_markers=meta["entity_markers"],
      entity_mode=mode)
  raw = semeval2010.read_semeval(os.path.join(
      SEMEVAL, "raw", "TEST_FILE_FULL.TXT"))[:n]
  served = []
  for i in range(0, len(raw), 256):
    part = raw[i:i + 256]
    ints = lambda key: tf.constant([getattr(e, key) for e in part], tf.int32)  # pylint: disable=unnecessary-lambda-assignment,cell-var-from-loop
    served.append(module.classify_relation(
        text=tf.constant([e.text for e in part]),
        subject_start=ints("subj_start"), subject_end=ints("subj_end"),
        object_start=ints("obj_start"), object_end=ints("obj_end"),
        subject_type=tf.constant(["ENTITY"] * len(part)),
        object_type=tf.constant(["ENTITY"] * len(part)))[
            "probabilities"].numpy())
  served = np.concatenate(served)
  return {"mode": mode, "lower_case": lower_case, "sentences": len(raw),
          "max_abs_diff": float(np.abs(served - offline).max()),
          "equal_labels": int((served.argmax(-1) == offline.argmax(-1)).sum()),
          "served": served, "offline": offline}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--n", type=int, default=2717)
  ap.add_argument("--modes", nargs="+", default=list(MODES))
  ap.add_argument("--result_json", default=os.path.join(
      common.REPO, "experiments", "relation_results", "served_check.json"))
  args = ap.parse_args(argv)
  rows = []
  with tempfile.TemporaryDirectory() as work_dir:
    for vocab, lower in ((common.data_path("vocab",
                                           "bert-base-cased-vocab.txt"),
                          False), (uncased_vocab(), True)):
      for mode in args.modes:
        t0 = time.time()
        row = compare(vocab, lower, mode, args.n, work_dir)
        del row["served"], row["offline"]
        row["seconds"] = round(time.time() - t0, 1)
        print(json.dumps(row), flush=True)
        rows.append(row)
  out = {"rows": rows, "machine": common.machine(),
         "date": time.strftime("%Y-%m-%d"),
         "command": "python -m experiments.relation_served_check"}
  os.makedirs(os.path.dirname(args.result_json), exist_ok=True)
  with open(args.result_json, "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1)


if __name__ == "__main__":
  main()
