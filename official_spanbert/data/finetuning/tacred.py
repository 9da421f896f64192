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

"""TACRED relation records with SpanBERT's entity masking.

Subject and object tokens become typed markers (`[SUBJ-PERSON]`, `[OBJ-CITY]`)
as run_tacred.py's `ner` mode; the markers take `[unused1]`, `[unused2]`, ...
"""

import dataclasses
from typing import Dict, List, Sequence, Tuple

from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import json_file
from official_spanbert.data import tokenization

# Bad input raises the one error of the fine-tuning readers.
DataError = classification.DataError
NO_RELATION = "no_relation"
# TACRED's PTB bracket tokens and what they stand for (as SpanBERT's code).
_PTB_BRACKETS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]",
                 "-lcb-": "{", "-rcb-": "}"}
_TACRED_FIELDS = {"id": str, "token": list, "subj_start": int,
                  "subj_end": int, "obj_start": int, "obj_end": int,
                  "subj_type": str, "obj_type": str, "relation": str}
_JSON_TYPE_NAMES = {str: "string", list: "list", int: "integer"}


@dataclasses.dataclass(frozen=True)
class RelationExample:
  """One TACRED record (token spans inclusive).

  Attributes:
    guid: the record id.
    tokens: the sentence's tokens.
    subj_start, subj_end, obj_start, obj_end: entity spans (inclusive).
    subj_type, obj_type: entity types (e.g. PERSON, CITY).
    label: the relation.
  """
  guid: str
  tokens: Tuple[str, ...]
  subj_start: int
  subj_end: int
  obj_start: int
  obj_end: int
  subj_type: str
  obj_type: str
  label: str


def _check_relation_record(rec, where: str) -> RelationExample:
  """Validates one TACRED record; raises DataError naming it."""
  if not isinstance(rec, dict):
    raise DataError(f"{where}: expected a JSON object, found "
                    f"{type(rec).__name__}")
  for field, kind in _TACRED_FIELDS.items():
    if field not in rec:
      raise DataError(f"{where}: missing field {field!r}")
    value = rec[field]
    if not isinstance(value, kind) or (kind is int and isinstance(value,
                                                                  bool)):
      raise DataError(f"{where}: field {field!r} must be a JSON "
                      f"{_JSON_TYPE_NAMES[kind]}, found {value!r}"[:300])
  tokens = rec["token"]
  if not tokens or not all(isinstance(t, str) for t in tokens):
    raise DataError(f"{where}: 'token' must be a non-empty list of strings")
  for name in ("subj", "obj"):
    start, end = rec[f"{name}_start"], rec[f"{name}_end"]
    if not 0 <= start <= end < len(tokens):
      raise DataError(f"{where}: {name}_start..{name}_end = {start}..{end} is "
                      f"not a span of the {len(tokens)} tokens (inclusive, "
                      "0-based)")
    if not rec[f"{name}_type"].strip():
      raise DataError(f"{where}: empty {name}_type")
  if not rec["relation"].strip():
    raise DataError(f"{where}: empty relation")
  return RelationExample(
      rec["id"], tuple(tokens), rec["subj_start"], rec["subj_end"],
      rec["obj_start"], rec["obj_end"], rec["subj_type"], rec["obj_type"],
      rec["relation"])


def read_tacred(path: str) -> List[RelationExample]:
  """Reads a TACRED-format JSON file (a list of records).

  Args:
    path: the JSON file.

  Returns:
    The records in file order.

  Raises:
    DataError: missing file, invalid JSON, or a malformed record (missing
      or mistyped field, span outside the tokens); names the record and id.
  """
  records = json_file.read_json(path, classification.DataError)
  if not isinstance(records, list) or not records:
    raise DataError(f"{path}: expected a non-empty JSON list of records")
  examples, seen = [], {}
  for i, rec in enumerate(records):
    rid = rec.get("id") if isinstance(rec, dict) else None
    where = f"{path}: record {i}" + (f" (id {rid!r})" if rid else "")
    example = _check_relation_record(rec, where)
    if example.guid in seen:
      raise DataError(f"{where}: duplicate id (also record "
                      f"{seen[example.guid]})")
    seen[example.guid] = i
    examples.append(example)
  return examples


def entity_markers(examples: Sequence[RelationExample],
                   vocab: tokenization.Vocab) -> Dict[str, int]:
  """Maps each `[SUBJ-type]` / `[OBJ-type]` marker to an [unusedN] id.

  Args:
    examples: all records (train and eval), so that both share the mapping.
    vocab: the vocab whose [unused1], [unused2], ... take the sorted markers.

  Returns:
    marker -> vocab id.

  Raises:
    DataError: the vocab has too few [unusedN] entries.
  """
  names = sorted({f"[SUBJ-{e.subj_type}]" for e in examples} |
                 {f"[OBJ-{e.obj_type}]" for e in examples})
  ids = {t: i for i, t in enumerate(vocab.tokens)}
  markers = {}
  for n, name in enumerate(names, 1):
    token = f"[unused{n}]"
    if token not in ids:
      raise DataError(
          f"vocab {vocab.path} has no {token}: entity masking needs "
          f"{len(names)} entries [unused1]..[unused{len(names)}] for the "
          f"markers {', '.join(names)}")
    markers[name] = ids[token]
  return markers


def encode_relations(tokenizer: tokenization.WordpieceTokenizer,
                     examples: Sequence[RelationExample],
                     markers: Dict[str, int], max_seq_length: int
                     ) -> Tuple[List[List[int]], List[List[int]], int]:
  """Entity-masked `[CLS] tokens [SEP]` ids of TACRED records.

  As SpanBERT's run_tacred.py (mode `ner`): a marker is put where each entity
  starts and the entity's tokens are dropped; other tokens are wordpieced one
  by one (PTB brackets such as -LRB- mapped back first).

  Args:
    tokenizer: the wordpiece tokenizer.
    examples: the records.
    markers: from entity_markers().
    max_seq_length: length limit including [CLS] and [SEP].

  Returns:
    (ids, segment_ids, number of truncated examples), unpadded.
  """
  words = [_PTB_BRACKETS.get(t.lower(), t) for e in examples
           for t in e.tokens]
  pieces = iter(classification.tokenize_texts(tokenizer, words))
  vocab = tokenizer.vocab
  ids, segments, truncated = [], [], 0
  for e in examples:
    body = []
    for i in range(len(e.tokens)):
      word = next(pieces)
      if i == e.subj_start:
        body.append(markers[f"[SUBJ-{e.subj_type}]"])
      if i == e.obj_start:
        body.append(markers[f"[OBJ-{e.obj_type}]"])
      if not (e.subj_start <= i <= e.subj_end or
              e.obj_start <= i <= e.obj_end):
        body.extend(word)
    truncated += len(body) > max_seq_length - 2
    body = body[:max_seq_length - 2]
    ids.append([vocab.cls_id] + body + [vocab.sep_id])
    segments.append([0] * (len(body) + 2))
  return ids, segments, truncated


def relation_labels(splits) -> Tuple[str, ...]:
  """Sorted relations of all splits, `no_relation` first (id 0)."""
  found = {e.label for examples in splits.values() for e in examples}
  return (NO_RELATION,) + tuple(sorted(found - {NO_RELATION}))
