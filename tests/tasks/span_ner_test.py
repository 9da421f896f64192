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

"""spanbert/span_ner end to end on a real LitBank excerpt (unit tier).

The committed excerpt (8 sentences, 60 entities nested up to four deep) in
windows of 128 wordpieces of the unit tier's vocab. Its evaluation path is
checked with oracle outputs for both heads: gold span labels must score
precision 100 and the recall the candidates can reach; gold BIO tags of the
outermost entities, precision 100 and no nested entity. A tiny encoder then
trains the span head with Model Garden's runner (train_and_eval) and must
memorise the excerpt, nested entities included; the predicted tsv files it
writes score the same with the metric's file path.
"""

import os

import numpy as np
import pytest

from conftest import FIXTURES, short_schedule
from official.core import exp_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.metrics import span_f1
from official_spanbert.tasks import span_ner
from official_spanbert.training import train_lib

EXCERPT = os.path.join(FIXTURES, "litbank_excerpt.tsv")
SEQ, WIDTH, STEPS = 128, 12, 150


def _params(vocab: str, head: str = "span", steps: int = STEPS):
  params = exp_factory.get_exp_config("spanbert/span_ner")
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size = 32, 64
  enc.num_layers, enc.num_attention_heads = 1, 2
  enc.dropout_rate = enc.attention_dropout_rate = 0.0
  model = params.task.model
  model.head, model.max_span_width = head, WIDTH
  model.ffnn_size, model.dropout_rate = 64, 0.0
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file = EXCERPT, vocab
    data.seq_length, data.global_batch_size = SEQ, 5
  short_schedule(params, steps, learning_rate=3e-3, evaluations=1)
  return params


def _evaluate(task, outputs):
  """The task's evaluation of per-batch outputs (the validation steps')."""
  state = None
  for step in outputs:
    state = task.aggregate_logs(state, step)
  return task.reduce_aggregated_logs(state)


def _batches(task, params):
  return list(task.build_inputs(params.task.validation_data))


def test_oracle_span_labels_score_the_candidates_reach(small_vocab, tmp_path):
  params = _params(small_vocab)
  params.task.predictions_dir = str(tmp_path)
  task = span_ner.SpanNerTask(params.task)
  outputs = []
  for features, labels in _batches(task, params):
    f = {k: v.numpy() for k, v in features.items()}
    mask = np.zeros(f["input_word_ids"].shape + (WIDTH,), bool)
    logits = np.zeros(mask.shape + (7,), np.float32)
    logits[..., 0] = 1.0
    for b, t, w in zip(*np.nonzero(mask == 0)):
      e = t + w
      mask[b, t, w] = (e < SEQ and f["word_start"][b, t] == 1 and
                       f["word_end"][b, e] == 1 and
                       f["sentence_ids"][b, t] >= 0 and
                       f["sentence_ids"][b, t] == f["sentence_ids"][b, e])
    for b in range(mask.shape[0]):
      for s, e, k in zip(*(labels[n][b].numpy() for n in (
          "gold_starts", "gold_ends", "gold_labels"))):
        if k and e - s < WIDTH:
          logits[b, s, e - s, k] = 5.0
    outputs.append({"window_index": labels["window_index"],
                    "span_logits": logits, "span_mask": mask})
  metrics = _evaluate(task, outputs)
  cover = span_ner_data.coverage(task._eval_docs, task._eval_windows, WIDTH)  # pylint: disable=protected-access
  assert metrics["precision"] == 100.0
  assert metrics["recall"] == pytest.approx(cover["candidate_recall"])
  assert 40 < metrics["recall"] < 100
  # What it wrote is what it scored.
  again = span_f1.evaluate_files(EXCERPT, str(tmp_path / "litbank_excerpt.tsv"))
  assert again["f1"] == pytest.approx(metrics["f1"])


def test_oracle_bio_tags_score_the_outermost_entities(small_vocab, tmp_path):
  params = _params(small_vocab, head="flat")
  params.task.predictions_dir = str(tmp_path)
  task = span_ner.SpanNerTask(params.task)
  batches = _batches(task, params)
  assert set(batches[0][0]) == set(span_ner_data.ENCODER_FEATURES)
  metrics = _evaluate(task, [
      {"window_index": labels["window_index"],
       "tag_ids": np.maximum(labels["bio_labels"].numpy(), 0)}
      for _, labels in batches])
  doc = litbank_tsv.read_file(EXCERPT)
  outer = litbank_tsv.outermost(doc.entities)
  assert metrics["precision"] == 100.0
  assert metrics["recall"] <= 100 * len(outer) / len(doc.entities)
  predicted = litbank_tsv.read_file(str(tmp_path / "litbank_excerpt.tsv"))
  assert {e.key for e in predicted.entities} <= {e.key for e in outer}
  assert all(e.layer == 1 for e in predicted.entities)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, small_vocab):
  import tf_keras  # pylint: disable=g-import-not-at-top
  tf_keras.utils.set_random_seed(1)  # seeds 1, 2 and 3 pass
  params = _params(small_vocab)
  model_dir = str(tmp_path_factory.mktemp("span_ner") / "model")
  _, logs = train_lib.run(params, model_dir, mode="train_and_eval",
                          run_post_eval=True)
  return {"params": params, "model_dir": model_dir, "logs": logs}


def test_memorises_the_excerpt_nested_entities_included(trained):
  logs = trained["logs"]
  predictions = os.path.join(trained["model_dir"], span_ner.PREDICTIONS_DIR,
                             "litbank_excerpt.tsv")
  predicted = litbank_tsv.read_file(predictions)
  result = span_f1.evaluate_files(EXCERPT, predictions)
  assert logs["f1"] == pytest.approx(result["f1"])
  # Of what the candidates reach (entities of at most WIDTH wordpieces in a
  # window: 40 of 60 with this vocab), at most two missed.
  doc = litbank_tsv.read_file(EXCERPT)
  windows = span_ner.read_windows(trained["params"].task.validation_data)[1]
  reach = span_ner_data.coverage([doc], windows, WIDTH)["candidates"]
  assert result["precision"] >= 90, result
  assert result["correct"] >= reach - 2, (result, reach)
  # Nested entities are found and written in their own layers.
  nested = ({e.key for e in doc.entities} -
            {e.key for e in litbank_tsv.outermost(doc.entities)})
  found = nested & {e.key for e in predicted.entities}
  assert len(found) >= 10 and max(e.layer for e in predicted.entities) >= 2


def test_the_cpu_recipe_configures_the_registered_experiment():
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert.configs import yaml_files  # pylint: disable=g-import-not-at-top
  params = exp_factory.get_exp_config("spanbert/span_ner")
  assert params.trainer.best_checkpoint_eval_metric == "f1"
  params = params_dict.override_params_dict(
      params, yaml_files.path("experiments/span_ner/litbank_cpu.yaml"),
      is_strict=True)
  params.validate()
  assert params.task.model.max_span_width == 24
  assert params.task.train_data.do_lower_case and (
      params.task.train_data.is_training)
  assert not params.task.validation_data.is_training
  assert params.runtime.distribution_strategy == "one_device"
