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

"""Served `classify_relation` on raw SemEval sentences = the records' model.

For each entity mode (mask, marker, typed_marker), with the cased vocab and
the uncased one, experiments/relation_served_check.compare builds a tiny
classifier from the `spanbert/tacred` task and the records' meta_data.json
(num_classes and marker ids from the records); its probabilities on the
test records must equal, within 1e-5, what ClassifyModule's
`classify_relation` gives for the first raw sentences of the release's
TEST_FILE_FULL.TXT (natural punctuation: `recycling.`, `e-mail`, `U.S.`),
the nominals as character offsets. The script checks all 2,717;
experiments/relation_semeval.py checks trained MiniLM models on all 2,717.
"""

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification_records
from official_spanbert.serving import classify_module
from conftest import data_path
from experiments import relation_served_check

SEMEVAL = ("relation", "semeval2010")
N_TEST = 64


@pytest.mark.parametrize("mode", relation_served_check.MODES)
@pytest.mark.parametrize("casing", ["cased", "uncased"])
def test_served_relations_on_raw_sentences_equal_the_records(
    tmp_path, cased_vocab, uncased_vocab, mode, casing):
  vocab = cased_vocab if casing == "cased" else uncased_vocab
  row = relation_served_check.compare(vocab, casing == "uncased", mode,
                                      N_TEST, str(tmp_path))
  assert row["sentences"] == N_TEST
  np.testing.assert_allclose(row["served"], row["offline"], atol=1e-5,
                             rtol=0)
  assert row["equal_labels"] == N_TEST


def _model_and_records(tmp_path, vocab, lower_case, mode):
  records = str(tmp_path / f"records_{mode}")
  meta = classification_records.create_finetuning_data(
      "tacred", vocab, records,
      train_file=data_path(*SEMEVAL, "train.json"),
      eval_file=data_path(*SEMEVAL, "test.json"), lower_case=lower_case,
      max_seq_length=128, max_train_examples=16, max_eval_examples=8,
      entity_mode=mode)
  params = exp_factory.get_exp_config("spanbert/tacred")
  params.override({"task": {"model": {"encoder": {"bert_v2": {
      "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
      "num_attention_heads": 2}}}}}, is_strict=True)
  params.task.train_data.input_path = f"{records}/train.tf_record"
  task = task_factory.get_task(params.task)
  return task.build_model(), meta


def test_entity_spans_inside_words_and_unknown_types(tmp_path, cased_vocab):
  model, meta = _model_and_records(tmp_path, cased_vocab, False,
                                   "typed_marker")
  module = classify_module.ClassifyModule(
      model, cased_vocab, seq_length=128, label_names=meta["labels"],
      entity_markers=meta["entity_markers"], entity_mode="typed_marker")
  text = "Mr. Bennet, who lived in Zürich, wrote to them."
  args = dict(text=tf.constant([text]), subject_start=tf.constant([4]),
              subject_end=tf.constant([10]), object_start=tf.constant([25]),
              object_end=tf.constant([31]))
  out = module.classify_relation(subject_type=tf.constant(["ENTITY"]),
                                 object_type=tf.constant(["ENTITY"]), **args)
  assert out["label_id"].shape == [1]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"subject_type is not an entity type the model "
                     r"was trained with \(ENTITY\)"):
    module.classify_relation(subject_type=tf.constant(["PERSON"]),
                             object_type=tf.constant(["ENTITY"]), **args)
  for (start, end), message in (((25, 99), "object_start/object_end must be "
                                  "a non-empty"),
                                 ((32, 33), "the object span covers no "
                                  "wordpiece")):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
      module.classify_relation(
          text=tf.constant([text]), subject_start=tf.constant([4]),
          subject_end=tf.constant([10]), object_start=tf.constant([start]),
          object_end=tf.constant([end]),
          subject_type=tf.constant(["ENTITY"]),
          object_type=tf.constant(["ENTITY"]))
