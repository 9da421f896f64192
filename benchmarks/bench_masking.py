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

r"""Masking throughput of the SpanBERT pretraining loader, with a breakdown.

Builds real records first (the first --corpus_mb MB of linux-doc.txt through
create_pretraining_records at seq 512, into a temporary directory; tagged with
--tag_spans, which needs the `linguistic` extra, and the tagging rate in
words/s on --tag_processes cores is printed), then measures, at each batch
size:

1. loader: `TFRecordDataset(files).repeat()` -> `loader.transform_and_batch`
   (batch, parse, frame, mask; map with AUTOTUNE) -> `.prefetch(2)`, for the
   schemes `span`, `token`, `whole_word`, `named_entity`, `noun_phrase` (with
   tagged records) and `span` with use_xla_masking=False.
   Each trial builds a fresh pipeline, warms it up (the first batch compiles
   the XLA span sampling), then times --sequences sequences. Trials are
   interleaved across schemes so that load changes hit all of them alike.
2. parse+frame only: the same pipeline with the masking step left out
   (`tf.io.parse_example` + the loader's `_frame`), to see what the masking
   step adds.
3. core: on pre-framed batches held in memory, a tf.function of
   `masking.mask_batch` (full masking incl. post-processing: 80/10/10,
   SBO targets, dense outputs) and of the sampling step alone
   (`masking._select`), called one batch at a time (no tf.data parallelism
   across batches); not for the tagged schemes.
4. oracle: the NumPy/Python transcription of the reference implementation
   (testing/span_masking_oracle.py, `mask_block`) over the same blocks, one
   block at a time, single core.

tokens/s is (sequences x seq_length) / s: positions of masked, framed
sequences produced per second (padding included). "real tokens/s" counts only
non-pad positions ([CLS]/[SEP] included); "predictions/s" counts the masked
(predicted) positions.

  .venv/bin/python -m benchmarks.bench_masking
  .venv/bin/python -m benchmarks.bench_masking --batch_sizes 256 --trials 5
  .venv/bin/python -m benchmarks.bench_masking --smoke   # seconds
"""

import argparse
import gc
import os
import sys
import tempfile
import time

import numpy as np
import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf

from official_spanbert.data.pretraining.masking import masking
from official_spanbert.data.pretraining.masking import span_sampler
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.testing import span_masking_oracle as oracle
from benchmarks.common import (  # pylint: disable=g-multiple-import
    DATA, SMOKE_CORPUS, SMOKE_VOCAB, first_bytes, load_avg, machine,
    parse_args)
from benchmarks.masking_tables import TAGGED, VARIANTS, report


_WAITED = [0.0]


def wait_for_load(max_load: float, max_wait: float):
  """Sleeps while the 1-minute load is above max_load, at most max_wait
  seconds over the whole run (other jobs share the machine)."""
  while os.getloadavg()[0] > max_load and _WAITED[0] < max_wait:
    print(f"  load {load_avg()} > {max_load}; waiting", flush=True)
    time.sleep(15)
    _WAITED[0] += 15


class _CountingRng:
  """A numpy Generator that counts its `integers` calls."""

  def __init__(self, rng):
    self._rng = rng
    self.integers_calls = 0

  def integers(self, *a, **k):
    self.integers_calls += 1
    return self._rng.integers(*a, **k)

  def __getattr__(self, name):
    return getattr(self._rng, name)


class Bench:
  """Holds the records and the config shared by all measurements."""

  def __init__(self, args, files):
    self.args = args
    self.files = files
    self.seq = args.seq_length

  def config(self, scheme, use_xla, batch):
    return pdl.SpanBertPretrainDataConfig(
        input_path=",".join(self.files), vocab_file=self.args.vocab,
        seq_length=self.seq, global_batch_size=batch,
        masking_scheme=scheme, use_xla_masking=use_xla, is_training=False,
        drop_remainder=True, seed=17)

  def _time_pipeline(self, ds, batch):
    """(seconds, real tokens, predictions) over the timed batches."""
    n_batches = max(1, self.args.sequences // batch)
    it = iter(ds)
    for _ in range(self.args.warmup):
      next(it)
    real = preds = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    for _ in range(n_batches):
      b = next(it)
      real += int(np.sum(b["input_mask"].numpy()))
      if "masked_lm_weights" in b:
        preds += int(np.sum(b["masked_lm_weights"].numpy()))
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    del it
    gc.collect()
    return dt, n_batches * batch, real, preds, cpu

  def loader_pipeline(self, scheme, use_xla, batch):
    loader = pdl.SpanBertPretrainDataLoader(self.config(scheme, use_xla,
                                                        batch))
    ds = tf.data.TFRecordDataset(self.files).repeat()
    return loader.transform_and_batch(ds).prefetch(2)

  def frame_pipeline(self, batch):
    loader = pdl.SpanBertPretrainDataLoader(self.config("token", True, batch))
    spec = record_format.feature_spec("single")
    ds = tf.data.TFRecordDataset(self.files).repeat().batch(
        batch, drop_remainder=True)
    # pylint: disable=protected-access
    ds = ds.map(lambda x: loader._frame(tf.io.parse_example(x, spec)),
                num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(2)

  def framed_batches(self, batch, count):
    """`count` distinct framed batches, as tensors in memory."""
    loader = pdl.SpanBertPretrainDataLoader(self.config("token", True, batch))
    spec = record_format.feature_spec("single")
    ds = tf.data.TFRecordDataset(self.files).repeat().batch(
        batch, drop_remainder=True).take(count)
    # pylint: disable=protected-access
    ds = ds.map(lambda x: loader._frame(tf.io.parse_example(x, spec)))
    return list(ds), loader

  def run_loader(self):
    """Interleaved trials of the loader pipelines and parse+frame."""
    results = {}
    for batch in self.args.batch_sizes:
      for trial in range(self.args.trials):
        wait_for_load(self.args.max_load, self.args.max_wait)
        for label, scheme, use_xla in VARIANTS:
          if (label == "span (no XLA)" and not self.args.no_xla or
              label in TAGGED and not self.args.tag_spans or
              label not in self.args.schemes):
            continue
          ds = self.loader_pipeline(scheme, use_xla, batch)
          r = self._time_pipeline(ds, batch)
          results.setdefault((batch, label), []).append(r)
          self._print_trial(batch, label, trial, r)
        r = self._time_pipeline(self.frame_pipeline(batch), batch)
        results.setdefault((batch, "parse+frame only"), []).append(r)
        self._print_trial(batch, "parse+frame only", trial, r)
    return results

  def _print_trial(self, batch, label, trial, r):
    dt, seqs, _, _, cpu = r
    print(f"  B={batch} {label:17s} trial {trial + 1}: {seqs} seqs in "
          f"{dt:.2f} s = {seqs * self.seq / dt / 1e6:.3f} M tokens/s, "
          f"{seqs * self.seq / cpu / 1e6:.3f} M tokens/CPU-s "
          f"(load {load_avg()})", flush=True)

  def run_core(self):
    """tf.function timings of mask_batch, of the sampling step alone and of
    the post-processing alone (mask_batch given a precomputed mask)."""
    # pylint: disable=protected-access
    results = {}
    for batch in self.args.batch_sizes:
      framed, loader = self.framed_batches(batch, self.args.core_batches)
      random = loader._random_ids, loader._random_weights
      fns = {}
      pre_masks = {}
      for label, scheme, use_xla in VARIANTS:
        if label in TAGGED or label not in self.args.schemes:
          continue
        params = pdl.masking_params(self.config(scheme, use_xla, batch),
                                    loader._vocab)
        fns[("mask_batch", label)] = self._mask_batch_fn(params, *random)
        fns[("sampling only", label)] = self._sampling_fn(params)
        if use_xla:
          fns[("post only", label)] = self._post_fn(params, *random)
          pre_masks[label] = [
              fns[("sampling only", label)](
                  f["input_word_ids"], f["maskable"], f["word_starts"],
                  tf.constant([9, i], tf.int64), None)
              for i, f in enumerate(framed)]
      n_calls = max(1, self.args.sequences // batch)

      def call(fn, label, i, seed):
        f = framed[i % len(framed)]
        pre = pre_masks.get(label.replace(" (no XLA)", ""))[i % len(framed)]
        return fn(f["input_word_ids"], f["maskable"], f["word_starts"],
                  tf.constant(seed, tf.int64), pre)

      for trial in range(self.args.trials):
        wait_for_load(self.args.max_load, self.args.max_wait)
        for (what, label), fn in fns.items():
          for i in range(2):  # warm-up (tracing, XLA compile)
            call(fn, label, i, [1, i])
          t0 = time.perf_counter()
          for i in range(n_calls):
            call(fn, label, i, [trial + 2, i]).numpy()
          dt = time.perf_counter() - t0
          results.setdefault((batch, what, label), []).append(
              (dt, n_calls * batch))
          print(f"  core B={batch} {what:13s} {label:17s} trial {trial + 1}: "
                f"{n_calls * batch * self.seq / dt / 1e6:.3f} M tokens/s "
                f"(load {load_avg()})", flush=True)
    return results

  @staticmethod
  def _mask_batch_fn(params, random_ids, random_weights):
    @tf.function
    def fn(ids, maskable, word_starts, seed, pre_mask):
      del pre_mask
      out = masking.mask_batch(ids, maskable > 0, word_starts > 0, seed,
                               params, random_ids,
                               random_weights=random_weights)
      return out["masked_lm_positions"]
    return fn

  @staticmethod
  def _post_fn(params, random_ids, random_weights):
    """mask_batch with its sampling step replaced by a given mask."""
    # pylint: disable=protected-access
    @tf.function
    def fn(ids, maskable, word_starts, seed, pre_mask):
      saved = (span_sampler.span_mask, span_sampler.token_mask)
      span_sampler.span_mask = lambda *a, **k: (pre_mask, None)
      span_sampler.token_mask = lambda *a, **k: pre_mask
      try:  # only while tracing
        out = masking.mask_batch(ids, maskable > 0, word_starts > 0, seed,
                                 params, random_ids,
                                 random_weights=random_weights)
      finally:
        span_sampler.span_mask, span_sampler.token_mask = saved
      return out["masked_lm_positions"]
    return fn

  @staticmethod
  def _sampling_fn(params):
    # pylint: disable=protected-access
    @tf.function
    def fn(ids, maskable, word_starts, seed, pre_mask):
      del ids, pre_mask
      maskable = maskable > 0
      word_starts = (word_starts > 0) | tf.logical_not(maskable)
      word_idx = tf.cumsum(tf.cast(word_starts, tf.int32), axis=1) - 1
      return masking._select(maskable, word_starts, word_idx,
                             tf.cast(seed, tf.int64), params)[0]
    return fn

  def run_span_breakdown(self):
    """Span sampling split into table building and the sampling loop.

    Also records the loop's iterations per batch (exact: `_span_loop`
    returns its iteration count).
    """
    # pylint: disable=protected-access
    results = {}
    for batch in self.args.batch_sizes:
      framed, loader = self.framed_batches(batch, self.args.core_batches)
      params = pdl.masking_params(self.config("span", True, batch),
                                  loader._vocab)

      @tf.function
      def prep(maskable, word_starts, params=params):
        maskable = maskable > 0
        word_starts = (word_starts > 0) | tf.logical_not(maskable)
        n = tf.reduce_sum(tf.cast(maskable, tf.int32), axis=1)
        budget = span_sampler.budget(n, params.masking_rate)
        word_idx = tf.cumsum(tf.cast(word_starts, tf.int32), axis=1) - 1
        return maskable, word_starts, word_idx, n, budget

      tables_xla = tf.function(span_sampler.span_tables, jit_compile=True,
                               autograph=False)
      loop_xla = tf.function(span_sampler.span_loop, jit_compile=True,
                             autograph=False)
      loop_plain = tf.function(span_sampler.span_loop, autograph=False)
      inputs = [prep(f["maskable"], f["word_starts"]) for f in framed]
      tables = [tables_xla(m, w, wi) for m, w, wi, _, _ in inputs]
      loop_args = [(*t, wi, n, budget, tf.constant([5, i], tf.int64), None)
                   for i, (t, (_, _, wi, n, budget)) in enumerate(
                       zip(tables, inputs))]
      results[(batch, "iterations")] = [
          int(loop_xla(*a, params=params)[2].numpy()) for a in loop_args]
      n_calls = max(1, self.args.sequences // batch)
      fns = {"3 position tables (`_span_tables`, XLA)":
                 lambda i: tables_xla(*inputs[i][:3])[0],
             "sampling loop, XLA": lambda i: loop_xla(
                 *loop_args[i], params=params)[0],
             "sampling loop, no XLA": lambda i: loop_plain(
                 *loop_args[i], params=params)[0]}
      for trial in range(self.args.trials):
        wait_for_load(self.args.max_load, self.args.max_wait)
        for what, fn in fns.items():
          fn(0).numpy()
          fn(1 % len(inputs)).numpy()
          c0 = time.process_time()
          t0 = time.perf_counter()
          for i in range(n_calls):
            fn(i % len(inputs)).numpy()
          dt = time.perf_counter() - t0
          cpu = time.process_time() - c0
          results.setdefault((batch, what), []).append(dt / n_calls * 1e3)
          results.setdefault((batch, what + " [CPU]"), []).append(
              cpu / n_calls * 1e3)
          print(f"  span parts B={batch} {what}: {dt / n_calls * 1e3:.1f} "
                f"ms/batch, {cpu / n_calls * 1e3:.1f} CPU-ms/batch "
                f"(load {load_avg()})", flush=True)
    return results

  def run_oracle(self):
    """oracle.mask_block over real blocks, one at a time."""
    spec = record_format.feature_spec("single")
    blocks = []
    for rec in tf.data.TFRecordDataset(self.files).take(
        self.args.oracle_blocks):
      ex = tf.io.parse_single_example(rec, spec)
      blocks.append((ex["input_ids"].numpy().tolist(),
                     ex["word_starts"].numpy().tolist()))
    # The reference draws random replacements from the corpus's tokens.
    corpus_tokens = np.concatenate([ids for ids, _ in blocks])
    results = []
    for trial in range(self.args.trials):
      wait_for_load(self.args.max_load, self.args.max_wait)
      rng = np.random.default_rng(trial)
      t0 = time.perf_counter()
      for ids, starts in blocks:
        oracle.mask_block(ids, starts, rng, corpus_tokens=corpus_tokens)
      dt = time.perf_counter() - t0
      results.append((dt, len(blocks)))
      print(f"  oracle trial {trial + 1}: {len(blocks)} blocks in {dt:.2f} s "
            f"= {len(blocks) * self.seq / dt / 1e6:.4f} M tokens/s "
            f"(load {load_avg()})", flush=True)
    real = sum(len(ids) + 2 for ids, _ in blocks)
    # Draws (loop iterations) per block: one rng.integers call per draw.
    counting = _CountingRng(np.random.default_rng(99))
    draws = []
    for ids, starts in blocks:
      before = counting.integers_calls
      oracle.mask_block(ids, starts, counting, corpus_tokens=corpus_tokens)
      draws.append(counting.integers_calls - before)
    return results, real / len(blocks), draws


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--corpus", default=os.path.join(DATA, "corpus",
                                                   "linux-doc.txt"))
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--corpus_mb", type=float, default=3.0,
                  help="MB of the corpus head turned into records")
  ap.add_argument("--seq_length", type=int, default=512)
  ap.add_argument("--tag_spans", default="entities,noun_phrases",
                  help="span kinds to tag the records with (spaCy, the "
                       "linguistic extra); empty: no tagged schemes")
  ap.add_argument("--tag_processes", type=int, default=2)
  ap.add_argument("--batch_sizes", default="256,64",
                  type=lambda s: [int(x) for x in s.split(",")])
  ap.add_argument("--sequences", type=int, default=10240,
                  help="sequences timed per trial (batches = this / batch)")
  ap.add_argument("--warmup", type=int, default=3,
                  help="untimed batches per pipeline (the first compiles)")
  ap.add_argument("--trials", type=int, default=3)
  ap.add_argument("--core_batches", type=int, default=4,
                  help="distinct pre-framed batches for the core timings")
  ap.add_argument("--oracle_blocks", type=int, default=300)
  ap.add_argument("--no_xla", action=argparse.BooleanOptionalAction,
                  default=True,
                  help="also time span with use_xla_masking=False")
  ap.add_argument("--max_load", type=float, default=1.5,
                  help="wait before each trial until the 1-min load is below")
  ap.add_argument("--max_wait", type=float, default=300,
                  help="total seconds the run may spend waiting for the load "
                       "to drop (then it measures anyway; loads are printed)")
  ap.add_argument("--skip", default="",
                  help="comma list of parts to skip: loader,core,parts,oracle")
  ap.add_argument("--schemes", nargs="+", default=[v[0] for v in VARIANTS],
                  choices=[v[0] for v in VARIANTS], metavar="SCHEME",
                  help="the loader and core variants to time (default all: "
                  + ", ".join(repr(v[0]) for v in VARIANTS) + "); 'span (no "
                  "XLA)' needs 'span'")
  args = parse_args(ap, argv, smoke=dict(
      corpus=SMOKE_CORPUS, vocab=SMOKE_VOCAB, corpus_mb=0.1, seq_length=128,
      tag_spans="", schemes=["span", "token"], batch_sizes=[8],
      sequences=16, warmup=1, trials=1, core_batches=2, oracle_blocks=8,
      max_wait=0))
  if "span (no XLA)" in args.schemes and "span" not in args.schemes:
    ap.error("--schemes 'span (no XLA)' needs 'span' (its post-processing "
             "timing reuses span's masks)")
  for path in (args.corpus, args.vocab):
    if not os.path.exists(path):
      sys.exit(f"missing {path} (set SPANBERT_DATA_DIR or place the shared "
               "data at ../shared/data)")
  skip = set(filter(None, args.skip.split(",")))

  print(f"machine: {machine()}")
  print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, load {load_avg()}")
  threading = tf.config.threading
  print(f"TF threads: inter-op {threading.get_inter_op_parallelism_threads()}, "
        f"intra-op {threading.get_intra_op_parallelism_threads()} "
        "(0 = all cores)")
  with tempfile.TemporaryDirectory(prefix="bench_masking_") as tmp:
    head = first_bytes(args.corpus, int(args.corpus_mb * 1e6),
                          os.path.join(tmp, "head.txt"))
    stats = pr.create_pretraining_records(
        [head], args.vocab, os.path.join(tmp, "rec"),
        max_seq_length=args.seq_length, num_shards=2, progress=False,
        tag_spans=args.tag_spans, tag_processes=args.tag_processes)
    files = record_format.shard_paths(os.path.join(tmp, "rec"), 2)
    print(f"records: {stats.blocks} blocks, {stats.tokens:,} tokens from "
          f"{stats.bytes / 1e6:.1f} MB of {os.path.basename(args.corpus)}, "
          f"padding_ratio {stats.padding_ratio:.3f}")
    if stats.tag_spans:
      print(f"tagging: {stats.tagged_words:,} words in {stats.seconds:.0f} s "
            f"= {stats.words_per_second:,.0f} words/s on "
            f"{args.tag_processes} processes; spans {stats.tagged_spans}")
    bench = Bench(args, files)
    loader_res = {} if "loader" in skip else bench.run_loader()
    core_res = {} if "core" in skip else bench.run_core()
    parts_res = {} if "parts" in skip else bench.run_span_breakdown()
    oracle_res, mean_real, draws = (([(1.0, 0)], 0, [0]) if "oracle" in skip
                                    else bench.run_oracle())
    print(f"\nend: load {load_avg()}, waited {_WAITED[0]:.0f} s for load")
    report(bench, loader_res, core_res, parts_res, oracle_res, mean_real,
           draws)


if __name__ == "__main__":
  main()
