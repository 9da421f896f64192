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

"""modeling/matmul_projections.py: the encoder's EinsumDense projections as
reshape + MatMul give the same float32 outputs, and leave no Einsum op in
the projections of the traced graph; in the serving layout (bias and GELU
on the 2-D product) TensorFlow's remapper fuses them into the MatMul."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from tensorflow.core.protobuf import config_pb2
from tensorflow.core.protobuf import meta_graph_pb2
from tensorflow.python.grappler import tf_optimizer  # pylint: disable=g-direct-tensorflow-import
from tensorflow.python.util import _pywrap_util_port  # pylint: disable=g-direct-tensorflow-import

from official.nlp.modeling import networks
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import matmul_projections


@pytest.mark.parametrize("equation,plan", [
    ("abc,cde->abde", (2, 1)), ("abcd,cde->abe", (2, 2)),
    ("abc,cd->abd", (2, 1)), ("ab,bc->ac", (1, 1)),
    ("abc,dc->abd", None), ("acbe,aecd->abcd", None), ("...b,bc->...c", None)])
def test_matmul_plan(equation, plan):
  assert matmul_projections.matmul_plan(equation) == plan


def _op_counts(fn, inputs):
  graph = fn.get_concrete_function(inputs).graph
  counts = {}
  for op in graph.get_operations():
    counts[op.type] = counts.get(op.type, 0) + 1
  return counts


def test_projections_as_matmul_give_the_einsum_outputs():
  tf_keras.utils.set_random_seed(5)
  encoder = networks.BertEncoderV2(vocab_size=100, hidden_size=64,
                                   num_layers=2, num_attention_heads=4,
                                   inner_dim=128, max_sequence_length=48)
  rng = np.random.default_rng(0)
  mask = np.ones((3, 40), np.int32)
  mask[1, 25:] = 0
  inputs = dict(
      input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)), tf.int32),
      input_mask=tf.constant(mask),
      input_type_ids=tf.constant(rng.integers(0, 2, (3, 40)), tf.int32))
  before = encoder(inputs, training=False)["sequence_output"].numpy()
  attention_layout.use_matmul_attention(encoder)
  names = sorted(v.name for v in encoder.variables)
  # Per layer: query, key, value, attention output, intermediate, output.
  assert matmul_projections.use_matmul_projections(encoder) == 2 * 6
  assert sorted(v.name for v in encoder.variables) == names
  served = tf.function(lambda x: encoder(x, training=False)["sequence_output"])
  np.testing.assert_allclose(served(inputs).numpy(), before, atol=1e-5,
                             rtol=0)
  counts = _op_counts(served, inputs)
  # No Einsum left: the attention's products are batched matmuls too.
  assert counts.get("Einsum", 0) == 0, counts
  assert counts["MatMul"] >= 2 * 6, counts
  assert matmul_projections.use_matmul_projections(encoder) == 0


def _encoder(policy="float32", activation="gelu"):
  tf_keras.utils.set_random_seed(5)
  before = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy(policy)
  try:
    return networks.BertEncoderV2(vocab_size=100, hidden_size=64,
                                  num_layers=2, num_attention_heads=4,
                                  inner_dim=128, max_sequence_length=48,
                                  inner_activation=activation)
  finally:
    tf_keras.mixed_precision.set_global_policy(before)


def _inputs(padded: bool):
  rng = np.random.default_rng(0)
  mask = np.ones((3, 40), np.int32)
  if padded:
    mask[1, 25:] = 0
  return dict(
      input_word_ids=tf.constant(rng.integers(1, 100, (3, 40)), tf.int32),
      input_mask=tf.constant(mask),
      input_type_ids=tf.constant(rng.integers(0, 2, (3, 40)), tf.int32))


def _grappler_fused_ops(fn, spec):
  """[(op, fused_ops)] of the fused ops in fn's graph after TensorFlow's
  default grappler passes (as a served SavedModel runs it on this CPU)."""
  concrete = fn.get_concrete_function(spec)
  graph = concrete.graph
  meta = tf.compat.v1.train.export_meta_graph(
      graph_def=graph.as_graph_def(add_shapes=True), graph=graph)
  for node in meta.graph_def.node:
    node.device = "/device:CPU:0"  # the remapper fuses placed nodes only
  fetch = meta_graph_pb2.CollectionDef()
  fetch.node_list.value.extend(t.name for t in concrete.outputs)
  meta.collection_def["train_op"].CopyFrom(fetch)
  optimized = tf_optimizer.OptimizeGraph(config_pb2.ConfigProto(), meta)
  return [(n.op, tuple(x.decode() for x in n.attr["fused_ops"].list.s))
          for n in optimized.node if n.op == "_FusedMatMul"]


@pytest.mark.parametrize("activation", ["gelu", "spanbert>gelu_exact"])
def test_the_serving_layout_gives_the_outputs_and_fuses_bias_and_gelu(
    activation):
  from official_spanbert.modeling import activations  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  encoder = _encoder(activation=tf_keras.activations.get(activation))
  before = {p: encoder(_inputs(p), training=False)["sequence_output"].numpy()
            for p in (True, False)}
  names = sorted(v.name for v in encoder.variables)
  assert attention_layout.serving_layout(encoder) == {
      "attention": 2, "projections": 2 * 6, "feed_forward": 2}
  assert sorted(v.name for v in encoder.variables) == names
  served = tf.function(lambda x: encoder(x, training=False)["sequence_output"])
  for padded in (True, False):  # the softmax skips an all-ones mask
    np.testing.assert_allclose(served(_inputs(padded)).numpy(),
                               before[padded], atol=1e-5, rtol=0)
  spec = {k: tf.TensorSpec([None, None], tf.int32) for k in _inputs(True)}
  fused = _grappler_fused_ops(served, spec)
  # Every projection's bias is fused into its MatMul.
  assert sum("BiasAdd" in ops for _, ops in fused) == 2 * 6, fused
  if _pywrap_util_port.IsMklEnabled():  # oneDNN on (AVX-512 CPUs' default)
    gelu = [ops for _, ops in fused if any("Gelu" in o for o in ops)]
    assert len(gelu) == 2, fused  # each layer's feed-forward GELU
  assert attention_layout.serving_layout(encoder)["projections"] == 0


def test_the_serving_layout_in_bfloat16_casts_no_feed_forward():
  encoder = _encoder("mixed_bfloat16")
  reference = _encoder()
  inputs = _inputs(True)
  want = reference(inputs, training=False)["sequence_output"].numpy()
  before = tf_keras.mixed_precision.global_policy()
  # Built (at its first call) and laid out under the policy, as exported.
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    encoder(inputs, training=False)
    for a, b in zip(encoder.variables, reference.variables):
      a.assign(b)
    attention_layout.serving_layout(encoder)
  finally:
    tf_keras.mixed_precision.set_global_policy(before)
  got = tf.function(lambda x: encoder(x, training=False)["sequence_output"])(
      inputs)
  np.testing.assert_allclose(tf.cast(got, tf.float32).numpy(), want,
                             atol=0.1, rtol=0)  # bfloat16's 8 bits
  blocks = [m for m in encoder.submodules
            if hasattr(m, "_intermediate_activation_layer")]
  for block in blocks:  # the GELU runs in the projection, in bfloat16
    assert block._intermediate_activation_layer.compute_dtype == "bfloat16"  # pylint: disable=protected-access
    assert block._intermediate_dense.activation is not (  # pylint: disable=protected-access
        tf_keras.activations.linear)
