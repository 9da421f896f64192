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

"""tasks/classification for relations: classes and markers from the records,
SemEval's score, batches cut to their longest row."""

import json

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification_loader
from official_spanbert.data.finetuning import classification_records
from official_spanbert.modeling import relation_classifier
from official_spanbert.tasks import classification

RECORDS = [
    {"id": str(i), "token": ["The", "author", "of", "a", "keygen", "uses",
                             "a", "disassembler", "."][:9 - i % 3],
     "subj_start": 1, "subj_end": 1, "obj_start": 4, "obj_end": 4,
     "subj_type": "ENTITY", "obj_type": "ENTITY",
     "relation": ["no_relation", "Cause-Effect(e1,e2)",
                  "Cause-Effect(e2,e1)"][i % 3]} for i in range(6)]


def _vocab(tmp_path):
  words = sorted({w for r in RECORDS for w in r["token"]})
  path = tmp_path / "vocab.txt"
  path.write_text("\n".join(["[PAD]"] + [f"[unused{n}]" for n in range(1, 9)]
                            + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words)
                  + "\n")
  return str(path)


def _records(tmp_path, mode="marker"):
  data = tmp_path / "rel.json"
  data.write_text(json.dumps(RECORDS))
  out = str(tmp_path / f"records_{mode}")
  meta = classification_records.create_finetuning_data(
      "tacred", _vocab(tmp_path), out, train_file=str(data),
      eval_file=str(data), max_seq_length=16, entity_mode=mode)
  return out, meta


def _config(records, pooling="entity_start", **model):
  params = exp_factory.get_exp_config("spanbert/tacred")
  params.override({"task": {"model": dict({
      "pooling": pooling, "encoder": {"bert_v2": {
          "vocab_size": 40, "hidden_size": 16, "intermediate_size": 32,
          "num_layers": 1, "num_attention_heads": 2}}}, **model)}},
                  is_strict=True)
  task = params.task
  task.train_data.input_path = f"{records}/train.tf_record"
  task.validation_data.input_path = f"{records}/eval.tf_record"
  for data in (task.train_data, task.validation_data):
    data.seq_length, data.global_batch_size = 16, 4
  return params


def test_num_classes_and_marker_ids_come_from_the_records(tmp_path):
  records, meta = _records(tmp_path)
  params = _config(records)
  assert params.task.model.num_classes == 0  # spanbert/tacred: the records'
  params.task.fill_from_data()
  model = params.task.model
  assert model.num_classes == meta["num_labels"] == 3
  assert model.subject_marker_ids == meta["entity_start_ids"]["subject"]
  assert model.object_marker_ids == meta["entity_start_ids"]["object"]
  built = classification.SpanBertClassificationTask(params.task).build_model()
  assert isinstance(built, relation_classifier.RelationClassifier)


def test_the_served_relation_classifier_computes_attention_by_matmul(
    tmp_path):
  """The relation classifier (a subclassed model) creates its attention
  layers at its first call, so the serving module's swap to matmul attention
  found none and the export ran Einsum attention (int8 work, 2026-12-06)."""
  from official_spanbert.modeling import attention_layout  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import classify_module  # pylint: disable=g-import-not-at-top
  records, meta = _records(tmp_path)
  params = _config(records)
  params.task.fill_from_data()
  model = classification.SpanBertClassificationTask(params.task).build_model()
  classify_module.ClassifyModule(
      model, str(tmp_path / "vocab.txt"), seq_length=16,
      label_names=meta["labels"], entity_markers=meta["entity_markers"],
      entity_mode="marker")
  kinds = [type(m) for m in model.submodules
           if isinstance(m, tf_keras.layers.MultiHeadAttention)]
  assert kinds == [attention_layout.MatmulMultiHeadAttention], kinds


def test_a_mismatch_with_the_records_is_one_line(tmp_path):
  records, _ = _records(tmp_path)
  params = _config(records, num_classes=42)
  with pytest.raises(ValueError, match=r"num_classes=42, but the records .* "
                     r"have 3 labels .*set task.model.num_classes=3 \(or 0"):
    classification.SpanBertClassificationTask(params.task)
  params = _config(records, subject_marker_ids=[7], object_marker_ids=[8])
  with pytest.raises(ValueError, match=r"\[7\]/\[8\] are not the markers of "
                     "the records"):
    classification.SpanBertClassificationTask(params.task)
  params = _config(records, pooling="mean")
  with pytest.raises(ValueError, match="pooling='mean' is not one of cls, "
                     "entity_start"):
    classification.SpanBertClassificationTask(params.task)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_an_unreadable_records_meta_is_one_line_naming_it(tmp_path, content):
  """Training's checks skipped a meta_data.json that was not JSON (and
  then trained with num_classes=0 unfilled); the export and training now
  read it through one function, which names it."""
  records, _ = _records(tmp_path)
  (tmp_path / "records_marker" / "meta_data.json").write_text(content)
  with pytest.raises(ValueError, match=r"^\S+/meta_data\.json (is not JSON|"
                     r"holds a list)"):
    _config(records).task.validate()


def test_entity_start_on_records_without_markers_is_refused(tmp_path):
  records, meta = _records(tmp_path)
  del meta["entity_start_ids"]
  params = _config(records)
  with pytest.raises(ValueError, match="the records have none"):
    classification.fill_from_records(params.task, meta)
  params = _config("/nonexistent")
  with pytest.raises(ValueError, match=r"num_classes=0 \(the records' number"
                     " of labels\\) needs the records' meta_data.json"):
    classification.fill_from_records(params.task)


def test_semeval_metric_reports_the_official_score_and_tacred_f1(tmp_path):
  records, _ = _records(tmp_path)
  params = _config(records, pooling="cls")
  params.task.metric_type = "semeval_macro_f1"
  params.task.fill_from_data()
  task = classification.SpanBertClassificationTask(params.task)
  labels = np.array([1, 1, 2, 0])
  predictions = np.array([2, 1, 2, 0])
  logs = task.reduce_aggregated_logs({
      "sentence_prediction": [np.eye(3)[predictions]],
      "labels": [labels]})
  assert set(task.eval_metric_names) <= set(logs)
  # One type (Cause-Effect): 3 predictions of it, 2 right; 3 gold.
  assert logs["semeval_macro_f1"] == pytest.approx(2 / 3)
  assert logs["accuracy"] == pytest.approx(0.75)


def test_trimmed_batches_keep_the_padded_batches_outputs(tmp_path):
  records, _ = _records(tmp_path)
  params = _config(records)
  params.task.fill_from_data()
  task = classification.SpanBertClassificationTask(params.task)
  model = task.build_model()
  data = params.task.validation_data
  padded = list(task.build_inputs(data))
  trimmed = list(task.build_inputs(data.replace(trim_batch_padding=True)))
  assert [b["input_word_ids"].shape[1] for b in padded] == [16, 16]
  longest = [int(tf.reduce_max(tf.reduce_sum(b["input_mask"], 1)))
             for b in padded]
  assert [b["input_word_ids"].shape[1] for b in trimmed] == longest
  assert max(longest) < 16
  for a, b in zip(padded, trimmed):
    np.testing.assert_allclose(task.inference_step(a, model),
                               task.inference_step(b, model), atol=1e-5)
  assert classification_loader.trim_batch(
      {"input_mask": tf.zeros([2, 5], tf.int32),
       "input_word_ids": tf.zeros([2, 5], tf.int32)})[
           "input_word_ids"].shape == (2, 1)
