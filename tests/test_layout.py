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

"""The package's import structure (dev/layout_report.py), from the source,
and the tests' layout (a module's tests mirror its path).

Every import of an official_spanbert module counts, at module level or inside
a function. The README's layout section shows the same report.
"""

import ast
import os
import re

import pytest
import yaml

from conftest import REPO
from dev import layout_report


def test_no_import_cycle_between_modules():
  report = layout_report.report(REPO)
  assert report["modules"] > 40
  assert report["cycles"] == []


def test_no_import_runs_from_a_lower_layer_up():
  assert layout_report.report(REPO)["upward"] == []


def test_modeling_and_interop_never_import_tasks():
  _, graph = layout_report.import_graph(REPO)
  bad = [(a, b) for a, targets in graph.items() for b in targets
         if a.startswith(("official_spanbert.modeling",
                          "official_spanbert.interop"))
         and b.startswith("official_spanbert.tasks")]
  assert bad == []


def test_configs_holds_only_what_config_file_takes():
  """configs/ ships in the wheel: Model Garden overrides (task, trainer,
  runtime) only; a study's arms and presets (label:, records:, ...) sit
  beside the study, in experiments/<study>_arms/."""
  configs = os.path.join(REPO, "configs")
  found = {}
  for directory, _, files in os.walk(configs):
    for name in files:
      with open(os.path.join(directory, name), encoding="utf-8") as f:
        found[os.path.relpath(os.path.join(directory, name), configs)] = set(
            yaml.safe_load(f) or {})
  assert "models/tiny.yaml" in found
  assert {n: keys - {"task", "trainer", "runtime"}
          for n, keys in found.items()
          if keys - {"task", "trainer", "runtime"}} == {}
  for study, arm in (("ablation", "span_sbo"), ("continued", "span_sbo")):
    assert os.path.isfile(os.path.join(REPO, "experiments", f"{study}_arms",
                                       f"{arm}.yaml"))
    # A folder named as the study's module would make two experiments.<study>.
    assert not os.path.isdir(os.path.join(REPO, "experiments", study))


def test_one_meaning_per_name():
  """The word "experiments" names the top-level study folder (and the YAML
  of registered experiments in configs/experiments/) only: the modules that
  register them are configs/<task>.py, as Model Garden's
  official/vision/configs/<task>.py; every task config sits in its task
  module, as Model Garden places them."""
  mods = layout_report.modules(REPO)
  assert "official_spanbert.configs.pretraining" in mods
  assert [m for m in mods if "experiments" in m] == []
  placed = {}
  for module, path in mods.items():
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
      if isinstance(node, ast.ClassDef) and any(
          ast.unparse(b).endswith("TaskConfig") for b in node.bases):
        placed[node.name] = module
  assert placed["SpanBertPretrainTaskConfig"] == (
      "official_spanbert.tasks.pretraining")
  assert {n: m for n, m in placed.items()
          if not m.startswith("official_spanbert.tasks.")} == {}


def test_library_modules_do_not_import_their_own_package():
  """Importing any official_spanbert.x runs official_spanbert/__init__.py
  (TF_USE_LEGACY_KERAS=1, then the quiet console) first, so a library
  module's `import official_spanbert` is a no-op; entry points outside the
  package (tools/, experiments/, benchmarks/, tests) keep theirs."""
  mods = layout_report.modules(REPO)
  selfish = []
  for module, path in mods.items():
    if module.startswith("official_spanbert.tools"):
      continue
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read(), path)
    selfish += [module for node in tree.body if isinstance(node, ast.Import)
                for a in node.names if a.name == "official_spanbert"]
  assert selfish == []
  with open(os.path.join(REPO, "official_spanbert", "__init__.py"),
            encoding="utf-8") as f:
    init = f.read()
  assert "tensorflow" not in "".join(
      line for line in init.splitlines() if line.startswith(("import", "from")))
  assert 'os.environ["TF_USE_LEGACY_KERAS"] = "1"' in init


# Library modules that still import registry_imports for its side effect:
# serving/ (rewritten for issue 56 item 1). No other may join them.
def test_only_binaries_register_the_experiments():
  """Issue 56 item 2: as in Model Garden, the binaries (tools/, a package's
  __main__) import registry_imports; a library that needs an experiment
  leaves that to its caller, which the library's import cannot hide."""
  _, graph = layout_report.import_graph(REPO)
  importers = {m for m, targets in graph.items()
               if layout_report.REGISTRY in targets and
               not m.startswith("official_spanbert.tools.") and
               not m.endswith(".__main__")}
  assert importers == set()
  assert "official_spanbert.demo.__main__" in {
      m for m, targets in graph.items() if layout_report.REGISTRY in targets}


def test_the_report_sees_an_upward_import_and_a_cycle(tmp_path):
  pkg = tmp_path / "official_spanbert"
  (pkg / "data").mkdir(parents=True)
  (pkg / "tasks").mkdir()
  (pkg / "__init__.py").write_text("")
  (pkg / "data" / "__init__.py").write_text("")
  (pkg / "tasks" / "__init__.py").write_text("")
  (pkg / "data" / "a.py").write_text(
      "def f():\n  from official_spanbert.tasks import b\n")
  (pkg / "tasks" / "b.py").write_text("from official_spanbert.data import a\n")
  report = layout_report.report(str(tmp_path))
  assert report["cycles"] == [["official_spanbert.data.a",
                               "official_spanbert.tasks.b"]]
  assert report["upward"] == [("official_spanbert.data.a",
                               "official_spanbert.tasks.b")]


def _test_files():
  """The test files pytest collects, by path under tests/ (skips where the
  checkout is not here: Bazel's runfiles hold this test's own files only)."""
  if not os.path.isfile(os.path.join(REPO, "BUILD")):
    pytest.skip("the checkout's BUILD and tests/ are not beside this test")
  tests = os.path.join(REPO, "tests")
  found = []
  for directory, dirs, files in os.walk(tests):
    dirs[:] = [d for d in dirs if d not in ("fixtures", "__pycache__")]
    found += [os.path.relpath(os.path.join(directory, f), tests)
              for f in files
              if f.endswith(".py") and (f.startswith("test_") or
                                        f.endswith("_test.py"))]
  return sorted(found)


def test_a_test_file_is_named_after_its_module_or_its_theme():
  """tests/<package path>/<module>_test.py tests official_spanbert/<package
  path>/<module>.py; a test_<theme>.py at the top covers many. pytest
  imports test files by their name (tests/ has no __init__.py), so no two
  share one."""
  files = _test_files()
  assert len(files) > 60
  for path in files:
    folder, name = os.path.split(path)
    if folder:
      assert name.endswith("_test.py"), path
      module = os.path.join(REPO, "official_spanbert", folder,
                            name[:-len("_test.py")] + ".py")
      assert os.path.isfile(module), path
    else:
      assert name.startswith("test_"), path
  names = [os.path.basename(f) for f in files]
  assert sorted(n for n in set(names) if names.count(n) > 1) == []
  assert [d for d, _, fs in os.walk(os.path.join(REPO, "tests"))
          if "__init__.py" in fs] == []


def test_build_names_test_files_that_exist():
  """BUILD's per-file settings name a file by its path under tests/ without
  .py; a name without its file would be silently ignored."""
  files = {f[:-len(".py")] for f in _test_files()}
  with open(os.path.join(REPO, "BUILD"), encoding="utf-8") as f:
    build = f.read()
  names = set()
  for block in ("TEST_OVERRIDES = {", "CI_INTEGRATION_FILES = [",
                "CI_UNIT_FILES = ["):
    body = build[build.index(block):]
    body = body[:body.index("\n}" if block.endswith("{") else "\n]")]
    names |= set(re.findall(r'^    "([\w/]+)"', body, re.M))
  assert len(names) > 20
  assert sorted(names - files) == []
