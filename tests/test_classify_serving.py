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

"""Served `classify` / `classify_relation` equal the offline evaluation.

Per task a tiny classifier (1 layer, hidden 32, the cased vocab) is
fine-tuned for 30 steps on records of spanbert-create-finetuning-data and
exported with the registry from its run directory; the served probabilities
for the raw dev text must equal, within 1e-5, the model's on the dev records
that the evaluation (`--mode=eval`) reads, for every dev row of RTE (pairs),
CoLA and SST-2. TACRED itself (LDC) is not in the shared data: its records
are made in TACRED's JSON format from the prose corpus, with multi-word
entities, PTB brackets and entities at the sentence's ends.
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.data.finetuning import classification_records
from official_spanbert.serving import registry
from official_spanbert.training import train_lib
from conftest import data_path

SEQ = 64
GLUE = {"rte": ("RTE", "train.tsv", "dev.tsv"),
        "cola": ("CoLA", "in_domain_train.tsv", "in_domain_dev.tsv"),
        "sst2": ("SST-2", None, "dev.tsv")}
TYPES = (("PERSON", "CITY", "per:cities_of_residence"),
         ("ORGANIZATION", "PERSON", "org:founded_by"),
         ("PERSON", "ORGANIZATION", "no_relation"))


def _fine_tune(tmp_path, task, train_file, eval_file, vocab, experiment):
  records = str(tmp_path / "records")
  meta = classification_records.create_finetuning_data(
      task, vocab, records, train_file=train_file, eval_file=eval_file,
      max_seq_length=SEQ, max_train_examples=64)
  params = exp_factory.get_exp_config(experiment)
  params.override({"task": {"model": {
      "num_classes": meta["num_labels"], "encoder": {"bert_v2": {
          "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
          "num_attention_heads": 2}}}}}, is_strict=True)
  params.task.metric_type = meta["metric_type"]
  params.runtime.distribution_strategy = "one_device"
  for data, name in ((params.task.train_data, cls_data.TRAIN_FILE),
                     (params.task.validation_data, cls_data.EVAL_FILE)):
    data.input_path = os.path.join(records, name)
    data.seq_length, data.global_batch_size = SEQ, 16
  t = params.trainer
  t.train_steps = t.checkpoint_interval = t.steps_per_loop = 30
  t.validation_interval = t.summary_interval = 30
  t.optimizer_config.learning_rate.polynomial.initial_learning_rate = 3e-3
  t.optimizer_config.learning_rate.polynomial.decay_steps = 30
  t.optimizer_config.warmup.polynomial.warmup_steps = 3
  tf.keras.utils.set_random_seed(1)
  model_dir = str(tmp_path / "run")
  model, _ = train_lib.run(params, model_dir, mode="train")
  return params, model, meta, model_dir


def _offline_probabilities(params, model):
  """Softmax of the model on the eval records, in file order, as the
  evaluation's validation step computes the logits."""
  task = task_factory.get_task(params.task)
  data = params.task.validation_data.replace(include_example_id=True)
  rows = {}
  for features in task.build_inputs(data):
    ids = features.pop("example_id").numpy()
    features.pop("label_ids")
    logits = task.inference_step(features, model)
    for i, p in zip(ids, tf.nn.softmax(logits, axis=-1).numpy()):
      rows[int(i)] = p
  return np.stack([rows[i] for i in range(len(rows))])


def _export(tmp_path, model_dir):
  paths = registry.export(registry.load_run(model_dir), {},
                          str(tmp_path / "export"))
  return tf.saved_model.load(paths["model"])


def _compare(served, offline, labels):
  probabilities = served["probabilities"].numpy()
  assert probabilities.shape == offline.shape
  np.testing.assert_allclose(probabilities, offline, atol=1e-5, rtol=0)
  names = [x.decode() for x in served["label"].numpy()]
  assert names == [labels[i] for i in served["label_id"].numpy()]


@pytest.mark.parametrize("task", sorted(GLUE))
def test_served_probabilities_equal_offline_evaluation(tmp_path, cased_vocab,
                                                       task):
  folder, train_name, dev_name = GLUE[task]
  dev = data_path("glue", folder, dev_name)
  train = data_path("glue", folder, train_name) if train_name else dev
  # SST-2's train split is not in the shared data; its model is trained on
  # 64 dev rows (what is compared is the graph, not the model's quality).
  params, model, meta, model_dir = _fine_tune(
      tmp_path, task, train, dev, cased_vocab, "spanbert/classification")
  offline = _offline_probabilities(params, model)
  examples = cls_data.read_tsv(dev, task)
  assert len(examples) == len(offline) == meta["eval_data_size"]
  loaded = _export(tmp_path, model_dir)
  inputs = {"text": tf.constant([e.text_a for e in examples])}
  if examples[0].text_b is not None:
    inputs["text_pair"] = tf.constant([e.text_b for e in examples])
  served = loaded.signatures["classify"](**inputs)
  _compare(served, offline, meta["labels"])
  print(f"{task}: {len(examples)} dev rows equal within 1e-5 "
        f"({meta['eval_truncated']} truncated)")


def _relation_records(sentences, seed, prefix):
  """TACRED-format records over real sentences: entities of 1-3 tokens,
  some at the sentence's start or end, some words in PTB brackets."""
  rng = np.random.default_rng(seed)
  out = []
  for n, sentence in enumerate(sentences):
    tokens = sentence.split()
    if n % 3 == 0:
      at = int(rng.integers(0, len(tokens)))
      tokens[at:at + 1] = ["-LRB-", tokens[at], "-RRB-"]
    size = len(tokens)
    a_len, b_len = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    a = 0 if n % 4 == 0 else int(rng.integers(0, size // 2 - a_len + 1))
    b = size - b_len if n % 5 == 0 else int(
        rng.integers(size // 2, size - b_len + 1))
    if n % 2:
      (a, a_len), (b, b_len) = (b, b_len), (a, a_len)
    subj_type, obj_type, relation = TYPES[n % len(TYPES)]
    out.append(dict(id=f"{prefix}{n}", token=tokens, subj_start=a,
                    subj_end=a + a_len - 1, obj_start=b,
                    obj_end=b + b_len - 1, subj_type=subj_type,
                    obj_type=obj_type, relation=relation))
  return out


def _char_span(tokens, start, end):
  begin = len(" ".join(tokens[:start])) + (1 if start else 0)
  return begin, begin + len(" ".join(tokens[start:end + 1]))


def test_served_relations_equal_offline_evaluation(tmp_path, cased_vocab):
  with open(data_path("corpus", "austen.txt"), encoding="utf-8") as f:
    text = " ".join(f.read().split()[:20000])
  sentences = [s.strip() + " ." for s in text.split(". ")
               if 8 <= len(s.split()) <= 60][:160]
  train = _relation_records(sentences[:64], 0, "t")
  evaluation = _relation_records(sentences[64:], 1, "e")
  for name, records in (("train", train), ("eval", evaluation)):
    (tmp_path / f"{name}.json").write_text(json.dumps(records))
  params, model, meta, model_dir = _fine_tune(
      tmp_path, "tacred", str(tmp_path / "train.json"),
      str(tmp_path / "eval.json"), cased_vocab, "spanbert/tacred")
  offline = _offline_probabilities(params, model)
  loaded = _export(tmp_path, model_dir)
  texts, spans = [], {k: [] for k in ("subject_start", "subject_end",
                                      "object_start", "object_end")}
  for r in evaluation:
    texts.append(" ".join(r["token"]))
    for name, key in (("subject", "subj"), ("object", "obj")):
      s, e = _char_span(r["token"], r[f"{key}_start"], r[f"{key}_end"])
      spans[f"{name}_start"].append(s)
      spans[f"{name}_end"].append(e)
  served = loaded.signatures["classify_relation"](
      text=tf.constant(texts),
      subject_type=tf.constant([r["subj_type"] for r in evaluation]),
      object_type=tf.constant([r["obj_type"] for r in evaluation]),
      **{k: tf.constant(v, tf.int32) for k, v in spans.items()})
  _compare(served, offline, meta["labels"])
  assert meta["eval_truncated"] > 0  # long sentences cut at SEQ
  print(f"tacred: {len(evaluation)} records equal within 1e-5")
