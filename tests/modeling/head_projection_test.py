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

"""The pretrainer's head projections (modeling/head_projection.py) agree."""

import numpy as np
import pytest
import tensorflow as tf

from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.modeling import builder
from official_spanbert.modeling import head_projection as hp

VOCAB, SEQ, SLOTS = 50, 12, 4


def _config(projection="auto", use_sbo=True, hidden=16):
  return spanbert_configs.SpanBertPretrainerConfig(
      encoder=encoders.EncoderConfig(
          type="bert_v2", bert_v2=encoders.BertEncoderConfig(
              vocab_size=VOCAB, hidden_size=hidden, num_layers=1,
              num_attention_heads=2, intermediate_size=32,
              max_position_embeddings=16)),
      use_sbo=use_sbo, head_projection=projection)


def _inputs(seed=3):
  rng = np.random.default_rng(seed)
  pos = rng.integers(1, SEQ - 1, size=(2, SLOTS)).astype(np.int32)
  return dict(
      input_word_ids=tf.constant(rng.integers(0, VOCAB, size=(2, SEQ)),
                                 tf.int32),
      input_mask=tf.ones([2, SEQ], tf.int32),
      input_type_ids=tf.zeros([2, SEQ], tf.int32),
      masked_lm_positions=tf.constant(pos),
      sbo_left_positions=tf.constant(pos - 1),
      sbo_right_positions=tf.constant(pos + 1),
      sbo_relative_positions=tf.constant(
          rng.integers(0, 15, size=(2, SLOTS)), tf.int32))


def _logits_and_grads(model, inputs, projection):
  """Head logits by `projection` from a fixed encoder output, and gradients
  of a loss of them w.r.t. every trainable variable and that output."""
  seq = tf.constant(model(inputs, training=False)["sequence_output"])
  sbo = model.span_boundary is not None
  args = [inputs["sbo_left_positions"], inputs["sbo_right_positions"],
          inputs["sbo_relative_positions"]] if sbo else []
  labels = tf.constant(np.arange(2 * SLOTS).reshape(2, SLOTS) % VOCAB,
                       tf.int32)
  with tf.GradientTape() as tape:
    tape.watch(seq)
    out = hp.head_logits(model.masked_lm, model.span_boundary, seq,
                         inputs["masked_lm_positions"], *args,
                         projection=projection)
    out = out if sbo else (out,)
    loss = sum(tf.reduce_sum(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels, o)) * (i + 1)
               for i, o in enumerate(out))
  variables = model.trainable_variables + [seq]
  grads = [tf.convert_to_tensor(g) if g is not None else None
           for g in tape.gradient(loss, variables)]
  return [o.numpy() for o in out], grads


@pytest.mark.parametrize("use_sbo", [True, False])
def test_projections_give_the_same_logits_and_gradients(use_sbo):
  model = builder.build_pretrainer(_config(use_sbo=use_sbo))
  inputs = _inputs()
  want, want_grads = _logits_and_grads(model, inputs, hp.LAYERS)
  for projection in (hp.TRANSPOSED, hp.JOINT):
    got, grads = _logits_and_grads(model, inputs, projection)
    for a, b in zip(got, want):
      np.testing.assert_allclose(a, b, atol=1e-5, err_msg=projection)
    for g, w, v in zip(grads, want_grads,
                       model.trainable_variables + ["sequence_output"]):
      if w is None:
        assert g is None, (projection, getattr(v, "name", v))
        continue
      np.testing.assert_allclose(g, w, atol=1e-5,
                                 err_msg=f"{projection}: "
                                 f"{getattr(v, 'name', v)}")


def test_the_config_switch_reaches_the_model_with_the_same_outputs():
  inputs = _inputs(5)
  models = {p: builder.build_pretrainer(_config(p))
            for p in hp.HEAD_PROJECTIONS}
  reference = models[hp.LAYERS]
  for projection, model in models.items():
    assert model.get_config()["head_projection"] == projection
    model.set_weights(reference.get_weights())
  want = reference(inputs, training=False)
  for projection, model in models.items():
    got = model(inputs, training=False)
    for key in ("mlm_logits", "sbo_logits"):
      np.testing.assert_allclose(got[key], want[key], atol=1e-5,
                                 err_msg=f"{projection}: {key}")


def test_auto_resolves_as_measured_on_cpu_and_to_layers_on_accelerators():
  cpu = dict(on_accelerator=False)
  assert hp.resolve("auto", 768, True, **cpu) == hp.JOINT
  assert hp.resolve("auto", 512, True, **cpu) == hp.JOINT
  assert hp.resolve("auto", 128, True, **cpu) == hp.TRANSPOSED
  assert hp.resolve("auto", 768, False, **cpu) == hp.TRANSPOSED
  for hidden in (128, 768):
    for sbo in (True, False):
      assert hp.resolve("auto", hidden, sbo, on_accelerator=True) == hp.LAYERS
  # Explicit choices hold on any device; "joint" needs SBO to join.
  for on_accelerator in (False, True):
    assert hp.resolve("layers", 768, True, on_accelerator) == hp.LAYERS
    assert hp.resolve("transposed", 768, True, on_accelerator) == (
        hp.TRANSPOSED)
    assert hp.resolve("joint", 128, True, on_accelerator) == hp.JOINT
    assert hp.resolve("joint", 768, False, on_accelerator) == hp.TRANSPOSED
  assert hp.resolve("auto", 128, True, False, joint_min_width=64) == hp.JOINT


def test_unknown_projection_is_refused():
  with pytest.raises(ValueError, match="head_projection must be one of"):
    hp.resolve("einsum", 768, True, False)
  with pytest.raises(ValueError, match="head_projection must be one of"):
    builder.build_pretrainer(_config("fast"))
