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

"""Tests of the SBO head and the SpanBERT pretrainer."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from tf_keras.src.saving.legacy import serialization

from official.nlp.modeling import networks
from official_spanbert.modeling import activations
from official_spanbert.modeling import span_boundary_head
from official_spanbert.modeling import span_bert_pretrainer


def _gelu(x):  # exact (erf) GeLU, tf_keras' default
  from scipy.special import erf  # pylint: disable=g-import-not-at-top
  return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def _layer_norm(x, gamma, beta, eps=1e-12):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _head_and_inputs(seed=0):
  rng = np.random.default_rng(seed)
  vocab, hidden, pos_dim, max_targets = 37, 16, 8, 5
  table = tf.constant(rng.normal(size=(vocab, hidden)), tf.float32)
  head = span_boundary_head.SpanBoundaryHead(
      embedding_table=table, max_targets=max_targets,
      position_embedding_size=pos_dim, activation="gelu")
  seq = rng.normal(size=(2, 9, hidden)).astype(np.float32)
  left = np.array([[0, 2, 2, 0], [3, 3, 1, 0]], np.int32)
  right = np.array([[4, 6, 6, 0], [8, 8, 5, 0]], np.int32)
  rel = np.array([[0, 0, 1, 0], [0, 3, 2, 0]], np.int32)
  head(seq, left, right, rel)
  # Non-trivial LayerNorm and bias weights.
  for w in head.weights:
    w.assign(rng.normal(size=w.shape).astype(np.float32) * 0.5)
  return head, table.numpy(), seq, left, right, rel


def test_sbo_head_equals_numpy_formula():
  head, table, seq, left, right, rel = _head_and_inputs()
  got = head(seq, left, right, rel).numpy()
  w = {v.name.split("/", 1)[1] if "/" in v.name else v.name: v.numpy()
       for v in head.weights}
  pos = head.position_embeddings.numpy()
  d1k, d1b = head.dense1.kernel.numpy(), head.dense1.bias.numpy()
  d2k, d2b = head.dense2.kernel.numpy(), head.dense2.bias.numpy()
  g1, b1 = head.layer_norm1.gamma.numpy(), head.layer_norm1.beta.numpy()
  g2, b2 = head.layer_norm2.gamma.numpy(), head.layer_norm2.beta.numpy()
  bias = head.bias.numpy()
  del w
  expect = np.zeros_like(got)
  for b in range(seq.shape[0]):
    for p in range(left.shape[1]):
      x = np.concatenate([seq[b, left[b, p]], seq[b, right[b, p]],
                          pos[rel[b, p]]])
      h = _layer_norm(_gelu(x @ d1k + d1b), g1, b1)
      h = _layer_norm(_gelu(h @ d2k + d2b), g2, b2)
      expect[b, p] = table @ h + bias
  np.testing.assert_allclose(got, expect, atol=1e-5, rtol=1e-5)


def test_sbo_head_config_round_trip():
  head, table, seq, left, right, rel = _head_and_inputs(1)
  config = head.get_config()
  assert config["max_targets"] == 5 and config["position_embedding_size"] == 8
  clone = span_boundary_head.SpanBoundaryHead.from_config(config)
  clone.tie_embedding_table(tf.constant(table))
  clone(seq, left, right, rel)
  clone.set_weights(head.get_weights())
  np.testing.assert_allclose(clone(seq, left, right, rel).numpy(),
                             head(seq, left, right, rel).numpy(), atol=1e-6)
  restored = tf_keras.layers.deserialize(
      tf_keras.layers.serialize(head),
      custom_objects={"SpanBoundaryHead":
                      span_boundary_head.SpanBoundaryHead})
  assert restored.get_config() == config


def test_one_keras_package_name_and_configs_saved_before_load():
  """Every registration is "spanbert>..." (the name params.yaml files carry
  for the exact GELU); a config saved as "SpanBert>..." before issue 49, as
  Keras' legacy SavedModel metadata records it, still deserializes."""
  assert activations.EXACT_GELU == "spanbert>gelu_exact"
  for obj in (activations.gelu_exact, span_boundary_head.SpanBoundaryHead,
              span_bert_pretrainer.SpanBertPretrainer):
    assert tf_keras.utils.get_registered_name(obj) == (
        "spanbert>" + obj.__name__)
  head = span_boundary_head.SpanBoundaryHead(max_targets=5,
                                             position_embedding_size=8)
  old = serialization.serialize_keras_object(head)
  assert old["class_name"] == "spanbert>SpanBoundaryHead"
  old["class_name"] = "SpanBert>SpanBoundaryHead"
  restored = serialization.deserialize_keras_object(old)
  assert isinstance(restored, span_boundary_head.SpanBoundaryHead)
  assert restored.get_config() == head.get_config()
  assert tf_keras.utils.get_registered_object(
      "SpanBert>SpanBertPretrainer") is span_bert_pretrainer.SpanBertPretrainer


def test_sbo_head_without_table_fails_clearly():
  head = span_boundary_head.SpanBoundaryHead()
  x = np.zeros((1, 4, 8), np.float32)
  idx = np.zeros((1, 2), np.int32)
  try:
    head(x, idx, idx, idx)
  except ValueError as e:
    assert "tie_embedding_table" in str(e)
  else:
    raise AssertionError("expected ValueError")


def _encoder(vocab=50, hidden=16):
  return networks.BertEncoderV2(vocab_size=vocab, hidden_size=hidden,
                                num_layers=1, num_attention_heads=2,
                                intermediate_size=32, max_sequence_length=16)


def test_pretrainer_outputs_and_tied_embeddings():
  model = span_bert_pretrainer.from_encoder(
      _encoder(), seq_length=12, max_predictions=3, use_next_sentence=True)
  out = model(span_bert_pretrainer.dummy_inputs(2, 12, 3))
  assert out["mlm_logits"].shape == (2, 3, 50)
  assert out["sbo_logits"].shape == (2, 3, 50)
  assert out["next_sentence"].shape == (2, 2)
  table = model.encoder_network.get_embedding_table()
  assert model.span_boundary.embedding_table is table
  assert model.masked_lm.embedding_table is table
  names = {v.name for v in model.trainable_variables}
  assert sum("word_embeddings" in n for n in names) == 1  # shared, not copied
  assert set(model.checkpoint_items) == {"encoder", "masked_lm",
                                         "span_boundary", "next_sentence"}
  plain = span_bert_pretrainer.from_encoder(_encoder(), use_sbo=False)
  assert "sbo_logits" not in plain(span_bert_pretrainer.dummy_inputs(1, 8, 2))
  assert set(plain.checkpoint_items) == {"encoder", "masked_lm"}


def test_encoder_only_checkpoint_initialises_a_new_pretrainer(tmp_path):
  a = span_bert_pretrainer.from_encoder(_encoder())
  path = tf.train.Checkpoint(encoder=a.encoder_network).save(
      str(tmp_path / "enc"))
  b = span_bert_pretrainer.from_encoder(_encoder())
  status = tf.train.Checkpoint(encoder=b.encoder_network).read(path)
  status.expect_partial().assert_existing_objects_matched()
  for va, vb in zip(a.encoder_network.weights, b.encoder_network.weights):
    np.testing.assert_array_equal(va.numpy(), vb.numpy())


@pytest.mark.parametrize("joint", [True, False])
def test_fast_projection_equals_the_heads_called_separately(monkeypatch,
                                                            joint):
  """The pretrainer's own (joint) projection: logits and gradients."""
  # Joint MLM + SBO projection from width 16 (the test's) or never.
  monkeypatch.setattr(span_bert_pretrainer, "_JOINT_PROJECTION_MIN_WIDTH",
                      16 if joint else 10**6)
  model = span_bert_pretrainer.from_encoder(
      _encoder(), seq_length=12, max_predictions=4)
  rng = np.random.default_rng(3)
  pos = rng.integers(1, 11, size=(2, 4)).astype(np.int32)
  inputs = dict(
      input_word_ids=tf.constant(rng.integers(0, 50, size=(2, 12)), tf.int32),
      input_mask=tf.ones([2, 12], tf.int32),
      input_type_ids=tf.zeros([2, 12], tf.int32),
      masked_lm_positions=tf.constant(pos),
      sbo_left_positions=tf.constant(pos - 1),
      sbo_right_positions=tf.constant(pos + 1),
      sbo_relative_positions=tf.constant(rng.integers(0, 15, size=(2, 4)),
                                         tf.int32))
  labels = tf.constant(rng.integers(0, 50, size=(2, 4)), tf.int32)

  def loss(mlm, sbo):
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits
    return tf.reduce_sum(ce(labels, mlm)) + 0.7 * tf.reduce_sum(ce(labels, sbo))

  with tf.GradientTape(persistent=True) as tape:
    out = model(inputs, training=False)
    joint = loss(out["mlm_logits"], out["sbo_logits"])
    seq = out["sequence_output"]
    mlm = model.masked_lm(seq, masked_positions=inputs["masked_lm_positions"])
    sbo = model.span_boundary(seq, inputs["sbo_left_positions"],
                              inputs["sbo_right_positions"],
                              inputs["sbo_relative_positions"])
    separate = loss(mlm, sbo)
  np.testing.assert_allclose(out["mlm_logits"], mlm, atol=1e-5)
  np.testing.assert_allclose(out["sbo_logits"], sbo, atol=1e-5)
  variables = model.trainable_variables
  for a, b, v in zip(tape.gradient(joint, variables),
                     tape.gradient(separate, variables), variables):
    if a is None:
      assert b is None, v.name
      continue
    np.testing.assert_allclose(tf.convert_to_tensor(a),
                               tf.convert_to_tensor(b), atol=1e-5,
                               err_msg=v.name)
  # Without SBO the pretrainer's MLM logits are MaskedLM's too.
  plain = span_bert_pretrainer.from_encoder(_encoder(), use_sbo=False)
  out = plain(inputs, training=False)
  np.testing.assert_allclose(
      out["mlm_logits"],
      plain.masked_lm(out["sequence_output"],
                      masked_positions=inputs["masked_lm_positions"]),
      atol=1e-5)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_joint_projection_under_mixed_precision(monkeypatch, policy):
  monkeypatch.setattr(span_bert_pretrainer, "_JOINT_PROJECTION_MIN_WIDTH", 16)
  tf_keras.mixed_precision.set_global_policy(policy)
  try:
    model = span_bert_pretrainer.from_encoder(
        _encoder(), seq_length=12, max_predictions=4)
    inputs = span_bert_pretrainer.dummy_inputs(2, 12, 4)
    with tf.GradientTape() as tape:
      out = model(inputs, training=True)
      loss = tf.reduce_sum(tf.cast(out["mlm_logits"], tf.float32) ** 2 +
                           tf.cast(out["sbo_logits"], tf.float32) ** 2)
    compute = tf_keras.mixed_precision.Policy(policy).compute_dtype
    assert out["mlm_logits"].dtype == out["sbo_logits"].dtype == compute
    grads = tape.gradient(loss, model.trainable_variables)
    table = model.encoder_network.get_embedding_table()
    by_name = {v.name: g for v, g in zip(model.trainable_variables, grads)}
    assert by_name[table.name] is not None
    assert all(np.all(np.isfinite(tf.convert_to_tensor(g)))
               for g in grads if g is not None)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
