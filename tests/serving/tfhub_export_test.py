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

"""Tests of the TF Hub export (tools/export_tfhub.py) used from Keras."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_hub as hub
import tf_keras

from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification
from official_spanbert.serving import serving_module
from conftest import REPO, TOOLS
from conftest import data_path
import export_helpers

SEQ = export_helpers.SEQ
# The tiny model of export_helpers: hidden 32, one layer.
SIZE = {"hidden_size": 32, "intermediate_size": 64, "num_layers": 1}


@pytest.fixture(scope="module")
def exported(tmp_path_factory, cased_vocab):
  """The tool's Hub export and the TF Serving export of one checkpoint
  (export_helpers.shared_export's, which other files load too)."""
  shared = export_helpers.shared_export(tmp_path_factory, cased_vocab)
  d = tmp_path_factory.mktemp("hub")
  override = ",".join(f"task.model.encoder.bert_v2.{k}={v}"
                      for k, v in SIZE.items())
  tool = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "export_tfhub.py"),
       "--config_file=" + os.path.join(REPO, "configs/models/tiny.yaml"),
       "--params_override=" + override, "--checkpoint_path=" + shared["ckpt"],
       "--vocab_file=" + cased_vocab, "--export_dir=" + str(d / "hub"),
       f"--seq_length={SEQ}"],
      capture_output=True, text=True, timeout=600, check=False)
  assert tool.returncode == 0, tool.stderr[-3000:]
  assert "exported the TF Hub encoder to" in tool.stdout
  rte = classification.read_tsv(data_path("glue", "RTE", "train.tsv"), "rte")
  return {"encoder": str(d / "hub" / "encoder"),
          "preprocessor": str(d / "hub" / "preprocessor"),
          "serving": tf.saved_model.load(shared["model"]),
          "serving_dir": shared["model"], "rte": rte, "dir": d}


def _pairs(examples):
  return (tf.constant([e.text_a for e in examples]),
          tf.constant([e.text_b for e in examples]))


def test_encoder_and_preprocessor_match_tf_serving(exported):
  encoder = hub.load(exported["encoder"])
  pre = hub.load(exported["preprocessor"])
  serving = exported["serving"]
  first, second = _pairs(exported["rte"][:6])

  inputs = pre.bert_pack_inputs([pre.tokenize(first), pre.tokenize(second)])
  expected = serving.signatures["encode_pair"](text=first, text_pair=second)
  for key in inputs:
    np.testing.assert_array_equal(inputs[key], expected[key])
  out = encoder(inputs, training=False)
  by_ids = serving.signatures["encode_ids"](**inputs)
  for key in ("sequence_output", "pooled_output"):
    np.testing.assert_allclose(out[key], expected[key], atol=1e-5)
    np.testing.assert_allclose(out[key], by_ids[key], atol=1e-5)
  assert out["default"] is not None and len(out["encoder_outputs"]) == 1
  np.testing.assert_allclose(out["encoder_outputs"][-1],
                             out["sequence_output"], atol=1e-6)

  # The default call: one segment at the export's seq_length.
  single = pre(first)
  expected = serving.signatures["serving_default"](text=first)
  np.testing.assert_array_equal(single["input_word_ids"],
                                expected["input_word_ids"])
  np.testing.assert_allclose(encoder(single)["pooled_output"],
                             expected["pooled_output"], atol=1e-5)


def test_preprocessor_api(exported):
  pre = hub.load(exported["preprocessor"])
  tokens = pre.tokenize(tf.constant(["unaffable [MASK] x.", ""]))
  # [batch, (words), (wordpieces)]: "unaffable" is one word of 4 pieces.
  assert tokens.dtype == tf.int32 and tokens.shape.rank == 3
  assert tokens.row_lengths().numpy().tolist() == [4, 0]
  assert tokens[0].row_lengths().numpy().tolist() == [4, 1, 1, 1]
  special = {k: int(v) for k, v in pre.tokenize.get_special_tokens_dict()
             .items()}
  assert special == {"vocab_size": 28996, "start_of_sequence_id": 101,
                     "end_of_segment_id": 102, "padding_id": 0,
                     "mask_id": 103}
  assert tokens[0, 1, 0] == special["mask_id"]
  flat = tokens.merge_dims(1, 2)  # ragged rank 1 packs the same
  for seq_length, segments in ((8, [tokens, tokens]), (16, [flat, flat])):
    packed = pre.bert_pack_inputs(segments, seq_length=seq_length)
    ids = packed["input_word_ids"].numpy()
    assert ids.shape == (2, seq_length)
    assert ids[1, :3].tolist() == [101, 102, 102]
    assert packed["input_mask"].numpy().sum(axis=1).tolist() == [seq_length,
                                                                 3]
  with pytest.raises(tf.errors.InvalidArgumentError, match="batch size"):
    pre.bert_pack_inputs([flat, flat[:1]])


def test_mlm_and_sbo_heads_fill_spans_like_tf_serving(exported):
  encoder = hub.load(exported["encoder"])
  pre = hub.load(exported["preprocessor"])
  text = tf.constant(["The cat sat on the [MASK] [MASK] near the door."])
  fills = exported["serving"].signatures["fill_spans"](text=text)
  sequence_output = encoder(pre(text))["sequence_output"]
  # The span is at 6..7: its boundaries are 5 and 8.
  positions = tf.constant([[6, 7]])
  mlm = encoder.mlm(sequence_output, positions)
  sbo = encoder.sbo(sequence_output, tf.constant([[5, 5]]),
                    tf.constant([[8, 8]]), tf.constant([[0, 1]]))
  for logits, name in ((mlm, "mlm"), (sbo, "sbo")):
    scores, ids = tf.math.top_k(tf.nn.log_softmax(logits), k=5)
    np.testing.assert_array_equal(ids, fills[f"{name}_top_k_ids"][:, :2])
    np.testing.assert_allclose(scores, fills[f"{name}_top_k_scores"][:, :2],
                               atol=1e-5)
  # The heads' weights are not the encoder's: fine-tuning leaves them alone.
  trainable = {v.name for v in encoder.trainable_variables}
  assert not any("predictions" in n or "span_boundary" in n
                 for n in trainable)


def _classifier(exported):
  """Text pair -> logits and the encoder's outputs, all from Hub layers."""
  pre = hub.load(exported["preprocessor"])
  tokenize = hub.KerasLayer(pre.tokenize, name="tokenize")
  pack = hub.KerasLayer(pre.bert_pack_inputs, name="pack",
                        arguments={"seq_length": SEQ})
  encoder = hub.KerasLayer(exported["encoder"], trainable=True, name="encoder")
  texts = [tf_keras.Input(shape=(), dtype=tf.string, name=name)
           for name in ("sentence1", "sentence2")]
  out = encoder(pack([tokenize(t) for t in texts]))
  logits = tf_keras.layers.Dense(2, name="logits")(out["pooled_output"])
  return tf_keras.Model(texts, {"logits": logits,
                                "pooled_output": out["pooled_output"],
                                "sequence_output": out["sequence_output"]})


def test_keras_classifier_fine_tunes_saves_and_reloads(exported):
  tf_keras.utils.set_random_seed(2)
  classifier = _classifier(exported)
  rte = exported["rte"]
  labels = tf.constant([classification.FORMATS["rte"].labels.index(e.label)
                        for e in rte[:16]])
  train, held_out = _pairs(rte[:16]), _pairs(rte[100:104])
  encoder = classifier.get_layer("encoder")
  assert len(encoder.trainable_weights) > 20
  assert encoder.losses == []  # the model has no regularizers
  # Before fine-tuning, the Keras model encodes like TF Serving.
  served = exported["serving"].signatures["encode_pair"](
      text=held_out[0], text_pair=held_out[1])
  np.testing.assert_allclose(classifier(held_out)["sequence_output"],
                             served["sequence_output"], atol=1e-5)

  optimizer = tf_keras.optimizers.Adam(3e-3)
  loss_fn = tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True)
  before = [v.numpy() for v in encoder.trainable_weights]

  @tf.function
  def step(texts, labels):
    with tf.GradientTape() as tape:
      loss = loss_fn(labels, classifier(texts, training=True)["logits"])
    variables = classifier.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss

  # 20 steps on one batch of 16 pairs: the loss falls from about ln 2 (under
  # 0.05 at the end in every run measured; it starts falling at step 5-10).
  losses = [float(step(train, labels)) for _ in range(20)]
  assert np.mean(losses[-3:]) < 0.5 * np.mean(losses[:3]), losses
  changed = [not np.allclose(b, v.numpy())
             for b, v in zip(before, encoder.trainable_weights)]
  assert all(changed)

  expected = classifier(held_out)
  path = str(exported["dir"] / "classifier")
  classifier.save(path, include_optimizer=False)
  reloaded = tf_keras.models.load_model(path)
  got = reloaded(held_out)
  for key in expected:
    np.testing.assert_allclose(got[key], expected[key], atol=1e-5)

  # The fine-tuned weights in the TF Serving export encode alike.
  serving = tf.saved_model.load(exported["serving_dir"])
  # Names without the encoder's own scope: its suffix (bert_encoder_v2_51)
  # counts the encoders built earlier in the process, e.g. by other tests.
  def key(variable):
    return variable.name.split("/", 1)[-1]

  tuned = {key(v): v for v in reloaded.weights}
  # The export keeps no Keras `variables` lists (saved without Keras' layer
  # traces): its encoder's variables are found by walking its objects.
  served_variables = [
      v for v in tf.train.TrackableView(
          serving.model.encoder_network).descendants()
      if isinstance(v, tf.Variable)]
  assert len(served_variables) > 20
  for v in served_variables:
    v.assign(tuned[key(v)])
  served = serving.signatures["encode_pair"](text=held_out[0],
                                             text_pair=held_out[1])
  for key in ("sequence_output", "pooled_output"):
    np.testing.assert_allclose(got[key], served[key], atol=1e-5)
