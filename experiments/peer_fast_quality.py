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

r"""The peers' fast paths on our trained SQuAD model: what their speed costs.

Issue 57 item 2 measures the package's int8 and bfloat16 exports on trained
models (fast_exports_quality.py); the speed tables compare them with the
peers' fastest settings. This serves the same trained weights through those
peers (benchmarks/hf_pipeline_worker.py's engines: transformers' pipeline in
float32 and bfloat16, ONNX Runtime float32 and `quantize_dynamic` int8, and
int8 with the feed-forward outputs left float32, as our export left them
before it split their outlier channels off),
so that each speed has its quality beside it. The run is
`fast_exports_quality --task squad`'s (<work_dir>/squad/model), converted
with interop.tf_to_hf, its span head copied into BertForQuestionAnswering's
`qa_outputs`; the questions are the same first 1,004 of SQuAD v1.1 dev
(evaluation only). Needs a venv with transformers 4.x and onnxruntime
(--hf_python, as the bench).

  nice -n 10 .venv/bin/python -m experiments.peer_fast_quality \
      --work_dir /work/scratch-quality --hf_python .scratch/hf4venv/bin/python
"""

import argparse
import json
import os
import shlex
import shutil
import sys
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from benchmarks import bench_finetuned_serving
from benchmarks import finetuned_serving_inputs
from benchmarks import hf_pipeline_worker
from experiments import common
from experiments import fast_exports_quality
from experiments import study_lib

ENGINES = ("pipeline", "pipeline_bf16") + hf_pipeline_worker.ORT_QA
# Which engine each one is compared with (the same decoding in float32).
REFERENCE = {"pipeline_bf16": "pipeline", "ort_int8": "ort",
             "ort_int8_ffn": "ort"}
BATCH = 16
RESULT_FILE = "squad_peers.json"  # in fast_exports_quality's results folder


def convert(work_dir: str, out: str):
  """(Hugging Face BERT directory, heads.npz) of the trained SQuAD run."""
  # pylint: disable=g-import-not-at-top
  from official.core import task_factory
  from official_spanbert import interop
  from official_spanbert.interop import converter
  # pylint: enable=g-import-not-at-top
  hf_dir, heads = os.path.join(out, "hf"), os.path.join(out, "heads.npz")
  if os.path.exists(heads):
    return hf_dir, heads
  run = fast_exports_quality.run_of("squad", work_dir)
  task = task_factory.get_task(run.params.task.replace(validation_data=None))
  model = task.build_model()
  tf.train.Checkpoint(model=model, **model.checkpoint_items).read(
      run.checkpoint_path).expect_partial()
  encoder = model.checkpoint_items["encoder"]
  ckpt_dir = os.path.join(out, "encoder")
  os.makedirs(ckpt_dir, exist_ok=True)
  tf.train.Checkpoint(encoder=encoder).save(os.path.join(ckpt_dir, "ckpt"))
  base = os.path.join(work_dir, "minilm")  # the conversion the run began at
  for name in (interop.PARAMS_FILE, interop.VOCAB_FILE,
               interop.CONVERSION_FILE):
    shutil.copy(os.path.join(base, name), ckpt_dir)
  interop.tf_to_hf(ckpt_dir, hf_dir,
                   converter.ConversionOptions(overwrite=True))
  np.savez(heads, **{k: np.ascontiguousarray(v, np.float32) for k, v in
                     finetuned_serving_inputs.hf_qa_head(
                         finetuned_serving_inputs.head_weights(model)).items()})
  return hf_dir, heads


def serve(worker, engine: str, rows) -> dict:
  """{id: answer}, and the worker's CPU seconds, of one engine."""
  answers, cpu = {}, 0.0
  for i in range(0, len(rows), BATCH):
    chunk = rows[i:i + BATCH]
    got = worker.ask(op="qa", engine=engine, calls=[[
        [q for _, q, _ in chunk], [c for _, _, c in chunk]]])
    cpu += sum(got["cpu"])
    for (qid, _, _), (_, _, text) in zip(chunk, got["results"][0]):
      answers[qid] = text
  return {"predictions": answers, "serve_cpu_s": round(cpu, 1)}


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", required=True,
                  help="fast_exports_quality's: the run in <work_dir>/squad")
  ap.add_argument("--hf_python", default=bench_finetuned_serving.HF_PYTHON)
  ap.add_argument("--engines", nargs="+", default=list(ENGINES),
                  choices=ENGINES)
  ap.add_argument("--result_json", default=os.path.join(
      fast_exports_quality.RESULTS, RESULT_FILE))
  args = ap.parse_args(argv)
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.metrics import squad_evaluate  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  work_dir = os.path.join(args.work_dir, "squad")
  out = os.path.join(work_dir, "peers")
  os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
  hf_dir, heads = convert(work_dir, out)
  data, rows = fast_exports_quality.squad_data(work_dir)
  worker = hf_pipeline_worker.Worker(args.hf_python, hf_dir, heads, 1,
                                     hf_pipeline_worker.STRIDE)
  result = study_lib.read_json(args.result_json) or {}
  result.update({"questions": len(rows), "worker": worker.info,
                 "cpu": cpu_features.read().describe(),
                 "machine": common.machine(), "engines": {}})
  try:
    if any(e in hf_pipeline_worker.ORT_QA for e in args.engines):
      result["onnx"] = worker.ask(op="ort_qa", work=os.path.join(out, "onnx"))
    kept = {}
    for engine in args.engines:
      load, t0 = os.getloadavg(), time.time()
      row = serve(worker, engine, rows)
      metrics = squad_evaluate.evaluate_v1(data, row["predictions"])
      kept[engine] = row["predictions"]
      entry = {"exact_match": metrics["exact_match"], "f1": metrics["f1"],
               "serve_cpu_s": row["serve_cpu_s"],
               "serve_wall_s": round(time.time() - t0, 1),
               "load_average_before": load}
      ref = REFERENCE.get(engine)
      if ref in kept:
        entry["vs_" + ref] = fast_exports_quality.identical(
            "squad", {"predictions": row["predictions"]},
            {"predictions": kept[ref]})
      result["engines"][engine] = entry
      print(f"{engine}: F1 {metrics['f1']:.2f} EM "
            f"{metrics['exact_match']:.2f}; {row['serve_cpu_s']} CPU-s",
            flush=True)
  finally:
    worker.close()
  result.update(commit=study_lib.git_commit(), finished=time.strftime(
      "%Y-%m-%d %H:%M UTC", time.gmtime()), command=shlex.join(
          ["python", "-m", "experiments.peer_fast_quality"] +
          (argv if argv is not None else sys.argv[1:])))
  study_lib.write_json(args.result_json, result)
  print(f"wrote {args.result_json}")


if __name__ == "__main__":
  main()
