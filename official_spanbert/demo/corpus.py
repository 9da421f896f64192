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

"""A real-prose demo corpus built from the installed Python standard library.

The standard library's docstrings, parsed with `ast` (never imported), one
module per document in BERT corpus format, with code, tables and repeated
paragraphs skipped; deterministic for a given installation. See docs/demo.md.
"""

import ast
import os
import re
import sysconfig
import time
from typing import Dict, Iterator, List, Optional, Tuple

from official_spanbert.utils import atomic_io

# Directory names never descended into.
SKIP_DIRS = frozenset({
    "test", "tests", "testmock", "idlelib", "lib2to3", "site-packages",
    "dist-packages", "__pycache__", "turtledemo", "encodings", "lib-dynload",
    "pydoc_data", "__phello__", "_bundled", "ensurepip",
})
# Module files skipped (generated, jokes, or no prose).
SKIP_FILES = frozenset({"this.py", "antigravity.py", "__hello__.py",
                        "keyword.py", "token.py", "stringprep.py"})

MIN_PARAGRAPH_CHARS = 40
MIN_PARAGRAPH_WORDS = 6

_DIRECTIVE = re.compile(r"^\.\.\s")          # .. note::, .. versionadded::
_UNDERLINE = re.compile(r"^([=\-~^*+#`'\".:_])\1{2,}\s*$")   # ====, ----
_TABLE = re.compile(r"^[+|][-=+| ]*[+|]?\s*$|^\+[-=+]+\+")
_FIELD_ONLY = re.compile(r"^:[\w ]+:\s*$")
_ROLE = re.compile(r":[\w.:+-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_DOUBLE_BACKTICK = re.compile(r"``(.+?)``")
_BACKTICK = re.compile(r"`([^`]+?)`_{0,2}")
# Lines that are Python or shell, not prose (checked on stripped lines).
_CODE_LINE = re.compile(
    r"^(def \w+\(|class \w+\s*[(:]|import [\w.]+(, [\w.]+)*$|"
    r"from [\w.]+ import \w|(if|for|while|with|elif) .*\S:$|"
    r"(try|else|finally):$|except( \w[\w.]*( as \w+)?)?:$|@[\w.]+(\(|$)|"
    r"[$%] \S|#!|[\w.]+(\[[^\]]*\])?\s*(=|\+=|-=)\s*\S|"
    r"[\w.]+\(.*\)\s*(->.*)?$)")
# A plain word: letters, maybe hyphenated or with an apostrophe, maybe quoted
# or bracketed, maybe followed by punctuation ("built-in", "it's", "(see").
_WORD = re.compile(
    r"^[(\"']?[A-Za-z]+(?:[-'][A-Za-z]+)*\.?[)\"']?[.,;:!?)\"']*$")
# Characters rare in prose but common in code; "_" and "()" are left out, as
# prose about code names functions and attributes.
_CODE_CHARS = frozenset("={}[]<>;|\\#@$%^&~`")


def default_stdlib_dir() -> str:
  """The standard library of the running interpreter (its base install)."""
  path = sysconfig.get_paths().get("stdlib")
  if not path or not os.path.isdir(path):
    path = os.path.dirname(os.__file__)
  return path


def stdlib_sources(stdlib_dir: Optional[str] = None) -> List[str]:
  """Sorted paths of the standard library's prose-bearing .py files."""
  root = stdlib_dir or default_stdlib_dir()
  paths = []
  for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = sorted(d for d in dirnames
                         if d not in SKIP_DIRS and not d.startswith("test")
                         and not d.startswith("config-")
                         and not d.startswith("."))
    for name in filenames:
      if (not name.endswith(".py") or name in SKIP_FILES or
          name.startswith("test_") or name.startswith("_sysconfigdata")):
        continue
      paths.append(os.path.join(dirpath, name))
  return sorted(paths, key=lambda p: os.path.relpath(p, root).split(os.sep))


def _docstrings(tree: ast.Module) -> Iterator[str]:
  """Module, class and function docstrings in source order."""

  def visit(node):
    doc = ast.get_docstring(node, clean=True)
    if doc:
      yield doc
    for child in node.body:
      if isinstance(child, (ast.ClassDef, ast.FunctionDef,
                            ast.AsyncFunctionDef)):
        yield from visit(child)

  yield from visit(tree)


def _strip_markup(text: str) -> str:
  text = _ROLE.sub(r"\1", text)
  text = _DOUBLE_BACKTICK.sub(r"\1", text)
  text = _BACKTICK.sub(r"\1", text)
  return text


def _looks_like_prose(text: str) -> bool:
  """True for sentences; False for code, signatures, lists of names, etc."""
  if len(text) < MIN_PARAGRAPH_CHARS:
    return False
  words = text.split()
  if len(words) < MIN_PARAGRAPH_WORDS:
    return False
  plain = sum(1 for w in words if _WORD.match(w))
  if plain / len(words) < 0.6:
    return False
  symbols = sum(1 for c in text if c in _CODE_CHARS)
  if symbols / len(text) > 0.02:
    return False
  return any(c.islower() for c in text)


def docstring_paragraphs(doc: str) -> Iterator[str]:
  """The prose paragraphs of one (cleaned) docstring, one string each."""
  paragraphs: List[List[str]] = [[]]
  for line in doc.expandtabs().splitlines():
    if line.strip():
      paragraphs[-1].append(line)
    elif paragraphs[-1]:
      paragraphs.append([])
  literal_indent = None  # inside a reST literal block indented deeper than it
  for lines in paragraphs:
    if not lines:
      continue
    indent = min(len(l) - len(l.lstrip()) for l in lines)
    if literal_indent is not None:
      if indent > literal_indent:
        continue
      literal_indent = None
    kept = []
    for line in lines:
      stripped = line.strip()
      # A doctest runs to the end of its paragraph; so, here, does code, a
      # directive's block or a table. Keep the prose before it.
      if (stripped.startswith(">>>") or _CODE_LINE.match(stripped) or
          _DIRECTIVE.match(stripped) or _UNDERLINE.match(stripped) or
          _TABLE.match(stripped) or _FIELD_ONLY.match(stripped)):
        break
      kept.append(stripped)
    if lines[-1].rstrip().endswith("::"):
      literal_indent = indent
      if kept:
        kept[-1] = kept[-1].rstrip()[:-1]  # "Example::" -> "Example:"
    text = " ".join(" ".join(kept).split())
    text = _strip_markup(text)
    if text and _looks_like_prose(text):
      yield text


def module_document(path: str) -> Tuple[Optional[List[str]], bool]:
  """The lines of one source file's document.

  Returns:
    (lines, parsed): lines is None when nothing survives; parsed is False if
    the file could not be read or parsed (it is skipped).
  """
  try:
    with open(path, "rb") as f:
      tree = ast.parse(f.read(), filename=path)
  except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
    return None, False
  lines = []
  for doc in _docstrings(tree):
    lines.extend(docstring_paragraphs(doc))
  return lines or None, True


def iter_documents(stdlib_dir: Optional[str] = None,
                   counters: Optional[Dict[str, int]] = None
                   ) -> Iterator[List[str]]:
  """Yields each module's document (its lines), in sorted path order.

  A paragraph already yielded by an earlier document is left out.
  """
  seen = set()
  counters = counters if counters is not None else {}
  for path in stdlib_sources(stdlib_dir):
    counters["files"] = counters.get("files", 0) + 1
    lines, parsed = module_document(path)
    if not parsed:
      counters["unparsable_files"] = counters.get("unparsable_files", 0) + 1
    fresh = []
    for line in lines or ():
      if line not in seen:
        seen.add(line)
        fresh.append(line)
    if fresh:
      yield fresh


def build_demo_corpus(output_path: str, max_documents: Optional[int] = None,
                      max_bytes: Optional[int] = None, *,
                      stdlib_dir: Optional[str] = None) -> Dict[str, object]:
  """Writes the standard-library docstring corpus in BERT corpus format.

  Args:
    output_path: file to write (UTF-8; one paragraph per line, a blank line
      between documents). Written under a temporary name and renamed on
      success.
    max_documents: stop after this many documents (None: all).
    max_bytes: keep the file within this many bytes (None: no limit); the
      document that would cross it is cut at a line boundary and ends the
      corpus.
    stdlib_dir: the library to read (default: the running interpreter's).

  Returns:
    Stats: documents, lines, bytes, files (scanned), unparsable_files,
    stdlib_dir, seconds, output.

  Raises:
    ValueError: bad limits, or no document could be built.
  """
  if max_documents is not None and max_documents < 1:
    raise ValueError(f"max_documents must be >= 1, got {max_documents}")
  if max_bytes is not None and max_bytes < 1:
    raise ValueError(f"max_bytes must be >= 1, got {max_bytes}")
  root = stdlib_dir or default_stdlib_dir()
  if not os.path.isdir(root):
    raise ValueError(f"standard library directory {root} does not exist")
  start = time.time()
  counters: Dict[str, int] = {}
  stats = {"documents": 0, "lines": 0, "bytes": 0}
  out_dir = os.path.dirname(os.path.abspath(output_path))
  os.makedirs(out_dir, exist_ok=True)
  with atomic_io.writing(output_path) as tmp:
    with open(tmp, "wb") as f:
      for doc in iter_documents(root, counters):
        if max_documents is not None and stats["documents"] >= max_documents:
          break
        chunk = bytearray(b"\n" if stats["documents"] else b"")
        doc_lines = 0
        full = False
        for line in doc:
          encoded = line.encode("utf-8") + b"\n"
          if (max_bytes is not None and
              stats["bytes"] + len(chunk) + len(encoded) > max_bytes):
            full = True
            break
          chunk += encoded
          doc_lines += 1
        if doc_lines:
          f.write(chunk)
          stats["bytes"] += len(chunk)
          stats["lines"] += doc_lines
          stats["documents"] += 1
        if full:
          break
    if not stats["documents"]:
      raise ValueError(
          f"no document could be built from {root}"
          + (f" within max_bytes={max_bytes}" if max_bytes else ""))
  stats.update(files=counters.get("files", 0),
               unparsable_files=counters.get("unparsable_files", 0),
               stdlib_dir=root, seconds=round(time.time() - start, 3),
               output=output_path)
  return stats
