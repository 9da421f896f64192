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

"""A LitBank document as the natural text people send, with token offsets.

LitBank's tsv files hold tokens (`Mr.`, `Bennet`, `,`). Served models get
text, where punctuation sticks to words: no space before `, . ; : ! ? ) ’`
and the clitics `'s n't` (`’s n’t` too), none after `( “ ‘`; one sentence a
line. Each token keeps its character span, so gold entities map to
character spans and served character spans map back to tokens.

Example:
  text, spans = natural_text(doc)        # "Mr. Bennet, who lived ..."
  token_span(spans, 0, 10)               # (0, 1): tokens `Mr.` `Bennet`
"""

import bisect
from typing import List, Optional, Sequence, Tuple

NO_SPACE_BEFORE = frozenset({",", ".", ";", ":", "!", "?", ")", "’", "'s",
                             "’s", "n't", "n’t"})
NO_SPACE_AFTER = frozenset({"(", "“", "‘"})
CONTRACTIONS = frozenset({"'s", "’s", "n't", "n’t"})


def natural_text(sentences: Sequence[Sequence[str]],
                 join_contractions: bool = True
                 ) -> Tuple[str, List[Tuple[int, int]]]:
  """(text, [(start, end)] character span of each token, end exclusive).

  Args:
    sentences: the document's sentences of tokens (TsvDocument.sentences).
    join_contractions: attach `'s n't` too; without, only punctuation
      attaches (`did n't` stays apart, so the words a tokenizer sees are
      those of the tokens joined by spaces).
  """
  lines, spans, at = [], [], 0
  for sentence in sentences:
    line, before = "", None
    for token in sentence:
      attach = before is None or before in NO_SPACE_AFTER or (
          token in NO_SPACE_BEFORE and
          (join_contractions or token not in CONTRACTIONS))
      if not attach:
        line += " "
      spans.append((at + len(line), at + len(line) + len(token)))
      line += token
      before = token
    lines.append(line)
    at += len(line) + 1  # the line break
  return "\n".join(lines), spans


def joined_text(sentences: Sequence[Sequence[str]]
                ) -> Tuple[str, List[Tuple[int, int]]]:
  """The tokens joined by spaces, one sentence a line (how the served =
  offline tests sent documents), with each token's character span."""
  lines, spans, at = [], [], 0
  for sentence in sentences:
    for token in sentence:
      spans.append((at, at + len(token)))
      at += len(token) + 1
    lines.append(" ".join(sentence))
    at += not sentence  # an empty line still has its line break
  return "\n".join(lines), spans


def token_span(spans: Sequence[Tuple[int, int]], start: int, end: int
               ) -> Optional[Tuple[int, int]]:
  """(first, last) tokens whose characters are exactly [start, end), or
  None when the span starts or ends inside a token or in a gap."""
  first = bisect.bisect_left(spans, (start, -1))
  if first == len(spans) or spans[first][0] != start:
    return None
  last = bisect.bisect_left(spans, end, key=lambda span: span[1])
  if last == len(spans) or spans[last][1] != end or last < first:
    return None
  return first, last
