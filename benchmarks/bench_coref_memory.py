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

r"""Peak memory and time of the exported coreference model's `resolve`.

For each --sizes encoder (`tiny`: 3 layers, hidden 96, the size of issue 38's
measurement; `smoke`: 1 layer, hidden 32, FFNN 64, what --smoke runs;
`minilm`: 6 layers, hidden 384, 12 heads, FFN 1,536, the shape of
all-MiniLM-L6-v2 that the serving tables use; `base`:
configs/models/base.yaml) and each --chunk_sizes value
(task.model.chunk_size; 0 scores the whole document at once, as before issue
38), builds spanbert/coref with RANDOM weights (memory and time do not depend
on the values; the number of spans kept is fixed by top_span_ratio), exports
it with serving/coref_module.CorefServingModule (segments of 384, no length limit) and
then, for each --wordpieces length, starts a FRESH process that loads the
SavedModel, makes one warm-up call on a short text, resets the peak RSS
(/proc/self/clear_refs) and times one `resolve` (wall and process CPU) on
English prose (whole
paragraphs of Austen from the shared corpus, up to the length). It prints
one markdown row per run: peak RSS above the loaded, warmed-up model,
seconds, and CPU seconds per 1,000 words (issue 45 item 6). --threads N
limits the worker's TensorFlow pools to N threads (0: TF's default). A run over --max_seconds is stopped and reported as such;
chunk_size 0 runs only up to --whole_max_wordpieces.

  .venv/bin/python -m benchmarks.bench_coref_memory --sizes tiny \
      --chunk_sizes 128 0 --wordpieces 2000 8000 32000
  .venv/bin/python -m benchmarks.bench_coref_memory --smoke   # seconds
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import common


def _rss_kb(field: str) -> int:
  with open("/proc/self/status", encoding="ascii") as f:
    for line in f:
      if line.startswith(field + ":"):
        return int(line.split()[1])
  raise RuntimeError(f"no {field} in /proc/self/status")


def worker(model_dir: str, text_file: str, threads: int = 0) -> None:
  """Runs in a fresh process: one JSON line of memory (MB) and seconds."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import  (its ops)
  if threads:
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
  with open(text_file, encoding="utf-8") as f:
    text = f.read()
  resolve = tf.saved_model.load(model_dir).signatures["resolve"]
  resolve(text=tf.constant("Jane saw her sister. She waved at her."))
  loaded = _rss_kb("VmRSS")
  with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
    f.write("5")  # the peak (VmHWM) restarts from the current RSS
  start, cpu = time.perf_counter(), time.process_time()
  out = resolve(text=tf.constant(text))
  seconds = time.perf_counter() - start
  cpu = time.process_time() - cpu
  print(json.dumps({"loaded_mb": loaded / 1024,
                    "peak_above_mb": (_rss_kb("VmHWM") - loaded) / 1024,
                    "seconds": seconds, "cpu_seconds": cpu,
                    "mentions": int(out["mention_starts"].shape[0])}))


def _texts(lengths, vocab, corpus):
  """Prose of up to each length in wordpieces: (text, wordpieces, words)."""
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  tokenizer = tokenization.WordpieceTokenizer(vocab)
  with open(corpus, encoding="utf-8") as f:
    paragraphs = [p.strip() for p in f if p.strip()][:4000]
  counts = [int(n) for n in
            tokenizer.tokenize(paragraphs)[0].row_lengths().numpy()]
  out = []
  for length in lengths:
    total, end = 0, 0
    while end < len(paragraphs) and total + counts[end] <= length:
      total += counts[end]
      end += 1
    text = "\n".join(paragraphs[:end])
    out.append((text, total, len(text.split())))
  return out


def _model(size: str, chunk_size: int):
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import coref_model  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  params = exp_factory.get_exp_config("spanbert/coref")
  if size == "smoke":  # --smoke: the graph of tiny, a fraction of its layers
    enc = params.task.model.encoder.bert_v2
    enc.num_layers, enc.hidden_size = 1, 32
    enc.num_attention_heads, enc.intermediate_size = 2, 64
    enc.vocab_size = 28996
    params.task.model.ffnn_size = 64
  elif size == "tiny":
    enc = params.task.model.encoder.bert_v2
    enc.num_layers, enc.hidden_size = 3, 96
    enc.num_attention_heads, enc.intermediate_size = 2, 384
    enc.vocab_size = 28996
  elif size == "minilm":
    enc = params.task.model.encoder.bert_v2
    enc.num_layers, enc.hidden_size = 6, 384
    enc.num_attention_heads, enc.intermediate_size = 12, 1536
    enc.vocab_size = 28996
  else:
    params = params_dict.override_params_dict(
        params, yaml_files.path(f"models/{size}.yaml"), is_strict=True)
  params.task.model.chunk_size = chunk_size
  model = coreference.build_model(params.task.model)
  # Variables built before the export, as a restored model's are
  # (as an export restores it): its first trace of `resolve` then builds none
  # and is not traced again without them (~3 s of a smoke run).
  model(coref_model.dummy_features(), training=False)
  return model


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--sizes", nargs="+", default=["tiny"])
  ap.add_argument("--chunk_sizes", type=int, nargs="+", default=[128, 0])
  ap.add_argument("--wordpieces", type=int, nargs="+",
                  default=[2000, 8000, 32000])
  ap.add_argument("--whole_max_wordpieces", type=int, default=8000,
                  help="chunk_size 0 only up to this length (it took +11 GB "
                  "at 24,000 words before issue 38)")
  ap.add_argument("--max_seconds", type=float, default=1800)
  ap.add_argument("--corpus", default=common.data_path("corpus", "austen.txt"))
  ap.add_argument("--vocab", default=common.data_path(
      "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--threads", type=int, default=0,
                  help="TensorFlow threads of the timed process (0: default)")
  ap.add_argument("--worker", nargs=2, metavar=("MODEL_DIR", "TEXT_FILE"))
  # Smoke: one chunked run on ~300 wordpieces, in its own process as always.
  args = common.parse_args(ap, argv, smoke=dict(
      sizes=["smoke"], chunk_sizes=[64], wordpieces=[300], max_seconds=300,
      corpus=common.SMOKE_CORPUS, vocab=common.SMOKE_VOCAB))
  if args.worker:
    worker(*args.worker, threads=args.threads)
    return
  print(common.machine())
  # The exports and texts (GBs at base size) go when the run ends.
  with tempfile.TemporaryDirectory(prefix="coref_memory_") as work:
    _measure(args, work)
  print(f"load avg at end {common.load_avg()}")


def _measure(args, work: str) -> None:
  """The table: an export per size and chunk size, a worker per length."""
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  vocab = args.vocab
  texts = _texts(args.wordpieces, vocab, args.corpus)
  print("| size | chunk_size | wordpieces | words | peak RSS above loaded "
        "| seconds | CPU seconds | CPU-s / 1,000 words | loaded RSS | "
        f"mentions |  (threads: {args.threads or 'default'})")
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  rows = []
  for size in args.sizes:
    for chunk in args.chunk_sizes:
      export_dir = coref_module.CorefServingModule(
          _model(size, chunk), vocab, max_wordpieces=0).write(
              os.path.join(work, f"{size}_{chunk}"))["model"]
      for text, pieces, words in texts:
        row = dict(size=size, chunk_size=chunk, wordpieces=pieces,
                   words=words)
        rows.append(row)
        if not chunk and pieces > args.whole_max_wordpieces:
          row["status"] = "not run"
          print(f"| {size} | {chunk} | {pieces:,} | {words:,} | not run "
                f"(--whole_max_wordpieces) | | | | | |", flush=True)
          continue
        text_file = os.path.join(work, f"text_{pieces}.txt")
        with open(text_file, "w", encoding="utf-8") as f:
          f.write(text)
        try:
          run = subprocess.run(
              [sys.executable, "-m", "benchmarks.bench_coref_memory",
               f"--threads={args.threads}", "--worker", export_dir,
               text_file], capture_output=True,
              text=True, check=False, timeout=args.max_seconds,
              cwd=common.REPO)
        except subprocess.TimeoutExpired:
          row["status"] = "stopped"
          print(f"| {size} | {chunk} | {pieces:,} | {words:,} | stopped "
                f"after {args.max_seconds:.0f} s | | | | | |", flush=True)
          continue
        lines = run.stdout.strip().splitlines()
        if run.returncode or not lines:
          tail = run.stderr.strip().splitlines()[-1:] or ["?"]
          row["status"] = "failed"
          print(f"| {size} | {chunk} | {pieces:,} | {words:,} | failed "
                f"(exit {run.returncode}: {tail[0][:80]}) | | | | | |",
                flush=True)
          continue
        r = json.loads(lines[-1])
        row.update(r, status="ok")
        print(f"| {size} | {chunk} | {pieces:,} | {words:,} | "
              f"{r['peak_above_mb']:,.0f} MB | {r['seconds']:.1f} | "
              f"{r['cpu_seconds']:.1f} | "
              f"{1000 * r['cpu_seconds'] / max(words, 1):.2f} | "
              f"{r['loaded_mb']:,.0f} MB | {r['mentions']:,} |", flush=True)
  common.report_rows(rows, positive=["seconds", "cpu_seconds", "loaded_mb"])


if __name__ == "__main__":
  main()
