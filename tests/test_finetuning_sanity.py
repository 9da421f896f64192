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

"""Fine-tuning sanity: tiny encoders memorise real data through the real path.

A tiny randomly initialised encoder is fine-tuned on 64 real training
questions (SQuADShifts new_wiki) or 64 real RTE pairs and evaluated on the
same examples through the package's own path: the task's validation step
(train_and_eval), SQuAD post-processing and the official metric against the
gold answers in the JSON, or Model Garden's `predict` scored against labels
read straight from the tsv. The model memorises whatever labels the records
give it, so scores against the gold text and the tsv labels are high only
when labels, positions and offsets line up with the text. Intact, the SQuAD
run reaches F1 / EM 100 / 100 by step 120 (97 / 95 at step 80) and RTE
accuracy 1.0. Deliberately broken in scratch runs (same settings, final
evaluation):

  * start positions +1 in squad.convert_examples: F1 50.3, EM 17.2;
  * end positions +1 there: F1 83.4, EM 53.1;
  * postprocess's token -> word map read one token on (the offset mapping,
    squad_predictions.postprocess): F1 82.6, EM 56.3;
  * RTE labels rotated by one example against their inputs in the records
    (classification.write_records, train and eval alike): the logged
    accuracy is still 1.0, but 0.50 against the tsv's labels.

The runs also keep the best checkpoint with Model Garden's exporter
(trainer.best_checkpoint_export_subdir): best_ckpt/ must hold the first
evaluation with the highest logged metric.
"""

import csv
import json
import os

import official_spanbert  # noqa: F401
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.nlp.tasks import sentence_prediction as mg_sentence_prediction
from official_spanbert.training import train_lib as train
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.data.finetuning import classification_records as cls_records
from official_spanbert.metrics import squad_evaluate
from conftest import data_path
from test_squad import _slice_json

QUESTIONS = 64
BEST_DIR = "best_ckpt"


def _short_answer_questions(src: str, dst: str) -> str:
  """The first QUESTIONS paragraphs' first question with a 1-3 word answer.

  Short answers make a one-token shift cost most of a question's F1; one
  question per paragraph lets a tiny model memorise them in ~100 steps.
  """
  return _slice_json(src, dst, QUESTIONS, pick=lambda qas: [
      qa for qa in qas if len(qa["answers"][0]["text"].split()) <= 3][:1])


def _trainer(params, steps: int, evals: int, lr: float):
  """train_and_eval schedule: `evals` evaluations, best checkpoint kept."""
  interval = steps // evals
  params.override({
      "runtime": {"distribution_strategy": "one_device", "num_gpus": 0},
      "trainer": {
          "train_steps": steps, "steps_per_loop": interval,
          "summary_interval": interval, "checkpoint_interval": steps,
          "validation_interval": interval, "validation_steps": -1,
          "best_checkpoint_export_subdir": BEST_DIR,
          "optimizer_config": {
              "learning_rate": {"polynomial": {
                  "initial_learning_rate": lr, "decay_steps": steps}},
              "warmup": {"polynomial": {"warmup_steps": steps // 10}}}}},
      is_strict=True)
  return params


def _encoder(hidden: int, layers: int):
  return {"bert_v2": {"hidden_size": hidden, "num_layers": layers,
                      "num_attention_heads": 2,
                      "intermediate_size": 4 * hidden, "dropout_rate": 0.0,
                      "attention_dropout_rate": 0.0}}


def _logged_evals(model_dir: str, tag: str):
  """step -> value of `tag` in the validation summaries."""
  values = {}
  for path in tf.io.gfile.glob(os.path.join(model_dir, "validation",
                                            "events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for v in event.summary.value:
        if v.tag == tag:
          values[int(event.step)] = float(tf.make_ndarray(v.tensor))
  return values


def _check_best_checkpoint(model_dir: str, metric: str, evals):
  """best_ckpt/ holds the first eval with the highest metric, as logged."""
  best = max(evals.values())
  best_step = min(s for s, v in evals.items() if v == best)
  with open(os.path.join(model_dir, BEST_DIR, "info.json"),
            encoding="utf-8") as f:
    info = json.load(f)
  assert info["best_ckpt_global_step"] == best_step, (info, evals)
  assert info[metric] == pytest.approx(best)
  ckpt = tf.train.latest_checkpoint(os.path.join(model_dir, BEST_DIR))
  assert tf.train.load_variable(
      ckpt, "global_step/.ATTRIBUTES/VARIABLE_VALUE") == best_step


def test_squad_tiny_model_memorises_64_questions(tmp_path):
  train_json = _short_answer_questions(
      data_path("squad", "new_wiki_v1.0.json"), str(tmp_path / "train.json"))
  vocab = data_path("vocab", "bert-base-cased-vocab.txt")
  data = dict(input_path=train_json, seq_length=192, doc_stride=128,
              query_length=32, global_batch_size=16, vocab_file=vocab,
              do_lower_case=False)
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  params.override({"task": {"model": {"encoder": _encoder(128, 2)},
                            "train_data": data, "validation_data": data}},
                  is_strict=True)
  params = _trainer(params, steps=120, evals=3, lr=3e-3)
  model_dir = str(tmp_path / "model")
  train.run(params, model_dir, mode="train_and_eval")
  f1 = _logged_evals(model_dir, "f1")
  exact = _logged_evals(model_dir, "exact_match")
  assert sorted(f1) == [40, 80, 120]
  assert f1[120] >= 90 and exact[120] >= 90, (f1, exact)
  _check_best_checkpoint(model_dir, "f1", f1)
  # The logged scores are the official metric of the written predictions.
  with open(os.path.join(model_dir, "predictions", "predictions.json"),
            encoding="utf-8") as f:
    predictions = json.load(f)
  with open(train_json, encoding="utf-8") as f:
    scores = squad_evaluate.evaluate_v1(json.load(f)["data"], predictions)
  assert len(predictions) == QUESTIONS
  assert scores["f1"] == pytest.approx(f1[120], rel=1e-6)
  assert scores["exact_match"] == pytest.approx(exact[120], rel=1e-6)


def _rte_slice(tmp_path) -> str:
  """The first QUESTIONS pairs of RTE train, as a GLUE tsv."""
  path = str(tmp_path / "rte.tsv")
  with open(data_path("glue", "RTE", "train.tsv"), encoding="utf-8") as f:
    lines = f.readlines()[:QUESTIONS + 1]
  with open(path, "w", encoding="utf-8") as f:
    f.writelines(lines)
  return path


def test_rte_tiny_model_memorises_64_pairs(tmp_path):
  tsv = _rte_slice(tmp_path)
  records = str(tmp_path / "records")
  meta = cls_records.create_finetuning_data(
      "rte", data_path("vocab", "bert-base-cased-vocab.txt"), records,
      train_file=tsv, eval_file=tsv, max_seq_length=128)
  params = exp_factory.get_exp_config("spanbert/classification")
  data = {"seq_length": 128, "global_batch_size": 16}
  params.override({"task": {
      "model": {"num_classes": meta["num_labels"],
                "encoder": _encoder(64, 1)},
      "train_data": dict(data, input_path=os.path.join(
          records, cls_data.TRAIN_FILE)),
      "validation_data": dict(data, input_path=os.path.join(
          records, cls_data.EVAL_FILE))}}, is_strict=True)
  params = _trainer(params, steps=90, evals=3, lr=3e-3)
  model_dir = str(tmp_path / "model")
  model, _ = train.run(params, model_dir, mode="train_and_eval")
  accuracy = _logged_evals(model_dir, "cls_accuracy")
  assert sorted(accuracy) == [30, 60, 90]
  _check_best_checkpoint(model_dir, "cls_accuracy", accuracy)
  # Predictions from the trained model, scored against the tsv's own labels.
  task = task_factory.get_task(params.task)
  predicted = mg_sentence_prediction.predict(
      task, params.task.validation_data.replace(include_example_id=True),
      model)
  with open(tsv, encoding="utf-8") as f:
    gold = [row["label"] for row in csv.DictReader(
        f, delimiter="\t", quoting=csv.QUOTE_NONE)]
  assert len(predicted) == len(gold) == QUESTIONS
  tsv_accuracy = sum(meta["labels"][int(p)] == g
                     for p, g in zip(predicted, gold)) / QUESTIONS
  assert tsv_accuracy >= 0.95, (tsv_accuracy, accuracy)
  assert accuracy[90] == pytest.approx(tsv_accuracy)
