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

"""Bias, exact GELU and bfloat16 output inside the int8 MatMuls.

Intel Neural Compressor makes each projection a
`QuantizedMatMulWithBiasAndDequantize` whose bias holds only its zero-point
correction; the projection's own bias (added after a Reshape, as
modeling/matmul_projections.py lays it out), the feed-forward's GELU and the
cast to the attention core's bfloat16 stay ops of their own, each a pass over
the whole activation. `fuse` moves them into TensorFlow's own oneDNN kernel
`_QuantizedMatMul` as post-ops (`fused_ops` BiasAdd[, GeluExact or
GeluApproximate], Dequantize; output bfloat16 where every consumer casts to
it). A projection kept float (the feed-forward output, with
quantization.FFN_OUTPUT in the config's float_ops) gets its bias
folded into the zero BiasAdd the quantizer put after it, ahead of its cast
to float32 when it computes in bfloat16: TensorFlow then fuses the bias into
that MatMul, whose weights oneDNN packs once when the server runs with
TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 (a plain MatMul packs them on every call).
The clip a split feed-forward output puts before its quantizer
(modeling/ffn_outliers.py: min(x, clip), for the calibration's sake) goes
too, where the quantizer's own range already saturates there.
The values are the same up to rounding (tests/serving/int8_epilogues_test.py);
the kernel ships in TensorFlow's x86 builds, like the int8 ops it replaces.

Example:
  graph_def, counts = int8_epilogues.fuse(graph_def)
  counts["GeluExact"]  # one per layer
"""

import collections
import math
from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
import tensorflow as tf

INC_OP = "QuantizedMatMulWithBiasAndDequantize"
FUSED_OP = "_QuantizedMatMul"
INT8_MATMULS = (INC_OP, FUSED_OP)
_BF16 = tf.bfloat16.as_datatype_enum
_F32 = tf.float32.as_datatype_enum


def int8_matmuls(op_counts: Dict[str, int]) -> int:
  """How many int8 MatMuls an op count ({op type: n}) holds, fused or not."""
  return sum(op_counts.get(op, 0) for op in INT8_MATMULS)


def input_name(tensor: str) -> str:
  """The node name of an input ("^name", "name:1" -> "name")."""
  return tensor.lstrip("^").split(":")[0]


class Graph:
  """A GraphDef's nodes by name and each node's consumers."""

  def __init__(self, graph_def):
    self.graph_def = graph_def
    self.nodes = {n.name: n for n in graph_def.node}
    self.consumers = collections.defaultdict(list)
    for n in graph_def.node:
      for i in n.input:
        self.consumers[input_name(i)].append(self.nodes[n.name])

  def sole(self, name: str, op: str):
    """The one consumer of `name` if it is an `op`, else None."""
    found = self.consumers[name]
    return found[0] if len(found) == 1 and found[0].op == op else None

  def constant(self, node, other: str) -> Tuple[Optional[str], object]:
    """(input, value) of `node`'s constant input other than `other`."""
    for i in node.input:
      value = self.value(i) if input_name(i) != other else None
      if value is not None:
        return i, value
    return None, None

  def value(self, tensor: str):
    """The value of a Const (or HostConst) node's output, else None."""
    source = self.nodes.get(input_name(tensor))
    if source is None or source.op not in ("Const", "HostConst"):
      return None
    return tf.make_ndarray(source.attr["value"].tensor)

  def add_constant(self, name: str, tensor):
    """A new Const node holding the TensorProto `tensor`."""
    node = self.graph_def.node.add()
    node.name, node.op = name, "Const"
    node.attr["dtype"].type = tensor.dtype
    node.attr["value"].tensor.CopyFrom(tensor)
    self.nodes[name] = node
    return node

  def scalar_is(self, node, other: str, value: float) -> bool:
    _, v = self.constant(node, other)
    return v is not None and np.size(v) == 1 and abs(
        float(np.ravel(v)[0]) - value) < 1e-6


def _gelu(graph: Graph, x) -> Optional[Tuple[object, List[str], str]]:
  """(output node, the nodes it replaces, oneDNN's name) if `x`'s consumers
  compute a GELU as TensorFlow writes one, else None:
    0.5 x (1 + erf(x / sqrt 2))   activations.gelu_by_erf  GeluExact
    0.5 x erfc(-x / sqrt 2)       tf.nn.gelu               GeluExact
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
                                  tf.nn.gelu(approximate=True)  GeluApproximate
  """
  users = graph.consumers[x.name]
  half = [u for u in users if u.op == "Mul" and graph.scalar_is(u, x.name,
                                                                0.5)]
  if len(half) != 1 or len(users) not in (2, 3):
    return None
  rest = sorted((u for u in users if u is not half[0]), key=lambda u: u.op)
  chain, kind = [half[0]] + rest, "GeluExact"
  ops = [u.op for u in rest]
  if ops == ["Mul"] and graph.scalar_is(rest[0], x.name, 1 / math.sqrt(2)):
    chain.append(graph.sole(rest[0].name, "Erf"))
    one_plus = chain[-1] and graph.sole(chain[-1].name, "AddV2")
    if one_plus is None or not graph.scalar_is(one_plus, chain[-1].name, 1.0):
      return None
    chain.append(one_plus)
  elif ops == ["Neg"]:
    scaled = graph.sole(rest[0].name, "Mul")
    if scaled is None or not graph.scalar_is(scaled, rest[0].name,
                                             1 / math.sqrt(2)):
      return None
    chain += [scaled, graph.sole(scaled.name, "Erfc")]
  elif ops == ["AddV2", "Pow"]:
    inner, power = rest
    cube = graph.sole(power.name, "Mul")
    if (not graph.scalar_is(power, x.name, 3.0) or cube is None or
        not graph.scalar_is(cube, power.name, 0.044715) or
        graph.sole(cube.name, "AddV2") is not inner):
      return None
    scaled = graph.sole(inner.name, "Mul")
    if scaled is None or not graph.scalar_is(scaled, inner.name,
                                             math.sqrt(2 / math.pi)):
      return None
    tanh = graph.sole(scaled.name, "Tanh")
    one_plus = tanh and graph.sole(tanh.name, "AddV2")
    if one_plus is None or not graph.scalar_is(one_plus, tanh.name, 1.0):
      return None
    chain += [cube, scaled, tanh, one_plus]
    kind = "GeluApproximate"
  else:
    return None
  out = chain[-1] and graph.sole(chain[-1].name, "Mul")
  if out is None or graph.sole(half[0].name, "Mul") is not out:
    return None
  return out, [n.name for n in chain], kind


def _bf16_users(graph: Graph, out) -> Optional[List[object]]:
  """The nodes to retype if `out` can be bfloat16: every consumer casts it
  to bfloat16 (directly, or after one Reshape) or reads its Shape."""
  retype = []
  for user in graph.consumers[out.name]:
    casts = [user]
    if user.op == "Reshape" and input_name(user.input[0]) == out.name:
      casts = graph.consumers[user.name]
      retype.append(user)
    elif user.op == "Shape":
      retype.append(user)
      continue
    if not casts or any(c.op != "Cast" or c.attr["DstT"].type != _BF16
                        for c in casts):
      return None
    retype.extend(casts)
  return retype if any(n.op == "Cast" for n in retype) else None


def _fused_node(q, bias_input: str, fused_ops: List[str], out_type: int):
  node = tf.compat.v1.NodeDef(name=q.name, op=FUSED_OP)
  # host inputs: a, b, bias, min_a, max_a, min_b, max_b (INC's 7 and 8,
  # the frozen output range, are Requantize's; Dequantize needs none).
  node.input.extend([q.input[0], q.input[1], bias_input, *q.input[3:7]])
  node.input.extend(i for i in q.input if i.startswith("^"))
  a_type, w_type = q.attr["T1"].type, q.attr["T2"].type
  node.attr["Thost_inputs"].list.type.extend([a_type, w_type] + [_F32] * 5)
  node.attr["Thost_outputs"].list.type.append(out_type)
  node.attr["Tdevice_inputs"].list.SetInParent()
  node.attr["Tdevice_outputs"].list.SetInParent()
  for key, value in (("T1", a_type), ("T2", w_type), ("Tbias", _F32),
                     ("U", _F32), ("Tout", out_type)):
    node.attr[key].type = value
  for key in ("transpose_a", "transpose_b"):
    node.attr[key].b = q.attr[key].b
  node.attr["is_weight_const"].b = True
  node.attr["is_bias_const"].b = True
  mode = q.attr["input_quant_mode"].s
  node.attr["input_quant_mode"].s = mode
  node.attr["output_quant_mode"].s = mode
  node.attr["fused_ops"].list.s.extend(op.encode() for op in fused_ops)
  node.attr["leakyrelu_alpha"].f = 0.2
  return node


def fuse(graph_def, protected: Iterable[str] = ()
         ) -> Tuple[object, Dict[str, int]]:
  """A copy of INC's int8 `graph_def` with the epilogues fused; nodes named
  in `protected` (the outputs) are kept.

  Returns:
    (graph_def, counts): counts of "BiasAdd", "GeluExact", "GeluApproximate"
    and "bfloat16" fused into int8 MatMuls, "float_bias" folded into a
    BiasAdd and, of those, "bfloat16_bias" moved before a bfloat16
    MatMul's cast; "clip": Minimums dropped before a quantizer that
    saturates at or below them.
  """
  out = tf.compat.v1.GraphDef()
  out.CopyFrom(graph_def)
  graph = Graph(out)
  keep = {input_name(p) for p in protected}
  drop, rename, counts = set(), {}, collections.Counter()
  for q in list(out.node):
    reshape = graph.sole(q.name, "Reshape") if q.op == INC_OP else None
    if reshape is None or input_name(reshape.input[0]) != q.name:
      continue
    _, weights = graph.constant(q, input_name(q.input[0]))
    if weights is None or weights.ndim != 2:
      continue
    columns = weights.shape[0 if q.attr["transpose_b"].b else 1]
    bias_add = graph.sole(reshape.name, "AddV2")
    _, bias = (graph.constant(bias_add, reshape.name) if bias_add is not None
               else (None, None))
    has_bias = (bias is not None and bias.dtype == np.float32 and
                bias.size == columns)
    if has_bias:
      last, removed = bias_add, [bias_add.name]
    else:
      # No bias left (a zero one is dropped by TensorFlow's optimizer).
      last, removed, bias = reshape, [], np.zeros([columns], np.float32)
    fused_ops = ["BiasAdd"]
    gelu = _gelu(graph, last)
    if gelu is not None:
      last, chain, kind = gelu
      removed += chain + [last.name]
      fused_ops.append(kind)
    if keep & set(removed):
      continue
    retype = _bf16_users(graph, last)
    out_type = _BF16 if retype else _F32
    if not removed and out_type == _F32:
      continue  # nothing to fuse
    # Its own constant, as a vector: INC shares equal constants between
    # nodes, and the attention's biases are [heads, head size].
    flat_bias = graph.add_constant(q.name + "/fused_bias",
                                   tf.make_tensor_proto(bias.reshape(-1)))
    q.CopyFrom(_fused_node(q, flat_bias.name, fused_ops + ["Dequantize"],
                           out_type))
    reshape.attr["T"].type = out_type
    for node in retype or ():
      node.attr["SrcT" if node.op == "Cast" else "T"].type = out_type
    drop.update(removed)
    if last is not reshape:
      rename[last.name] = reshape.name
    counts["BiasAdd"] += has_bias
    if gelu is not None:
      counts[gelu[2]] += 1
    counts["bfloat16"] += out_type == _BF16
  counts["float_bias"], counts["bfloat16_bias"] = _fold_float_biases(
      graph, drop, rename, keep)
  counts["clip"] = _drop_clips(graph, drop, rename, keep)
  return _rewired(out, drop, rename), dict(counts)


def _drop_clips(graph: Graph, drop, rename, keep) -> int:
  """Minimum(x, c) read only by QuantizeV2s whose range ends at or below
  c: x instead (values above the range saturate either way). Returns how
  many."""
  dropped = 0
  for node in list(graph.nodes.values()):
    if node.op != "Minimum" or node.name in keep:
      continue
    x = node.input[0]
    _, clip = graph.constant(node, input_name(x))
    users = graph.consumers[node.name]
    if (clip is None or np.size(clip) != 1 or ":" in x.lstrip("^") and
        not x.endswith(":0") or not users):
      continue
    ranges = [graph.value(u.input[2]) for u in users
              if u.op == "QuantizeV2" and input_name(u.input[0]) == node.name]
    top = float(np.ravel(clip)[0])
    if len(ranges) != len(users) or any(
        r is None or np.size(r) != 1 or float(np.ravel(r)[0]) > top
        for r in ranges):
      continue
    drop.add(node.name)
    rename[node.name] = rename.get(input_name(x), input_name(x))
    dropped += 1
  return dropped


def _fold_float_biases(graph: Graph, drop, rename, keep) -> Tuple[int, int]:
  """BiasAdd(x, 0) -> Reshape -> AddV2(bias): the bias into the BiasAdd.
  Returns how many, and how many of those moved before a cast."""
  folded = moved = 0
  for node in list(graph.nodes.values()):
    if node.op != "BiasAdd":
      continue
    zero_input, zero = graph.constant(node, input_name(node.input[0]))
    reshape = graph.sole(node.name, "Reshape")
    bias_add = reshape and graph.sole(reshape.name, "AddV2")
    if (zero is None or np.any(zero) or bias_add is None or
        input_name(reshape.input[0]) != node.name):
      continue
    bias_input, bias = graph.constant(bias_add, reshape.name)
    if (bias is None or bias.shape != zero.shape or bias.dtype != zero.dtype
        or bias_add.name in keep):
      continue
    node.input[list(node.input).index(zero_input)] = bias_input
    drop.add(bias_add.name)
    rename[bias_add.name] = reshape.name
    folded += 1
    moved += _bias_before_cast(graph, node, bias, rename)
  return folded, moved


def _bias_before_cast(graph: Graph, bias_add, bias: np.ndarray,
                      rename) -> bool:
  """MatMul(bfloat16) -> Cast(float32) -> BiasAdd  ==>  MatMul -> BiasAdd
  (bfloat16 bias) -> Cast: TensorFlow then fuses the MatMul and the bias
  into oneDNN's inner product, whose weights it packs once when the server
  runs with TF_ONEDNN_ASSUME_FROZEN_WEIGHTS=1 (a plain MatMul packs them on
  every call). One bfloat16 rounding either way."""
  cast = graph.nodes.get(input_name(bias_add.input[0]))
  if (cast is None or cast.op != "Cast" or cast.attr["SrcT"].type != _BF16 or
      graph.sole(cast.name, "BiasAdd") is not bias_add):
    return False
  matmul = graph.nodes.get(input_name(cast.input[0]))
  if (matmul is None or matmul.op != "MatMul" or
      matmul.attr["T"].type != _BF16 or
      graph.sole(matmul.name, "Cast") is not cast):
    return False
  constant = graph.add_constant(bias_add.name + "/bfloat16_bias",
                                tf.make_tensor_proto(bias, tf.bfloat16))
  bias_add.input[0], bias_add.input[1] = cast.input[0], constant.name
  bias_add.attr["T"].type = _BF16
  cast.input[0] = bias_add.name
  rename[bias_add.name] = cast.name
  return True


def _rewired(graph_def, drop, rename):
  """`graph_def` without `drop`, consumers of `rename`'s keys reading its
  values instead; casts that now cast to their own type are Identity."""
  out = tf.compat.v1.GraphDef()
  out.versions.CopyFrom(graph_def.versions)
  out.library.CopyFrom(graph_def.library)
  for node in graph_def.node:
    if node.name in drop:
      continue
    new = out.node.add()
    new.CopyFrom(node)
    for k, tensor in enumerate(new.input):
      if input_name(tensor) in rename and rename[input_name(tensor)] != new.name:
        control = "^" if tensor.startswith("^") else ""
        new.input[k] = control + rename[input_name(tensor)]
    if new.op == "Cast" and new.attr["SrcT"].type == new.attr["DstT"].type:
      dtype = new.attr["SrcT"].type
      new.op = "Identity"
      new.ClearField("attr")
      new.attr["T"].type = dtype
  return out
