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

"""The `classify` / `classify_relation` SavedModels' behaviour (unit tier).

Run directories as the trainer leaves them (params.yaml, a checkpoint with
the classifier's items) with a 1-layer, hidden-32 classifier of random
weights and the committed vocab excerpt, and the records' meta_data.json
written by hand: what is checked is the graph (truncation, input checks,
threads, TF Serving protos, warmup), not the labels' quality;
tests/test_classify_serving.py compares with the offline evaluation on
real data.
"""

import concurrent.futures
import itertools
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.serving import classify_module
from official_spanbert.serving import registry
import serving_client

TEXT = ("It is a truth universally acknowledged, that a single man in "
        "possession of a good fortune, must be in want of a wife.")
# The excerpt has no [unusedN]: two of its tokens stand in as markers.
MARKERS = {"[SUBJ-PERSON]": "[MASK]", "[OBJ-CITY]": "[UNK]"}


def _export(d, vocab, task, labels, markers=None, num_classes=None):
  records = d / "records"
  os.makedirs(records, exist_ok=True)
  meta = {"task": task, "labels": labels, "num_labels": len(labels),
          "vocab_file": vocab, "lower_case": False, "max_seq_length": 24}
  if markers:
    meta["entity_markers"] = markers
  (records / cls_data.META_FILE).write_text(json.dumps(meta))
  params = exp_factory.get_exp_config("spanbert/classification")
  params.override({"task": {"model": {
      "num_classes": num_classes or len(labels), "encoder": {"bert_v2": {
          "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
          "num_attention_heads": 2}}}}}, is_strict=True)
  params.task.train_data.input_path = str(records / cls_data.TRAIN_FILE)
  run = d / "run"
  os.makedirs(run, exist_ok=True)
  train_utils.serialize_config(params, str(run))
  model = task_factory.get_task(params.task.replace(
      train_data=None, validation_data=None)).build_model()
  # As the trainer saves: the model and its checkpoint items.
  tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
      str(run / "ckpt"))
  loaded = registry.load_run(str(run))
  paths = registry.export(loaded, {}, str(d / "export"))
  return {"model": paths["model"], "loaded": tf.saved_model.load(
      paths["model"]), "experiment": loaded.experiment, "keras": model}


@pytest.fixture(scope="module")
def pair_export(tmp_path_factory, small_vocab):
  return _export(tmp_path_factory.mktemp("rte"), small_vocab, "rte",
                 ["entailment", "not_entailment"])


@pytest.fixture(scope="module")
def relation_export(tmp_path_factory, small_vocab):
  return _export(tmp_path_factory.mktemp("tacred"), small_vocab, "tacred",
                 ["no_relation", "per:cities_of_residence", "org:members"],
                 MARKERS)


def _relation(fn, text=TEXT, s=(0, 2), o=(8, 13), types=("PERSON", "CITY")):
  n = len(text) if isinstance(text, list) else 1
  text = text if isinstance(text, list) else [text]
  return fn(text=tf.constant(text),
            subject_start=tf.constant([s[0]] * n), subject_end=tf.constant(
                [s[1]] * n), object_start=tf.constant([o[0]] * n),
            object_end=tf.constant([o[1]] * n),
            subject_type=tf.constant([types[0]] * n),
            object_type=tf.constant([types[1]] * n))


def test_pair_lengths_is_berts_truncation():
  """The closed form equals popping from the longer segment (b on ties)."""
  for a, b, limit in itertools.product(range(12), range(12), range(1, 14)):
    x, y = [0] * a, [0] * b
    cls_data._truncate_pair(x, y, limit)  # pylint: disable=protected-access
    got = classify_module.pair_lengths(tf.constant([a]), tf.constant([b]),
                                       limit)
    assert (int(got[0][0]), int(got[1][0])) == (len(x), len(y)), (a, b, limit)


def test_registry_serves_classification(pair_export):
  assert pair_export["experiment"] == "spanbert/classification"
  served = registry.served_experiments()
  assert served["spanbert/classification"] is classify_module.ClassifyModule
  assert served["spanbert/tacred"] is classify_module.ClassifyModule
  signatures = pair_export["loaded"].signatures
  assert set(signatures) == {"classify", "serving_default"}
  out = signatures["classify"](text=tf.constant([TEXT]),
                               text_pair=tf.constant(["A man has money."]))
  assert set(out) == {"probabilities", "label", "label_id"}
  assert out["probabilities"].shape == [1, 2]
  assert out["label"].numpy()[0].decode() in ("entailment", "not_entailment")


def test_served_pair_equals_the_keras_model_on_the_records_encoding(
    pair_export, small_vocab):
  """The exported weights and encoding are the run's: the model on
  classification.encode's ids gives the served probabilities."""
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  pairs = [(TEXT, "A man has money."), (TEXT * 2, "short"), ("", ""),
           ("word " * 30, "other " * 30)]
  examples = [cls_data.Example(str(i), a, b, "entailment")
              for i, (a, b) in enumerate(pairs)]
  ids, segments, truncated = cls_data.encode(
      tokenization.WordpieceTokenizer(small_vocab), examples, 24)
  assert truncated == 3
  width = max(len(x) for x in ids)
  pad = lambda rows: np.array([r + [0] * (width - len(r)) for r in rows])  # pylint: disable=unnecessary-lambda-assignment
  logits = pair_export["keras"]({
      "input_word_ids": pad(ids), "input_type_ids": pad(segments),
      "input_mask": pad([[1] * len(x) for x in ids])})
  out = pair_export["loaded"].signatures["classify"](
      text=tf.constant([a for a, _ in pairs]),
      text_pair=tf.constant([b for _, b in pairs]))
  np.testing.assert_allclose(out["probabilities"].numpy(),
                             tf.nn.softmax(logits).numpy(), atol=1e-6)


@pytest.mark.parametrize("text, pair", [
    ("", ""), (" \t\n ", "x"), (b"bad \xff\xfe bytes", b"caf\xc3\xa9 \xff"),
    ("word " * 500, "other"),
])
def test_odd_texts_get_a_defined_answer(pair_export, text, pair):
  out = pair_export["loaded"].signatures["classify"](
      text=tf.constant([text, TEXT]), text_pair=tf.constant([pair, "x"]))
  probabilities = out["probabilities"].numpy()
  np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)


def test_mismatched_batches_are_invalid_argument(pair_export,
                                                 relation_export):
  with pytest.raises(tf.errors.InvalidArgumentError, match="text_pair"):
    pair_export["loaded"].signatures["classify"](
        text=tf.constant(["a", "b"]), text_pair=tf.constant(["c"]))
  fn = relation_export["loaded"].signatures["classify_relation"]
  with pytest.raises(tf.errors.InvalidArgumentError, match="subject_start"):
    fn(text=tf.constant([TEXT, TEXT]), subject_start=tf.constant([0]),
       subject_end=tf.constant([2, 2]), object_start=tf.constant([47, 47]),
       object_end=tf.constant([52, 52]),
       subject_type=tf.constant(["PERSON"] * 2),
       object_type=tf.constant(["CITY"] * 2))
  # The module keeps serving.
  assert _relation(fn)["label"].shape == [1]


def test_relation_markers_replace_the_entities(relation_export, small_vocab):
  """TEXT[0:2] is "It" (the subject), TEXT[8:13] "truth" (the object): the
  encoding drops the entity words and puts the marker where each starts."""
  fn = relation_export["loaded"].signatures["classify_relation"]
  out = _relation(fn, s=(0, 2), o=(8, 13))
  # Same words, entity given by a span inside the word: same encoding.
  inner = _relation(fn, s=(0, 1), o=(9, 12))
  np.testing.assert_allclose(out["probabilities"], inner["probabilities"],
                             atol=1e-6)
  # The entity's own words do not matter, its type does.
  other = _relation(fn, text="He" + TEXT[2:], s=(0, 2), o=(8, 13))
  np.testing.assert_allclose(out["probabilities"], other["probabilities"],
                             atol=1e-6)
  relation = relation_export["loaded"]
  assert set(relation.signatures) == {"classify_relation", "serving_default"}


@pytest.mark.parametrize("s, o, types, match", [
    ((0, 0), (8, 13), ("PERSON", "CITY"), "subject_start/subject_end"),
    ((0, 2), (8, 500), ("PERSON", "CITY"), "object_start/object_end"),
    ((-1, 2), (8, 13), ("PERSON", "CITY"), "subject_start/subject_end"),
    ((0, 2), (8, 13), ("ANIMAL", "CITY"), "subject_type is not an entity "
     "type the model was trained with \\(PERSON\\)"),
    ((0, 2), (8, 13), ("PERSON", "PERSON"), "object_type"),
])
def test_bad_relation_inputs_name_the_input(relation_export, s, o, types,
                                            match):
  fn = relation_export["loaded"].signatures["classify_relation"]
  with pytest.raises(tf.errors.InvalidArgumentError, match=match):
    _relation(fn, s=s, o=o, types=types)


def test_span_over_whitespace_only_names_the_span(relation_export):
  fn = relation_export["loaded"].signatures["classify_relation"]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="the object span covers no word"):
    _relation(fn, text="Ann   lives here", s=(0, 3), o=(4, 5))


def test_eight_threads_get_the_single_thread_answers(pair_export):
  fn = pair_export["loaded"].signatures["classify"]
  texts = [TEXT[i * 5:] for i in range(16)]
  def one(i):
    out = fn(text=tf.constant([texts[i]]), text_pair=tf.constant([TEXT]))
    return out["probabilities"].numpy()[0], out["label"].numpy()[0]
  alone = [one(i) for i in range(16)]
  with concurrent.futures.ThreadPoolExecutor(8) as pool:
    together = list(pool.map(one, list(range(16)) * 2))
  for i, (p, label) in enumerate(together):
    np.testing.assert_allclose(p, alone[i % 16][0], atol=1e-6)
    assert label == alone[i % 16][1]


@pytest.mark.parametrize("which", ["pair_export", "relation_export"])
def test_predict_request_round_trip_and_warmup_requests(request, which):
  """What tensorflow_model_server does with a PredictRequest and the warmup
  records, with the tensorflow-serving-api protos (no server binary)."""
  export = request.getfixturevalue(which)
  if which == "pair_export":
    signature = "classify"
    inputs = {"text": [TEXT], "text_pair": ["A man has money."]}
  else:
    signature = "classify_relation"
    inputs = {"text": [TEXT], "subject_start": np.int32([0]),
              "subject_end": np.int32([2]), "object_start": np.int32([8]),
              "object_end": np.int32([13]), "subject_type": ["PERSON"],
              "object_type": ["CITY"]}
  serving_client.assert_round_trip(export["loaded"], export["model"],
                                   signature, inputs, "classifier")


def test_regression_serves_a_score(tmp_path, small_vocab):
  export = _export(tmp_path, small_vocab, "sst2", ["0", "1"], num_classes=1)
  out = export["loaded"].signatures["classify"](text=tf.constant([TEXT]))
  assert set(out) == {"score"} and out["score"].shape == [1]


def test_run_without_records_meta_is_one_line(tmp_path, small_vocab):
  params = exp_factory.get_exp_config("spanbert/classification")
  params.task.train_data.input_path = str(tmp_path / "nowhere" / "t.rec")
  with pytest.raises(ValueError) as e:
    registry.export(registry.Run(params, model_dir=str(tmp_path)), {},
                    str(tmp_path / "x"))
  assert "meta_data.json" in str(e.value) and "\n" not in str(e.value)


def test_nul_bytes_are_whitespace_in_relation_text(relation_export):
  """A NUL before the object ended the text for the word split: 'the object
  span covers no word of text'. It is a space now, offsets unchanged."""
  fn = relation_export["loaded"].signatures["classify_relation"]
  with_nul = TEXT[:7] + "\x00" + TEXT[8:]  # "It is a\x00truth ..."
  plain = TEXT[:7] + " " + TEXT[8:]
  np.testing.assert_allclose(
      _relation(fn, text=with_nul, s=(0, 2), o=(8, 13))["probabilities"],
      _relation(fn, text=plain, s=(0, 2), o=(8, 13))["probabilities"],
      atol=1e-6)
  tail = TEXT + "\x00 Elizabeth"
  out = _relation(fn, text=tail, s=(0, 2), o=(len(TEXT) + 2, len(tail)))
  assert out["probabilities"].shape[0] == 1
