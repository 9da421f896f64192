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

"""spanbert/coref end to end on real LitBank text (integration tier).

A tiny encoder (2 layers, hidden 64, no dropout) trains on the opening ~300
words of two LitBank training documents (whole sentences, their mentions and
clusters as annotated, singletons included) with Model Garden's runner in
train_and_eval mode, and must memorise them: CoNLL F1 >= 90 on the
predictions.conll the evaluation writes, scored against the gold file with
the metric's CLI path. A wordpiece/word or segment offset anywhere between the
records and the written predictions moves every predicted mention and fails
the check; the last test shows the score such a one-token shift gives.
"""

import json
import os

import pytest

from conftest import data_path, short_schedule
from official.core import exp_factory
from official_spanbert.training import train_lib
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import conll2012
from official_spanbert.metrics import coref_evaluate
from official_spanbert.tasks import coreference

# 300 steps at a peak lr of 1e-3 memorise the openings. 200 at 2e-3 (5-18
# CPU-s less; the training fixture's 55-60 CPU-s are mostly tracing and
# evaluation) scored CoNLL F1 96 and 98 in two runs, then 83.5 and under 90
# (the bar) in two full test runs of 2026-12-06: too close to the edge.
WORDS, STEPS, LEARNING_RATE = 300, 300, 1e-3


def _opening(doc: conll2012.ConllDocument,
             words: int) -> conll2012.ConllDocument:
  """The document's first whole sentences up to `words` words."""
  keep, total = 0, 0
  while keep < len(doc.sentences) and total + len(doc.sentences[keep]) <= words:
    total += len(doc.sentences[keep])
    keep += 1
  clusters = [[m for m in c if m[1] < total] for c in doc.clusters]
  return conll2012.ConllDocument(
      key=doc.key, name=doc.name, sentences=doc.sentences[:keep],
      speakers=doc.speakers[:keep], columns=doc.columns[:keep],
      clusters=[c for c in clusters if c])


def _params(gold: str, vocab: str, steps: int):
  params = exp_factory.get_exp_config("spanbert/coref")
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size = 64, 128
  enc.num_layers, enc.num_attention_heads = 2, 2
  enc.dropout_rate = enc.attention_dropout_rate = 0.0
  params.task.model.ffnn_size = 150
  params.task.model.dropout_rate = 0.0
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file, data.max_segment_len = gold, vocab, 128
  # One evaluation (at the end, then the post-evaluation): the one at half
  # way, with its checkpoint and best-checkpoint export, asserted nothing.
  short_schedule(params, steps, learning_rate=LEARNING_RATE, evaluations=1)
  params.task.head_learning_rate_multiplier = 3.0
  return params


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
  root = data_path("coref", "litbank")
  with open(os.path.join(root, "splits", "0", "train.txt"),
            encoding="utf-8") as f:
    names = f.read().split()[:2]
  docs = [_opening(conll2012.read_file(
      os.path.join(root, "conll", f"{n}.conll"))[0], WORDS) for n in names]
  work = tmp_path_factory.mktemp("coref")
  gold = str(work / "gold.conll")
  conll2012.write_file(gold, docs)
  params = _params(gold, data_path("vocab", "bert-base-cased-vocab.txt"),
                   STEPS)
  model_dir = str(work / "model")
  _, logs = train_lib.run(params, model_dir, mode="train_and_eval",
                          run_post_eval=True)
  return {"gold": gold, "docs": docs, "params": params,
          "model_dir": model_dir, "logs": logs}


def test_memorises_two_litbank_openings(trained):
  docs = trained["docs"]
  assert sum(len(c) for d in docs for c in d.clusters) > 60
  predictions = os.path.join(trained["model_dir"], "predictions",
                             coreference.PREDICTIONS_FILE)
  result = coref_evaluate.evaluate_files(trained["gold"], predictions)
  assert result["conll_f1"] >= 90, result
  assert trained["logs"]["conll_f1"] == pytest.approx(result["conll_f1"])
  for name in coref_evaluate.METRICS:
    assert trained["logs"][f"{name}_f1"] == pytest.approx(result[name]["f1"])
  # The best checkpoint is kept by conll_f1.
  with open(os.path.join(trained["model_dir"], "best_ckpt", "info.json"),
            encoding="utf-8") as f:
    info = json.load(f)
  assert info["conll_f1"] >= result["conll_f1"] - 1e-6


def test_eval_mode_rewrites_the_predictions(trained, tmp_path):
  params = trained["params"]
  params.task.predictions_dir = str(tmp_path)
  train_lib.run(params, trained["model_dir"], mode="eval")
  # The same checkpoint (the last) as the run's post-evaluation.
  again = coref_evaluate.evaluate_files(
      trained["gold"], str(tmp_path / coreference.PREDICTIONS_FILE))
  assert again["conll_f1"] == pytest.approx(trained["logs"]["conll_f1"])


def test_predictions_shifted_by_one_token_fail(trained, tmp_path):
  predictions = os.path.join(trained["model_dir"], "predictions",
                             coreference.PREDICTIONS_FILE)
  predicted = conll2012.read_file(predictions)
  shifted = [[[(s + 1, e + 1) for s, e in c if e + 1 < d.num_words]
              for c in d.clusters] for d in predicted]
  path = str(tmp_path / "shifted.conll")
  conll2012.write_file(path, predicted, shifted)
  result = coref_evaluate.evaluate_files(trained["gold"], path)
  assert result["conll_f1"] < 30, result


def _raw_text(doc: conll2012.ConllDocument):
  """The words joined by spaces (sentences by newlines) and each word's
  character span."""
  spans, parts, pos = [], [], 0
  for sentence in doc.sentences:
    for word in sentence:
      spans.append((pos, pos + len(word)))
      parts.append(word + " ")
      pos += len(word) + 1
    parts[-1] = parts[-1][:-1] + "\n"
  return "".join(parts), spans


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  base = str(tmp_path_factory.mktemp("serving") / "coref")
  paths = registry.export(
      registry.Run(trained["params"], checkpoint_path=trained["model_dir"]),
      {}, base, version=3)
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return {"dir": paths["model"], "loaded": tf.saved_model.load(paths["model"])}


def _resolve(exported, text):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  out = exported["loaded"].signatures["resolve"](text=tf.constant(text))
  return {k: v.numpy() for k, v in out.items()}


def test_resolve_signature_reproduces_the_training_clusters(trained,
                                                            exported):
  # Raw text of the memorised openings: the served graph tokenizes and
  # segments it itself; its character offsets map back to the words.
  keys, responses = [], []
  for doc in trained["docs"]:
    text, word_spans = _raw_text(doc)
    out = _resolve(exported, text)
    start_word = {s: i for i, (s, _) in enumerate(word_spans)}
    end_word = {e: i for i, (_, e) in enumerate(word_spans)}
    clusters = {}
    for s, e, c, t in zip(out["mention_starts"], out["mention_ends"],
                          out["cluster_ids"], out["mention_texts"]):
      assert t.decode("utf-8") == text[s:e]
      if s in start_word and e in end_word:
        clusters.setdefault(c, []).append((start_word[s], end_word[e]))
    keys.append(doc.clusters)
    responses.append(list(clusters.values()))
  result = coref_evaluate.evaluate(keys, responses)
  assert result["conll_f1"] >= 80, result


def test_resolve_on_held_out_litbank_text(exported):
  root = data_path("coref", "litbank")
  with open(os.path.join(root, "splits", "0", "test.txt"),
            encoding="utf-8") as f:
    name = f.read().split()[0]
  doc, = conll2012.read_file(os.path.join(root, "conll", f"{name}.conll"))
  text, _ = _raw_text(doc)
  out = _resolve(exported, text)  # ~2,000 words: many 128-wordpiece segments
  starts, ends = out["mention_starts"], out["mention_ends"]
  assert len(starts) > 0
  assert (0 <= starts).all() and (starts < ends).all() and (
      ends <= len(text)).all()
  assert all(t.decode("utf-8") == text[s:e]
             for s, e, t in zip(starts, ends, out["mention_texts"]))
  assert sorted(zip(starts, ends)) == list(zip(starts, ends))
  assert set(out["cluster_ids"]) == set(range(int(out["num_clusters"])))
  assert not any("\n" in text[s:e] for s, e in zip(starts, ends))
  # Empty and invalid UTF-8 input: defined outputs.
  assert _resolve(exported, "")["num_clusters"] == 0
  bad = _resolve(exported, b"\xff Jane saw Jane .")
  assert all(t.decode("utf-8") == "\ufffd Jane saw Jane ."[s:e] for s, e, t in
             zip(bad["mention_starts"], bad["mention_ends"],
                 bad["mention_texts"]))


def test_export_has_warmup_and_only_registered_tf_ops(exported):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from tensorflow.python.framework import op_def_registry  # pylint: disable=g-import-not-at-top
  import export_helpers  # pylint: disable=g-import-not-at-top
  warmup = os.path.join(exported["dir"], "assets.extra",
                        "tf_serving_warmup_requests")
  assert sum(1 for _ in tf.data.TFRecordDataset(warmup)) == 3  # 3 signatures
  # This process loads only TF and tf.text ops: every op of the graph is
  # one of them (test_pretraining_export.py's audit tells the two
  # apart in a fresh process).
  ops = sorted(export_helpers.saved_ops(exported["dir"]))
  assert [o for o in ops if op_def_registry.get(o) is None] == []
  assert not {"PyFunc", "EagerPyFunc", "PyFuncStateless"} & set(ops)
  assert any("Wordpiece" in o for o in ops), ops



def test_resolve_refuses_a_batch_in_one_line(exported):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  resolve = exported["loaded"].signatures["resolve"]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"\[resolve takes one text \(a scalar string\), "
                     r"not a batch of shape \[2\]: send one request per "
                     r"text\]"):
    resolve(text=tf.constant(["Jane saw Jane .", "She left ."]))
  assert resolve(text=tf.constant("Jane saw Jane ."))["num_clusters"] >= 0


def test_uncased_resolve_offsets_land_on_word_boundaries(uncased_vocab):
  """An uncased vocab folds 'ê' to 'e' (one byte less): every mention of
  the served graph still starts and ends on a word boundary of the original
  text, to the end of a LitBank document (an untrained model and singletons
  on, so every top span is a mention)."""
  import unicodedata  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  params = _params("", uncased_vocab, 10)
  params.task.model.encoder.bert_v2.vocab_size = 30522
  model = coreference.build_model(params.task.model)
  module = coref_module.CorefServingModule(
      model, uncased_vocab, lower_case=True, max_segment_len=128,
      predict_singletons=True)
  doc, = conll2012.read_file(data_path(
      "coref", "litbank", "conll", "1064_the_masque_of_the_red_death_brat.conll"))
  text, spans = _raw_text(doc)
  first_accent = next(i for i, c in enumerate(text) if ord(c) > 127)
  out = {k: v.numpy() for k, v in module.resolve(tf.constant(text)).items()}
  punct = lambda c: unicodedata.category(c).startswith("P")  # pylint: disable=unnecessary-lambda-assignment
  starts = {s for s, _ in spans} | {i for i in range(1, len(text)) if
                                   punct(text[i]) or punct(text[i - 1])}
  ends = {e for _, e in spans} | {i for i in range(1, len(text)) if
                                 punct(text[i]) or punct(text[i - 1])}
  late = [(s, e) for s, e in zip(out["mention_starts"], out["mention_ends"])
          if s > first_accent]
  assert len(late) > 50
  assert [(s, e, text[s:e]) for s, e in late
          if s not in starts or e not in ends] == []
  assert all(t.decode("utf-8") == text[s:e] for s, e, t in zip(
      out["mention_starts"], out["mention_ends"], out["mention_texts"]))


def test_the_task_builds_every_variable_before_the_first_step():
  """make_model calls the model once: the trainer then makes the optimizer's
  slots up front, and the train and eval steps trace once, not twice (a
  tf.function whose first trace creates variables is traced again)."""
  from official_spanbert.modeling import coref_model  # pylint: disable=g-import-not-at-top
  params = exp_factory.get_exp_config("spanbert/coref")
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size = 32, 64
  enc.num_layers, enc.num_attention_heads, enc.vocab_size = 1, 2, 200
  params.task.model.ffnn_size = 16
  model = coreference.CorefTask(params.task).make_model()
  built = len(model.variables)
  assert built > 0 and model.trainable_variables
  model(coref_model.dummy_features(), training=True)
  assert len(model.variables) == built
