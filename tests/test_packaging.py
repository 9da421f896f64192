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

"""Packaging helpers: the YAML config finder and the license-header checker.

Fast and without TensorFlow or the real data. The wheel itself (package data,
console scripts from outside the repository) is checked by
.ci/wheel_check.sh (`make wheel-check`).
"""

import importlib.util
import os

import pytest

from official_spanbert.configs import yaml_files
from conftest import REPO


def _load_check_headers():
  spec = importlib.util.spec_from_file_location(
      "check_headers", os.path.join(REPO, "dev", "check_headers.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


check_headers = _load_check_headers()


def test_yaml_path_finds_every_packaged_config():
  configs = os.path.join(REPO, "configs")  # the checkout's top-level YAML
  names = [os.path.relpath(os.path.join(d, f), configs).replace(os.sep, "/")
           for d, _, files in os.walk(configs) for f in files
           if f.endswith(".yaml")]
  assert "models/tiny.yaml" in names
  assert "experiments/demo_tiny.yaml" in names
  assert sorted(names) == yaml_files.available()
  for name in names:
    assert os.path.samefile(yaml_files.path(name),
                            os.path.join(configs, name)), name


def test_the_top_level_the_user_asked_for():
  """The top level the user asked for: official_spanbert/, configs/, tools/,
  tests/, BUILD, setup.py; one copy of each binary and YAML file."""
  names = ["official_spanbert", "configs", "tools", "tests"]
  if os.path.exists(os.path.join(REPO, ".git")):  # a checkout, not runfiles
    names += ["BUILD", "setup.py"]
  for name in names:
    assert os.path.exists(os.path.join(REPO, name)), name
  assert not os.path.exists(os.path.join(REPO, "official_spanbert", "tools"))
  assert not os.path.exists(
      os.path.join(REPO, "official_spanbert", "configs", "models"))
  assert os.path.exists(os.path.join(REPO, "tools", "train.py"))


def test_yaml_path_missing_lists_what_exists():
  with pytest.raises(FileNotFoundError, match=r"available: .*models/tiny\.yaml"):
    yaml_files.path("models/no_such_model.yaml")
  for bad in ("../setup.py", "models/../../setup.py", "__init__.py",
              yaml_files.path("models/tiny.yaml")):
    with pytest.raises(FileNotFoundError, match="must be relative to"):
      yaml_files.path(bad)


def test_yaml_path_without_packaged_configs(tmp_path, monkeypatch):
  monkeypatch.setattr(yaml_files, "CONFIG_DIR", str(tmp_path))
  with pytest.raises(FileNotFoundError,
                     match=r"available: none \(reinstall official-spanbert\)"):
    yaml_files.path("models/tiny.yaml")


MODULE = '"""Docstring."""\n\nimport os\n'


def test_add_header_is_detected_and_idempotent():
  assert not check_headers.has_header(MODULE)
  fixed = check_headers.add_header(MODULE, 2026)
  assert fixed.startswith(
      "# Copyright 2026 The official_spanbert Authors. All Rights Reserved.\n"
      "#\n# Licensed under the Apache License, Version 2.0")
  assert fixed.endswith("limitations under the License.\n\n" + MODULE)
  assert check_headers.has_header(fixed)
  assert check_headers.add_header(fixed, 2030) == fixed
  assert check_headers.has_header(check_headers.add_header("", 2026))


def test_header_goes_after_shebang_and_encoding():
  text = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n" + MODULE
  fixed = check_headers.add_header(text, 2026)
  lines = fixed.splitlines()
  assert lines[:3] == ["#!/usr/bin/env python3", "# -*- coding: utf-8 -*-",
                       check_headers.header(2026).splitlines()[0]]
  assert check_headers.has_header(fixed)


def test_other_holders_pass_and_altered_text_fails():
  model_garden = check_headers.header(2025).replace(
      "The official_spanbert Authors", "The TensorFlow Authors")
  assert check_headers.has_header(model_garden + "\n" + MODULE)
  altered = check_headers.header(2026).replace("AS IS", "AS-IS")
  assert not check_headers.has_header(altered + MODULE)
  late = "import os\n" + check_headers.header(2026)
  assert not check_headers.has_header(late)


def test_main_reports_then_fixes(tmp_path, capsys):
  (tmp_path / "pkg").mkdir()
  (tmp_path / "pkg" / "a.py").write_text(MODULE)
  (tmp_path / "pkg" / "b.py").write_text(
      check_headers.add_header(MODULE, 2026))
  (tmp_path / "notes.txt").write_text("not python\n")
  assert check_headers.main([str(tmp_path)]) == 1
  out = capsys.readouterr().out
  assert "a.py" in out and "b.py" not in out
  assert check_headers.main(["--fix", "--year=2026", str(tmp_path)]) == 0
  assert check_headers.main([str(tmp_path)]) == 0
  assert (tmp_path / "notes.txt").read_text() == "not python\n"


def test_resolve_takes_a_path_then_a_packaged_name(tmp_path, monkeypatch):
  mine = tmp_path / "models" / "tiny.yaml"
  mine.parent.mkdir()
  mine.write_text("\n")
  assert yaml_files.resolve(str(mine)) == str(mine)
  monkeypatch.chdir(tmp_path)  # a file of that name here wins
  assert yaml_files.resolve("models/tiny.yaml") == "models/tiny.yaml"
  monkeypatch.chdir(tmp_path / "models")
  assert yaml_files.resolve("models/tiny.yaml") == yaml_files.path(
      "models/tiny.yaml")
  assert yaml_files.resolve("models/none.yaml") == "models/none.yaml"
