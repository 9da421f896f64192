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

"""SemEval-2010 Task 8's own files as raw sentences with character spans.

The release's files (`TRAIN_FILE.TXT`, `TEST_FILE_FULL.TXT`) hold each
example as `<id>\\t"<sentence with <e1>..</e1> and <e2>..</e2>>"`, the label,
a comment line and a blank line. `read_semeval` returns the sentence as a
user would send it to `classify_relation` -- the markers removed -- with the
two nominals as [start, end) character offsets. Where the source has no
space between a marker and a word (`The<e1>staff</e1>`, 7 sentences), a
space is put back, as the converted TACRED-format tokens also split there.
`Other` is read as `no_relation`, the TACRED records' name.

Example:
  examples = read_semeval("raw/TEST_FILE_FULL.TXT")
  e = examples[0]
  e.text[e.subj_start:e.subj_end]   # 'audits'
"""

import dataclasses
import re
from typing import List

from official_spanbert.data.finetuning import classification

DataError = classification.DataError
_MARKER = re.compile(r"</?e[12]>")


@dataclasses.dataclass(frozen=True)
class RawRelation:
  """One example: the sentence and its nominals' [start, end) offsets."""
  guid: str
  text: str
  subj_start: int
  subj_end: int
  obj_start: int
  obj_end: int
  label: str


def strip_markers(marked: str, where: str) -> RawRelation:
  """The sentence without <e1>/<e2> markers, and the nominals' offsets.

  Raises:
    DataError: the markers are not `<e1>`, `</e1>`, `<e2>`, `</e2>`, once
      each and in that order.
  """
  found = [m.group() for m in _MARKER.finditer(marked)]
  if found != ["<e1>", "</e1>", "<e2>", "</e2>"]:
    raise DataError(f"{where}: expected the markers <e1> </e1> <e2> </e2> "
                    f"once each, in that order; found {found}")
  text, offsets, last = "", {}, 0
  for m in _MARKER.finditer(marked):
    text += marked[last:m.start()]
    after = marked[m.end():m.end() + 1]
    if text and text[-1].isalnum() and after.isalnum():
      text += " "  # `The<e1>staff`: a typo of the source
    offsets[m.group()] = len(text)
    last = m.end()
  text += marked[last:]
  return RawRelation("", text, offsets["<e1>"], offsets["</e1>"],
                     offsets["<e2>"], offsets["</e2>"], "")


def read_semeval(path: str) -> List[RawRelation]:
  """Reads a SemEval-2010 Task 8 file of the release.

  Raises:
    DataError: a missing file, or an example not in the release's format
      (names the file and line).
  """
  try:
    with open(path, encoding="utf-8") as f:
      lines = f.read().splitlines()
  except OSError as e:
    raise DataError(f"{path}: cannot read: {e.strerror or e}") from None
  examples, i = [], 0
  while i < len(lines):
    if not lines[i].strip():
      i += 1
      continue
    where = f"{path}:{i + 1}"
    guid, tab, quoted = lines[i].partition("\t")
    first, last = quoted.find('"'), quoted.rfind('"')
    if not tab or first < 0 or last <= first or i + 1 >= len(lines):
      raise DataError(f"{where}: expected `<id><TAB>\"<sentence>\"` and a "
                      "label line after it")
    example = strip_markers(quoted[first + 1:last], where)
    label = lines[i + 1].strip()
    examples.append(dataclasses.replace(
        example, guid=guid.strip(),
        label="no_relation" if label == "Other" else label))
    i += 2
    while i < len(lines) and lines[i].strip():  # the comment line
      i += 1
  return examples
