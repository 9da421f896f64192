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

"""The feed-forward's outlier channels, computed apart from the int8 rest.

In trained BERT-class encoders one or two of the 1,536 channels of an early
layer's feed-forward activation (GELU's output) reach 13-24 on one token a
window where the others stay under ~6, and the output projection's rows for
them hold weights 20-50x the others' (all-MiniLM-L6-v2 fine-tuned on SQuAD,
layers 0-3). Made int8 whole, that projection spends its input's range and
its columns' weight scales on them (benchmarks/RESULTS.md, "The feed-forward
outputs in int8"). `find(model, batches)` names those channels from the
activations on calibration windows; `split(model, found)` makes each such
layer's output projection compute

    min(x, clip) @ W' + b + x[..., C] @ W[C]

(W': W with the rows C zeroed; `clip`: the largest value of the other
channels), so that a quantizer sees activations within `clip` and weights
without those rows, while the channels' own product stays float (an Einsum,
which the quantizer leaves alone). Float outputs equal the original's
within rounding.

Example:
  found = ffn_outliers.find(model, batches)
  ffn_outliers.split(model, found)
"""

import dataclasses
from typing import Dict, Iterable, List, Mapping, Tuple

import numpy as np
import tensorflow as tf

from official_spanbert.modeling import matmul_projections

# A channel is an outlier when its largest activation on the calibration
# windows exceeds FACTOR x the median channel's largest; at most MAX_SHARE
# of a layer's channels (the largest), so that the float part stays small.
FACTOR = 4.0
MAX_SHARE = 0.01


@dataclasses.dataclass(frozen=True)
class Outliers:
  """One block's outlier channels and the clip of the others."""
  channels: Tuple[int, ...]
  clip: float


def blocks(model: tf.Module) -> List[tf.Module]:
  """`model`'s Model Garden transformer blocks (a feed-forward activation
  layer and output projection each)."""
  return [m for m in model.submodules
          if hasattr(m, "_intermediate_activation_layer")
          and hasattr(m, "_output_dense")]


def find(model: tf.Module, batches: Iterable[Mapping[str, np.ndarray]],
         factor: float = FACTOR) -> Dict[str, Outliers]:
  """{block name: Outliers} of the blocks with outlier channels, read from
  `model`'s feed-forward activations (called eagerly, training=False) on
  `batches` (dicts of the encoder's inputs; padding positions ignored)."""
  seen: Dict[str, List[np.ndarray]] = {}
  hooked = []
  mask = {}

  def hook(block, act):
    call = act.call

    def recorded(x, *args, **kwargs):
      y = call(x, *args, **kwargs)
      flat = np.abs(np.asarray(tf.cast(y, tf.float32))).reshape(
          -1, y.shape[-1])
      seen.setdefault(block.name, []).append(flat[mask["real"]].max(0))
      return y
    act.call = recorded
    hooked.append(act)

  for block in blocks(model):
    hook(block, block._intermediate_activation_layer)  # pylint: disable=protected-access
  try:
    for batch in batches:
      mask["real"] = np.asarray(batch["input_mask"]).reshape(-1) > 0
      model({k: tf.constant(v) for k, v in batch.items()}, training=False)
  finally:
    for act in hooked:
      del act.call
  out = {}
  for name, maxima in seen.items():
    top = np.max(maxima, axis=0)
    median = float(np.median(top))
    channels = np.flatnonzero(top > factor * median) if median > 0 else []
    most = max(1, int(MAX_SHARE * top.size))
    channels = np.sort(sorted(channels, key=lambda c: -top[c])[:most])
    if channels.size:
      out[name] = Outliers(tuple(int(c) for c in channels),
                           float(np.delete(top, channels).max()))
  return out


class OutlierSplitDense(matmul_projections.MatmulEinsumDense):
  """The output projection with its outlier channels computed apart (see
  the module docstring); set by `split`."""

  outliers: Outliers = Outliers((), 0.0)

  def call(self, inputs):
    kernel = tf.reshape(self.kernel, [self.kernel.shape[0], -1])
    channels = list(self.outliers.channels)
    rows = np.ones([kernel.shape[0], 1], np.float32)
    rows[channels] = 0.0
    flat = tf.reshape(inputs, [-1, kernel.shape[0]])
    clip = tf.constant(self.outliers.clip, inputs.dtype)
    main = tf.matmul(tf.minimum(flat, clip),
                     kernel * tf.constant(rows, kernel.dtype))
    # As MatmulEinsumDense: the product's one consumer is this Reshape, then
    # the bias (the int8 graph's epilogues fuse both, int8_epilogues).
    shape = tf.concat([tf.shape(inputs)[:-1],
                       tf.constant([kernel.shape[1]], tf.int32)], 0)
    ret = tf.reshape(main, shape)
    if self.bias is not None:
      ret += self.bias
    apart = tf.einsum("mc,cn->mn", tf.gather(flat, channels, axis=1),
                      tf.gather(kernel, channels))
    ret += tf.reshape(apart, shape)
    if self.activation is not None:
      ret = self.activation(ret)
    return ret


def split(model: tf.Module, found: Mapping[str, Outliers]) -> int:
  """Makes the output projection of every block named in `found` an
  OutlierSplitDense, in place (a plain matrix product over the last axis
  only; others are left). Returns how many changed."""
  changed = 0
  for block in blocks(model):
    dense = block._output_dense  # pylint: disable=protected-access
    plan = matmul_projections.matmul_plan(getattr(dense, "equation", ""))
    if block.name not in found or plan is None or plan[1] != 1:
      continue
    dense.__class__ = OutlierSplitDense
    dense.outliers = found[block.name]
    changed += 1
  return changed
