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

"""SQuAD v1.1 / v2.0 JSON -> validated examples over whitespace words.

The reading side of squad.py, with one message per problem naming the file
and question id; a file that is not SQuAD JSON raises SquadFormatError.
"""

import collections
import dataclasses
import re
from typing import List, Tuple

from absl import logging

from official_spanbert.data.finetuning import json_file
from official_spanbert.data.finetuning import mrqa

# Warnings of one kind beyond this many are counted, not logged one by one.
_MAX_WARNINGS_PER_KIND = 20
_WHITESPACE = re.compile(r"[\s\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


class SquadFormatError(ValueError):
  """A SQuAD file that cannot be read at all."""


@dataclasses.dataclass
class SquadExample:
  """One question with its passage split into whitespace words.

  Attributes:
    qas_id: the question id.
    question: the question text.
    words: the passage split on whitespace.
    gold_answers: all gold answer texts (evaluation; may be empty).
    start_word: first word of the training answer (-1: none).
    end_word: last word of the training answer (-1: none).
    answer_text: the training answer text.
    is_impossible: SQuAD 2.0 unanswerable question.
    context: the passage itself (answers are substrings of it).
    word_starts: the character offset of each word in `context`.
  """
  qas_id: str
  question: str
  words: List[str]
  gold_answers: List[str] = dataclasses.field(default_factory=list)
  start_word: int = -1
  end_word: int = -1
  answer_text: str = ""
  is_impossible: bool = False
  context: str = ""
  word_starts: List[int] = dataclasses.field(default_factory=list)


class Warnings:
  """Logs the first few warnings of each kind and counts all of them."""

  def __init__(self, source: str):
    self.source = source
    self.counts = collections.Counter()

  def warn(self, kind: str, message: str):
    self.counts[kind] += 1
    if self.counts[kind] <= _MAX_WARNINGS_PER_KIND:
      logging.warning("%s: %s", self.source, message)

  def summary(self):
    for kind, n in sorted(self.counts.items()):
      if n > _MAX_WARNINGS_PER_KIND:
        logging.warning("%s: %d questions with %s in all (first %d logged)",
                        self.source, n, kind, _MAX_WARNINGS_PER_KIND)


def load_data(path: str) -> list:
  """The "data" list (articles) of a SQuAD JSON file, or of an MRQA file
  (.jsonl or .jsonl.gz, data/finetuning/mrqa.py).

  Raises:
    SquadFormatError: the file is missing, not JSON or not SQuAD-shaped.
  """
  if mrqa.is_mrqa(path):
    return mrqa.read_as_squad(path, SquadFormatError)
  data = json_file.read_json(
      path, SquadFormatError, hint="; expected SQuAD JSON (evaluation reads "
      "the JSON itself, not TFRecords)")
  if not isinstance(data, dict) or not isinstance(data.get("data"), list):
    raise SquadFormatError(
        f"{path}: expected SQuAD JSON, an object with a list 'data' of "
        "articles with 'paragraphs' of {'context', 'qas'}")
  return data["data"]


def _split_words(context: str) -> Tuple[List[str], List[int], List[int]]:
  """Whitespace words, per character the index of its word, and each word's
  first character."""
  words, char_to_word, starts = [], [], []
  prev_space = True
  for i, c in enumerate(context):
    if _WHITESPACE.fullmatch(c):
      prev_space = True
    else:
      if prev_space:
        words.append(c)
        starts.append(i)
      else:
        words[-1] += c
      prev_space = False
    char_to_word.append(len(words) - 1)
  return words, char_to_word, starts


def _locate(context: str, text: str, start: int) -> int:
  """answer_start if it points at `text`, else the nearest occurrence, or -1."""
  if 0 <= start and context[start:start + len(text)] == text:
    return start
  hits = [m.start() for m in re.finditer(re.escape(text), context)]
  if not hits:
    return -1
  return min(hits, key=lambda h: abs(h - start))


def read_examples(path: str, is_training: bool,
                  version_2_with_negative: bool = False
                  ) -> List[SquadExample]:
  """Reads and validates a SQuAD JSON file.

  Args:
    path: the SQuAD v1.1 / v2.0 JSON file.
    is_training: training keeps only answerable-and-located questions (and,
      with version_2_with_negative, unanswerable ones); evaluation keeps all.
    version_2_with_negative: SQuAD 2.0 (questions may be is_impossible).

  Returns:
    The examples, in file order.

  Raises:
    SquadFormatError: the file is missing, not JSON or not SQuAD-shaped.
  """
  warnings = Warnings(path)
  examples = []
  seen_ids = set()
  for where, paragraph in _paragraphs(path):
    context = paragraph["context"]
    words, char_to_word, word_starts = _split_words(context)
    for qa in paragraph["qas"]:
      qid, answers, impossible = _checked_question(
          path, where, qa, seen_ids, version_2_with_negative)
      example = SquadExample(
          qas_id=qid, question=qa["question"], words=words,
          context=context, word_starts=word_starts,
          gold_answers=qa.get("gold_texts", [x["text"] for x in answers]),
          is_impossible=impossible)
      if not words:
        warnings.warn("an empty context",
                      f"question {qid}: empty context ({where}); "
                      + ("skipped for training" if is_training else
                         "it gets the empty prediction"))
        if is_training:
          continue
      if is_training and not impossible:
        if not _set_answer(example, answers, char_to_word, warnings):
          continue
      elif not is_training and words:
        _check_answer_starts(qid, context, answers, warnings)
      examples.append(example)
  warnings.summary()
  if not examples:
    raise SquadFormatError(f"{path}: no usable questions")
  return examples


def _paragraphs(path):
  """Yields ("article a, paragraph p", paragraph) of the file, checked."""
  for a, article in enumerate(load_data(path)):
    paragraphs = (article.get("paragraphs") if isinstance(article, dict)
                  else None)
    if not isinstance(paragraphs, list):
      raise SquadFormatError(f"{path}: article {a} has no list 'paragraphs'")
    for p, paragraph in enumerate(paragraphs):
      where = f"article {a}, paragraph {p}"
      if (not isinstance(paragraph, dict) or
          not isinstance(paragraph.get("context"), str) or
          not isinstance(paragraph.get("qas"), list)):
        raise SquadFormatError(
            f"{path}: {where} needs a string 'context' and a list 'qas'")
      yield where, paragraph


def _checked_question(path, where, qa, seen_ids, version_2_with_negative):
  """The question's id, answers and is_impossible; raises on a bad one."""
  if (not isinstance(qa, dict) or "id" not in qa or
      not isinstance(qa.get("question"), str)):
    raise SquadFormatError(
        f"{path}: {where} has a question without 'id' or 'question'")
  qid = str(qa["id"])
  if qid in seen_ids:
    raise SquadFormatError(f"{path}: question id {qid} appears twice")
  seen_ids.add(qid)
  answers = qa.get("answers", [])
  if not isinstance(answers, list) or not all(
      isinstance(x, dict) and isinstance(x.get("text"), str)
      for x in answers):
    raise SquadFormatError(
        f"{path}: question {qid}: 'answers' must be a list of "
        "{'text', 'answer_start'}")
  impossible = bool(qa.get("is_impossible", False))
  if impossible and not version_2_with_negative:
    raise SquadFormatError(
        f"{path}: question {qid} is_impossible, but the task is SQuAD "
        "v1.1; set version_2_with_negative for SQuAD 2.0 data")
  return qid, answers, impossible


def _set_answer(example, answers, char_to_word, warnings) -> bool:
  """Sets the training answer's words; False (warned) if there is none."""
  qid, context = example.qas_id, example.context
  if not answers:
    warnings.warn("no answer", f"question {qid}: no answer and not "
                  "is_impossible; skipped for training")
    return False
  text = answers[0]["text"]
  given = answers[0].get("answer_start", -1)
  start = _locate(context, text, given if isinstance(given, int) else -1)
  if start < 0 or not text.strip():
    warnings.warn(
        "an answer not in the context",
        f"question {qid}: answer {text!r} is not in its context; "
        "skipped for training")
    return False
  if start != given:
    warnings.warn(
        "a wrong answer_start",
        f"question {qid}: answer_start {given} does not point at "
        f"{text!r}; using its nearest occurrence at {start}")
  first = start + len(text) - len(text.lstrip())
  last = start + len(text.rstrip()) - 1
  example.start_word = char_to_word[first]
  example.end_word = char_to_word[last]
  example.answer_text = text
  return True


def _check_answer_starts(qid, context, answers, warnings):
  """Warns (once) about an evaluation answer_start not at its text."""
  for x in answers:
    s = x.get("answer_start", -1)
    if isinstance(s, int) and _locate(context, x["text"], s) != s:
      warnings.warn(
          "a wrong answer_start",
          f"question {qid}: answer_start {s} does not point at "
          f"{x['text']!r} (the metric compares text only)")
      break
