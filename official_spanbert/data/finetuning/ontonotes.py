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

"""OntoNotes metadata of a coreference document: genre, speakers, words.

As mandarjoshi90/coref: the genre from the document name's first two
characters, `/.` and `/?` read as `.` and `?`, and speaker ids (the
reference's get_speaker_dict when max_num_speakers > 0). See
docs/coreference.md, "OntoNotes CoNLL-2012 input".

Example:
  genre_id("nw/wsj/00/wsj_0001")                 # 3
  speaker_ids(["-", "Tom", "Ann", "Tom"])        # [0, 1, 2, 1]
  speaker_ids(["-", "Tom", "Ann"], 20)           # [2, 3, 4]
"""

from typing import List, Sequence

import tensorflow as tf

# experiments.conf `genres`; the index is the genre embedding's row.
GENRES = ("bc", "bn", "mz", "nw", "pt", "tc", "wb")
NO_SPEAKER = ("-", "_", "")
# get_speaker_dict of independent.py: the two fixed entries, and the id that
# speakers past max_num_speakers get (`speaker_dict.get(s, 3)`).
REFERENCE_FIXED = ("UNK", "[SPL]")
REFERENCE_OVERFLOW = 3
_ESCAPED = {"/.": ".", "/?": "?"}


def genre_id(doc_name: str) -> int:
  """Index in GENRES of the name's first two characters, else 0."""
  prefix = doc_name[:2]
  return GENRES.index(prefix) if prefix in GENRES else 0


def has_genre(doc_name: str) -> bool:
  """Whether the name starts with one of GENRES."""
  return doc_name[:2] in GENRES


def normalize_word(word: str) -> str:
  """minimize.py's normalize_word for English: `/.` -> `.`, `/?` -> `?`."""
  return _ESCAPED.get(word, word)


def speaker_ids(speakers: Sequence[str], max_num_speakers: int = 0
                ) -> List[int]:
  """The id of each speaker string (see the module docstring)."""
  if not max_num_speakers:
    ids = {s: 0 for s in NO_SPEAKER}
    for s in speakers:
      if s not in ids:
        ids[s] = len(ids) - len(NO_SPEAKER) + 1
    return [ids[s] for s in speakers]
  ids = {s: i for i, s in enumerate(REFERENCE_FIXED)}
  for s in speakers:
    if s not in ids and len(ids) < max_num_speakers:
      ids[s] = len(ids)
  return [ids.get(s, REFERENCE_OVERFLOW) for s in speakers]


def speaker_ids_graph(speakers: tf.Tensor, max_num_speakers: int = 0
                      ) -> tf.Tensor:
  """speaker_ids of a 1-D string tensor, as int32 (graph-safe)."""
  names, index = tf.unique(speakers)

  def among(values):
    return tf.reduce_any(tf.equal(names[:, None], tf.constant(values)), 1)

  if not max_num_speakers:
    none = among(NO_SPEAKER)
    rank = tf.cumsum(tf.cast(~none, tf.int32))
    ids = tf.where(none, 0, rank)
  else:
    fixed = among(REFERENCE_FIXED)
    rank = tf.cumsum(tf.cast(~fixed, tf.int32)) - 1 + len(REFERENCE_FIXED)
    ids = tf.where(rank < max_num_speakers, rank, REFERENCE_OVERFLOW)
    for i, name in enumerate(REFERENCE_FIXED):
      ids = tf.where(tf.equal(names, name), i, ids)
  return tf.gather(ids, index)
