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

"""serving/int8_epilogues.py: the fused graph computes what the quantizer's
graph did. The graphs here are built as Intel Neural Compressor leaves a
projection (QuantizeV2 MIN_FIRST, an int8 MatMul whose qint32 bias holds only
the zero-point correction, then the Reshape and the projection's own bias
that modeling/matmul_projections.py adds; activations.gelu_by_erf; a cast to
bfloat16 after a Reshape); the whole int8 exports are in quantization_test.py.
"""

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.modeling import activations
from official_spanbert.serving import int8_epilogues
import property_harness  # noqa: F401  (the Hypothesis profiles)

ROWS = 5  # tokens a sequence: the Reshape after the MatMul makes [-1, 5, n]


def _graph(k: int, n: int, x_min: float, x_max: float, seed: int,
           gelu: str = "erf", to_bf16: bool = True, bias: str = "constant"):
  """(GraphDef, feeds, outputs, unit): x [-1, k] -> int8 projection to n
  columns (-> bias: "constant", "placeholder" or "none") (-> GELU: "erf"
  as activations.gelu_by_erf, "erfc" as tf.nn.gelu, "tanh" as its
  approximation, or "none") (-> Reshape
  -> Cast bfloat16) (and the Shape);
  beside it, a bfloat16 MatMul -> Cast -> BiasAdd(0) -> Reshape ->
  AddV2(bias).
  `unit`: one step of the int8 accumulator in output units (INC rounds its
  zero-point correction to it; the fused kernel computes it exactly)."""
  rng = np.random.default_rng(seed)
  w = rng.normal(size=(k, n)).astype(np.float32) * 0.1
  w_max = float(np.abs(w).max())
  wq = np.clip(np.round(w / w_max * 127), -127, 127).astype(np.int8)
  # INC's qint32 bias: the MIN_FIRST zero point's correction only.
  q_min = 255 * x_min / (x_max - x_min)
  correction = np.round(wq.astype(np.int64).sum(0) * q_min).astype(np.int32)
  graph = tf.Graph()
  with graph.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [None, k], name="x")
    q = tf.raw_ops.QuantizeV2(input=x, min_range=x_min, max_range=x_max,
                              T=tf.quint8, mode="MIN_FIRST",
                              round_mode="HALF_AWAY_FROM_ZERO")
    y = tf.raw_ops.QuantizedMatMulWithBiasAndDequantize(
        a=q.output, b=tf.constant(wq, tf.qint8),
        bias=tf.constant(correction, tf.qint32), min_a=q.output_min,
        max_a=q.output_max, min_b=-w_max, max_b=w_max,
        min_freezed_output=-1.0, max_freezed_output=1.0,
        Toutput=tf.float32, input_quant_mode="MIN_FIRST")
    y = tf.reshape(y, [-1, ROWS, n])
    feeds = ["x:0"]
    if bias == "constant":
      y += tf.constant(rng.normal(size=n).astype(np.float32))
    elif bias == "placeholder":
      b = tf.compat.v1.placeholder(tf.float32, [n])
      feeds.append(b.name)
      y += b
    if gelu == "erf":
      y = activations.gelu_by_erf(y)
    elif gelu == "erfc":
      y = tf.nn.gelu(y, approximate=False)
    elif gelu == "tanh":
      y = tf.nn.gelu(y, approximate=True)
    tf.identity(tf.shape(y), name="y_shape")
    if to_bf16:
      y = tf.cast(tf.reshape(y, [-1, n]), tf.bfloat16)
    tf.identity(y, name="out")
    # The feed-forward output as INC leaves it: a bfloat16 MatMul between
    # casts, its zero BiasAdd, the projection's bias after the Reshape.
    v = tf.constant(rng.normal(size=(k, 3)).astype(np.float32), tf.bfloat16)
    z = tf.cast(tf.matmul(tf.cast(x, tf.bfloat16), v), tf.float32)
    z = tf.nn.bias_add(z, tf.zeros([3]))
    tf.identity(tf.reshape(z, [-1, ROWS, 3]) + tf.constant([1., 2., 3.]),
                name="float_out")
  unit = (x_max - x_min) / 255 * w_max / 127
  return (graph.as_graph_def(), feeds, ["out:0", "y_shape:0", "float_out:0"],
          unit)


def _run(graph_def, feeds, outputs, values):
  wrapped = tf.compat.v1.wrap_function(
      lambda: tf.compat.v1.import_graph_def(graph_def, name=""), [])
  fn = wrapped.prune([wrapped.graph.get_tensor_by_name(n) for n in feeds],
                     [wrapped.graph.get_tensor_by_name(n) for n in outputs])
  return [t.numpy().astype(np.float64)
          for t in fn(*[tf.constant(v) for v in values])]


def _ops(graph_def):
  return [n.op for n in graph_def.node]


def test_bias_gelu_and_cast_move_into_the_int8_matmul():
  graph_def, feeds, outputs, _ = _graph(16, 24, -2.5, 3.0, seed=0)
  fused, counts = int8_epilogues.fuse(graph_def, outputs)
  assert counts == {"BiasAdd": 1, "GeluExact": 1, "bfloat16": 1,
                    "float_bias": 1, "bfloat16_bias": 1, "clip": 0}
  ops = _ops(fused)
  assert ops.count(int8_epilogues.FUSED_OP) == 1
  assert int8_epilogues.INC_OP not in ops
  assert "Erf" not in ops
  # Left: the float side's two casts, the bias now between MatMul and cast.
  assert ops.count("Cast") == 2, ops
  # The bias add and GELU's 5 ops, and the float side's bias add: gone.
  computed = lambda ops: [op for op in ops if op != "Const"]  # pylint: disable=unnecessary-lambda-assignment
  assert len(computed(ops)) == len(computed(_ops(graph_def))) - 7
  x = np.random.default_rng(1).uniform(-2.5, 3.0, (2 * ROWS, 16))
  before = _run(graph_def, feeds, outputs, [x.astype(np.float32)])
  after = _run(fused, feeds, outputs, [x.astype(np.float32)])
  # bfloat16 keeps 8 bits: the two may round one value apart.
  np.testing.assert_allclose(after[0], before[0], rtol=2 ** -7, atol=1e-6)
  np.testing.assert_array_equal(after[1], before[1])
  # The float side: its bias added before bfloat16's rounding, not after.
  np.testing.assert_allclose(after[2], before[2], rtol=2 ** -7, atol=2e-2)


@given(k=st.integers(1, 40), n=st.integers(1, 40),
       x_min=st.floats(-8.0, -0.05), x_max=st.floats(0.05, 8.0),
       gelu=st.sampled_from(["erf", "erfc", "tanh", "none"]),
       to_bf16=st.booleans(),
       bias=st.sampled_from(["constant", "none"]), seed=st.integers(0, 99),
       batch=st.integers(1, 3))
def test_fused_graphs_compute_what_the_quantizers_did(k, n, x_min, x_max,
                                                      gelu, to_bf16, bias,
                                                      seed, batch):
  graph_def, feeds, outputs, unit = _graph(k, n, x_min, x_max, seed, gelu,
                                           to_bf16, bias)
  fused, counts = int8_epilogues.fuse(graph_def, outputs)
  assert counts.get("BiasAdd", 0) == int(bias == "constant")
  assert counts.get("GeluExact", 0) == int(gelu in ("erf", "erfc"))
  assert counts.get("GeluApproximate", 0) == int(gelu == "tanh")
  assert counts.get("bfloat16", 0) == int(to_bf16)
  # Fused wherever there was something to fuse.
  assert (int8_epilogues.INC_OP in _ops(fused)) == (
      bias == "none" and gelu == "none" and not to_bf16)
  assert not {"Erf", "Erfc", "Tanh"} & set(_ops(fused))
  x = np.random.default_rng(seed).uniform(x_min, x_max, (batch * ROWS, k))
  before = _run(graph_def, feeds, outputs, [x.astype(np.float32)])
  after = _run(fused, feeds, outputs, [x.astype(np.float32)])
  # Half an accumulator step (the correction's rounding) and float32's
  # rounding; bfloat16 keeps 8 bits (the two may round a value apart).
  atol = 0.5 * unit + 1e-6 * max(1.0, float(np.abs(before[0]).max()))
  tolerance = dict(rtol=2 ** -7 if to_bf16 else 1e-5, atol=atol)
  np.testing.assert_allclose(after[0], before[0], **tolerance)
  np.testing.assert_array_equal(after[1], before[1])
  assert counts["float_bias"] == counts["bfloat16_bias"] == 1
  np.testing.assert_allclose(after[2], before[2], rtol=2 ** -7,
                             atol=2 ** -8 * max(1.0, np.abs(before[2]).max()))


def test_protected_outputs_and_other_shapes_are_left_alone():
  graph_def, feeds, outputs, _ = _graph(8, 6, -1.0, 1.0, seed=2,
                                        to_bf16=False)
  # The GELU's output is a graph output: nothing of that chain may go.
  gelu_out = [n.name for n in graph_def.node if n.op == "Mul"][-1]
  fused, counts = int8_epilogues.fuse(graph_def, outputs + [gelu_out])
  assert counts.get("BiasAdd", 0) == 0 and counts["float_bias"] == 1
  assert int8_epilogues.INC_OP in _ops(fused)
  # A bias that is not a constant stays an op of its own.
  graph_def, feeds, outputs, _ = _graph(8, 6, -1.0, 1.0, seed=2,
                                        bias="placeholder")
  fused, counts = int8_epilogues.fuse(graph_def, outputs)
  assert counts.get("BiasAdd", 0) == 0
  assert _ops(fused).count("Erf") == 1


def _clipped(clip: float, q_max: float):
  """x -> Minimum(x, clip) -> QuantizeV2 [-0.5, q_max] MIN_FIRST ->
  Dequantize: the input side of a split feed-forward output
  (modeling/ffn_outliers.py) as the quantizer leaves it."""
  graph = tf.Graph()
  with graph.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [None, 16], name="x")
    q = tf.raw_ops.QuantizeV2(input=tf.minimum(x, clip), min_range=-0.5,
                              max_range=q_max, T=tf.quint8, mode="MIN_FIRST",
                              round_mode="HALF_AWAY_FROM_ZERO")
    tf.raw_ops.Dequantize(input=q.output, min_range=q.output_min,
                          max_range=q.output_max, mode="MIN_FIRST",
                          name="y")
  return graph.as_graph_def()


@given(st.floats(0.5, 20.0), st.floats(0.0, 1.0),
       st.integers(0, 2**31 - 1))
def test_a_clip_the_quantizer_saturates_at_goes(clip, below, seed):
  q_max = clip * (1.0 - 0.5 * below)  # at or below the clip
  graph_def = _clipped(clip, q_max)
  fused, counts = int8_epilogues.fuse(graph_def, ["y"])
  assert counts["clip"] == 1 and "Minimum" not in _ops(fused)
  x = np.random.default_rng(seed).uniform(-1.0, 3.0 * clip, (4, 16))
  x = x.astype(np.float32)
  np.testing.assert_array_equal(_run(fused, ["x:0"], ["y:0"], [x])[0],
                                _run(graph_def, ["x:0"], ["y:0"], [x])[0])


def test_a_clip_below_the_quantizers_range_stays():
  fused, counts = int8_epilogues.fuse(_clipped(2.0, 3.0), ["y"])
  assert counts["clip"] == 0 and "Minimum" in _ops(fused)

def test_op_counts_of_fused_and_unfused_int8_matmuls():
  assert int8_epilogues.int8_matmuls(
      {int8_epilogues.INC_OP: 2, int8_epilogues.FUSED_OP: 3, "MatMul": 1}) == 5
  assert int8_epilogues.int8_matmuls({"MatMul": 4}) == 0


if __name__ == "__main__":
  raise SystemExit(pytest.main([__file__]))
