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

"""LayerNorms of a frozen graph fused with their own epsilon.

In a graph whose weights are constants (the int8 exports: Intel Neural
Compressor freezes the model), TensorFlow 2.20's grappler remapper fuses
Keras' LayerNormalization (the moments form: Mean, SquaredDifference, Rsqrt,
...) into oneDNN's `_MklLayerNorm` without setting its `epsilon`, which then
keeps the op's default 0.001. Model Garden's encoders use 1e-12: every
LayerNorm of an int8 export normalized by sqrt(var + 0.001), which moved
the first CoLA model's logits half as much as int8 itself did
(benchmarks/RESULTS.md, "Only the blocks in int8, and the LayerNorms'
epsilon").
Graphs with variables (the float32 and bfloat16 exports) are not fused.

`fuse(graph_def)` writes each such LayerNorm as `_MklLayerNorm` itself,
with the epsilon of its own `variance + epsilon`: the remapper leaves it so,
and the op's kernel ships in TensorFlow's x86 builds, like the int8 ops.
LayerNorms that reach it fused already (the remapper that Intel Neural
Compressor runs before quantizing did it on some graphs) get the model's
epsilon.

Example:
  graph_def, counts = frozen_layer_norm.fuse(
      graph_def, ["Identity"], frozen_layer_norm.keras_epsilon(model))
  counts  # {"moments": 13, "epsilon": 0}: a 6-layer BERT's 13 LayerNorms
"""

from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
import tensorflow as tf
import tf_keras

from official_spanbert.serving import int8_epilogues

FUSED_OP = "_MklLayerNorm"


def _inputs(node) -> List[str]:
  return [int8_epilogues.input_name(i) for i in node.input]


def _pair(graph, node, op: str):
  """(the input that is an `op` node, the other input's name) of a binary
  `node`, the `op` one tried in either place; or (None, None)."""
  if node is None or len(node.input) != 2:
    return None, None
  a, b = _inputs(node)
  for this, other in ((a, b), (b, a)):
    found = graph.nodes.get(this)
    if found is not None and found.op == op:
      return found, other
  return None, None


def _last_axis(graph, node, rank: Optional[int]) -> bool:
  """Whether a Mean node reduces the last axis only (-1, or rank - 1 of an
  input of that static rank), keeping it."""
  axes = graph.value(node.input[1])
  if not node.attr["keep_dims"].b or axes is None or np.size(axes) != 1:
    return False
  axis = int(np.ravel(axes)[0])
  return axis == -1 or (rank is not None and axis == rank - 1)


def _vector(graph, tensor: str) -> bool:
  """Whether `tensor` is a constant vector (through Identity and Cast)."""
  node = graph.nodes.get(int8_epilogues.input_name(tensor))
  while node is not None and node.op in ("Identity", "Cast"):
    node = graph.nodes.get(_inputs(node)[0])
  value = graph.value(node.name) if node is not None else None
  return value is not None and value.ndim == 1


def _layer_norm(graph, out, rank_of) -> Optional[
    Tuple[str, str, str, float, List[str]]]:
  """(x, gamma, beta, epsilon, the nodes it replaces) if `out` (an AddV2)
  ends Keras' LayerNormalization over the last axis (`rank_of(tensor)`:
  its static rank, or None), else None:
    mean = Mean(x); variance = Mean(SquaredDifference(x, mean))
    mul = Rsqrt(variance + epsilon) * gamma
    out = x * mul + (beta - mean * mul)
  """
  mul_1, sub_name = _pair(graph, out, "Mul")
  sub = graph.nodes.get(sub_name or "")
  if mul_1 is None or sub is None or sub.op != "Sub":
    return None
  beta, mul_2_name = _inputs(sub)
  mul_2 = graph.nodes.get(mul_2_name)
  if mul_2 is None or mul_2.op != "Mul":
    return None
  mul, mean_name = _pair(graph, mul_2, "Mul")
  mean = graph.nodes.get(mean_name or "")
  if mul is None or mean is None or mean.op != "Mean":
    return None
  rsqrt, gamma = _pair(graph, mul, "Rsqrt")
  if rsqrt is None:
    return None
  add = graph.nodes.get(_inputs(rsqrt)[0])
  variance, epsilon_name = _pair(graph, add, "Mean")
  if add is None or add.op != "AddV2" or variance is None:
    return None
  epsilon = graph.value(epsilon_name)
  squared = graph.nodes.get(_inputs(variance)[0])
  if (epsilon is None or np.size(epsilon) != 1 or squared is None or
      squared.op != "SquaredDifference"):
    return None
  x = _inputs(mean)[0]
  # SquaredDifference(x, mean), through Keras' StopGradient if still there.
  passed, centre = [], graph.nodes.get(_inputs(squared)[1])
  while centre is not None and centre.op in ("StopGradient", "Identity"):
    passed.append(centre)
    centre = graph.nodes.get(_inputs(centre)[0])
  other_x = _inputs(mul_1)
  if (_inputs(squared)[0] != x or centre is not mean or
      x not in other_x or mul.name not in other_x or
      not (_last_axis(graph, mean, rank_of(x)) and
           _last_axis(graph, variance, rank_of(x))) or
      not (_vector(graph, gamma) and _vector(graph, beta))):
    return None
  inner = [mean, squared, variance, add, rsqrt, mul, mul_1, mul_2, sub,
           *passed]
  names = {n.name for n in inner} | {out.name}
  # Nothing outside the pattern may read what it drops.
  for n in inner:
    if any(c.name not in names for c in graph.consumers[n.name]):
      return None
  return x, gamma, beta, float(np.ravel(epsilon)[0]), [n.name for n in inner]


class _Ranks:
  """Static ranks of a GraphDef's tensors (the graph imported once, when
  first asked)."""

  def __init__(self, graph_def):
    self._graph_def, self._graph = graph_def, None

  def __call__(self, tensor: str) -> Optional[int]:
    if self._graph is None:
      self._graph = tf.Graph()
      with self._graph.as_default():
        tf.compat.v1.import_graph_def(self._graph_def, name="")
    name = tensor if ":" in tensor else tensor + ":0"
    return self._graph.get_tensor_by_name(name).shape.rank


def keras_epsilon(model) -> Optional[float]:
  """The epsilon of `model`'s tf_keras LayerNormalization layers if they
  share one (Model Garden's encoders: 1e-12), else None."""
  values = {float(m.epsilon) for m in (model, *model.submodules)
            if isinstance(m, tf_keras.layers.LayerNormalization)}
  return values.pop() if len(values) == 1 else None


def fuse(graph_def, protected: Iterable[str] = (),
         epsilon: Optional[float] = None) -> Tuple[object, Dict[str, int]]:
  """A copy of `graph_def` with every LayerNorm of Keras' moments form over
  the last axis (gamma and beta constant vectors) written as one
  `_MklLayerNorm` with its own epsilon, and the `_MklLayerNorm`s already
  there (fused by the remapper that Intel Neural Compressor runs, or by its
  own pass over Keras' FusedBatchNormV3 form: neither keeps the epsilon)
  given `epsilon`, the model's (keras_epsilon); nodes named in `protected`
  (the outputs) are kept.

  Returns:
    (graph_def, {"moments": LayerNorms fused here, "epsilon": fused ones
    given `epsilon`}).

  Raises:
    ValueError: a fused LayerNorm is there and `epsilon` is None.
  """
  out = tf.compat.v1.GraphDef()
  out.CopyFrom(graph_def)
  graph = int8_epilogues.Graph(out)
  keep = {int8_epilogues.input_name(p) for p in protected}
  drop, counts = set(), {"moments": 0, "epsilon": 0}
  ranks = _Ranks(graph_def)
  for node in list(out.node):
    if node.op == FUSED_OP:
      if epsilon is None:
        raise ValueError(
            f"{node.name}: a LayerNorm fused without its epsilon (TensorFlow's "
            "default 0.001 would stand), and the model's LayerNorms share no "
            "one epsilon to give it: keep the model's LayerNorms to one "
            "epsilon, or export in float32 or bfloat16")
      node.attr["epsilon"].f = epsilon
      counts["epsilon"] += 1
      continue
    if node.op != "AddV2" or node.name in drop:
      continue
    found = _layer_norm(graph, node, ranks)
    if found is None or keep & set(found[4]):
      continue
    x, gamma, beta, own_epsilon, replaced = found
    dtype = node.attr["T"].type
    node.op = FUSED_OP
    del node.input[:]
    node.input.extend([x, gamma, beta])
    node.attr.clear()
    node.attr["T"].type = dtype
    node.attr["epsilon"].f = own_epsilon
    drop.update(replaced)
    counts["moments"] += 1
  kept = [n for n in out.node if n.name not in drop]
  del out.node[:]
  out.node.extend(kept)
  return out, counts
