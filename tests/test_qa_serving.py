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


"""The served `answer` is the offline evaluation's answer (issues 33, 45).

A tiny SQuAD model is fine-tuned a few steps on SQuADShifts training data
(new_wiki), once with the cased vocab and once with the uncased vocab of
all-MiniLM-L6-v2; `--mode=eval` writes predictions.json for real dev
questions of v1.1 and of v2.0 (500 from the start of the file, cased; 300
whose contexts hold non-ASCII letters, uncased); the run is exported with
the registry and the SavedModel answers the same questions from raw text. A
short exported sequence length (64, stride 32) makes most contexts need
several windows.
"""

import collections
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.serving import qa_module
from official_spanbert.serving import registry
from official_spanbert.training import train_lib as train
from conftest import data_path
import test_squad as squad_tests

SEQ, STRIDE, QUERY = 64, 32, 24
DEV_QUESTIONS = 500
UNCASED_QUESTIONS = 300


def _params(tmp_path, experiment, train_json, eval_json, uncased_vocab=None):
  params = squad_tests._tiny_params(tmp_path, experiment, train_json,  # pylint: disable=protected-access
                                    eval_json, steps=40)
  for data in (params.task.train_data, params.task.validation_data):
    data.seq_length, data.doc_stride, data.query_length = SEQ, STRIDE, QUERY
    if uncased_vocab:
      data.vocab_file, data.do_lower_case = uncased_vocab, True
  if uncased_vocab:
    params.task.model.encoder.bert_v2.vocab_size = 30522
  params.trainer.best_checkpoint_export_subdir = ""
  return params


@pytest.fixture(scope="module", params=["cased", "uncased"])
def squad_run(request, tmp_path_factory):
  """A model dir fine-tuned 40 steps (seq 64) on 400 new_wiki questions."""
  uncased = (request.getfixturevalue("uncased_vocab")
             if request.param == "uncased" else None)
  d = tmp_path_factory.mktemp(f"qa_run_{request.param}")
  train_json = squad_tests._slice_json(  # pylint: disable=protected-access
      data_path("squad", "new_wiki_v1.0.json"), str(d / "train.json"), 400)
  # --mode=train evaluates nothing, but the task converts its evaluation
  # file when it is built: a few questions, not the 400 again (~5 s of CPU).
  no_eval = squad_tests._slice_json(train_json, str(d / "no_eval.json"), 4)  # pylint: disable=protected-access
  params = _params(d, "spanbert/squad_v1", train_json, no_eval, uncased)
  model_dir = str(d / "model")
  train.run(params, model_dir, mode="train")
  return {"dir": d, "model_dir": model_dir, "train_json": train_json,
          "uncased_vocab": uncased}


def _slice_dev(squad_run, dev):
  """Cased: the first 500 questions; uncased: the first 300 whose contexts
  hold a non-ASCII character (accented names, dashes, Greek)."""
  dst = str(squad_run["dir"] / dev)
  if not squad_run["uncased_vocab"]:
    return squad_tests._slice_json(data_path("squad", dev), dst, DEV_QUESTIONS)  # pylint: disable=protected-access
  with open(data_path("squad", dev), encoding="utf-8") as f:
    data = json.load(f)
  out, n = [], 0
  for article in data["data"]:
    paragraphs = [p for p in article["paragraphs"]
                  if any(ord(c) > 127 for c in p["context"])]
    if paragraphs and n < UNCASED_QUESTIONS:
      out.append(dict(article, paragraphs=paragraphs))
      n += sum(len(p["qas"]) for p in paragraphs)
  with open(dst, "w", encoding="utf-8") as f:
    json.dump({"version": data["version"], "data": out}, f)
  return dst


def _offline_and_served(squad_run, experiment, dev):
  d = squad_run["dir"]
  eval_json = _slice_dev(squad_run, dev)
  params = _params(d, experiment, squad_run["train_json"], eval_json,
                   squad_run["uncased_vocab"])
  params.task.predictions_dir = str(d / f"predictions-{experiment[-2:]}")
  train.run(params, squad_run["model_dir"], mode="eval")
  threshold = None
  if params.task.validation_data.version_2_with_negative:
    # The barely trained model prefers no answer at the evaluation's
    # thresholds; the median null odds answers half the questions.
    threshold = float(np.median(list(_read(params, "null_odds.json").values())))
  export = registry.export(
      registry.Run(params, experiment, squad_run["model_dir"]),
      {"null_score_diff_threshold": threshold},
      str(d / f"export-{experiment[-2:]}"))
  with open(eval_json, encoding="utf-8") as f:
    qas = [(qa["id"], qa["question"], p["context"])
           for a in json.load(f)["data"] for p in a["paragraphs"]
           for qa in p["qas"]]
  answer = tf.saved_model.load(export["model"]).signatures["answer"]
  served = {}
  for i in range(0, len(qas), 64):
    chunk = qas[i:i + 64]
    out = answer(question=tf.constant([q for _, q, _ in chunk]),
                 context=tf.constant([c for _, _, c in chunk]))
    for j, (qid, _, context) in enumerate(chunk):
      served[qid] = {k: v[j].numpy() for k, v in out.items()}
      served[qid]["context"] = context
  return params, served, threshold


def _read(params, name):
  with open(os.path.join(params.task.predictions_dir, name),
            encoding="utf-8") as f:
    return json.load(f)


def _check_spans(served, offline):
  for qid, s in served.items():
    text = s["answer_text"].decode("utf-8")
    assert text == offline[qid], (qid, text, offline[qid])
    if text:
      # Character offsets into the context, end exclusive.
      assert s["context"][s["answer_start"]:s["answer_end"]] == text
    else:
      assert s["answer_start"] == s["answer_end"] == -1


@pytest.mark.parametrize("experiment, dev", [
    ("spanbert/squad_v1", "dev-v1.1.json"),
    ("spanbert/squad_v2", "dev-v2.0.json"),
])
def test_served_answers_are_the_offline_evaluations(squad_run, experiment,
                                                    dev):
  if squad_run["uncased_vocab"] and experiment.endswith("v2"):
    # Measured 2026-12-04: 307 accented-context v2.0 questions equal. The
    # offsets are v1.1's code path; the null threshold is the cased run's.
    pytest.skip("uncased: v1.1 only in CI (~35 s of CPU)")
  params, served, threshold = _offline_and_served(squad_run, experiment, dev)
  assert len(served) >= (UNCASED_QUESTIONS if squad_run["uncased_vocab"]
                         else DEV_QUESTIONS)
  if squad_run["uncased_vocab"]:
    assert all(any(ord(c) > 127 for c in s["context"]) for s in served.values())
  nbest = _read(params, "nbest_predictions.json")
  offline = _read(params, "predictions.json")
  if experiment.endswith("v2"):
    # The offline answers at that threshold (squad_predictions.apply_threshold).
    odds = _read(params, "null_odds.json")
    offline = {q: "" if odds[q] > threshold else next(
        (x["text"] for x in nbest[q] if x["text"]), "") for q in nbest}
    # Without --null_score_diff_threshold the export takes the evaluation's.
    assert qa_module.null_threshold(registry.Run(params)) == pytest.approx(
        _read(params, "null_threshold.json")["best_f1_thresh"])
    has = {q: bool(s["has_answer"]) for q, s in served.items()}
    assert has == {q: bool(offline[q]) for q in served}
    assert 0 < sum(has.values()) < len(has)
  _check_spans(served, offline)
  for qid, s in served.items():
    if offline[qid]:
      best = next(x for x in nbest[qid] if x["text"])
      assert s["score"] == pytest.approx(
          best["start_logit"] + best["end_logit"], abs=1e-4)
  # Contexts that need 3 windows or more at the exported length.
  windows = _window_counts(params)
  assert max(windows) >= 3
  print(f"{experiment}: {len(served)} questions equal; contexts by windows "
        f"{sorted(collections.Counter(windows).items())}")


def _window_counts(params):
  """Windows of each question, as the offline features cut them."""
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import squad  # pylint: disable=g-import-not-at-top
  data = params.task.validation_data
  examples = squad.read_examples(data.input_path, False,
                                 data.version_2_with_negative)
  features = squad.convert_examples(
      examples, tokenization.WordpieceTokenizer(data.vocab_file,
                                                data.do_lower_case),
      max_seq_length=SEQ, doc_stride=STRIDE, max_query_length=QUERY)
  return np.bincount([f.example_index for f in features]).tolist()


def test_bfloat16_export_agrees_with_float32(squad_run):
  """--precision=bfloat16 (on a CPU with native bf16): the same answer text
  as the float32 export on 500+ dev questions: 499 and 486 of 504 (99.0%,
  96.4%) in two runs on a Zen 5 EPYC, 2026-12-04 (threaded training is not
  bit-reproducible, so each run tests another 40-step model). The bar is 95%:
  such a model's logits are near ties, which bf16's 8 bits of mantissa flip."""
  from official_spanbert.serving import export_precision  # pylint: disable=g-import-not-at-top
  if squad_run["uncased_vocab"]:
    pytest.skip("measured on the cased run")
  try:
    export_precision.check("bfloat16")
  except export_precision.PrecisionError as e:
    pytest.skip(str(e))
  d = squad_run["dir"]
  eval_json = _slice_dev(squad_run, "dev-v1.1.json")
  params = _params(d, "spanbert/squad_v1", squad_run["train_json"], eval_json)
  with open(eval_json, encoding="utf-8") as f:
    qas = [(qa["question"], p["context"]) for a in json.load(f)["data"]
           for p in a["paragraphs"] for qa in p["qas"]]
  texts = {}
  for precision in ("float32", "bfloat16"):
    export = registry.export(
        registry.Run(params, "spanbert/squad_v1", squad_run["model_dir"]),
        {"precision": precision}, str(d / f"export-{precision}"))
    answer = tf.saved_model.load(export["model"]).signatures["answer"]
    texts[precision] = []
    for i in range(0, len(qas), 64):
      out = answer(question=tf.constant([q for q, _ in qas[i:i + 64]]),
                   context=tf.constant([c for _, c in qas[i:i + 64]]))
      assert out["score"].dtype == tf.float32
      texts[precision] += out["answer_text"].numpy().tolist()
  same = sum(a == b for a, b in zip(texts["float32"], texts["bfloat16"]))
  print(f"bfloat16 = float32 on {same} of {len(qas)} questions")
  assert len(qas) >= DEV_QUESTIONS and same >= 0.95 * len(qas)
