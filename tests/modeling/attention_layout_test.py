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

"""modeling/attention_layout.py: the matmul attention scores give the
encoder's outputs exactly as Keras' einsum does, and serving uses them."""

import numpy as np
import tensorflow as tf
import tf_keras

from official.nlp.modeling import models
from official.nlp.modeling import networks
from official_spanbert.modeling import attention_clamp
from official_spanbert.modeling import attention_layout
from official_spanbert.serving import qa_module
from conftest import FIXTURES


def _encoder():
  tf_keras.utils.set_random_seed(3)
  return networks.BertEncoderV2(vocab_size=100, hidden_size=64, num_layers=2,
                                num_attention_heads=4, inner_dim=128,
                                max_sequence_length=48)


def _inputs():
  rng = np.random.default_rng(0)
  mask = np.ones((3, 40), np.int32)
  mask[1, 25:] = 0  # a padded row: the mask reaches the softmax
  return dict(input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)),
                                         tf.int32),
              input_mask=tf.constant(mask),
              input_type_ids=tf.constant((np.arange(40) >= 12)[None].repeat(
                  3, 0).astype(np.int32)))


def test_matmul_attention_gives_the_einsum_outputs_and_gradients():
  encoder, inputs = _encoder(), _inputs()
  with tf.GradientTape() as tape:
    before = encoder(inputs, training=False)["sequence_output"]
    loss = tf.reduce_sum(before ** 2)
  grads_before = tape.gradient(loss, encoder.trainable_variables)
  names = sorted(v.name for v in encoder.variables)
  assert attention_layout.use_matmul_attention(encoder) == 2
  assert all(type(m) is attention_layout.MatmulMultiHeadAttention  # pylint: disable=unidiomatic-typecheck
             for m in encoder.submodules
             if isinstance(m, tf_keras.layers.MultiHeadAttention))
  with tf.GradientTape() as tape:
    after = encoder(inputs, training=False)["sequence_output"]
    loss = tf.reduce_sum(after ** 2)
  grads_after = tape.gradient(loss, encoder.trainable_variables)
  np.testing.assert_allclose(after.numpy(), before.numpy(), atol=1e-5, rtol=0)
  for a, b in zip(grads_after, grads_before):
    assert (a is None) == (b is None)  # the pooler's: None on both
    if a is None:
      continue
    np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(),
                               tf.convert_to_tensor(b).numpy(),
                               atol=1e-4, rtol=1e-4)
  assert sorted(v.name for v in encoder.variables) == names
  # In a tf.function (as served) too, and a second call changes nothing.
  served = tf.function(lambda x: encoder(x, training=False)["sequence_output"])
  np.testing.assert_allclose(served(inputs).numpy(), before.numpy(),
                             atol=1e-5, rtol=0)
  assert attention_layout.use_matmul_attention(encoder) == 0


def test_the_clamped_attention_keeps_its_class():
  encoder = _encoder()
  encoder(_inputs())
  assert attention_clamp.clamp_attention_scores(encoder) == 2
  assert attention_layout.use_matmul_attention(encoder) == 0


def test_the_answer_module_serves_matmul_attention():
  model = models.BertSpanLabeler(network=_encoder())  # the QA task's model
  qa_module.QuestionAnsweringModule(
      model, f"{FIXTURES}/vocab_excerpt.txt", seq_length=32,
      query_length=8)
  kinds = {type(m) for m in model.submodules
           if isinstance(m, tf_keras.layers.MultiHeadAttention)}
  assert kinds == {attention_layout.MatmulMultiHeadAttention}
