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

"""Every benchmarks/ script runs in its --smoke mode (issue 45 item 5).

A refactor of the package that breaks a benchmark fails here, not at the
next person who runs it. Each script's main(argv) runs in the pytest worker
itself (no process of its own, which would pay ~10 s of CPU importing
TensorFlow and the package again); the scripts' own worker processes (the
records tool, the memory workers) still start. Smoke modes read only
tests/fixtures, so this is the unit tier. Each test is its own xdist unit,
so the workers share them out.
"""

import glob
import importlib
import os

import pytest

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
# here, so the test costs the same on every machine.
EXTRA = {"bench_finetuned_serving": ["--hf_python", "/nonexistent/python"]}
# What a script prints for a measurement that failed without raising (the
# memory scripts report their workers' failures as table rows).
FAILED_ROWS = ("| failed (exit", "| stopped after")


def test_every_script_has_a_smoke_mode():
  assert len(SCRIPTS) >= 12, SCRIPTS
  for name in SCRIPTS:
    with open(os.path.join(REPO, "benchmarks", name + ".py"),
              encoding="utf-8") as f:
      source = f.read()
    assert "def main(argv=None)" in source, name
    assert "parse_args(ap, argv, smoke=" in source, (
        f"benchmarks/{name}.py: no --smoke defaults (common.parse_args)")


@pytest.mark.unit
@pytest.mark.parametrize("name", SCRIPTS)
def test_smoke_mode_runs(name, capsys, monkeypatch):
  monkeypatch.chdir(REPO)  # the scripts' workers run `-m benchmarks.X`
  module = importlib.import_module("benchmarks." + name)
  try:
    module.main(["--smoke"] + EXTRA.get(name, []))
  except SystemExit as e:  # sys.exit(message) of a missing input, say
    assert e.code in (None, 0), f"{name} --smoke exited: {e.code}"
  out = capsys.readouterr().out
  assert out.strip(), f"{name} --smoke printed nothing"
  failed = [line for line in out.splitlines()
            if any(f in line for f in FAILED_ROWS)]
  assert not failed, failed
