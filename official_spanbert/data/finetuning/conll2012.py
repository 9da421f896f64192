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

"""CoNLL-2012 coreference files: reading documents and writing predictions.

OntoNotes' column format (LitBank, the reference scorer): cluster brackets in
the last column, singletons kept; malformed input raises ConllError naming
file and line. Plain Python, read by the scorer and the data tools.
"""

import collections
import dataclasses
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

# A mention: first and last word (inclusive) in document word indices.
Mention = Tuple[int, int]
Cluster = List[Mention]

SPEAKER_COLUMN = 9
MIN_COLUMNS = 5  # name, part, index, word, ..., coref
_NONE = ("-", "_", "")
_BRACKET = re.compile(r"^(\()?(\d+)(\))?$")


class ConllError(ValueError):
  """A CoNLL-2012 file that cannot be read (the message names file:line)."""


@dataclasses.dataclass
class ConllDocument:
  """One `#begin document` ... `#end document` block.

  Attributes:
    key: the header after `#begin document `, e.g. `(name); part 0`: how the
      scorer pairs gold and predicted documents.
    name: the document name (without parentheses).
    sentences: words of each sentence.
    speakers: the speaker of each word (column 10), one list per sentence;
      `-`/`_` where the file has none.
    clusters: mentions of each cluster in order of appearance, clusters in
      order of first mention; word indices count over the whole document.
    columns: every column but the last of each word, per sentence (so
      predictions can be written back into the same rows).
  """
  key: str
  name: str
  sentences: List[List[str]] = dataclasses.field(default_factory=list)
  speakers: List[List[str]] = dataclasses.field(default_factory=list)
  clusters: List[Cluster] = dataclasses.field(default_factory=list)
  columns: List[List[List[str]]] = dataclasses.field(default_factory=list)

  @property
  def words(self) -> List[str]:
    return [w for s in self.sentences for w in s]

  @property
  def num_words(self) -> int:
    return sum(len(s) for s in self.sentences)


def _name_of(key: str) -> str:
  match = re.match(r"^\((.*)\);\s*part\s+\S+$", key)
  return match.group(1) if match else key


class _Parser:
  """Line-by-line state of one file."""

  def __init__(self, path: str):
    self.path = path
    self.docs: List[ConllDocument] = []
    self.doc: Optional[ConllDocument] = None
    self.begin_line = 0
    self.sentence: List[List[str]] = []
    self.open: Dict[int, List[Tuple[int, int]]] = {}  # id -> [(start, line)]
    self.mentions: Dict[int, List[Mention]] = {}
    self.word = 0

  def error(self, line_no: int, message: str) -> ConllError:
    return ConllError(f"{self.path}:{line_no}: {message}")

  def begin(self, line_no: int, line: str):
    if self.doc is not None:
      raise self.error(line_no, f"#begin document while document "
                       f"{self.doc.key!r} (line {self.begin_line}) has no "
                       "#end document")
    key = line[len("#begin document"):].strip()
    self.doc = ConllDocument(key=key, name=_name_of(key))
    self.begin_line = line_no
    self.open, self.mentions, self.word, self.sentence = {}, {}, 0, []

  def end_sentence(self):
    if self.sentence:
      self.doc.sentences.append([c[3] for c in self.sentence])
      self.doc.speakers.append(
          [c[SPEAKER_COLUMN] if len(c) > SPEAKER_COLUMN + 1 else "-"
           for c in self.sentence])
      self.doc.columns.append([c[:-1] for c in self.sentence])
      self.sentence = []

  def end(self, line_no: int):
    if self.doc is None:
      raise self.error(line_no, "#end document without #begin document")
    self.end_sentence()
    for cid, stack in sorted(self.open.items()):
      if stack:
        raise self.error(stack[-1][1], f"unclosed bracket: cluster {cid} "
                         f"opened here is not closed by #end document "
                         f"(line {line_no})")
    order = sorted(self.mentions, key=lambda c: min(self.mentions[c]))
    self.doc.clusters = [sorted(set(self.mentions[c])) for c in order]
    self.docs.append(self.doc)
    self.doc = None

  def token(self, line_no: int, line: str):
    if self.doc is None:
      raise self.error(line_no, "word line outside #begin/#end document")
    cols = line.split()
    if len(cols) < MIN_COLUMNS:
      raise self.error(line_no, f"{len(cols)} columns; a word line has at "
                       f"least {MIN_COLUMNS} (name, part, index, word, "
                       "..., coreference)")
    coref = cols[-1]
    if coref not in _NONE:
      for part in coref.split("|"):
        match = _BRACKET.match(part)
        if not match or not (match.group(1) or match.group(3)):
          raise self.error(line_no, f"bad coreference bracket {part!r} in "
                           f"{coref!r}")
        cid = int(match.group(2))
        if match.group(1):
          self.open.setdefault(cid, []).append((self.word, line_no))
        if match.group(3):
          stack = self.open.get(cid)
          if not stack:
            raise self.error(line_no, f"cluster {cid} closed but not open "
                             "(closed twice, or never opened)")
          start, _ = stack.pop()
          self.mentions.setdefault(cid, []).append((start, self.word))
    self.sentence.append(cols)
    self.word += 1

  def finish(self, line_no: int) -> List[ConllDocument]:
    if self.doc is not None:
      raise self.error(self.begin_line, f"document {self.doc.key!r} begun "
                       f"here has no #end document (file ends at line "
                       f"{line_no})")
    return self.docs


def parse_lines(lines: Iterable[str], path: str = "<string>"
                ) -> List[ConllDocument]:
  """Documents of a CoNLL-2012 text given as lines.

  Raises:
    ConllError: malformed input, naming path:line.
  """
  parser = _Parser(path)
  line_no = 0
  for line_no, line in enumerate(lines, start=1):
    line = line.rstrip("\r\n")
    if line.startswith("#begin document"):
      parser.begin(line_no, line)
    elif line.startswith("#end document"):
      parser.end(line_no)
    elif not line.strip():
      if parser.doc is not None:
        parser.end_sentence()
    elif line.startswith("#"):
      continue
    else:
      parser.token(line_no, line)
  return parser.finish(line_no)


def read_file(path: str) -> List[ConllDocument]:
  """Documents of one CoNLL-2012 file (UTF-8).

  Raises:
    ConllError: a missing file, malformed input or invalid UTF-8, naming
      path:line.
  """
  try:
    with open(path, "rb") as f:
      raw = f.read()
  except OSError as e:
    raise ConllError(f"{path}: cannot be read ({e.strerror})") from None
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    line = raw[:e.start].count(b"\n") + 1
    raise ConllError(f"{path}:{line}: not valid UTF-8") from None
  return parse_lines(text.splitlines(), path)


def coref_column(num_words: int, clusters: Sequence[Cluster]) -> List[str]:
  """The last column for each word of a document with these clusters.

  Brackets at one word are ordered as the reference scorer expects them to
  nest: closings of shorter mentions first, openings of longer mentions
  first; a one-word mention is `(id)`.
  """
  opens = collections.defaultdict(list)
  closes = collections.defaultdict(list)
  singles = collections.defaultdict(list)
  for cid, cluster in enumerate(clusters):
    for start, end in cluster:
      if start == end:
        singles[start].append(cid)
      else:
        opens[start].append((end, cid))
        closes[end].append((start, cid))
  column = []
  for w in range(num_words):
    parts = [f"{c})" for _, c in sorted(closes[w], reverse=True)]
    parts += [f"({c})" for c in singles[w]]
    parts += [f"({c}" for _, c in sorted(opens[w], reverse=True)]
    column.append("|".join(parts) if parts else "-")
  return column


def format_document(doc: ConllDocument,
                    clusters: Optional[Sequence[Cluster]] = None) -> str:
  """CoNLL-2012 text of `doc`, with `clusters` (default its own) in the last
  column; the other columns are the document's."""
  clusters = doc.clusters if clusters is None else clusters
  column = iter(coref_column(doc.num_words, clusters))
  out = [f"#begin document {doc.key}"]
  for s, sentence in enumerate(doc.sentences):
    for i, word in enumerate(sentence):
      cols = (doc.columns[s][i] if doc.columns else
              [doc.name, "0", str(i), word])
      out.append("\t".join(list(cols) + [next(column)]))
    out.append("")
  out.append("#end document")
  return "\n".join(out) + "\n"


def write_file(path: str, docs: Sequence[ConllDocument],
               clusters: Optional[Sequence[Sequence[Cluster]]] = None):
  """Writes documents (with `clusters[i]` for docs[i] if given)."""
  with open(path, "w", encoding="utf-8") as f:
    for i, doc in enumerate(docs):
      f.write(format_document(doc, None if clusters is None else clusters[i]))
