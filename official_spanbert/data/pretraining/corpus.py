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

"""Reads text corpora in BERT corpus format.

One sentence or paragraph per line; a blank (or whitespace-only) line ends a
document. Files are read as bytes and decoded line by line so that a decoding
error can name its file and line.
"""

import dataclasses
import glob
import os
from typing import Iterator, List, Sequence, Tuple

DECODE_ERROR_MODES = ("strict", "replace")


class CorpusError(ValueError):
  """Input that cannot be turned into pretraining data."""


@dataclasses.dataclass
class Document:
  """One document.

  Attributes:
    path: file it came from.
    first_line: 1-based line number of its first line in that file.
    lines: its non-blank lines, stripped.
  """
  path: str
  first_line: int
  lines: List[str]


@dataclasses.dataclass
class CorpusCounters:
  """What reading saw, for the stats file."""
  files: int = 0
  bytes: int = 0
  lines: int = 0
  documents: int = 0
  empty_documents: int = 0
  replaced_lines: int = 0


def expand_inputs(patterns: Sequence[str]) -> List[str]:
  """Expands comma-separated globs into a sorted, de-duplicated file list.

  Raises:
    CorpusError: a pattern matches nothing, or nothing is given.
  """
  files = []
  for pattern_list in patterns:
    for pattern in str(pattern_list).split(","):
      pattern = pattern.strip()
      if not pattern:
        continue
      matches = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
      if not matches:
        raise CorpusError(f"input pattern {pattern!r} matches no file; check "
                          "the path (globs are expanded by this tool)")
      files.extend(matches)
  if not files:
    raise CorpusError("no input files given")
  return list(dict.fromkeys(files))


def _decode(raw: bytes, path: str, lineno: int, on_decode_error: str
            ) -> Tuple[str, bool]:
  """(text, whether bytes were replaced) of one line of a corpus file;
  raises CorpusError for invalid UTF-8 in strict mode."""
  try:
    return raw.decode("utf-8"), False
  except UnicodeDecodeError as e:
    if on_decode_error == "strict":
      raise CorpusError(
          f"{path}:{lineno}: invalid UTF-8 (byte 0x{raw[e.start]:02x} at "
          f"column {e.start + 1}); fix the file or pass "
          "--on_decode_error=replace") from None
    return raw.decode("utf-8", errors="replace"), True


def _empty(path: str, lines: int) -> CorpusError:
  return CorpusError(f"{path}: file is empty (no text on any of its {lines} "
                     "lines); remove it from the inputs")


def check_heads(paths: Sequence[str], on_decode_error: str = "strict",
                head_bytes: int = 1 << 16) -> None:
  """Raises now the CorpusError read_documents would raise for an empty
  file or, in strict mode, invalid UTF-8 (a binary file) in the first
  `head_bytes` of a file: for runners that would otherwise find out only
  after minutes of startup (Beam).

  >>> check_heads(["corpus.txt"])   # CorpusError: corpus.txt:3: invalid UTF-8
  """
  for path in paths:
    with open(path, "rb") as f:
      head = f.read(head_bytes)
    whole = len(head) < head_bytes
    lines = head.splitlines(keepends=True)
    if not whole and lines:
      lines = lines[:-1]  # may end inside a character
    for lineno, raw in enumerate(lines, start=1):
      _decode(raw, path, lineno, on_decode_error)
    if whole and not _decode(head, path, 1, "replace")[0].strip():
      raise _empty(path, len(lines))


def read_documents(paths: Sequence[str], on_decode_error: str = "strict",
                   counters: CorpusCounters = None) -> Iterator[Document]:
  """Yields the documents of `paths`, in order.

  Args:
    paths: corpus files.
    on_decode_error: "strict" raises on invalid UTF-8, "replace" substitutes
      U+FFFD and counts the line in `counters.replaced_lines`.
    counters: updated while reading.

  Raises:
    CorpusError: invalid UTF-8 in strict mode, or an empty file.
  """
  if on_decode_error not in DECODE_ERROR_MODES:
    raise CorpusError(f"on_decode_error must be one of {DECODE_ERROR_MODES}, "
                      f"not {on_decode_error!r}")
  counters = counters if counters is not None else CorpusCounters()
  for path in paths:
    counters.files += 1
    with open(path, "rb") as f:
      doc = Document(path, 1, [])
      any_text = False
      lineno = 0
      for lineno, raw in enumerate(f, start=1):
        counters.bytes += len(raw)
        line, replaced = _decode(raw, path, lineno, on_decode_error)
        counters.replaced_lines += replaced
        line = line.strip()
        if line:
          any_text = True
          counters.lines += 1
          if not doc.lines:
            doc.first_line = lineno
          doc.lines.append(line)
        elif doc.lines:
          counters.documents += 1
          yield doc
          doc = Document(path, lineno + 1, [])
        else:
          counters.empty_documents += 1 if lineno > 1 else 0
      if doc.lines:
        counters.documents += 1
        yield doc
      if not any_text:
        raise _empty(path, lineno)


def copy_head(path: str, max_bytes: int, out_path: str) -> str:
  """Copies the whole documents at the start of a corpus file, up to about
  max_bytes (cut at the first blank line past it); returns out_path."""
  with open(path, "rb") as f, open(out_path, "wb") as out:
    size = 0
    for line in f:
      out.write(line)
      size += len(line)
      if size >= max_bytes and not line.strip():
        break
  return out_path
