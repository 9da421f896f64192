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

"""The precision an exported graph computes in (float32, bfloat16, int8).

int8 builds the model in float32; registry.export then quantizes it
(serving/quantization.py).

Example:
  with export_precision.scope("bfloat16"):
    registry_entry.export(params, options)  # models built here run in bf16
"""

import contextlib
from typing import Iterator, Optional, Sequence

import tf_keras

from official_spanbert.utils import cpu_features

PRECISIONS = ("float32", "bfloat16", "int8")


class PrecisionError(ValueError):
  """A precision this export cannot use here."""


def check(precision: str,
          cpu: Optional[cpu_features.CpuFeatures] = None) -> None:
  """Raises PrecisionError (one line) for an unknown precision, for
  bfloat16 on a CPU that would only emulate it, or for int8 on a CPU
  without int8 dot products (VNNI / AMX-INT8)."""
  if precision not in PRECISIONS:
    raise PrecisionError(f"--precision must be one of {', '.join(PRECISIONS)},"
                         f" not {precision!r}")
  if precision == "bfloat16":
    cpu = cpu or cpu_features.read()
    if not cpu.native_bf16 or cpu.isa_cap:
      raise PrecisionError(
          f"--precision=bfloat16: this CPU ({cpu.name}) has no AVX512-BF16 or "
          "AMX (or oneDNN is capped below them), so a bfloat16 graph would be "
          "emulated, about 10x slower than float32: export with "
          "--precision=float32, or on the kind of machine that will serve it")
  if precision == "int8":
    cpu = cpu or cpu_features.read()
    if not cpu.native_int8:
      raise PrecisionError(
          f"--precision=int8: this CPU ({cpu.name}) has no AVX512-VNNI, "
          "AVX-VNNI or AMX-INT8 (or oneDNN is capped below them), so the int8 "
          "graph would not be faster than float32: export with "
          "--precision=float32, or on the kind of machine that will serve it")


def float32_head(model: tf_keras.Model, names: Sequence[str]) -> None:
  """Makes the layers `names` of `model` (and the layers inside them)
  compute in float32, where they exist.

  For the output head of a model built in mixed bfloat16: its logits keep
  float32's 24 bits instead of bf16's 8, so near-tied scores (a QA model's
  n-best starts and ends) are not rounded into ties or flipped.
  """
  policy = tf_keras.mixed_precision.Policy("float32")
  for layer in model.layers:
    if layer.name in names:
      for sub in [layer] + list(layer._flatten_layers(include_self=False)):  # pylint: disable=protected-access
        sub._set_dtype_policy(policy)  # pylint: disable=protected-access


@contextlib.contextmanager
def scope(precision: str) -> Iterator[None]:
  """Models built inside compute in `precision` (weights stay float32, so
  float32 checkpoints restore); the Keras policy is restored after. int8
  models are built in float32 (quantized after, by registry.export)."""
  check(precision)
  if precision in ("float32", "int8"):
    yield
    return
  before = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    yield
  finally:
    tf_keras.mixed_precision.set_global_policy(before)
