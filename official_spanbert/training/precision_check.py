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

"""Whether runtime.mixed_precision_dtype is fast on the devices at hand.

`check` returns a warning line for a precision without a fast path (bfloat16
on a CPU without AVX512-BF16 or AMX) and raises UnsupportedPrecisionError for
one that cannot run. See docs/pretraining.md, "Speed by processor".
"""

from typing import Optional, Sequence, Tuple

from absl import logging

from official_spanbert.utils import cpu_features

# Measured on AMD EPYC (AVX2/FMA, no AVX-512), demo size, one thread:
# package float32 step against mixed bfloat16 (benchmarks/RESULTS.md).
CPU_BF16_SLOWDOWN = 10
GPU_MIN_CAPABILITY = {"bfloat16": (8, 0), "float16": (7, 0)}


class UnsupportedPrecisionError(ValueError):
  """The precision cannot run at all on this CPU as TensorFlow sees it."""


def cannot_run(dtype: Optional[str], cpu: cpu_features.CpuFeatures) -> bool:
  """True for bfloat16 with oneDNN capped below it (ONEDNN_MAX_CPU_ISA): no
  bfloat16 matmul is left, and the first step aborts the process."""
  return dtype == "bfloat16" and bool(cpu.isa_cap) and not cpu.native_bf16


def advice(dtype: Optional[str], cpu: cpu_features.CpuFeatures,
           gpu_capabilities: Sequence[Tuple[int, int]] = ()) -> Optional[str]:
  """The warning for `dtype` on these devices, or None.

  Args:
    dtype: runtime.mixed_precision_dtype (None/"float32": nothing to say).
    cpu: the CPU's features (used when there is no GPU).
    gpu_capabilities: compute capabilities of the GPUs the run uses.
  """
  if dtype not in GPU_MIN_CAPABILITY:
    return None
  fix = (f"set runtime.mixed_precision_dtype=float32 (or leave it empty) "
         f"to train at full speed")
  if gpu_capabilities:
    need = GPU_MIN_CAPABILITY[dtype]
    slow = [c for c in gpu_capabilities if tuple(c) < need]
    if not slow:
      return None
    have = ", ".join(f"{a}.{b}" for a, b in slow)
    return (f"runtime.mixed_precision_dtype={dtype}: GPU compute capability "
            f"{have} is below {need[0]}.{need[1]}, so {dtype} has no fast "
            f"path there; {fix}")
  if cannot_run(dtype, cpu):
    return (f"runtime.mixed_precision_dtype=bfloat16: ONEDNN_MAX_CPU_ISA="
            f"{cpu.isa_cap} leaves oneDNN no bfloat16 matmul, so the first "
            f"step would abort the process ('could not create a primitive "
            f"descriptor'); unset the cap or {fix}")
  if dtype == "bfloat16" and not cpu.native_bf16:
    return (f"runtime.mixed_precision_dtype=bfloat16: this CPU ({cpu.name}) "
            "has no AVX512-BF16 or AMX, so bfloat16 is emulated (measured "
            f"{CPU_BF16_SLOWDOWN}x slower than float32 on such a CPU); {fix}")
  if dtype == "float16":
    return ("runtime.mixed_precision_dtype=float16 on a CPU: no fast float16 "
            f"path there; {fix}")
  return None


def check(runtime, cpu: Optional[cpu_features.CpuFeatures] = None,
          gpu_capabilities: Optional[Sequence[Tuple[int, int]]] = None
          ) -> Optional[str]:
  """Logs advice() for the run's runtime config as a warning; returns it.
  Raises UnsupportedPrecisionError where the precision cannot run at all.

  The GPUs counted are those the run uses (runtime.num_gpus, or TPU: none
  checked); by default read from TensorFlow.
  """
  if runtime.distribution_strategy == "tpu":
    return None
  if gpu_capabilities is None:
    gpu_capabilities = _gpu_capabilities()[:runtime.num_gpus or 0]
  cpu = cpu or cpu_features.read()
  line = advice(runtime.mixed_precision_dtype, cpu, gpu_capabilities)
  if not gpu_capabilities and cannot_run(runtime.mixed_precision_dtype, cpu):
    raise UnsupportedPrecisionError(line)  # an abort in C++ says nothing
  if line:
    logging.warning("%s", line)
  return line


def _gpu_capabilities():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  out = []
  for device in tf.config.list_physical_devices("GPU"):
    capability = tf.config.experimental.get_device_details(device).get(
        "compute_capability")
    if capability:
      out.append(tuple(capability))
  return out
