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

r"""Serving latency/throughput of the exported base-size SpanBERT vs HF BertModel.

Builds a base-size SpanBERT (configs/models/base.yaml: 12 layers, hidden 768,
12 heads, intermediate 3072, cased vocab 28,996) with RANDOM weights (latency
does not depend on the values), exports it with
official_spanbert.serving.pretraining_module (seq_length 128) to a
temporary directory, loads it back with tf.saved_model.load and, in one process and
interleaved round by round, times:

  * TF `serving_default(text)`   text in: in-graph tokenization + packing +
                                 encoder (what a TF Serving client gets),
  * TF `encode_ids(ids, mask, type_ids)`   pre-tokenized ids in: encoder only,
  * HF `transformers.BertModel(BertConfig(vocab 28996, 12 layers, 768 hidden,
    12 heads, 3072 intermediate))`, PyTorch on CPU, eval mode, torch.no_grad(),
    random init, fed the same pre-tokenized ids (input_ids, attention_mask,
    token_type_ids): encoder only, like encode_ids.

Inputs are real text from the shared corpus (consecutive paragraphs joined
until they exceed 128 wordpieces, so every sequence is full: the real
lengths are checked and printed). Batch 1 and batch 32 at seq 128. Each call is
timed on its own (outputs fetched to the host); per engine we report p50, p99
(with few calls p99 is close to the max) and throughput = batch / mean
latency in sequences/s.

torch uses --torch_threads threads (default 2); TF's intra-op pool is TF's
default (0 = one thread per core), printed at start.

  .venv/bin/python -m benchmarks.bench_serving                    # defaults
  .venv/bin/python -m benchmarks.bench_serving --calls_32 8 --warmup_32 1  # RESULTS.md
  .venv/bin/python -m benchmarks.bench_serving --calls_1 20 --calls_32 4
  .venv/bin/python -m benchmarks.bench_serving --smoke   # seconds: tiny model

--size picks another configs/models/*.yaml encoder (HF's BertModel gets the
same sizes). With --smoke, HF's side is left out when torch or transformers
is not installed (the interop extra).
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from official_spanbert.utils import cpu_features
from benchmarks.common import (  # pylint: disable=g-multiple-import
    DATA, SMOKE_CORPUS, SMOKE_VOCAB, cpu_model, load_avg, parse_args,
    report_rows)

SEQ = 128
ENGINES = ("TF serving_default (text)", "TF encode_ids (ids)",
           "HF BertModel torch (ids)")


def corpus_texts(paths, n: int, min_words: int = 150):
  """n texts, each consecutive non-empty lines joined to >= min_words words."""
  texts = []
  for path in paths:
    with open(path, encoding="utf-8", errors="replace") as f:
      cur = []
      for line in f:
        line = line.strip()
        if not line:
          continue
        cur.append(line)
        if sum(len(x.split()) for x in cur) >= min_words:
          texts.append(" ".join(cur))
          cur = []
          if len(texts) >= n * (paths.index(path) + 1) // len(paths):
            break
  return texts[:n]


def model_params(size: str):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  return params_dict.override_params_dict(
      params, yaml_files.path(f"models/{size}.yaml"), is_strict=True)


def build_and_export(params, vocab: str, export_base: str):
  model = pretraining_module.build_pretrainer(
      serving_module.Run(params))                            # random init
  dirs = pretraining_module.SpanBertServingModule(
      model, vocab, seq_length=SEQ).write(export_base, version=1)
  n = sum(int(np.prod(v.shape)) for v in model.encoder_network.weights)
  return dirs["model"], n


def hf_model(threads: int, enc):
  """HF BertModel of the sizes of `enc` (a bert_v2 encoder config)."""
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  torch.set_num_threads(threads)
  torch.manual_seed(0)
  config = transformers.BertConfig(
      vocab_size=enc.vocab_size, hidden_size=enc.hidden_size,
      num_hidden_layers=enc.num_layers,
      num_attention_heads=enc.num_attention_heads,
      intermediate_size=enc.intermediate_size,
      max_position_embeddings=enc.max_position_embeddings,
      type_vocab_size=enc.type_vocab_size, hidden_act="gelu")
  model = transformers.BertModel(config).eval()
  n = sum(p.numel() for p in model.parameters())
  return torch, transformers, model, n


def percentile(xs, q):
  return float(np.percentile(np.asarray(xs), q))


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--corpus", default=",".join(
      os.path.join(DATA, "corpus", f) for f in ("austen.txt",
                                                "linux-doc.txt")))
  ap.add_argument("--calls_1", type=int, default=50,
                  help="timed calls per engine at batch 1")
  ap.add_argument("--calls_32", type=int, default=10,
                  help="timed calls per engine at batch 32")
  ap.add_argument("--warmup_1", type=int, default=3,
                  help="untimed calls per engine at batch 1")
  ap.add_argument("--warmup_32", type=int, default=2,
                  help="untimed calls per engine at batch 32")
  ap.add_argument("--rounds", type=int, default=5,
                  help="interleaved rounds the calls are split into")
  ap.add_argument("--torch_threads", type=int, default=2)
  ap.add_argument("--size", default="base",
                  help="configs/models/*.yaml encoder (both sides)")
  ap.add_argument("--min_words", type=int, default=150,
                  help="words per text (150 fill seq 128)")
  args = parse_args(ap, argv, smoke=dict(
      vocab=SMOKE_VOCAB, corpus=SMOKE_CORPUS, size="tiny", min_words=80,
      calls_1=2, calls_32=1, warmup_1=1, warmup_32=1, rounds=1))
  corpus = args.corpus.split(",")
  for path in [args.vocab] + corpus:
    if not os.path.exists(path):
      sys.exit(f"missing {path} (set SPANBERT_DATA_DIR)")

  params = model_params(args.size)
  try:
    torch, transformers, hf, hf_params = hf_model(
        args.torch_threads, params.task.model.encoder.bert_v2)
  except ImportError as e:
    if not args.smoke:
      raise
    torch = hf = None
    print(f"HF BertModel: left out ({e}; the interop extra installs it)")
  engines = ENGINES if hf is not None else ENGINES[:2]
  print(f"machine: {cpu_features.usable_cores()} cores ({cpu_model()}), Python "
        f"{platform.python_version()}")
  print(f"TF {tf.__version__} (intra-op threads "
        f"{tf.config.threading.get_intra_op_parallelism_threads()}, inter-op "
        f"{tf.config.threading.get_inter_op_parallelism_threads()}; 0 = "
        f"default, one per core)" + ("" if hf is None else
        f"; torch {torch.__version__} (threads "
        f"{torch.get_num_threads()}), transformers {transformers.__version__}"
        f" (attention: {getattr(hf.config, '_attn_implementation', '?')})"))
  print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
  print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; load at start "
        f"{load_avg()}", flush=True)

  texts = corpus_texts(corpus, max(32, args.calls_1 + args.warmup_1),
                       args.min_words)
  start = time.perf_counter()
  with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    export_dir, tf_params = build_and_export(params, args.vocab,
                                             os.path.join(tmp, "spanbert"))
    hf_size = "" if hf is None else f"; HF BertModel {hf_params / 1e6:.1f}M"
    print(f"built + exported {args.size} model (random init, encoder "
          f"{tf_params / 1e6:.1f}M params{hf_size})"
          f" in {time.perf_counter() - t0:.0f}s", flush=True)
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    encode = loaded.signatures["encode_ids"]

    # Pre-tokenized inputs of every text, via the exported model's own
    # preprocessing (serving_default returns input_word_ids / input_mask).
    feats = serve(text=tf.constant(texts))
    ids = feats["input_word_ids"].numpy()
    mask = feats["input_mask"].numpy()
    lengths = mask.sum(axis=1)
    print(f"{len(texts)} texts, real lengths min {lengths.min()} / mean "
          f"{lengths.mean():.1f} / max {lengths.max()} of seq {SEQ}",
          flush=True)

    def batches(batch, count):
      """`count` batches of `batch` texts (batch 1: different texts)."""
      out = []
      for i in range(count):
        sl = (slice(i % len(texts), i % len(texts) + 1) if batch == 1
              else slice(0, batch))
        t = tf.constant(texts[sl])
        w, m = tf.constant(ids[sl]), tf.constant(mask[sl])
        ty = tf.zeros_like(w)
        pt = None if torch is None else dict(
            input_ids=torch.from_numpy(ids[sl].astype(np.int64)),
            attention_mask=torch.from_numpy(mask[sl].astype(np.int64)),
            token_type_ids=torch.zeros(ids[sl].shape, dtype=torch.int64))
        out.append((t, (w, m, ty), pt))
      return out

    def call(engine, item):
      """(wall, process CPU) seconds of one call, outputs on the host."""
      text, (w, m, ty), pt = item
      t0, c0 = time.perf_counter(), time.process_time()
      if engine == ENGINES[0]:
        serve(text=text)["sequence_output"].numpy()
      elif engine == ENGINES[1]:
        encode(input_word_ids=w, input_mask=m,
               input_type_ids=ty)["sequence_output"].numpy()
      else:
        with torch.no_grad():
          hf(**pt).last_hidden_state.numpy()
      return time.perf_counter() - t0, time.process_time() - c0

    results = []
    for batch, n_calls, warmup in ((1, args.calls_1, args.warmup_1),
                                   (32, args.calls_32, args.warmup_32)):
      items = batches(batch, n_calls + warmup)
      for engine in engines:
        for item in items[:warmup]:
          call(engine, item)
      timed = items[warmup:]
      lat = {e: [] for e in engines}
      cpu = {e: [] for e in engines}
      rounds = max(1, min(args.rounds, n_calls))
      per_round = [timed[r::rounds] for r in range(rounds)]
      loads = [os.getloadavg()[0]]
      for r, chunk in enumerate(per_round):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        for engine in order:
          for item in chunk:
            w, c = call(engine, item)
            lat[engine].append(w)
            cpu[engine].append(c)
        loads.append(os.getloadavg()[0])
        print(f"[batch {batch}] round {r + 1}/{rounds}: " + ", ".join(
            f"{e.split(' (')[0]} p50 {1e3 * statistics.median(v):.0f} ms"
            for e, v in lat.items()) + f" (load {loads[-1]:.2f})",
              flush=True)
      results.append((batch, lat, cpu, (min(loads), max(loads))))

  print(f"\ntotal {time.perf_counter() - start:.0f}s; load at end {load_avg()}")
  print("\n| batch | engine | calls | p50 ms | p99 ms | mean ms | "
        "throughput seq/s | p50 / HF p50 | CPU ms per call (median) | "
        "load 1-min |")
  print("|---|---|---|---|---|---|---|---|---|---|")
  rows = []
  for batch, lat, cpu, (lo, hi) in results:
    hf_p50 = statistics.median(lat[ENGINES[2]]) if hf is not None else None
    for engine in engines:
      v = lat[engine]
      p50 = statistics.median(v)
      vs_hf = "-" if hf_p50 is None else f"{p50 / hf_p50:.2f}x"
      print(f"| {batch} | {engine} | {len(v)} | {1e3 * p50:.1f} | "
            f"{1e3 * percentile(v, 99):.1f} | {1e3 * statistics.mean(v):.1f} "
            f"| {batch / statistics.mean(v):.2f} | {vs_hf} | "
            f"{1e3 * statistics.median(cpu[engine]):.0f} | {lo:.1f}-{hi:.1f} |")
      rows.append(dict(batch=batch, engine=engine, calls=len(v),
                       p50_ms=1e3 * p50, p99_ms=1e3 * percentile(v, 99),
                       mean_ms=1e3 * statistics.mean(v),
                       throughput=batch / statistics.mean(v),
                       cpu_ms=1e3 * statistics.median(cpu[engine])))
  report_rows(rows, positive=["calls", "p50_ms", "p99_ms", "mean_ms",
                              "throughput", "cpu_ms"])


if __name__ == "__main__":
  main()
