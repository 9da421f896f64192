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

"""serving/frozen_layer_norm.py: a frozen Keras LayerNormalization, fused
with its own epsilon, computes what the Keras layer does. (Left to
TensorFlow 2.20's remapper, the same frozen graph ran with epsilon 0.001: a
difference of ~5e-4 at epsilon 1e-12 on these values.) The int8 exports'
graphs: quantization_test.py."""

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official_spanbert.serving import frozen_layer_norm
import property_harness  # noqa: F401  (the Hypothesis profiles)


def _frozen(layer, width: int, extra_output: bool = False):
  """(GraphDef, input, output names) of `layer` on [batch, seq, width], its
  weights constants (as Intel Neural Compressor freezes a model);
  `extra_output`: the moments' mean is an output too."""
  from tensorflow.python.framework import convert_to_constants  # pylint: disable=g-import-not-at-top

  def call(x):
    y = layer(x)
    if extra_output:
      mean = tf.compat.v1.get_default_graph().get_tensor_by_name(
          layer.name + "/moments/mean:0")
      return y, tf.identity(mean, name="mean_out")
    return y

  fn = tf.function(call, autograph=False).get_concrete_function(
      tf.TensorSpec([None, None, width], tf.float32, name="x"))
  frozen = convert_to_constants.convert_variables_to_constants_v2(fn)
  graph_def = frozen.graph.as_graph_def()
  outputs = [t.name for t in frozen.outputs]
  return graph_def, "x:0", outputs


def _run(graph_def, feed, outputs, x):
  wrapped = tf.compat.v1.wrap_function(
      lambda: tf.compat.v1.import_graph_def(graph_def, name=""), [])
  fn = wrapped.prune(wrapped.graph.get_tensor_by_name(feed),
                     [wrapped.graph.get_tensor_by_name(n) for n in outputs])
  return [t.numpy() for t in fn(tf.constant(x))]


def _layer(epsilon: float, width: int, seed: int):
  rng = np.random.default_rng(seed)
  layer = tf_keras.layers.LayerNormalization(epsilon=epsilon, axis=-1)
  layer.build([None, None, width])
  layer.gamma.assign(rng.normal(size=width).astype(np.float32))
  layer.beta.assign(rng.normal(size=width).astype(np.float32))
  return layer


# tf_keras computes an epsilon of 1.001e-5 or more by FusedBatchNormV3
# instead (below): the moments form is for the smaller ones, as BERT's 1e-12.
@given(epsilon=st.sampled_from([1e-12, 1e-9, 1e-6, 1e-5]),
       width=st.integers(2, 64), rows=st.integers(1, 9),
       scale=st.floats(0.01, 20.0), seed=st.integers(0, 99))
def test_a_frozen_layer_norm_computes_what_keras_does(epsilon, width, rows,
                                                      scale, seed):
  layer = _layer(epsilon, width, seed)
  graph_def, feed, outputs = _frozen(layer, width)
  fused, counts = frozen_layer_norm.fuse(graph_def, outputs)
  assert counts == {"moments": 1, "epsilon": 0}
  node, = [n for n in fused.node if n.op == frozen_layer_norm.FUSED_OP]
  assert np.isclose(node.attr["epsilon"].f, epsilon, rtol=1e-6)
  assert not {"Mean", "Rsqrt", "SquaredDifference"} & {
      n.op for n in fused.node}
  x = (np.random.default_rng(seed + 1).normal(size=(2, rows, width)) *
       scale).astype(np.float32)
  want = layer(x).numpy()
  got, = _run(fused, feed, outputs, x)
  np.testing.assert_allclose(got, want, rtol=1e-4,
                             atol=1e-5 * float(np.abs(want).max()))


def test_a_layer_norm_whose_moments_are_read_elsewhere_stays():
  layer = _layer(1e-12, 8, 0)
  graph_def, feed, outputs = _frozen(layer, 8, extra_output=True)
  fused, counts = frozen_layer_norm.fuse(graph_def, outputs)
  assert not counts["moments"]
  assert [n.op for n in fused.node] == [n.op for n in graph_def.node]
  x = np.random.default_rng(1).normal(size=(2, 3, 8)).astype(np.float32)
  got = _run(fused, feed, outputs, x)
  np.testing.assert_allclose(got[1], x.mean(-1, keepdims=True), rtol=1e-5,
                             atol=1e-6)


def test_a_protected_node_inside_the_pattern_keeps_it():
  layer = _layer(1e-12, 8, 0)
  graph_def, _, outputs = _frozen(layer, 8)
  rsqrt = [n.name for n in graph_def.node if n.op == "Rsqrt"]
  fused, counts = frozen_layer_norm.fuse(graph_def, outputs + rsqrt)
  assert not counts["moments"] and len(fused.node) == len(graph_def.node)


def test_keras_fused_form_is_left_as_it_is():
  layer = _layer(1e-3, 8, 0)
  graph_def, feed, outputs = _frozen(layer, 8)
  fused, counts = frozen_layer_norm.fuse(graph_def, outputs)
  assert not counts["moments"] and len(fused.node) == len(graph_def.node)
  x = np.random.default_rng(1).normal(size=(2, 3, 8)).astype(np.float32)
  got, = _run(fused, feed, outputs, x)
  np.testing.assert_allclose(got, layer(x).numpy(), rtol=1e-4, atol=1e-5)


def test_a_layer_norm_fused_without_its_epsilon_gets_the_models():
  """As the remapper leaves one: `_MklLayerNorm` with the default 0.001."""
  layer = _layer(1e-12, 8, 0)
  graph_def, feed, outputs = _frozen(layer, 8)
  fused, _ = frozen_layer_norm.fuse(graph_def, outputs)
  node, = [n for n in fused.node if n.op == frozen_layer_norm.FUSED_OP]
  del node.attr["epsilon"]  # the op's default 0.001
  x = np.random.default_rng(1).normal(size=(2, 3, 8)).astype(np.float32)
  want = layer(x).numpy()
  wrong, = _run(fused, feed, outputs, x)
  assert np.abs(wrong - want).max() > 1e-4  # what epsilon 0.001 gives
  assert frozen_layer_norm.keras_epsilon(layer) == 1e-12
  again, counts = frozen_layer_norm.fuse(fused, outputs, 1e-12)
  assert counts == {"moments": 0, "epsilon": 1}
  got, = _run(again, feed, outputs, x)
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match="without its epsilon"):
    frozen_layer_norm.fuse(fused, outputs)
