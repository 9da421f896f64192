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

r"""Peak memory and time of the exported SQuAD model's `answer` by context size.

Exports spanbert/squad_v1 with the tiny encoder (configs/models/tiny.yaml,
RANDOM weights: memory does not depend on them; seq 384, stride 128, no
context limit), then for each --chars length starts a FRESH process that
loads the SavedModel, warms it up on a short context, resets the peak RSS
(/proc/self/clear_refs) and times one `answer` on Austen's prose of that
many characters. One markdown row per length: peak RSS above the loaded
model, seconds. `--export_dir` measures a SavedModel exported elsewhere (by
an older commit, for a before/after table).

  .venv/bin/python -m benchmarks.bench_qa_memory --chars 50000 200000 450000
  .venv/bin/python -m benchmarks.bench_qa_memory --smoke   # seconds
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import common
from benchmarks.bench_coref_memory import _rss_kb


def worker(model_dir: str, text_file: str) -> None:
  """Runs in a fresh process: one JSON line of memory (MB) and seconds."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import  (its ops)
  with open(text_file, encoding="utf-8") as f:
    text = f.read()
  answer = tf.saved_model.load(model_dir).signatures["answer"]
  answer(question=tf.constant(["Who?"]), context=tf.constant(["Ann met Bob."]))
  loaded = _rss_kb("VmRSS")
  with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
    f.write("5")  # the peak (VmHWM) restarts from the current RSS
  start, cpu = time.perf_counter(), time.process_time()
  out = answer(question=tf.constant(["Who married Mr. Darcy?"]),
               context=tf.constant([text]))
  print(json.dumps({"loaded_mb": loaded / 1024,
                    "peak_above_mb": (_rss_kb("VmHWM") - loaded) / 1024,
                    "seconds": time.perf_counter() - start,
                    "cpu_seconds": time.process_time() - cpu,
                    "answer_chars": int(out["answer_end"][0] -
                                        out["answer_start"][0])}))


def export_tiny(export_base: str, seq_length: int = 384,
                vocab: str = "") -> str:
  """The tiny squad_v1 model with random weights, exported; its dir."""
  # pylint: disable=g-import-not-at-top
  import official_spanbert  # noqa: F401  pylint: disable=unused-import
  from official.core import exp_factory
  from official.modeling.hyperparams import params_dict
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=unused-import
  from official_spanbert.configs import yaml_files
  from official_spanbert.serving import qa_module
  from official_spanbert.serving import serving_module
  # pylint: enable=g-import-not-at-top
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  params = params_dict.override_params_dict(
      params, yaml_files.path("models/tiny.yaml"), is_strict=True)
  vocab = vocab or common.data_path("vocab", "bert-base-cased-vocab.txt")
  for data in (params.task.train_data, params.task.validation_data):
    data.vocab_file, data.seq_length, data.doc_stride = vocab, seq_length, 128
  module_cls = qa_module.QuestionAnsweringModule
  return module_cls.from_run(  # random weights; no limit: every length
      serving_module.Run(params),
      module_cls.Params(max_context_wordpieces=0)).write(export_base)["model"]


def _text(chars: int, corpus: str) -> str:
  with open(corpus, encoding="utf-8") as f:
    text = f.read(chars * 2)
  return text[:chars]


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--chars", type=int, nargs="+",
                  default=[50_000, 200_000, 450_000])
  ap.add_argument("--export_dir", help="a SavedModel to measure (default: "
                  "export the tiny model with this checkout)")
  ap.add_argument("--export_only", metavar="EXPORT_BASE",
                  help="only export the tiny model there and print its dir")
  ap.add_argument("--max_seconds", type=float, default=1800)
  ap.add_argument("--seq_length", type=int, default=384,
                  help="the exported model's window")
  ap.add_argument("--corpus", default=common.data_path("corpus", "austen.txt"))
  ap.add_argument("--vocab", default=common.data_path(
      "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--worker", nargs=2, metavar=("MODEL_DIR", "TEXT_FILE"))
  # Smoke: seq 128 (the window must hold query_length 64 + 4), one context
  # of 8,000 characters (one fresh process).
  args = common.parse_args(ap, argv, smoke=dict(
      seq_length=128, chars=[8_000], corpus=common.SMOKE_CORPUS,
      vocab=common.SMOKE_VOCAB, max_seconds=300))
  if args.worker:
    worker(*args.worker)
    return
  if args.export_only:
    print(export_tiny(args.export_only, args.seq_length, args.vocab))
    return
  print(common.machine())
  with tempfile.TemporaryDirectory(prefix="qa_memory_") as work:
    _measure(args, work)
  print(f"load avg at end {common.load_avg()}")


def _measure(args, work: str) -> None:
  """The table: one fresh worker process per --chars length."""
  export_dir = args.export_dir or export_tiny(
      os.path.join(work, "qa"), args.seq_length, args.vocab)
  print("| context chars | peak RSS above loaded | seconds | CPU seconds "
        "| loaded RSS |")
  print("|---:|---:|---:|---:|---:|")
  rows = []
  for n in args.chars:
    row = dict(context_chars=n)
    rows.append(row)
    text_file = os.path.join(work, f"text_{n}.txt")
    with open(text_file, "w", encoding="utf-8") as f:
      f.write(_text(n, args.corpus))
    try:
      run = subprocess.run(
          [sys.executable, "-m", "benchmarks.bench_qa_memory", "--worker",
           export_dir, text_file], capture_output=True, text=True,
          check=False, timeout=args.max_seconds, cwd=common.REPO)
    except subprocess.TimeoutExpired:
      row["status"] = "stopped"
      print(f"| {n:,} | stopped after {args.max_seconds:.0f} s | | | |")
      continue
    lines = run.stdout.strip().splitlines()
    if run.returncode or not lines:
      tail = (run.stderr.strip().splitlines() or ["?"])[-1]
      row["status"] = "failed"
      print(f"| {n:,} | failed (exit {run.returncode}: {tail[:80]}) | | | |")
      continue
    r = json.loads(lines[-1])
    row.update(r, status="ok")
    print(f"| {n:,} | {r['peak_above_mb']:,.0f} MB | {r['seconds']:.1f} | "
          f"{r['cpu_seconds']:.1f} | {r['loaded_mb']:,.0f} MB |", flush=True)
  common.report_rows(rows, positive=["seconds", "cpu_seconds", "loaded_mb"])


if __name__ == "__main__":
  main()
