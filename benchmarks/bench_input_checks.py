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

r"""What the serving input checks cost a call (docs/reliability.md, issue 26).

`encode_ids` and the TF Hub encoder run `pretraining_module.checked_encoder_inputs`
(shape and range asserts) before the encoder. This times, in one process and
in interleaved rounds (wall and process CPU time), a tf.function of the encoder alone against the same
with the checks in front, for each --sizes encoder (configs/models/*.yaml) at
seq 128 and batch 1 and 32 on real-looking random ids, and prints the median
per-call times and their ratio.

  .venv/bin/python -m benchmarks.bench_input_checks --sizes tiny base
  .venv/bin/python -m benchmarks.bench_input_checks --smoke   # seconds
"""

import argparse
import json
import os
import statistics
import time

from benchmarks.common import parse_args, report_rows


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--sizes", nargs="+", default=["tiny", "base"])
  ap.add_argument("--batches", type=int, nargs="+", default=[1, 32])
  ap.add_argument("--seq_length", type=int, default=128)
  ap.add_argument("--rounds", type=int, default=7)
  ap.add_argument("--calls", type=int, default=10)
  args = parse_args(ap, argv, smoke=dict(sizes=["tiny"], batches=[1, 4],
                                         seq_length=32, rounds=2, calls=2))
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official.nlp.configs import encoders  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.serving import pretraining_module  # pylint: disable=g-import-not-at-top
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top

  rows = []
  for size in args.sizes:
    params = params_dict.override_params_dict(
        exp_factory.get_exp_config("spanbert/pretraining"),
        yaml_files.path(f"models/{size}.yaml"), is_strict=True)
    enc_cfg = params.task.model.encoder
    b = enc_cfg.bert_v2
    encoder = encoders.build_encoder(enc_cfg)

    @tf.function
    def plain(inputs, encoder=encoder):
      return encoder(inputs, training=False)["sequence_output"]

    limits = (b.vocab_size, b.type_vocab_size, b.max_position_embeddings)

    @tf.function
    def checked(inputs, encoder=encoder, limits=limits):
      return encoder(pretraining_module.checked_encoder_inputs(inputs, *limits),
                     training=False)["sequence_output"]

    for batch in args.batches:
      rng = np.random.default_rng(0)
      inputs = dict(
          input_word_ids=tf.constant(rng.integers(
              1000, b.vocab_size, (batch, args.seq_length)), tf.int32),
          input_mask=tf.ones((batch, args.seq_length), tf.int32),
          input_type_ids=tf.zeros((batch, args.seq_length), tf.int32))
      fns = {"encoder": plain, "checks + encoder": checked}
      same = np.abs(plain(inputs).numpy() - checked(inputs).numpy()).max()
      times = {k: [] for k in fns}
      cpu = {k: [] for k in fns}
      for r in range(args.rounds):
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
          t0, c0 = time.perf_counter(), time.process_time()
          for _ in range(args.calls):
            fns[name](inputs).numpy()
          times[name].append((time.perf_counter() - t0) / args.calls)
          cpu[name].append((time.process_time() - c0) / args.calls)
      ratios = [c / p for p, c in zip(times["encoder"],
                                      times["checks + encoder"])]
      rows.append(dict(
          size=size, batch=batch, seq_length=args.seq_length,
          encoder_ms=round(1e3 * statistics.median(times["encoder"]), 3),
          checked_ms=round(1e3 * statistics.median(times["checks + encoder"]),
                           3),
          encoder_cpu_ms=round(1e3 * statistics.median(cpu["encoder"]), 3),
          checked_cpu_ms=round(
              1e3 * statistics.median(cpu["checks + encoder"]), 3),
          ratio_median=round(statistics.median(ratios), 4),
          ratio_range=[round(min(ratios), 4), round(max(ratios), 4)],
          max_output_difference=float(same), load=os.getloadavg()[0]))
      print(json.dumps(rows[-1]), flush=True)
  report_rows(rows, positive=["encoder_ms", "checked_ms", "encoder_cpu_ms",
                             "checked_cpu_ms", "ratio_median"])


if __name__ == "__main__":
  main()
