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

"""The tables benchmarks/bench_masking.py prints, and the variants it times."""

import statistics

import numpy as np

from benchmarks.common import report_rows
from official_spanbert.data.pretraining.masking import masking_config

# (label, masking_scheme, use_xla_masking)
VARIANTS = (("span", "span", True), ("token", "token", True),
            ("whole_word", "whole_word", True),
            ("named_entity", "named_entity", True),
            ("noun_phrase", "noun_phrase", True),
            ("span (no XLA)", "span", False))
TAGGED = {label for label, scheme, _ in VARIANTS
          if scheme in masking_config.TAGGED_SCHEMES}


def stat_cells(values, fmt="{:,.0f}"):
  """The median and the min-max range of `values`, as table cells."""
  return (fmt.format(statistics.median(values)),
          f"{fmt.format(min(values))}-{fmt.format(max(values))}")


def _heading(title):
  """Prints a blank line and a Markdown heading."""
  print()
  print("### " + title)


def report(bench, loader_res, core_res, parts_res, oracle_res, mean_real,
           draws):
  """Prints every table of the run, then the targets."""
  _print_loader(bench, loader_res)
  _print_core(bench, core_res)
  if parts_res:
    _print_breakdown(bench, parts_res, mean_real, draws)
  if oracle_res and oracle_res[0][1]:  # skipped: [(1.0, 0)]
    _print_oracle(bench.seq, oracle_res, mean_real)
  _print_targets(bench, loader_res)
  _report_rows(bench, loader_res, core_res)


def _report_rows(bench, loader_res, core_res):
  """The loader and core tables' rows as report_rows' line."""
  rows = []
  for (batch, label), rs in sorted(loader_res.items()):
    row = dict(table="loader", batch=batch, scheme=label,
               tokens_per_s=statistics.median(
                   s * bench.seq / dt for dt, s, *_ in rs),
               real_tokens_per_s=statistics.median(
                   r / dt for dt, _, r, *_ in rs),
               tokens_per_cpu_s=statistics.median(
                   s * bench.seq / c for _, s, _, _, c in rs))
    if label != "parse+frame only":
      row["predictions_per_s"] = statistics.median(
          p / dt for dt, _, _, p, _ in rs)
    rows.append(row)
  for key, rs in sorted(core_res.items()):
    if len(key) == 3 and rs:
      batch, part, label = key
      rows.append(dict(table="core", batch=batch, part=part, scheme=label,
                       ms_per_batch=statistics.median(
                           dt / s * batch * 1e3 for dt, s in rs)))
  report_rows(rows, positive=[
      "tokens_per_s", "real_tokens_per_s", "tokens_per_cpu_s",
      "predictions_per_s", "ms_per_batch"])


def _print_loader(bench, loader_res):
  """The loader pipeline table: throughput per batch size and scheme."""
  seq = bench.seq
  _heading("Loader pipeline (parse + frame + mask in tf.data, prefetch 2)")
  print()
  print("| batch | scheme | M tokens/s (seq x 512), median | range | "
        "M real tokens/s | K predictions/s | time vs token | "
        "M tokens per CPU-s | CPU time vs token |")
  print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
  for batch in bench.args.batch_sizes:
    token_t = token_c = None
    if (batch, "token") in loader_res:
      token_t = statistics.median(
          dt / s for dt, s, *_ in loader_res[(batch, "token")])
      token_c = statistics.median(
          c / s for _, s, _, _, c in loader_res[(batch, "token")])
    for label in [v[0] for v in VARIANTS] + ["parse+frame only"]:
      rs = loader_res.get((batch, label))
      if not rs:
        continue
      tps = [s * seq / dt / 1e6 for dt, s, *_ in rs]
      real = [r / dt / 1e6 for dt, _, r, *_ in rs]
      preds = [p / dt / 1e3 for dt, _, _, p, _ in rs]
      med, rng = stat_cells(tps, "{:.3f}")
      cpu_tps = [s * seq / c / 1e6 for _, s, _, _, c in rs]
      ratio = cpu_ratio = "-"
      if token_t:
        per_seq = statistics.median(dt / s for dt, s, *_ in rs)
        ratio = f"{per_seq / token_t:.2f}x"
        cpu_per_seq = statistics.median(c / s for _, s, _, _, c in rs)
        cpu_ratio = f"{cpu_per_seq / token_c:.2f}x"
      pr_cell = (f"{statistics.median(preds):,.0f}" if label !=
                 "parse+frame only" else "-")
      print(f"| {batch} | {label} | {med} | {rng} | "
            f"{statistics.median(real):.3f} | {pr_cell} | {ratio} | "
            f"{statistics.median(cpu_tps):.3f} | {cpu_ratio} |")


def _print_core(bench, core_res):
  """The core masking table: mask_batch, sampling and post-processing."""
  seq = bench.seq
  _heading("Core masking on pre-framed batches (tf.function, one batch per "
           "call)")
  print()
  print("| batch | scheme | mask_batch M tokens/s (range) | ms/batch | "
        "sampling-only M tokens/s | sampling ms/batch | post-processing "
        "ms/batch (measured) |")
  print("|---:|---|---:|---:|---:|---:|---:|")
  for batch in bench.args.batch_sizes:
    for label in [v[0] for v in VARIANTS if v[0] not in TAGGED]:
      full = core_res.get((batch, "mask_batch", label))
      samp = core_res.get((batch, "sampling only", label))
      if not full:
        continue
      ft = [s * seq / dt / 1e6 for dt, s in full]
      st = [s * seq / dt / 1e6 for dt, s in samp]
      fms = statistics.median(dt / s * batch * 1e3 for dt, s in full)
      sms = statistics.median(dt / s * batch * 1e3 for dt, s in samp)
      post = core_res.get((batch, "post only",
                           label.replace(" (no XLA)", "")))
      pms = statistics.median(dt / s * batch * 1e3 for dt, s in post)
      med, rng = stat_cells(ft, "{:.3f}")
      print(f"| {batch} | {label} | {med} ({rng}) | {fms:.1f} | "
            f"{statistics.median(st):.3f} | {sms:.1f} | {pms:.1f} |")


def _print_breakdown(bench, parts_res, mean_real, draws):
  """The span sampling breakdown table, and the oracle's draws."""
  _heading("Span sampling breakdown (tf.function, one batch per call)")
  print()
  print("| batch | part | ms/batch median | range | CPU-ms/batch |")
  print("|---:|---|---:|---:|---:|")
  for batch in bench.args.batch_sizes:
    for (b, what), v in parts_res.items():
      if b != batch or what == "iterations" or what.endswith("[CPU]"):
        continue
      cpu = statistics.median(parts_res[(b, what + " [CPU]")])
      print(f"| {batch} | {what} | {statistics.median(v):.1f} | "
            f"{min(v):.1f}-{max(v):.1f} | {cpu:.1f} |")
    iters = parts_res[(batch, "iterations")]
    loop_ms = statistics.median(parts_res[(batch, "sampling loop, XLA")])
    print(f"| {batch} | loop iterations per batch (exact, "
          f"{len(iters)} batches) | {statistics.median(iters):.0f} | "
          f"{min(iters)}-{max(iters)} |")
    print(f"| {batch} | XLA loop cost per iteration (ms) | "
          f"{loop_ms / statistics.median(iters):.2f} | |")
  if mean_real:  # the oracle ran
    print()
    print(f"Draws per sequence (oracle, same algorithm, {len(draws)} "
          f"blocks): mean {np.mean(draws):.1f}, "
          f"median {np.median(draws):.0f}, "
          f"p99 {np.percentile(draws, 99):.0f}, max {max(draws)}; the "
          "batched loop runs until the slowest row of the batch is done.")


def _print_oracle(seq, oracle_res, mean_real):
  """The NumPy oracle's table."""
  _heading("NumPy oracle (testing/span_masking_oracle.py, mask_block, "
           "single core)")
  print()
  tps = [b * seq / dt / 1e6 for dt, b in oracle_res]
  ms = [dt / b * 1e3 for dt, b in oracle_res]
  med, rng = stat_cells(tps, "{:.4f}")
  print("| blocks | M tokens/s (seq x 512) | range | M real tokens/s | "
        "ms/block |")
  print("|---:|---:|---:|---:|---:|")
  print(f"| {oracle_res[0][1]} | {med} | {rng} | "
        f"{statistics.median(tps) * mean_real / seq:.4f} | "
        f"{statistics.median(ms):.2f} |")


def _print_targets(bench, loader_res):
  """The throughput targets, met or missed, per batch size."""
  _heading("Targets (span masking >= 2M tokens/s; <= 1.5x token-masking "
           "time), loader pipeline")
  seq = bench.seq
  for batch in bench.args.batch_sizes:
    span = loader_res.get((batch, "span"))
    tok = loader_res.get((batch, "token"))
    if not span or not tok:
      continue
    span_tps = statistics.median(s * seq / dt for dt, s, *_ in span)
    ratio = (statistics.median(dt / s for dt, s, *_ in span) /
             statistics.median(dt / s for dt, s, *_ in tok))
    ok1 = "MET" if span_tps >= 2e6 else "MISSED"
    ok2 = "MET" if ratio <= 1.5 else "MISSED"
    cpu2 = 2 * statistics.median(s * seq / c for _, s, _, _, c in span)
    cratio = (statistics.median(c / s for _, s, _, _, c in span) /
              statistics.median(c / s for _, s, _, _, c in tok))
    print(f"- B={batch}: span {span_tps / 1e6:.3f} M tokens/s -> {ok1}; "
          f"span/token time {ratio:.2f}x -> {ok2} (CPU-time view: "
          f"{cpu2 / 1e6:.3f} M tokens/s if both cores were fully ours, "
          f"span/token CPU {cratio:.2f}x)")
    for label in sorted(TAGGED):
      tagged = loader_res.get((batch, label))
      if not tagged:
        continue
      # Throughput relative to span = span's time per sequence / this one's.
      speed = (statistics.median(dt / s for dt, s, *_ in span) /
               statistics.median(dt / s for dt, s, *_ in tagged))
      ok = "MET" if speed >= 0.5 else "MISSED"
      print(f"- B={batch}: {label} throughput {speed:.2f}x span's (target "
            f">= 0.5x) -> {ok}")
