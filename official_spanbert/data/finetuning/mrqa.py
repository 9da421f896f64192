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

"""MRQA 2019 shared-task files (jsonl, optionally gzipped) as SQuAD data.

`read_as_squad` gives the "data" list of a SQuAD file (one article per line;
the detected answers train, MRQA's `answers` are scored); `evaluate_file` is
the official MRQA metric, also a command. See docs/finetuning.md.

Example:
  data = read_as_squad("SQuAD.jsonl.gz", ValueError)
  data[0]["paragraphs"][0]["qas"][0]["gold_texts"]
"""

import argparse
import gzip
import io
import json
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Type

import tensorflow as tf

from official_spanbert.metrics import squad_evaluate

SUFFIXES = (".jsonl", ".jsonl.gz")


def is_mrqa(path: str) -> bool:
  """Whether `path` names an MRQA file (by its suffix)."""
  return path.endswith(SUFFIXES)


def _lines(path: str, error: Type[Exception]):
  if not tf.io.gfile.exists(path):
    raise error(f"{path}: file does not exist")
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  if path.endswith(".gz"):
    try:
      raw = gzip.decompress(raw)
    except (OSError, EOFError) as e:
      raise error(f"{path}: not a gzip file ({e}); name it .jsonl if it is "
                  "plain text") from None
  for number, line in enumerate(io.BytesIO(raw), 1):
    if line.strip():
      try:
        yield number, json.loads(line.decode("utf-8"))
      except UnicodeDecodeError:
        raise error(f"{path}:{number}: not valid UTF-8") from None
      except json.JSONDecodeError as e:
        raise error(f"{path}:{number}: invalid JSON: {e.msg} (column "
                    f"{e.colno})") from None


def _question(path: str, number: int, context: str, qa: Any,
              error: Type[Exception]) -> Dict[str, Any]:
  where = f"{path}:{number}"
  if not (isinstance(qa, dict) and isinstance(qa.get("qid"), str) and
          isinstance(qa.get("question"), str) and
          isinstance(qa.get("answers", []), list)):
    raise error(f"{where}: each of 'qas' needs a string 'qid' and "
                "'question' and a list 'answers'")
  detected = []
  for d in qa.get("detected_answers", []):
    spans = d.get("char_spans") if isinstance(d, dict) else None
    if not (spans and all(isinstance(s, list) and len(s) == 2 and
                          0 <= s[0] <= s[1] < len(context) for s in spans)):
      raise error(f"{where}: question {qa['qid']}: detected_answers need "
                  "'char_spans' of [start, end] inside the context (end "
                  "inclusive)")
    start, end = spans[0]
    detected.append({"text": context[start:end + 1], "answer_start": start})
  return {"id": qa["qid"], "question": qa["question"], "answers": detected,
          "gold_texts": [str(a) for a in qa.get("answers", [])]}


def read_as_squad(path: str, error: Type[Exception]) -> List[Dict[str, Any]]:
  """The SQuAD "data" list of an MRQA file (see the module docstring).

  Raises:
    error: the file is missing, not gzip, not UTF-8 or not MRQA-shaped; the
      message names the file and line.
  """
  data = []
  title = ""
  for number, obj in _lines(path, error):
    if isinstance(obj, dict) and "header" in obj:
      title = str((obj["header"] or {}).get("dataset", ""))
      continue
    if not (isinstance(obj, dict) and isinstance(obj.get("context"), str) and
            isinstance(obj.get("qas"), list)):
      raise error(f"{path}:{number}: expected an MRQA line, an object with a "
                  "string 'context' and a list 'qas'")
    qas = [_question(path, number, obj["context"], qa, error)
           for qa in obj["qas"]]
    data.append({"title": title, "paragraphs": [
        {"context": obj["context"], "qas": qas}]})
  if not data:
    raise error(f"{path}: no MRQA lines after the header")
  return data


def write_from_squad(data: Sequence[Dict[str, Any]], path: str,
                     dataset: str = "SQuAD") -> None:
  """Writes a SQuAD "data" list as an MRQA file (.jsonl or .jsonl.gz).

  Each answer becomes a gold text and, by its `answer_start`, a detected
  answer (texts repeated among the answers are detected once).
  """
  lines = [json.dumps({"header": {"dataset": dataset, "split": "dev"}})]
  for article in data:
    for p in article["paragraphs"]:
      qas = []
      for qa in p["qas"]:
        detected = {}
        for a in qa["answers"]:
          s = a["answer_start"]
          span = [s, s + len(a["text"]) - 1]
          detected.setdefault(a["text"], {"text": a["text"],
                                          "char_spans": []})
          if span not in detected[a["text"]]["char_spans"]:
            detected[a["text"]]["char_spans"].append(span)
        qas.append({"qid": qa["id"], "question": qa["question"],
                    "answers": [a["text"] for a in qa["answers"]],
                    "detected_answers": list(detected.values())})
      lines.append(json.dumps({"context": p["context"], "qas": qas}))
  raw = ("\n".join(lines) + "\n").encode("utf-8")
  if path.endswith(".gz"):
    raw = gzip.compress(raw)
  with tf.io.gfile.GFile(path, "wb") as f:
    f.write(raw)


def evaluate_file(gold_file: str, predictions: Mapping[str, str]
                  ) -> Dict[str, float]:
  """The official MRQA scores of `predictions` (qid -> text) on an MRQA file:
  {"exact_match", "f1"} in percent; a question without a prediction scores
  0."""
  return squad_evaluate.evaluate_v1(read_as_squad(gold_file, ValueError),
                                    predictions)


def main(argv: Optional[Sequence[str]] = None) -> int:
  parser = argparse.ArgumentParser(description="The official MRQA metric.")
  parser.add_argument("--gold_file", required=True)
  parser.add_argument("--prediction_file", required=True)
  args = parser.parse_args(argv)
  try:
    with open(args.prediction_file, encoding="utf-8") as f:
      predictions = json.load(f)
    print(json.dumps(evaluate_file(args.gold_file, predictions)))
  except (OSError, ValueError) as e:
    sys.stderr.write(f"mrqa: error: {e}\n")
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
