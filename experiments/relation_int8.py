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

r"""int8 and bfloat16 exports of a trained SemEval-2010 relation run vs float32.

Exports the run's best checkpoint with `precision` float32, bfloat16 (if
the CPU has AVX512-BF16 or AMX) and int8 (calibrated on the run's own
training records: serving/quantization.py), serves the 2,717 raw test
sentences of TEST_FILE_FULL.TXT through each export's `classify_relation`
(as relation_semeval.py does) and reports the official macro-F1
(metrics/relation_f1.semeval_scores), the share of labels identical to
float32's, the largest probability distance and the serving time. The run
directory is only read; exports go to --work_dir.

  python -m experiments.relation_int8 \
      --run_dir=/work/study-scratch/semeval/runs/typed_marker_seed1 \
      --work_dir=/tmp/int8-work/semeval
"""

import argparse
import json
import os
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from experiments import common
from experiments import relation_semeval

SEMEVAL = common.data_path("relation", "semeval2010")


def serve(export_dir: str, examples, batch: int) -> dict:
  """Labels and probabilities of an export's classify_relation."""
  fn = tf.saved_model.load(export_dir).signatures["classify_relation"]
  labels, probs = [], []
  t0, c0 = time.time(), time.process_time()
  for i in range(0, len(examples), batch):
    part = examples[i:i + batch]
    ints = lambda name: tf.constant([getattr(e, name) for e in part],  # pylint: disable=unnecessary-lambda-assignment,cell-var-from-loop
                                    tf.int32)
    out = fn(text=tf.constant([e.text for e in part]),
             subject_start=ints("subj_start"), subject_end=ints("subj_end"),
             object_start=ints("obj_start"), object_end=ints("obj_end"),
             subject_type=tf.constant(["ENTITY"] * len(part)),
             object_type=tf.constant(["ENTITY"] * len(part)))
    labels.extend(x.decode() for x in out["label"].numpy())
    probs.append(out["probabilities"].numpy())
  return {"labels": labels, "probabilities": np.concatenate(probs),
          "wall_s": time.time() - t0, "cpu_s": time.process_time() - c0}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--run_dir", required=True)
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--precisions", nargs="+",
                  default=["float32", "bfloat16", "int8"])
  ap.add_argument("--batch", type=int, default=64)
  ap.add_argument("--n", type=int, default=0, help="first n test sentences")
  ap.add_argument("--result_json", default=os.path.join(
      common.REPO, "experiments", "relation_results", "int8_semeval.json"))
  args = ap.parse_args(argv)
  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=unused-import
  from official_spanbert.data.finetuning import semeval2010
  from official_spanbert.metrics import relation_f1
  from official_spanbert.serving import export_precision
  from official_spanbert.serving import registry
  from official_spanbert.utils import cpu_features
  # pylint: enable=g-import-not-at-top
  cpu = cpu_features.read()
  run = registry.load_run(args.run_dir)
  best = tf.train.latest_checkpoint(os.path.join(args.run_dir, "best_ckpt"))
  run = registry.Run(run.params, run.experiment, checkpoint_path=best)
  raw = semeval2010.read_semeval(os.path.join(SEMEVAL, "raw",
                                              "TEST_FILE_FULL.TXT"))
  raw = raw[:args.n] if args.n else raw
  gold = [e.label for e in raw]
  rows = {}
  for precision in args.precisions:
    try:
      export_precision.check(precision, cpu)
    except export_precision.PrecisionError as e:
      print(f"{precision}: skipped: {e}")
      continue
    t0 = time.time()
    path = registry.export(run, {"precision": precision},
                           os.path.join(args.work_dir, precision))["model"]
    export_s = time.time() - t0
    served = serve(path, raw, args.batch)
    semeval = relation_f1.semeval_scores(gold, served["labels"])
    rows[precision] = dict(served, export_dir=path, export_s=export_s,
                           macro_f1=100 * semeval["macro_f1"])
    print(f"{precision}: macro-F1 {rows[precision]['macro_f1']:.2f}, "
          f"served {served['wall_s']:.1f} s wall / {served['cpu_s']:.1f} s "
          f"CPU, export {export_s:.0f} s", flush=True)
  base = rows["float32"]
  result = {"run_dir": args.run_dir, "checkpoint": best,
            "sentences": len(raw), "machine": common.machine(),
            "cpu": cpu.describe(), "cpu_flags": relation_semeval.cpu_flags(),
            "threads": os.environ.get("TF_NUM_INTRAOP_THREADS", "default"),
            "load_average": os.getloadavg(), "batch": args.batch,
            "precisions": {}}
  for precision, row in rows.items():
    same = np.mean([a == b for a, b in zip(row["labels"], base["labels"])])
    result["precisions"][precision] = {
        "semeval_macro_f1": round(row["macro_f1"], 2),
        "identical_labels_to_float32": round(100 * float(same), 2),
        "max_probability_diff_to_float32": float(np.abs(
            row["probabilities"] - base["probabilities"]).max()),
        "serve_wall_s": round(row["wall_s"], 1),
        "serve_cpu_s": round(row["cpu_s"], 1),
        "export_s": round(row["export_s"], 1)}
  print(json.dumps(result, indent=1))
  os.makedirs(os.path.dirname(args.result_json), exist_ok=True)
  with open(args.result_json, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)


if __name__ == "__main__":
  main()
