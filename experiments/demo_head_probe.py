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
r"""Can all-MiniLM-L6-v2's last layer name a masked word? A linear probe.

Issue 47 item 3 asks the demo's continued MiniLM to put most held-out words
in its MLM top 5. This fits the MLM head in closed form instead of by SGD:
ridge regression from MiniLM's final hidden state at --batches training
batches' masked positions to the layer-normalised input embedding of the
true word (the head's output is tied to those embeddings), with the head's
GeLU kept linear by a large bias; then held-out MLM accuracy for a few
LayerNorm scales, beside the fresh heads the demo starts from. Writes JSON.

  .venv/bin/python -m experiments.demo_head_probe --work_dir /tmp/probe \
      --output experiments/continued_results/demo_head_probe.json
"""

import argparse
import json
import os
import time

import numpy as np

import official_spanbert  # noqa: F401  (tf_keras first)
import tensorflow as tf
from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.demo import continued
from official_spanbert.demo import evaluation
from official_spanbert.demo import pipeline
from official_spanbert.training import release
from official_spanbert.utils import cpu_features

GELU_LINEAR_SHIFT = 10.0  # gelu(x + 10) = x + 10 to 1e-20: a linear head


def hidden_and_targets(task, model, data_config, batches):
  """MiniLM's final hidden states at the masked positions, and the ids."""
  encoder = model.encoder_network

  @tf.function
  def at_masks(x):
    seq = encoder({k: x[k] for k in ("input_word_ids", "input_mask",
                                     "input_type_ids")},
                  training=False)["sequence_output"]
    return tf.gather(seq, x["masked_lm_positions"], batch_dims=1)

  hidden, ids = [], []
  for x in release.batches(task.build_inputs(data_config).take(batches)):
    keep = x["masked_lm_weights"].numpy() > 0
    hidden.append(at_masks(x).numpy()[keep])
    ids.append(x["masked_lm_ids"].numpy()[keep])
  return np.concatenate(hidden).astype(np.float64), np.concatenate(ids)


def ridge_to_embeddings(hidden, ids, table, ridge=1.0):
  """(kernel, bias, r2): hidden -> the normalised embedding of each id."""
  target = table[ids].astype(np.float64)
  target = (target - target.mean(1, keepdims=True)) / target.std(
      1, keepdims=True)
  x = np.concatenate([hidden, np.ones([len(hidden), 1])], 1)
  gram = x.T @ x + ridge * np.diag([1.0] * hidden.shape[1] + [0.0])
  solution = np.linalg.solve(gram, x.T @ target)
  r2 = 1.0 - ((x @ solution - target) ** 2).mean() / (target ** 2).mean()
  return solution[:-1], solution[-1], float(r2)


def set_mlm_head(model, kernel, bias, scale):
  for v in model.masked_lm.weights:
    if "transform/dense/kernel" in v.name:
      v.assign(kernel.astype(np.float32))
    elif "transform/dense/bias" in v.name:
      v.assign((bias + GELU_LINEAR_SHIFT).astype(np.float32))
    elif "LayerNorm/gamma" in v.name:
      v.assign(np.full(v.shape, scale, np.float32))
    elif "LayerNorm/beta" in v.name:
      v.assign(np.zeros(v.shape, np.float32))


def _accuracy(m):
  return {k: round(m[k], 4) for k in ("masked_lm_accuracy",
                                       "masked_lm_top5_accuracy", "mlm_loss")}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--output", required=True)
  ap.add_argument("--batches", type=int, default=60)
  ap.add_argument("--scales", default="0.5,1,2")
  args = ap.parse_args(argv)
  start = time.time()
  _, train_text, heldout_text, _ = pipeline.prepare_corpus(args.work_dir)
  act = os.path.join(args.work_dir, "minilm")
  _, base_dir, base, records_dir, records, vocab = (
      continued._base_and_records(  # pylint: disable=protected-access
          act, {"train": train_text, "heldout": heldout_text}, "", {},
          time.time(), print))
  params = continued._act_params(  # pylint: disable=protected-access
      base_dir, base, records_dir, 40, None, "float32")
  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  log_probs = evaluation.vocab_unigram_log_probs(
      os.path.join(records_dir, "train-*.tfrecord"), vocab)
  validation = params.task.validation_data
  steps = max(1, records["heldout"]["blocks"] // validation.global_batch_size)
  prefix, _ = continued.start_heads(task, log_probs,
                                    os.path.join(act, "heads"))
  model = task.build_model()
  tf.train.Checkpoint(**model.checkpoint_items).read(prefix).expect_partial()
  fresh = evaluation.heldout_metrics(task, model, validation, steps)
  hidden, ids = hidden_and_targets(task, model, params.task.train_data,
                                   args.batches)
  kernel, bias, r2 = ridge_to_embeddings(
      hidden, ids, model.encoder_network.get_embedding_table().numpy())
  probes = {}
  for scale in [float(s) for s in args.scales.split(",")]:
    set_mlm_head(model, kernel, bias, scale)
    probes[str(scale)] = _accuracy(evaluation.heldout_metrics(
        task, model, validation, steps))
    print(f"LayerNorm scale {scale}: {probes[str(scale)]}", flush=True)
  result = {"base": continued.BASE_NAME, "fit_masked_tokens": len(ids),
            "r2": round(r2, 4), "fresh_heads": _accuracy(fresh),
            "probe_by_layer_norm_scale": probes,
            "heldout_masked_tokens": fresh["masked_tokens"],
            "cpu": cpu_features.read().name,
            "wall_s": round(time.time() - start, 1)}
  with open(args.output, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
  print(json.dumps(result, indent=1))


if __name__ == "__main__":
  main()
