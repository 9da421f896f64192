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

"""Every benchmarks/ script runs in its --smoke mode (issue 45 item 5) and
reports values that hold up (issue 55 item 8).

A refactor of the package that breaks a benchmark fails here, not at the
next person who runs it. Each script prints its table's rows as one JSON
line (benchmarks/common.report_rows); the test checks them: rows present, no
NaN or infinite value, no zero time, rate or size, and each script's own
domain (CHECKS: every block mapped to a document, the two sides that a
benchmark compares agreeing, ...). Each script's main(argv) runs in the pytest worker
itself (no process of its own, which would pay ~10 s of CPU importing
TensorFlow and the package again); the scripts' own worker processes (the
records tool, the memory workers) still start. Smoke modes read only
tests/fixtures, so this is the unit tier. Each test is its own xdist unit,
so the workers share them out.
"""

import glob
import importlib
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from benchmarks import common as bench_common
from conftest import REPO

# benchmarks/ modules that are libraries of the scripts, not scripts.
LIBRARIES = frozenset({"__init__", "common", "finetuned_serving_encoder",
                       "finetuned_serving_inputs", "hf_pipeline_worker",
                       "masking_tables"})
SCRIPTS = sorted(
    os.path.splitext(os.path.basename(p))[0]
    for p in glob.glob(os.path.join(REPO, "benchmarks", "*.py"))
    if os.path.splitext(os.path.basename(p))[0] not in LIBRARIES)
# Flags beside --smoke. bench_finetuned_serving would time Hugging Face's
# pipelines too where a developer has made their venv (CI has none): never
# here, so the test costs the same on every machine; its peers run in this
# venv (torch eager and autocast, ONNX Runtime float32 and int8).
EXTRA = {"bench_finetuned_serving": ["--hf_python", "/nonexistent/python"]}
# What a script prints for a measurement that failed without raising (the
# memory scripts report their workers' failures as table rows).
FAILED_ROWS = ("| failed (exit", "| stopped after")


def _batch_mixing(report):
  # Every block read back maps to the document it was packed from, and a
  # batch holds at least one document.
  assert report["mapped_blocks"] >= 1 and report["documents"] >= 1, report
  for row in report["rows"]:
    assert row["blocks_not_mapped"] == 0, row
    assert row["min_documents_per_batch"] >= 1, row
    assert 1 <= row["documents_in_first_batches"] <= report["documents"], row


def _beam_records(report):
  assert report["same_blocks"] is True, report
  assert len(report["rows"]) >= 2, report  # the single process and a runner
  assert all(r["blocks"] > 0 and r["tokens"] > 0 for r in report["rows"])


def _input_checks(report):
  # The checks change no output.
  assert all(r["max_output_difference"] == 0 for r in report["rows"]), report


def _status_ok(report):
  # Every length ran to the end (no worker stopped or failed).
  assert [r["status"] for r in report["rows"]] == ["ok"] * len(
      report["rows"]), report
  assert all(r["peak_above_mb"] >= 0 for r in report["rows"]), report


def _memory_table(report):
  ratio = report["measured_layer_bytes"] / report["formula_layer_bytes"]
  assert 0.2 < ratio < 5, report  # the formula is the measured order


def _serving_xla(report):
  assert len(report["rows"]) == 4, report  # 2 batches x 2 variants
  assert all(r["max_abs_diff_vs_plain"] < 1e-3 for r in report["rows"])


def _finetuned_serving(report):
  pipelines = [r for r in report["rows"] if "test" in r]
  encoder = [r for r in report["rows"] if "shape" in r]
  assert {r["side"] for r in pipelines} == set(report["sides"])
  assert {r["side"] for r in encoder} == set(report["encoder_sides"])
  # The peers this venv runs (interop: torch; bench: ONNX Runtime) are
  # sides of both parts.
  peers = {"torch eager float32", "torch autocast(bfloat16)"}
  if importlib.util.find_spec("onnxruntime"):
    peers |= {"ONNX Runtime float32 (BERT optimizer)",
              "ONNX Runtime int8 (quantize_dynamic)",
              "ONNX Runtime int8, feed-forward outputs float"}
    assert {"ORT float32 (fast tokenizer) 1t", "ORT int8 (fast tokenizer) 1t",
            "ORT int8, FFN outputs float (fast tokenizer) 1t"
            } <= set(report["sides"]), report
  assert peers <= set(report["encoder_sides"]), report["encoder_sides"]
  # Each side's answers match TF float32's on one-window contexts where
  # both compute in float32 (the sides choose between windows differently).
  # Without the bench extra (ONNX Runtime) no peer answers beside TF here.
  assert report["agreement"] or report["sides"] == ["TF float32"], report
  for a in report["agreement"]:
    exact = a["exact"] and a["test"].startswith("answer, median")
    assert a["same"] == a["total"] > 0 if exact else a["total"] > 0, a
  # A precision this CPU runs natively (AVX512-BF16 / AMX; VNNI with the
  # int8 extra) is exported, served and timed on its own encoder: int8
  # calibrates on the smoke's training windows.
  from benchmarks import finetuned_serving_encoder  # pylint: disable=g-import-not-at-top
  for precision in ("bfloat16", "int8"):
    if finetuned_serving_encoder.refusal(precision) is None:
      assert f"TF {precision}" in report["sides"], report["sides"]
      assert any(s.startswith(f"TF {precision} ")
                 for s in report["encoder_sides"]), report["encoder_sides"]
  for r in encoder:  # outputs against TF float32's, per shape
    rounded = "bfloat16" in r["side"] or "int8" in r["side"]
    bound = 0.05 * r["max_abs_output"] if rounded else 1e-4
    assert r["max_abs_diff"] <= bound, r


def _int8(report):
  # The MatMul rewrite gives float32's outputs; int8 is near them, and the
  # encoder's projections were quantized (all 6; 5 in the graph that keeps
  # the feed-forward output float, a side of its own).
  assert {"float32", "int8"} <= set(report["sides"]), report
  diffs = {r["side"]: r["max_abs_diff_vs_float32"] for r in report["rows"]}
  assert diffs["float32 + MatMul projections"] < 1e-4, diffs
  assert diffs["int8"] < 0.1, diffs  # measured 0.0065 (values up to 3)
  # The fused epilogues change values by rounding only (measured 3e-8).
  assert abs(diffs["int8"] - diffs["int8, epilogues unfused"]) < 1e-3, diffs
  assert diffs["int8, feed-forward outputs float"] < 0.1, diffs
  for ratio in ("cpu_vs_unfused_paired", "cpu_vs_ffn_float_paired"):
    gains = [r for r in report["rows"] if ratio in r]
    assert len(gains) == len({r["shape"] for r in report["rows"]}), report
  assert report["int8_matmuls"] >= 6, report
  assert report["ffn_outliers"] == {}, report  # random weights: none


def _masking(report):
  loader = [r for r in report["rows"] if r["table"] == "loader"]
  core = [r for r in report["rows"] if r["table"] == "core"]
  assert loader and core, report
  assert all("predictions_per_s" in r for r in loader
             if r["scheme"] != "parse+frame only"), loader


def _pretraining_step(report):
  rows = report["rows"]
  if rows and "bits_cpu_s" in rows[0]:  # --dropout: Keras' vs BitsDropout
    ops = [r for r in rows if "shape" in r]
    steps = [r for r in rows if "encoder" in r]
    assert {(r["dtype"], r["part"]) for r in ops} == {
        (d, p) for d in ("float32", "bfloat16")
        for p in ("forward", "forward + backward")}, report
    assert steps and all(r["bits_layers"] > 0 for r in steps), report
    return
  if rows and "side" in rows[0]:  # --padding: padded vs length_buckets
    padded, bucketed = rows
    assert padded["real_tokens"] == bucketed["real_tokens"], report
    assert bucketed["computed_positions"] < padded["computed_positions"]
    assert bucketed["shapes"] <= bucketed["length_buckets"], report
    return
  assert all(r["masked"] > 0 for r in rows), report


def _pretraining_tokens(report):
  # Every side steps the same real tokens; the buckets and HF's collator
  # compute fewer positions than batches padded to seq_length. Without
  # torch (or transformers) only the package's sides run.
  sides = {r["side"]: r for r in report["rows"]}
  expected = {"package_padded", "package_bucketed"}
  if importlib.util.find_spec("torch") and importlib.util.find_spec(
      "transformers"):
    expected |= {"hf_collator", "hf_gathered"}
  assert set(sides) == expected, sides
  assert len({r["real_tokens"] for r in sides.values()}) == 1, report
  padded = sides["package_padded"]["computed_positions"]
  assert sides["package_bucketed"]["computed_positions"] < padded, report
  for name in expected - {"package_padded", "package_bucketed"}:
    assert sides[name]["computed_positions"] <= padded, report
  assert all(r["mfu_cpu"] is None or 0 < r["mfu_cpu"] < 1
             for r in sides.values()), report


def _profile_served_encoder(report):
  rows = report["rows"]
  served = [r for r in rows if r["side"].startswith("TF float32 (as served")]
  assert served and all(r["max_abs_diff"] < 1e-4 for r in served), report
  assert all(r["categories"]["matmul"] > 0 for r in rows), report


# Beside the checks every report gets (_check_report).
CHECKS = {"bench_batch_mixing": _batch_mixing,
          "bench_beam_records": _beam_records,
          "bench_input_checks": _input_checks,
          "bench_coref_memory": _status_ok, "bench_qa_memory": _status_ok,
          "memory_table": _memory_table, "bench_serving_xla": _serving_xla,
          "bench_finetuned_serving": _finetuned_serving,
          "bench_int8": _int8,
          "bench_masking": _masking,
          "bench_pretraining_step": _pretraining_step,
          "bench_pretraining_tokens": _pretraining_tokens,
          "profile_served_encoder": _profile_served_encoder}


def reports(out: str) -> list:
  """The report_rows lines of a script's output."""
  prefix = bench_common.ROWS_PREFIX
  return [json.loads(line[len(prefix):]) for line in out.splitlines()
          if line.startswith(prefix)]


def check_report(name: str, out: str) -> dict:
  """The script's one report, after the checks of every report and its
  own (CHECKS)."""
  found = reports(out)
  assert len(found) == 1, (
      f"{name} --smoke printed {len(found)} report_rows lines, not 1")
  report, = found
  rows = report["rows"]
  assert rows, f"{name} reported no rows"
  assert bench_common.finite(report), f"{name} reported NaN or inf: {report}"
  for field in report["positive"]:
    values = [r[field] for r in rows if field in r]
    assert values, f"{name}: no row has {field!r}"
    bad = [v for v in values if not (isinstance(v, (int, float)) and v > 0)]
    assert not bad, f"{name}: {field} not above zero: {bad}"
  CHECKS.get(name, lambda report: None)(report)
  return report


def test_every_script_has_a_smoke_mode():
  assert len(SCRIPTS) >= 12, SCRIPTS
  for name in SCRIPTS:
    with open(os.path.join(REPO, "benchmarks", name + ".py"),
              encoding="utf-8") as f:
      source = f.read()
    assert "def main(argv=None)" in source, name
    assert "parse_args(ap, argv, smoke=" in source, (
        f"benchmarks/{name}.py: no --smoke defaults (common.parse_args)")


def _cpu_allocator_keeps_stats() -> bool:
  """Whether this process's TensorFlow CPU allocator keeps peak bytes
  (memory_table's cross-check): oneDNN's and BFC's do, the plain one of an
  AVX2-only CPU does not, and TensorFlow reads the setting only at start."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  try:
    tf.config.experimental.reset_memory_stats("CPU:0")
  except ValueError:
    return False
  return True


def _child_smoke(name: str, **env) -> str:
  """`python -m benchmarks.<name> --smoke` in a child with `env` added; its
  stdout (the child fails the test with its stderr's end)."""
  done = subprocess.run(
      [sys.executable, "-m", f"benchmarks.{name}", "--smoke"], cwd=REPO,
      env={**os.environ, **env}, capture_output=True, text=True, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return done.stdout


def _extra(name: str, request) -> list:
  """Flags beside --smoke: EXTRA's, and for bench_qa_memory the tiny QA
  export that test_qa_export.py and serving/qa_module_test.py load (written
  once a pytest run) instead of one of its own (~7 CPU-s): its rows are
  the same (a worker a length, on a SavedModel of `answer`)."""
  if name == "bench_qa_memory":
    from test_qa_export import shared_qa_export  # pylint: disable=g-import-not-at-top
    d = shared_qa_export(request.getfixturevalue("tmp_path_factory"),
                         request.getfixturevalue("small_vocab"))
    return ["--export_dir", os.path.join(d, "export", "1")]
  return EXTRA.get(name, [])


@pytest.mark.unit
@pytest.mark.parametrize("name", SCRIPTS)
def test_smoke_mode_runs(name, capsys, monkeypatch, request):
  monkeypatch.chdir(REPO)  # the scripts' workers run `-m benchmarks.X`
  if name == "bench_int8" and not importlib.util.find_spec("neural_compressor"):
    pytest.skip("bench_int8 needs the int8 extra (neural-compressor-tf)")
  if name == "memory_table" and not _cpu_allocator_keeps_stats():
    out = _child_smoke(name, TF_CPU_ALLOCATOR_USE_BFC="true")
  else:
    module = importlib.import_module("benchmarks." + name)
    try:
      module.main(["--smoke"] + _extra(name, request))
    except SystemExit as e:  # sys.exit(message) of a missing input, say
      assert e.code in (None, 0), f"{name} --smoke exited: {e.code}"
    out = capsys.readouterr().out
  assert out.strip(), f"{name} --smoke printed nothing"
  failed = [line for line in out.splitlines()
            if any(f in line for f in FAILED_ROWS)]
  assert not failed, failed
  check_report(name, out)


@pytest.mark.unit
def test_pretraining_step_padding_mode_runs(capsys):
  """bench_pretraining_step --padding (issue 58 item 2): the same blocks
  padded and in length buckets, fewer positions computed, few shapes."""
  module = importlib.import_module("benchmarks.bench_pretraining_step")
  module.main(["--smoke", "--padding"])
  report = check_report("bench_pretraining_step", capsys.readouterr().out)
  assert [r["side"] for r in report["rows"]] == ["padded", "bucketed"]


def test_pretraining_step_dropout_mode_runs(capsys):
  """bench_pretraining_step --dropout (issue 58 item 1): Keras' Dropout and
  BitsDropout, the op alone in both dtypes and a train step whose encoder
  has its dropout layers swapped."""
  module = importlib.import_module("benchmarks.bench_pretraining_step")
  module.main(["--smoke", "--dropout", "--dropout_rounds=1"])
  check_report("bench_pretraining_step", capsys.readouterr().out)


@pytest.mark.unit
def test_a_report_of_nan_zero_or_unmapped_blocks_fails():
  """The checks see what the tables hide: a NaN or zero timing, and the
  batch mixing mutant of issue 55 (0 documents a batch, 32 blocks
  unmapped)."""
  def line(rows, **facts):
    return bench_common.ROWS_PREFIX + json.dumps(
        {"rows": rows, "positive": ["ms"], **facts})
  check_report("bench_x", line([{"ms": 1.5}]))
  for bad in (line([{"ms": float("nan")}]), line([{"ms": 0.0}]),
              line([]), "\n".join([line([{"ms": 1.0}])] * 2), "no report"):
    with pytest.raises(AssertionError):
      check_report("bench_x", bad)
  mixing = dict(documents=3, blocks=40, batches=4, mapped_blocks=40)
  check_report("bench_batch_mixing", line([dict(
      ms=1.0, mean_documents_per_batch=2.0, min_documents_per_batch=1,
      documents_in_first_batches=3, blocks_not_mapped=0)], **mixing))
  with pytest.raises(AssertionError):
    check_report("bench_batch_mixing", line([dict(
        ms=1.0, mean_documents_per_batch=0, min_documents_per_batch=0,
        documents_in_first_batches=0, blocks_not_mapped=32)], **mixing))
