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

"""SQuAD: official metrics, tf.text features, post-processing, bad input, e2e."""

import dataclasses
import json
import logging as py_logging
import os

import official_spanbert  # noqa: F401
import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official.nlp.tools import squad_evaluate_v1_1 as mg_v1
from official.nlp.tools import squad_evaluate_v2_0 as mg_v2
from official_spanbert.training import train_lib as train
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.data.finetuning import squad
from official_spanbert.data.finetuning import squad_predictions
from official_spanbert.data import tokenization
from official_spanbert.metrics import squad_evaluate
from conftest import TOOLS, data_path


def _dataset(*qas, context="ctx"):
  return [{"paragraphs": [{"context": context, "qas": list(qas)}]}]


def _qa(qid, *answers, question="q?"):
  return {"id": qid, "question": question,
          "answers": [{"text": a, "answer_start": 0} for a in answers]}


# ---------------------------------------------------------------- metrics


def test_v1_metrics_match_hand_computed_values():
  data = _dataset(
      _qa("articles", "the Eiffel Tower"),       # pred "Eiffel tower": EM 1
      _qa("punct", "Denver Broncos"),            # pred "Denver Broncos!" EM 1
      _qa("multi", "Santa Clara", "Levi's Stadium"),  # pred "Levi's": F1 2/3
      _qa("partial", "in the early 1990s"),      # pred "1990s": F1 2/3
      _qa("wrong", "blue"),                      # pred "red": 0
      _qa("missing", "x"))                       # no prediction: 0
  preds = {"articles": "Eiffel tower", "punct": "Denver Broncos!",
           "multi": "Levi's", "partial": "1990s", "wrong": "red"}
  got = squad_evaluate.evaluate_v1(data, preds)
  # EM: 2 of 6. F1: 1 + 1 + 2/3 ("levis" vs "levis stadium": P 1, R 1/2)
  # + 2/3 ("1990s" vs "in early 1990s": P 1, R 1/3 -> 0.5) ...
  f1_partial = 2 * 1 * (1 / 3) / (1 + 1 / 3)
  expected_f1 = (1 + 1 + 2 / 3 + f1_partial + 0 + 0) / 6 * 100
  assert got["exact_match"] == pytest.approx(200 / 6)
  assert got["f1"] == pytest.approx(expected_f1)
  # Model Garden's transcription gives the same (as fractions).
  mg = mg_v1.evaluate(data, preds)
  assert got["exact_match"] == pytest.approx(100 * mg["exact_match"])
  assert got["f1"] == pytest.approx(100 * mg["final_f1"])


def test_normalisation_follows_the_official_script():
  norm = squad_evaluate.normalize_answer
  assert norm("The  Cat, a dog, AN owl!") == "cat dog owl"
  assert norm("theater") == "theater"      # articles only as whole words
  assert norm("  ") == ""


def test_v2_metrics_no_answer_cases_and_best_threshold():
  data = _dataset(
      _qa("has1", "Paris"), _qa("has2", "the red fox"),
      {"id": "no1", "question": "q", "answers": []},
      {"id": "no2", "question": "q", "answers": []},
      _qa("dot", "."))  # gold normalises to "": counts as no-answer gold ""
  preds = {"has1": "Paris", "has2": "", "no1": "", "no2": "something",
           "dot": ""}
  got = squad_evaluate.evaluate_v2(data, preds)
  # exact: has1 1, has2 0, no1 1, no2 0, dot 1 ("" vs gold "") -> 3/5.
  assert got["exact"] == pytest.approx(60.0)
  assert got["f1"] == pytest.approx(60.0)
  assert got["total"] == 5
  assert got["HasAns_total"] == 3 and got["NoAns_total"] == 2
  assert got["HasAns_exact"] == pytest.approx(200 / 3)
  assert got["NoAns_exact"] == pytest.approx(50.0)
  # With na_probs the best threshold search: answering "" whenever
  # na_prob > t. no2 has the highest odds: predicting null there fixes it.
  odds = {"has1": -5.0, "has2": 3.0, "no1": 4.0, "no2": 2.5, "dot": 0.0}
  got = squad_evaluate.evaluate_v2(data, preds, odds)
  # Sorted by odds: has1(-5) +1, dot(0) +1 (pred "" and gold "" has answer
  # flag True -> diff = score 1), no2(2.5) -1, has2(3) +0, no1(4) +0.
  # Start = 2 no-answer questions; running: 3, 4, 3, 3, 3 -> best 4 at 0.0.
  assert got["best_exact"] == pytest.approx(80.0)
  assert got["best_exact_thresh"] == 0.0
  mg = mg_v2.evaluate(data, preds, odds)
  # (Model Garden names the best-threshold scores final_*.)
  for ours, theirs in [("exact", "exact"), ("f1", "f1"),
                       ("HasAns_exact", "HasAns_exact"),
                       ("NoAns_exact", "NoAns_exact"),
                       ("best_exact", "final_exact"), ("best_f1", "final_f1"),
                       ("best_f1_thresh", "final_f1_thresh")]:
    assert got[ours] == pytest.approx(mg[theirs]), ours


# ---------------------------------------------------------------- features


@pytest.fixture(scope="module")
def tokenizer():
  return tokenization.WordpieceTokenizer(
      data_path("vocab", "bert-base-cased-vocab.txt"))


def _slice_json(src, dst, questions, pick=lambda qas: qas):
  """The first paragraphs of a SQuAD file holding about `questions`.

  `pick` chooses which of a paragraph's questions to keep (default: all);
  paragraphs left without questions are dropped.
  """
  with open(src, encoding="utf-8") as f:
    data = json.load(f)
  out, n = [], 0
  for article in data["data"]:
    paragraphs = []
    for p in article["paragraphs"]:
      qas = pick(p["qas"])
      if qas:
        paragraphs.append(dict(p, qas=qas))
      n += len(qas)
      if n >= questions:
        break
    if paragraphs:
      out.append({"title": article.get("title", ""),
                  "paragraphs": paragraphs})
    if n >= questions:
      break
  with open(dst, "w", encoding="utf-8") as f:
    json.dump({"version": data.get("version", ""), "data": out}, f)
  return dst


def test_training_features_hold_the_answers(tokenizer, tmp_path):
  path = _slice_json(data_path("squad", "new_wiki_v1.0.json"),
                     str(tmp_path / "train.json"), 400)
  examples = squad.read_examples(path, is_training=True)
  features = squad.convert_examples(examples, tokenizer, max_seq_length=128,
                                    doc_stride=48, is_training=True)
  assert len(features) > len(examples)  # long passages give several windows
  answered = exact = 0
  for f in features:
    assert len(f.input_ids) == 128 and f.tokens[0] == "[CLS]"
    if f.is_impossible:
      assert f.start_position == f.end_position == 0
      continue
    answered += 1
    e = examples[f.example_index]
    text = " ".join(f.tokens[f.start_position:f.end_position + 1])
    exact += text.replace(" ##", "").replace(" ", "") == (
        e.answer_text.replace(" ", ""))
    assert f.segment_ids[f.start_position] == 1
  assert answered >= len(examples) * 0.9
  assert exact >= answered * 0.98


def test_each_passage_token_has_one_max_context_window(tokenizer):
  path = data_path("squad", "dev-v1.1.json")
  examples = squad.read_examples(path, is_training=False)[:60]
  features = squad.convert_examples(examples, tokenizer, max_seq_length=96,
                                    doc_stride=32)
  # Every example's words all appear in some window.
  for i, e in enumerate(examples):
    words = {f.token_to_word[p] for f in features if f.example_index == i
             for p in f.token_to_word}
    assert words == set(range(len(e.words)))
  per_example = {}
  for f in features:
    per_example.setdefault(f.example_index, 0)
    per_example[f.example_index] += sum(f.token_is_max_context.values())
  for i, e in enumerate(examples):
    ids, _ = tokenizer.tokenize(tf.constant([" ".join(e.words)]))
    assert per_example[i] == int(ids.row_lengths()[0])


def test_records_round_trip_through_model_gardens_loader(tokenizer, tmp_path):
  from official.nlp.data import question_answering_dataloader as qa_loader
  path = _slice_json(data_path("squad", "dev-v1.1.json"),
                     str(tmp_path / "dev.json"), 30)
  out = str(tmp_path / "eval.tf_record")
  _, features = squad.prepare(path, tokenizer, out, is_training=False,
                              max_seq_length=128, pad_to_multiple=8)
  cfg = qa_loader.QADataConfig(input_path=out, is_training=False,
                               seq_length=128, global_batch_size=8)
  ids = []
  for x, _ in qa_loader.QuestionAnsweringDataLoader(cfg).load():
    ids += x["unique_ids"].numpy().tolist()
  assert len(ids) % 8 == 0 and len(ids) - len(features) < 8
  assert ids[:len(features)] == [f.unique_id for f in features]
  assert set(ids[len(features):]) <= {-1}
  # A write that fails midway keeps the earlier file and leaves no partial.
  before = open(out, "rb").read()
  broken = features[:3] + [dataclasses.replace(features[3],
                                               input_ids=["x"])]
  with pytest.raises(TypeError):
    squad.write_features(broken, out, is_training=False)
  assert open(out, "rb").read() == before
  assert sorted(os.listdir(tmp_path)) == ["dev.json", "eval.tf_record"]


# ---------------------------------------------------------------- predictions


def test_postprocess_picks_the_best_valid_span_and_projects_text(tokenizer):
  examples = [squad.SquadExample(
      qas_id="q1", question="Who?", words="He met Steve Smith's dog.".split())]
  features = squad.convert_examples(examples, tokenizer, max_seq_length=32,
                                    max_query_length=8)
  f = features[0]
  pos = {t: i for i, t in reversed(list(enumerate(f.tokens)))}
  start = np.full(32, -5.0)
  end = np.full(32, -5.0)
  start[pos["Steve"]] = 4.0
  end[pos["Smith"]] = 4.0
  start[1] = 9.0  # a question token: never an answer
  end[pos["dog"]] = 3.0
  preds = squad_predictions.postprocess(examples, features,
                                        {f.unique_id: (start, end)})
  # "Steve Smith" (not "Steve Smith's"): projected onto the original words.
  assert preds.answers == {"q1": "Steve Smith"}
  assert preds.nbest["q1"][0]["probability"] > preds.nbest["q1"][1][
      "probability"]
  # SQuAD 2.0: a strong [CLS] makes it unanswerable.
  start[0] = end[0] = 6.0
  preds = squad_predictions.postprocess(examples, features,
                                        {f.unique_id: (start, end)},
                                        version_2_with_negative=True)
  assert preds.answers == {"q1": ""}
  assert preds.null_odds["q1"] == pytest.approx(12.0 - 8.0)
  assert squad_predictions.apply_threshold(preds, 5.0) == {"q1": "Steve Smith"}


@pytest.mark.parametrize("version_2", [False, True])
def test_label_positions_score_100_through_postprocessing(tokenizer, tmp_path,
                                                          version_2):
  """Logits peaked at the training positions give the gold answers back.

  Training features (answer positions, [CLS] for windows without the answer
  and, for 2.0, for every third question made unanswerable) and evaluation
  features of the same 200 SQuADShifts questions, in 128-token windows: the
  post-processing and the official metric must score the positions ~100.
  Not 100: one gold answer ends inside a word ("... Sis (mode"), which a
  word-level span cannot give. Shifted by one token in a scratch run, EM
  (v1.1 / 2.0) fell to 19 / 46 (start positions +1 in convert_examples) and
  45 / 64 (postprocess's token -> word map read one token on).
  """
  path = _slice_json(data_path("squad", "new_wiki_v1.0.json"),
                     str(tmp_path / "train.json"), 200)
  if version_2:
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
    qas = [qa for a in data["data"] for para in a["paragraphs"]
           for qa in para["qas"]]
    for qa in qas[::3]:
      qa.update(answers=[], is_impossible=True)
    path = _write(tmp_path, data, "train_v2.json")
  windows = dict(max_seq_length=128, doc_stride=48, max_query_length=32)
  train_f = squad.convert_examples(
      squad.read_examples(path, True, version_2), tokenizer,
      is_training=True, **windows)
  examples = squad.read_examples(path, False, version_2)
  features = squad.convert_examples(examples, tokenizer, **windows)
  assert [f.input_ids for f in train_f] == [f.input_ids for f in features]
  logits = {}
  for t, f in zip(train_f, features):
    start, end = np.full(128, -10.0), np.full(128, -10.0)
    start[t.start_position] = end[t.end_position] = 10.0
    logits[f.unique_id] = (start, end)
  preds = squad_predictions.postprocess(
      examples, features, logits, max_answer_length=128,
      version_2_with_negative=version_2)
  data = squad.load_data(path)
  if version_2:
    metrics = squad_evaluate.evaluate_v2(data, preds.answers, preds.null_odds)
    assert metrics["NoAns_exact"] == 100.0
    exact = metrics["exact"]
  else:
    exact = squad_evaluate.evaluate_v1(data, preds.answers)["exact_match"]
  assert exact >= 99.0


# ---------------------------------------------------------------- bad input


def _write(tmp_path, obj, name="bad.json"):
  path = str(tmp_path / name)
  with open(path, "w", encoding="utf-8") as f:
    if isinstance(obj, str):
      f.write(obj)
    else:
      json.dump(obj, f)
  return path


def test_bad_squad_input_warns_with_the_question_id(tokenizer, tmp_path,
                                                    caplog):
  context = "Denver won the game. The Broncos were happy."
  data = {"data": [{"paragraphs": [
      {"context": context, "qas": [
          {"id": "shifted", "question": "Who was happy?",
           "answers": [{"text": "The Broncos", "answer_start": 3}]},
          {"id": "absent", "question": "Who lost?",
           "answers": [{"text": "Carolina", "answer_start": 0}]},
          {"id": "longq", "question": "why " * 100,
           "answers": [{"text": "Denver", "answer_start": 0}]}]},
      {"context": "   ", "qas": [
          {"id": "empty", "question": "What?",
           "answers": [{"text": "x", "answer_start": 0}]}]}]}]}
  path = _write(tmp_path, data)
  with caplog.at_level(py_logging.WARNING):
    train_ex = squad.read_examples(path, is_training=True)
    features = squad.convert_examples(train_ex, tokenizer, max_seq_length=64,
                                      max_query_length=16, is_training=True)
  text = caplog.text
  assert "shifted" in text and "nearest occurrence at 21" in text
  assert "absent" in text and "skipped for training" in text
  assert "empty" in text and "empty context" in text
  assert "longq" in text and "truncated to max_query_length 16" in text
  assert [e.qas_id for e in train_ex] == ["shifted", "longq"]
  shifted = [f for f in features if f.example_index == 0][0]
  assert shifted.tokens[shifted.start_position:shifted.end_position + 1] == [
      "The", "Broncos"]
  # Evaluation keeps every question; the empty context gets "".
  eval_ex = squad.read_examples(path, is_training=False)
  eval_f = squad.convert_examples(eval_ex, tokenizer, max_seq_length=64,
                                  max_query_length=16)
  logits = {f.unique_id: (np.zeros(64), np.zeros(64)) for f in eval_f}
  preds = squad_predictions.postprocess(eval_ex, eval_f, logits)
  assert set(preds.answers) == {"shifted", "absent", "longq", "empty"}
  assert preds.answers["empty"] == ""
  metrics = squad_evaluate.evaluate_v1(data["data"], preds.answers)
  assert 0 <= metrics["f1"] <= 100


@pytest.mark.parametrize("content, message", [
    ('{"data": [\n{"paragraphs": [}\n]}', "bad.json:2:"),
    ({"version": "1.1"}, "expected SQuAD JSON"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "a", "question": "q", "answers": []},
        {"id": "a", "question": "q", "answers": []}]}]}]}, "id a appears twice"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "imp", "question": "q", "answers": [],
         "is_impossible": True}]}]}]}, "version_2_with_negative"),
])
def test_unreadable_squad_files_fail_with_one_clear_error(tmp_path, content,
                                                           message):
  path = _write(tmp_path, content)
  with pytest.raises(squad.SquadFormatError, match=message):
    squad.read_examples(path, is_training=False)
  with pytest.raises(squad.SquadFormatError, match="does not exist"):
    squad.read_examples(str(tmp_path / "nope.json"), is_training=False)


# ---------------------------------------------------------------- end to end


def _tiny_params(tmp_path, experiment, train_json, eval_json, steps=30):
  params = exp_factory.get_exp_config(experiment)
  params = params_dict.override_params_dict(
      params, yaml_files.path("models/tiny.yaml"),
      is_strict=True)
  vocab = data_path("vocab", "bert-base-cased-vocab.txt")
  data = dict(seq_length=128, doc_stride=64, query_length=32,
              global_batch_size=16, vocab_file=vocab, do_lower_case=False)
  params.override({
      "runtime": {"distribution_strategy": "one_device", "num_gpus": 0},
      "task": {"train_data": dict(data, input_path=train_json),
               "validation_data": dict(data, input_path=eval_json)},
      "trainer": {"train_steps": steps, "steps_per_loop": 10,
                  "summary_interval": 10, "checkpoint_interval": steps,
                  "validation_interval": steps, "validation_steps": -1,
                  "best_checkpoint_export_subdir": "best_ckpt",
                  "optimizer_config": {
                      "learning_rate": {"polynomial": {
                          "initial_learning_rate": 1e-4,
                          "decay_steps": steps}},
                      "warmup": {"polynomial": {"warmup_steps": 3}}}},
  }, is_strict=True)
  return params


TINY_RUN_STEPS = 10  # _tiny_params' steps_per_loop: one loop


@pytest.mark.parametrize("experiment, dev, version_2", [
    ("spanbert/squad_v1", "dev-v1.1.json", False),
    ("spanbert/squad_v2", "dev-v2.0.json", True),
])
def test_tiny_squad_run_trains_predicts_and_scores(tmp_path, experiment, dev,
                                                   version_2):
  # One loop of TINY_RUN_STEPS on ~100 questions: what it asserts is the
  # run's plumbing (records, checkpoint, predictions, metrics), not what the
  # model learns.
  train_json = _slice_json(data_path("squad", "new_wiki_v1.0.json"),
                           str(tmp_path / "train.json"), 100)
  eval_json = _slice_json(data_path("squad", dev), str(tmp_path / "dev.json"),
                          60)
  params = _tiny_params(tmp_path, experiment, train_json, eval_json,
                        steps=TINY_RUN_STEPS)
  model_dir = str(tmp_path / "model")
  _, logs = train.run(params, model_dir, mode="train", run_post_eval=True)
  out = os.path.join(model_dir, "predictions")
  with open(os.path.join(out, "predictions.json"), encoding="utf-8") as f:
    predictions = json.load(f)
  with open(eval_json, encoding="utf-8") as f:
    data = json.load(f)["data"]
  qids = {qa["id"] for a in data for p in a["paragraphs"] for qa in p["qas"]}
  assert set(predictions) == qids
  assert all(isinstance(v, str) for v in predictions.values())
  if not version_2:
    expected = squad_evaluate.evaluate_v1(data, predictions)
    assert logs["f1"] == pytest.approx(expected["f1"])
    assert logs["exact_match"] == pytest.approx(expected["exact_match"])
    # Answers are passage text mapped back to the original words; how many
    # are "" (no valid pair among the top-20 starts/ends) depends on how the
    # barely trained model's logits fell, so only require some.
    contexts = {qa["id"]: " ".join(p["context"].split())
                for a in data for p in a["paragraphs"] for qa in p["qas"]}
    answered = {q: v for q, v in predictions.items() if v}
    assert answered
    for qid, text in answered.items():
      assert " ".join(text.split()) in contexts[qid], (qid, text)
  else:
    with open(os.path.join(out, "null_odds.json"), encoding="utf-8") as f:
      odds = json.load(f)
    with open(os.path.join(out, "null_threshold.json"), encoding="utf-8") as f:
      thresh = json.load(f)
    expected = squad_evaluate.evaluate_v2(data, predictions, odds)
    assert logs["best_f1"] == pytest.approx(expected["best_f1"])
    assert thresh["best_f1_thresh"] == pytest.approx(
        expected["best_f1_thresh"])
    assert os.path.exists(os.path.join(out, "predictions_best_f1_thresh.json"))
  # The run left a checkpoint at the last step, and the evaluation's best
  # checkpoint (its own metric logs untouched: for 2.0 it is chosen on
  # best_f1, so the exporter's "best_" entry does not overwrite best_f1).
  assert tf.train.latest_checkpoint(model_dir).endswith(f"-{TINY_RUN_STEPS}")
  metric = params.trainer.best_checkpoint_eval_metric
  with open(os.path.join(model_dir, "best_ckpt", "info.json"),
            encoding="utf-8") as f:
    info = json.load(f)
  assert info["best_ckpt_global_step"] == TINY_RUN_STEPS
  assert info[metric] == pytest.approx(logs[metric])


@pytest.mark.parametrize("experiment, evaluate", [
    ("spanbert/squad_v1", squad_evaluate.evaluate_v1),
    # As the task calls it: with the null odds.
    ("spanbert/squad_v2",
     lambda data, preds: squad_evaluate.evaluate_v2(data, preds, {"q": 0.0})),
])
def test_best_checkpoint_metric_is_reported_and_not_overwritten(experiment,
                                                                 evaluate):
  """The exporter adds "best_<metric>" to the eval logs; it must be new.

  With 2.0 chosen on f1, "best_f1" (the F1 at the best null threshold) was
  replaced in the logs and TensorBoard by the best F1 so far at threshold 0.
  """
  trainer = exp_factory.get_exp_config(experiment).trainer
  reported = evaluate(_dataset(_qa("q", "a")), {"q": "a"})
  assert trainer.best_checkpoint_eval_metric in reported
  assert "best_" + trainer.best_checkpoint_eval_metric not in reported
  assert trainer.best_checkpoint_metric_comp == "higher"


def test_data_tool_writes_squad_training_records_or_one_error(tmp_path):
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  vocab = data_path("vocab", "bert-base-cased-vocab.txt")
  train_json = _slice_json(data_path("squad", "new_wiki_v1.0.json"),
                           str(tmp_path / "train.json"), 40)
  tool = os.path.join(TOOLS, "create_finetuning_data.py")

  def run(src, out):
    return subprocess.run(
        [sys.executable, tool, "--task=squad_v1", f"--train_file={src}",
         f"--vocab_file={vocab}", f"--output_dir={out}",
         "--max_seq_length=128"], capture_output=True, text=True, check=False)

  result = run(train_json, tmp_path / "out")
  assert result.returncode == 0, result.stderr[-2000:]
  with open(tmp_path / "out" / "meta_data.json", encoding="utf-8") as f:
    meta = json.load(f)
  records = list(tf.data.TFRecordDataset(str(tmp_path / "out" /
                                             "train.tf_record")))
  assert meta["examples"] >= 40 and meta["features"] == len(records)
  bad = _write(tmp_path, '{"data": [\n  {"paragraphs": 3\n]}')
  result = run(bad, tmp_path / "bad_out")
  errors = [l for l in result.stderr.splitlines()
            if l.startswith("create_finetuning_data: error:")]
  assert result.returncode == 1
  assert len(errors) == 1 and "bad.json:3:" in errors[0]
  assert not os.path.exists(tmp_path / "bad_out" / "train.tf_record")


def test_training_records_are_written_in_random_order(tokenizer, tmp_path):
  """The loader shuffles within a 100-record buffer only, so records in file
  (article) order let a short run see only the first articles: in the HF
  parity run (experiments/parity_squad.py, 160 x 16) the package drew from ~10
  of 48 articles. BERT's run_squad writes training records shuffled; so do we.
  """
  path = _slice_json(data_path("squad", "new_wiki_v1.0.json"),
                     str(tmp_path / "train.json"), 400)
  out = str(tmp_path / "train.tf_record")
  examples, features = squad.prepare(path, tokenizer, out, is_training=True,
                                     max_seq_length=128, doc_stride=48)
  index = {tuple(f.input_ids): i for i, f in enumerate(features)}
  order = []
  for raw in tf.data.TFRecordDataset(out):
    ex = tf.train.Example.FromString(raw.numpy())
    order.append(index[tuple(ex.features.feature["input_ids"].int64_list.value)])
  # (Identical windows of repeated questions share an index.)
  assert len(order) == len(features)
  assert len(set(order)) > 0.95 * len(features) and order != sorted(order)
  # The first 100 records come from all over the file, not its first part.
  first = [features[i].example_index for i in order[:100]]
  assert max(first) > 0.8 * len(examples)
  # And the order is fixed (same records for every run).
  squad.prepare(path, tokenizer, out + "2", is_training=True,
                max_seq_length=128, doc_stride=48)
  with open(out, "rb") as a, open(out + "2", "rb") as b:
    assert a.read() == b.read()
