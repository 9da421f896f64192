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

r"""Tries one change to the demo's pretraining and measures what it learns.

Builds the demo's corpus, vocab and records with the demo's own
`pipeline.prepare_data` (in <work_dir>/data-v<vocab>-s<seq>), pretrains the
demo model with the given changes through `train.run`, then reports held-out
MLM accuracy on the demo's span-masked held-out blocks and fills held-out
sentences through the exported SavedModel (the true word in the top 5 is a
hit). Appends one JSON line per run to
<work_dir>/results.jsonl. Results: benchmarks/RESULTS.md section 8.

  .venv/bin/python benchmarks/demo_tuning.py --work_dir /work/runs/demo_tune \
      --name base1200 --steps 1200
  .venv/bin/python benchmarks/demo_tuning.py --work_dir /work/runs/demo_tune \
      --name tok600 --steps 600 --masking_scheme token
"""

import argparse
import json
import os
import shutil
import time


def tuned_params(args, prefix: str, heldout_prefix: str, vocab_path: str,
                 vocab_size: int):
  """The demo's params (`pipeline.build_params`) with the flags' changes."""
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  params = pipeline.build_params(prefix, heldout_prefix, vocab_path,
                                 vocab_size, args.steps)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.num_layers = args.hidden, args.layers
  enc.intermediate_size = 4 * args.hidden
  enc.num_attention_heads = args.heads or max(1, args.hidden // 64)
  enc.norm_first = args.norm_first
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = args.learning_rate
  if args.beta_2:
    opt.optimizer.adamw.beta_2 = args.beta_2
  params.task.train_data.global_batch_size = args.batch_size
  for d in (params.task.train_data, params.task.validation_data):
    d.seq_length = args.seq_length
    d.max_predictions_per_seq = args.max_predictions
    d.masking_scheme = args.masking_scheme
  params.task.model.use_sbo = not args.no_sbo
  return params


def sinusoid_table(positions: int, width: int, scale: float):
  """Transformer sinusoids (sin on even, cos on odd columns) times scale."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  pos = np.arange(positions)[:, None]
  col = np.arange(width)[None]
  angle = pos / np.power(10000.0, (2 * (col // 2)) / width)
  return (np.where(col % 2 == 0, np.sin(angle), np.cos(angle)) *
          scale).astype(np.float32)


def start_positions_as_sinusoids(scale: float):
  """Makes the task's new models start with sinusoidal position embeddings.

  Every position-embedding table of the pretrainer (the encoder's and the SBO
  head's relative positions) is overwritten right after the model is built,
  before training or checkpoint restore.
  """
  from official_spanbert.tasks import pretraining  # pylint: disable=g-import-not-at-top
  build = pretraining.SpanBertPretrainTask.build_model

  def build_model(self, params=None):
    model = build(self, params)
    for v in model.variables:
      if "position_embedding" in v.name:
        v.assign(sinusoid_table(*v.shape, scale))
    return model

  pretraining.SpanBertPretrainTask.build_model = build_model


def parse_args(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--name", required=True)
  ap.add_argument("--steps", type=int, default=1200)
  ap.add_argument("--learning_rate", type=float, default=1e-3)
  ap.add_argument("--hidden", type=int, default=256)
  ap.add_argument("--layers", type=int, default=2)
  ap.add_argument("--heads", type=int, default=0, help="0: hidden // 64")
  ap.add_argument("--norm_first", action="store_true", help="pre-LN")
  ap.add_argument("--vocab_size", type=int, default=8000)
  ap.add_argument("--seq_length", type=int, default=128)
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--max_predictions", type=int, default=20)
  ap.add_argument("--beta_2", type=float, default=0.0, help="0: the config's")
  ap.add_argument("--masking_scheme", default="span")
  ap.add_argument("--no_sbo", action="store_true", help="MLM only")
  ap.add_argument("--sinusoidal_positions", type=float, default=0.0,
                  help="start position embeddings as sinusoids times this "
                  "(0: the config's random init)")
  return ap.parse_args(argv)


def main():
  args = parse_args()

  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import evaluation  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import export as export_lib  # pylint: disable=g-import-not-at-top

  work = args.work_dir
  data = pipeline.prepare_data(
      os.path.join(work, f"data-v{args.vocab_size}-s{args.seq_length}"),
      args.vocab_size, args.seq_length)
  heldout_text, vocab_path, vocab = (data.heldout_text, data.vocab_path,
                                     data.vocab)
  prefix, heldout_prefix = data.train_prefix, data.heldout_prefix
  heldout_blocks = data.records["heldout"]["blocks"]

  if args.sinusoidal_positions:
    start_positions_as_sinusoids(args.sinusoidal_positions)
  params = tuned_params(args, prefix, heldout_prefix, vocab_path, vocab.size)
  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  batch = params.task.validation_data.global_batch_size
  model_dir = os.path.join(work, args.name)
  t0, c0 = time.time(), time.process_time()
  model, _ = train_lib.run(params, model_dir, mode="train")
  t1, c1 = time.time(), time.process_time()
  after = evaluation.heldout_metrics(task, model, params.task.validation_data,
                                     max(1, heldout_blocks // batch))
  export_base = os.path.join(model_dir, "export", "model")
  shutil.rmtree(os.path.dirname(export_base), ignore_errors=True)
  paths = export_lib.export(model, vocab_path, export_base,
                            seq_length=args.seq_length, top_k=5, max_masks=8,
                            version=1)
  fills = evaluation.fill_sentences(
      tf.saved_model.load(paths["model"]),
      evaluation.pick_sentences(heldout_text, vocab.tokens, count=40))
  for f in fills[:8]:
    print(("+" if f["hit"] else " "), f["masked"], "|", f["word"], "|",
          ", ".join(f["mlm_top5"]))
  result = dict(vars(args), vocab=vocab.size, train_s=t1 - t0, cpu_s=c1 - c0,
                heldout_mlm_accuracy=after.get("masked_lm_accuracy"),
                heldout_mlm_loss=after.get("mlm_loss"),
                heldout_sbo_accuracy=after.get("sbo_accuracy"),
                hits=sum(f["hit"] for f in fills), fills=len(fills),
                load=os.getloadavg())
  print(json.dumps(result))
  with open(os.path.join(work, "results.jsonl"), "a", encoding="utf-8") as f:
    f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
  main()
