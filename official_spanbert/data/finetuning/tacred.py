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

"""TACRED-format relation records and their entity markers.

Three ways to show the model the two entities (`ENTITY_MODES`), all with
markers that take the vocab's `[unused1]`, `[unused2]`, ...:
  - `mask`: SpanBERT's run_tacred.py (mode `ner`): each entity's words are
    replaced by one typed marker, `[SUBJ-PERSON]`, `[OBJ-CITY]`.
  - `marker`: the words are kept between `[E1] ... [/E1]` (subject) and
    `[E2] ... [/E2]` (object), Baldini Soares et al. (2019).
  - `typed_marker`: kept between typed markers, `[SUBJ-PERSON] ...
    [/SUBJ-PERSON]`, Zhou and Chen (2021).

Example:
  markers = entity_markers(examples, tokenizer.vocab, "marker")
  ids, segments, cut = encode_relations(tokenizer, examples, markers, 128,
                                        "marker")
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import json_file
from official_spanbert.data import tokenization

# Bad input raises the one error of the fine-tuning readers.
DataError = classification.DataError
NO_RELATION = "no_relation"
ENTITY_MODES = ("mask", "marker", "typed_marker")
# Per mode and entity: (open, close) marker names; {type} is the entity type.
MARKER_TEMPLATES = {
    "mask": {"subject": ("[SUBJ-{type}]", None),
             "object": ("[OBJ-{type}]", None)},
    "marker": {"subject": ("[E1]", "[/E1]"), "object": ("[E2]", "[/E2]")},
    "typed_marker": {"subject": ("[SUBJ-{type}]", "[/SUBJ-{type}]"),
                     "object": ("[OBJ-{type}]", "[/OBJ-{type}]")},
}
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


def marker_names(mode: str, subj_type: str, obj_type: str
                 ) -> Tuple[str, Optional[str], str, Optional[str]]:
  """(subject open, subject close, object open, object close) of a record.

  `mask` has no closing markers (the entity's words are dropped).

  Raises:
    DataError: an unknown mode.
  """
  if mode not in ENTITY_MODES:
    raise DataError(f"entity mode {mode!r} is not one of {ENTITY_MODES}")
  names = [template and template.format(type=t)
           for side, t in (("subject", subj_type), ("object", obj_type))
           for template in MARKER_TEMPLATES[mode][side]]
  return tuple(names)


def entity_markers(examples: Sequence[RelationExample],
                   vocab: tokenization.Vocab, mode: str = "mask"
                   ) -> Dict[str, int]:
  """Maps each marker the records use to an [unusedN] id.

  Args:
    examples: all records (train and eval), so that both share the mapping.
    vocab: the vocab whose [unused1], [unused2], ... take the sorted markers.
    mode: one of ENTITY_MODES.

  Returns:
    marker -> vocab id.

  Raises:
    DataError: the vocab has too few [unusedN] entries, or an unknown mode.
  """
  names = sorted({n for e in examples
                  for n in marker_names(mode, e.subj_type, e.obj_type) if n})
  ids = {t: i for i, t in enumerate(vocab.tokens)}
  markers = {}
  for n, name in enumerate(names, 1):
    token = f"[unused{n}]"
    if token not in ids:
      raise DataError(
          f"vocab {vocab.path} has no {token}: entity mode {mode!r} needs "
          f"{len(names)} entries [unused1]..[unused{len(names)}] for the "
          f"markers {', '.join(names)}")
    markers[name] = ids[token]
  return markers


def start_marker_ids(markers: Dict[str, int], mode: str
                     ) -> Dict[str, List[int]]:
  """{"subject": ids, "object": ids} of the markers that open an entity
  (what the `entity_start` classifier reads)."""
  out = {}
  for side in ("subject", "object"):
    prefix, _, suffix = MARKER_TEMPLATES[mode][side][0].partition("{type}")
    out[side] = sorted(i for name, i in markers.items()
                       if name.startswith(prefix) and name.endswith(suffix)
                       and not name.startswith("[/"))
  return out


def encode_relations(tokenizer: tokenization.WordpieceTokenizer,
                     examples: Sequence[RelationExample],
                     markers: Dict[str, int], max_seq_length: int,
                     mode: str = "mask"
                     ) -> Tuple[List[List[int]], List[List[int]], int]:
  """`[CLS] tokens [SEP]` ids of TACRED records with entity markers.

  Each token is wordpieced on its own (PTB brackets such as -LRB- mapped
  back first). Before the token where an entity starts go its open markers
  (subject first); after the token where it ends, its close markers (object
  first). `mask` (SpanBERT's run_tacred.py, mode `ner`) drops the entities'
  tokens; `marker` and `typed_marker` keep them between the markers.

  Args:
    tokenizer: the wordpiece tokenizer.
    examples: the records.
    markers: from entity_markers() with the same mode.
    max_seq_length: length limit including [CLS] and [SEP].
    mode: one of ENTITY_MODES.

  Returns:
    (ids, segment_ids, number of truncated examples), unpadded.
  """
  words = [_PTB_BRACKETS.get(t.lower(), t) for e in examples
           for t in e.tokens]
  pieces = iter(classification.tokenize_texts(tokenizer, words))
  vocab = tokenizer.vocab
  ids, segments, truncated = [], [], 0
  for e in examples:
    s_open, s_close, o_open, o_close = marker_names(mode, e.subj_type,
                                                    e.obj_type)
    body = []
    for i in range(len(e.tokens)):
      word = next(pieces)
      if i == e.subj_start:
        body.append(markers[s_open])
      if i == e.obj_start:
        body.append(markers[o_open])
      inside = e.subj_start <= i <= e.subj_end or e.obj_start <= i <= e.obj_end
      if mode != "mask" or not inside:
        body.extend(word)
      if i == e.obj_end and o_close:
        body.append(markers[o_close])
      if i == e.subj_end and s_close:
        body.append(markers[s_close])
    truncated += len(body) > max_seq_length - 2
    body = body[:max_seq_length - 2]
    ids.append([vocab.cls_id] + body + [vocab.sep_id])
    segments.append([0] * (len(body) + 2))
  return ids, segments, truncated


def relation_labels(splits) -> Tuple[str, ...]:
  """Sorted relations of all splits, `no_relation` first (id 0)."""
  found = {e.label for examples in splits.values() for e in examples}
  return (NO_RELATION,) + tuple(sorted(found - {NO_RELATION}))
