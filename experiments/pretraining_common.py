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


"""What the pretraining parity modes share: the demo's data, params, threads.

The demo's corpus, vocab (8k) and records at seq 128 (`demo.pipeline.
prepare_data`), built once in <work_dir>/data, and the demo's params for an
objective; used by experiments/pretraining_lockstep.py, pretraining_curves.py
and pretraining_speed.py:

  data = prepare("/tmp/pp")
  params = package_params(data, "span_sbo", steps=300)
"""

import json
import os

from experiments.common import REPO

RESULTS = os.path.join(REPO, "experiments", "pretraining_parity_results")
# The demo's encoder (configs/models/demo.yaml) as a transformers config.
DEMO_SHAPE = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=1024, max_position_embeddings=512,
                  type_vocab_size=2, layer_norm_eps=1e-12,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
SEQ_LENGTH = 128
MAX_PREDICTIONS = 20
EXPERIMENTS = {"token": "bert/token_single", "span_sbo": "spanbert/pretraining"}



def prepare(work_dir: str):
  """The demo's data (corpus, 8k vocab, seq-128 records) in work_dir/data.

  Built once (under a lock, so concurrent runs share it) and then reused:
  prepare_data rewrites the records on every call.
  """
  import fcntl  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  out = os.path.join(work_dir, "data")
  os.makedirs(out, exist_ok=True)
  ready = os.path.join(out, "ready.json")
  with open(os.path.join(out, ".lock"), "w", encoding="utf-8") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not os.path.exists(ready):
      data = pipeline.prepare_data(out, 8000, SEQ_LENGTH, log=lambda *_: None)
      with open(ready, "w", encoding="utf-8") as f:
        json.dump(dict(vocab_path=data.vocab_path,
                       train_prefix=data.train_prefix,
                       heldout_prefix=data.heldout_prefix,
                       records=data.records), f)
  with open(ready, encoding="utf-8") as f:
    d = json.load(f)
  return types.SimpleNamespace(vocab=tokenization.load_vocab(d["vocab_path"]),
                               **d)


def package_params(data, objective: str, steps: int, seed: int = 1,
                   learning_rate: float = 1e-3, batch_size: int = 16):
  """The demo's params (models/demo.yaml, experiments/demo_tiny.yaml)."""
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  params = pipeline.build_params(data.train_prefix, data.heldout_prefix,
                                 data.vocab_path, data.vocab.size, steps,
                                 experiment=EXPERIMENTS[objective])
  params.trainer.optimizer_config.learning_rate.polynomial.\
      initial_learning_rate = learning_rate
  params.task.train_data.global_batch_size = batch_size
  params.task.train_data.seed = seed
  return params


def limit_threads(n: int):
  """TensorFlow and torch use n threads (call before either runs an op)."""
  os.environ["OMP_NUM_THREADS"] = str(n)
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  tf.config.threading.set_intra_op_parallelism_threads(n)
  tf.config.threading.set_inter_op_parallelism_threads(n)
  torch.set_num_threads(n)
  global THREADS
  THREADS = n


THREADS = 0


def threads() -> int:
  """The threads limit_threads set (all cores when it was not called)."""
  return THREADS or os.cpu_count()


def add_common_args(ap, modes) -> None:
  """--mode (one of `modes`), --work_dir and --threads on parser `ap`."""
  ap.add_argument("--mode", choices=modes, default=modes[0])
  ap.add_argument("--work_dir", default="/tmp/pretraining_parity")
  ap.add_argument("--threads", type=int, default=0,
                  help="threads per framework (0: all cores); 1 keeps several "
                  "runs sharing a loaded machine from stalling each other")


def apply_threads(args) -> None:
  """limit_threads(args.threads) when it is set."""
  if args.threads:
    limit_threads(args.threads)


def run_mode(ap, argv, run, table) -> None:
  """A mode's main: parses ap's flags (plus --output_json), applies
  --threads, prints table(run(args)) and writes run's output as JSON."""
  ap.add_argument("--output_json", default=None)
  args = ap.parse_args(argv)
  apply_threads(args)
  out = run(args)
  print(table(out))
  if args.output_json:
    with open(args.output_json, "w", encoding="utf-8") as f:
      json.dump(out, f, indent=1)
