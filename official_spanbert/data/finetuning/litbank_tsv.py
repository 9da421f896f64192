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

"""LitBank's entity tsv: BIO layers -> typed, nested spans, and back.

Each tag column of dbamman/litbank's `entities/tsv/` is one nesting layer in
BIO (layer 1 innermost); malformed input raises TsvError naming file:line.
Plain Python, read by the scorer and the data pipeline.

Example:
  doc = read_file("tsv/1342_pride_and_prejudice_brat.tsv")
  doc.entities[0]   # Entity(start=10, end=18, type="PER", layer=1): "a
                    # single man in possession of a good fortune"
  write_file("predicted.tsv", doc.sentences, predicted_entities)
"""

import dataclasses
import os
from typing import Iterable, List, Optional, Sequence, Tuple

# The six ACE 2005 types LitBank annotates; label i + 1 is ENTITY_TYPES[i]
# (0: no entity).
ENTITY_TYPES = ("PER", "FAC", "LOC", "GPE", "VEH", "ORG")
OUTSIDE = "O"
# Layers of a written file when the entities need no more.
DEFAULT_LAYERS = 4


class TsvError(ValueError):
  """A LitBank tsv file that cannot be read (the message names file:line)."""


@dataclasses.dataclass(frozen=True, order=True)
class Entity:
  """A typed span: first and last word (inclusive, document word indices)
  and, as read, its layer (1 = innermost; 0 when not from a file).

  Example:
    Entity(0, 1, "PER", 2).key   # (0, 1, "PER"): what scoring compares
  """
  start: int
  end: int
  type: str
  layer: int = 0

  @property
  def key(self) -> Tuple[int, int, str]:
    """What exact-match scoring compares."""
    return (self.start, self.end, self.type)


@dataclasses.dataclass
class TsvDocument:
  """One tsv file.

  Attributes:
    name: the file name without `.tsv`.
    sentences: the tokens of each sentence.
    entities: sorted by (start, end, type, layer).
    num_layers: tag columns per row (4, or 5 with the all-`O` column).

  Example:
    doc = read_file("tsv/45_anne_of_green_gables_brat.tsv")
    [" ".join(doc.words[e.start:e.end + 1]) for e in doc.entities[:2]]
  """
  name: str
  sentences: List[List[str]]
  entities: List[Entity]
  num_layers: int = DEFAULT_LAYERS

  @property
  def words(self) -> List[str]:
    return [w for s in self.sentences for w in s]


def bio_spans(tags: Sequence[str], strict: bool = True,
              where=lambda i: f"token {i + 1}") -> List[Tuple[int, int, str]]:
  """(start, end, type) of the entities of one BIO layer of one sentence.

  Args:
    tags: one tag per token: `O`, `B-<type>` or `I-<type>`.
    strict: an `I-` that continues no entity of its type raises TsvError;
      else it starts one (how a tagger's output is read, as conlleval).
    where: names token i in an error message.
  """
  spans, open_start, open_type = [], None, None
  for i, tag in enumerate(list(tags) + [OUTSIDE]):
    prefix, _, kind = tag.partition("-")
    if tag != OUTSIDE and (prefix not in ("B", "I") or
                           kind not in ENTITY_TYPES):
      raise TsvError(f"{where(i)}: unknown tag {tag!r} (expected O, or B- "
                     f"or I- with one of {', '.join(ENTITY_TYPES)})")
    continues = prefix == "I" and kind == open_type
    if prefix == "I" and not continues and strict:
      before = tags[i - 1] if i else "the sentence start"
      raise TsvError(f"{where(i)}: {tag} continues no {kind} entity "
                     f"(it follows {before})")
    if open_type is not None and not continues:
      spans.append((open_start, i - 1, open_type))
      open_start = open_type = None
    if tag != OUTSIDE and not continues:
      open_start, open_type = i, kind
  return spans


def outermost(entities: Iterable[Entity]) -> List[Entity]:
  """The entities inside no other (of two with the same span, the one of
  the higher layer): what a flat, one-layer BIO tagging can hold."""
  entities = list(entities)

  def inside(e, o):
    return (o is not e and o.start <= e.start and e.end <= o.end and
            ((o.start, o.end) != (e.start, e.end) or o.layer > e.layer))

  return [e for e in entities if not any(inside(e, o) for o in entities)]


def _rows(path: str):
  """(line number, fields) of each line; None fields for a blank line."""
  try:
    with open(path, encoding="utf-8") as f:
      for number, line in enumerate(f, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
          yield number, None
          continue
        fields = line.split("\t")
        if len(fields) > 1 and fields[-1] == "":  # the trailing tab
          fields.pop()
        yield number, fields
  except UnicodeDecodeError as e:
    raise TsvError(f"{path}: not UTF-8 ({e})") from None
  except OSError as e:
    raise TsvError(f"{path}: cannot read ({e})") from None


def read_file(path: str) -> TsvDocument:
  """The document of one LitBank tsv file (TsvError names file:line)."""
  sentences: List[List[str]] = []
  entities: List[Entity] = []
  tokens, columns, lines = [], [], []
  num_layers: Optional[int] = None

  def close_sentence():
    offset = sum(len(s) for s in sentences)
    for layer, tags in enumerate(columns, 1):
      for start, end, kind in bio_spans(
          tags, where=lambda i, layer=layer: (
              f"{path}:{lines[i]}: layer {layer}")):
        entities.append(Entity(offset + start, offset + end, kind, layer))
    sentences.append(list(tokens))
    tokens.clear()
    lines.clear()
    for c in columns:
      c.clear()

  for number, fields in _rows(path):
    if fields is None:
      if tokens:
        close_sentence()
      continue
    token, tags = fields[0], fields[1:]
    if not token.strip():
      raise TsvError(f"{path}:{number}: empty token")
    if not tags:
      raise TsvError(f"{path}:{number}: no tag columns (expected the token, "
                     "then one BIO tag per layer, tab-separated)")
    if num_layers is None:
      num_layers = len(tags)
      columns = [[] for _ in tags]
    elif len(tags) != num_layers:
      raise TsvError(f"{path}:{number}: {len(tags)} tag columns, but the "
                     f"file's first row has {num_layers}")
    tokens.append(token)
    lines.append(number)
    for column, tag in zip(columns, tags):
      column.append(tag)
  if tokens:
    close_sentence()
  name = os.path.basename(path)
  if name.endswith(".tsv"):
    name = name[:-len(".tsv")]
  return TsvDocument(name=name, sentences=sentences, entities=sorted(entities),
                     num_layers=num_layers or DEFAULT_LAYERS)


def assign_layers(entities: Iterable[Entity]) -> List[Entity]:
  """The entities with their layers as LitBank's: 1 + the deepest layer of
  the entities inside each (of two with the same span, the later in the
  input goes one layer up).

  Raises:
    ValueError: two entities cross (neither holds the other).
  """
  entities = list(entities)
  order = sorted(range(len(entities)),
                 key=lambda i: (entities[i].end - entities[i].start, i))
  placed: List[Entity] = []
  out: List[Optional[Entity]] = [None] * len(entities)
  for i in order:
    e = entities[i]
    depth = 0
    for p in placed:
      if e.start <= p.start and p.end <= e.end:
        depth = max(depth, p.layer)
      elif p.start <= e.end and e.start <= p.end:
        raise ValueError(f"entities {p.key} and {e.key} cross; a BIO layer "
                         "cannot hold both")
    out[i] = dataclasses.replace(e, layer=depth + 1)
    placed.append(out[i])
  return out


def layer_tags(num_words: int, entities: Iterable[Entity],
               num_layers: int = DEFAULT_LAYERS) -> List[List[str]]:
  """The BIO tags of each word in each layer (assign_layers' layers;
  more than num_layers when the nesting needs them)."""
  entities = assign_layers(entities)
  depth = max([num_layers] + [e.layer for e in entities])
  tags = [[OUTSIDE] * depth for _ in range(num_words)]
  for e in entities:
    tags[e.start][e.layer - 1] = f"B-{e.type}"
    for w in range(e.start + 1, e.end + 1):
      tags[w][e.layer - 1] = f"I-{e.type}"
  return tags


def write_file(path: str, sentences: Sequence[Sequence[str]],
               entities: Iterable[Entity],
               num_layers: int = DEFAULT_LAYERS) -> None:
  """Writes sentences and entities in LitBank's format (a trailing tab,
  a blank line after each sentence).

  Raises:
    ValueError: entities cross, or one lies outside the words.
  """
  entities = list(entities)
  num_words = sum(len(s) for s in sentences)
  for e in entities:
    if not 0 <= e.start <= e.end < num_words:
      raise ValueError(f"entity {e.key} is outside the document's "
                       f"{num_words} words")
  tags = layer_tags(num_words, entities, num_layers)
  lines, w = [], 0
  for sentence in sentences:
    for token in sentence:
      lines.append("\t".join([token] + tags[w]) + "\t\n")
      w += 1
    lines.append("\n")
  with open(path, "w", encoding="utf-8") as f:
    f.write("".join(lines))
