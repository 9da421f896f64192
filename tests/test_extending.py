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


"""docs/extending.md's lists of files to touch name files that exist.

Every `path` in backticks whose first part is a top-level entry of the
repository (official_spanbert/, tools/, setup.py, ...) must exist; one with a
`<name>` placeholder must have its folder. A file moved without updating the
page fails here:

  pytest tests/test_extending.py
"""

import os
import re

import pytest

from conftest import REPO

PAGE = os.path.join("docs", "extending.md")
SECTIONS = ("A masking scheme", "A fine-tuning task (with its serving signature)",
            "An export format")
_CODE = re.compile(r"`([^`\s]+)`")


def cited_paths(text: str, top_level: set) -> list:
  """The repository paths a page cites in backticks, in order, once each."""
  paths = []
  for token in _CODE.findall(text):
    token = token.rstrip(".,;:")
    if token.split("/")[0] in top_level and token not in paths:
      paths.append(token)
  return paths


def missing(root: str, paths: list) -> list:
  """The cited paths that do not exist (a placeholder's folder for `<name>`)."""
  problems = []
  for path in paths:
    parts = path.rstrip("/").split("/")
    if any("<" in part for part in parts):
      parts = parts[:next(i for i, p in enumerate(parts) if "<" in p)]
    if not os.path.exists(os.path.join(root, *parts)):
      problems.append(path)
  return problems


def _root() -> str:
  """The source tree: REPO, or under Bazel where this file links to."""
  for root in (REPO, os.path.dirname(os.path.dirname(
      os.path.realpath(__file__)))):
    if os.path.isfile(os.path.join(root, PAGE)):
      return root
  pytest.skip(f"{PAGE} is not beside this test (a Bazel runfiles tree "
              "without it); pytest from the repository checks it")


def _page(root: str) -> str:
  with open(os.path.join(root, PAGE), encoding="utf-8") as f:
    return f.read()


def test_the_checker_flags_a_moved_file(tmp_path):
  (tmp_path / "tools").mkdir()
  (tmp_path / "tools" / "here.py").write_text("", encoding="utf-8")
  text = ("1. `tools/here.py`, `tools/gone.py`, `tools/<name>.py`, "
          "`other/<name>.py`, `spanbert/<name>`, `--flag`.")
  paths = cited_paths(text, {"tools", "other"})
  assert paths == ["tools/here.py", "tools/gone.py", "tools/<name>.py",
                   "other/<name>.py"]
  assert missing(str(tmp_path), paths) == ["tools/gone.py", "other/<name>.py"]


def test_every_file_the_page_lists_exists():
  root = _root()
  text = _page(root)
  headings = re.findall(r"^## (.+)$", text, re.M)
  assert list(SECTIONS) == headings
  paths = cited_paths(text, set(os.listdir(root)))
  # The files each extension cannot do without are among those checked.
  for needed in ("official_spanbert/data/pretraining/masking/masking_config.py",
                 "official_spanbert/registry_imports.py",
                 "official_spanbert/serving/registry.py", "setup.py"):
    assert needed in paths, f"{PAGE} no longer lists {needed}"
  problems = missing(root, paths)
  assert not problems, (f"{PAGE} lists files that are not there (moved? "
                        f"update the page): {problems}")
