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

"""The documentation's links resolve, and the README stays short (issue 23).

Every relative link `[text](path)` and `[text](path#anchor)` (and `#anchor`
alone) in README.md, docs/*.md, benchmarks/*.md and benchmarks/notes/*.md must
name a file or folder of the repository, and its anchor a heading of that
file, slugged as GitHub does. Links inside code (fenced blocks, `inline`) are
not links. Every page of docs/ must be reachable from README.md or
docs/index.md. README.md has at most 200 lines; the detail goes into docs/.
Code cites benchmarks/RESULTS.md by heading name (`RESULTS.md, "Serving
latency"`), never by a section number, and every heading it names exists
(a name may leave off the heading's closing parenthesis, "(issue 28)").
"""

import collections
import glob
import os
import re

import pytest

from conftest import REPO

README_MAX_LINES = 200

# Bazel's runfiles hold tests/ but not the documents; the test file there is a
# link into the source tree, which has them.
_ROOTS = [REPO, os.path.dirname(os.path.dirname(os.path.realpath(__file__)))]


def _root() -> str:
  for root in _ROOTS:
    if os.path.isfile(os.path.join(root, "README.md")) and os.path.isdir(
        os.path.join(root, "docs")):
      return root
  pytest.skip("README.md and docs/ are not beside this test (a Bazel runfiles "
              "tree without them); pytest from the repository checks them")


def _documents(root: str) -> list[str]:
  paths = [os.path.join(root, "README.md")]
  for pattern in ("docs/*.md", "benchmarks/*.md", "benchmarks/notes/*.md"):
    paths += sorted(glob.glob(os.path.join(root, pattern)))
  return paths


_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) or ![alt](target); the text may hold one level of brackets.
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]+)>?"
                   r"(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str):
  """(line number, line) outside fenced code blocks, inline code blanked."""
  in_fence = False
  for number, line in enumerate(text.split("\n"), 1):
    if _FENCE.match(line):
      in_fence = not in_fence
      continue
    if in_fence:
      continue
    yield number, _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
  """GitHub's anchor of a heading's text."""
  text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
  text = re.sub(r"<[^>]+>", "", text)  # inline HTML
  text = text.strip().lower()
  text = re.sub(r"[^\w\- ]", "", text)  # punctuation, `, *, etc.
  return text.replace(" ", "-")


def anchors(path: str) -> set[str]:
  """The anchors of a markdown file's headings (repeats get -1, -2, ...)."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  seen = collections.Counter()
  result = set()
  in_fence = False
  for line in text.split("\n"):
    if _FENCE.match(line):
      in_fence = not in_fence
      continue
    match = None if in_fence else _HEADING.match(line)
    if not match:
      continue
    base = slug(match.group(2))
    result.add(base if not seen[base] else f"{base}-{seen[base]}")
    seen[base] += 1
  return result


def links(path: str):
  """(line number, target) of every link in a markdown file's prose."""
  with open(path, encoding="utf-8") as f:
    text = f.read()
  for number, line in _prose_lines(text):
    for match in _LINK.finditer(line):
      yield number, match.group(1)


def broken_links(root: str, paths: list[str]) -> list[str]:
  problems = []
  cache = {}
  for path in paths:
    rel = os.path.relpath(path, root)
    for number, target in links(path):
      if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:
        continue
      file_part, _, anchor = target.partition("#")
      dest = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
              if file_part else path)
      where = f"{rel}:{number}: {target}"
      if not os.path.abspath(dest).startswith(os.path.abspath(root) + os.sep):
        problems.append(f"{where} (outside the repository)")
      elif not os.path.exists(dest):
        problems.append(f"{where} (no such file)")
      elif anchor:
        if not dest.endswith(".md") or os.path.isdir(dest):
          problems.append(f"{where} (an anchor into a file that is not markdown)")
          continue
        if dest not in cache:
          cache[dest] = anchors(dest)
        if anchor not in cache[dest]:
          problems.append(f"{where} (no heading with anchor #{anchor} in "
                          f"{os.path.relpath(dest, root)})")
  return problems


# `RESULTS.md, "Heading"` or `RESULTS.md section 3` in code, across a
# comment's line break.
_RESULTS_CITATION = re.compile(
    r'RESULTS(?:\.md)?,?\s+'
    r'(?:(?:the\s+)?section\s+([0-9][0-9a-z]*)|\\?"([^"\\]+)\\?")')
_CODE_DIRS = ("official_spanbert", "tools", "benchmarks", "experiments", "dev",
              "tests")


def results_citations(text: str):
  """(section number or None, heading or None) of each RESULTS citation."""
  flat = re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)
  for match in _RESULTS_CITATION.finditer(flat):
    yield match.group(1), match.group(2)


def bad_results_citations(root: str) -> list[str]:
  headings = set()
  with open(os.path.join(root, "benchmarks", "RESULTS.md"),
            encoding="utf-8") as f:
    for line in f:
      match = _HEADING.match(line.rstrip("\n"))
      if match:
        headings.add(match.group(2))
  problems = []
  for folder in _CODE_DIRS:
    for path in sorted(glob.glob(os.path.join(root, folder, "**", "*.py"),
                                 recursive=True)):
      if os.path.samefile(path, __file__):
        continue
      with open(path, encoding="utf-8") as f:
        text = f.read()
      rel = os.path.relpath(path, root)
      for number, heading in results_citations(text):
        if number:
          problems.append(f"{rel}: RESULTS section {number} (cite the "
                          "heading by name)")
        elif not any(h == heading or h.startswith(heading + " (")
                     for h in headings):
          problems.append(f'{rel}: RESULTS "{heading}" (no such heading)')
  return problems


def test_slug_is_githubs():
  assert slug("Pretraining parity (issue 28)") == "pretraining-parity-issue-28"
  assert slug("10a. Lockstep: the same weights, the same batches") == (
      "10a-lockstep-the-same-weights-the-same-batches")
  assert slug("For Keras users: TF Hub SavedModels") == (
      "for-keras-users-tf-hub-savedmodels")
  assert slug("`make demo` on a *fresh* clone") == "make-demo-on-a-fresh-clone"
  assert slug("Serving and export (faults 1–3)") == "serving-and-export-faults-13"


def test_checker_finds_broken_links_and_anchors(tmp_path):
  (tmp_path / "docs").mkdir()
  (tmp_path / "README.md").write_text(
      "# Top\n\n## Two words\n\n[ok](docs/a.md#a-heading) [self](#two-words)\n"
      "[gone](docs/missing.md) [bad](docs/a.md#nope) [web](https://x.org/#y)\n"
      "`[code](docs/missing.md)`\n\n```\n[fenced](nowhere.md)\n```\n",
      encoding="utf-8")
  (tmp_path / "docs" / "a.md").write_text("# A heading\n\n[up](../README.md)\n",
                                          encoding="utf-8")
  problems = broken_links(str(tmp_path), [str(tmp_path / "README.md"),
                                          str(tmp_path / "docs" / "a.md")])
  assert problems == [
      "README.md:6: docs/missing.md (no such file)",
      "README.md:6: docs/a.md#nope (no heading with anchor #nope in docs/a.md)",
  ]


def test_every_relative_link_and_anchor_resolves():
  root = _root()
  problems = broken_links(root, _documents(root))
  assert not problems, "broken links:\n" + "\n".join(problems)


def test_results_citation_parser():
  text = ('# benchmarks/RESULTS.md, "Serving\n  # latency" and RESULTS.md '
          'section 3b; RESULTS.md "Ablation (issue 22)" ("RESULTS.md, \\"Demo\\"")')
  assert list(results_citations(text)) == [
      (None, "Serving latency"), ("3b", None), (None, "Ablation (issue 22)"),
      (None, "Demo")]


def test_code_cites_results_headings_that_exist():
  root = _root()
  if not os.path.isdir(os.path.join(root, "official_spanbert")):
    pytest.skip("the package source is not beside this test")
  problems = bad_results_citations(root)
  assert not problems, "stale RESULTS citations:\n" + "\n".join(problems)


def test_every_docs_page_is_linked_from_the_readme_or_the_index():
  root = _root()
  linked = set()
  for page in ("README.md", os.path.join("docs", "index.md")):
    path = os.path.join(root, page)
    for _, target in links(path):
      file_part = target.partition("#")[0]
      if file_part and not re.match(r"^[a-z][a-z0-9+.-]*:", file_part, re.I):
        linked.add(os.path.normpath(os.path.join(os.path.dirname(path),
                                                 file_part)))
  pages = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
  assert pages
  unlinked = [os.path.relpath(p, root) for p in pages
              if os.path.normpath(p) not in linked
              and not p.endswith(os.sep + "index.md")]
  assert not unlinked, f"docs pages linked from nowhere: {unlinked}"
  assert os.path.join(root, "docs", "index.md") in linked


def test_readme_is_at_most_200_lines():
  root = _root()
  with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
    lines = f.read().splitlines()
  assert len(lines) <= README_MAX_LINES, (
      f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move "
      "detail into docs/")


def test_readme_keeps_the_two_commands_and_the_sections_others_edit():
  root = _root()
  with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
    text = f.read()
  assert "make demo" in text and "make test" in text
  assert re.search(r"^## Demo$", text, re.M)
