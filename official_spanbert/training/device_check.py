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

"""The devices a training run will use, logged and checked at its start.

Refuses, in one line, `runtime.num_gpus` GPUs that TensorFlow does not see
(Model Garden would quietly train on the CPU).
"""

import os
from typing import Dict, List

from absl import logging
import tensorflow as tf

INSTALL = "pip install 'official-spanbert[gpu]'"


class NoAcceleratorError(ValueError):
  """The config asks for more GPUs than TensorFlow sees."""


def _gpu_name(device) -> str:
  details = tf.config.experimental.get_device_details(device)
  name = details.get("device_name", device.name)
  capability = details.get("compute_capability")
  return f"{name} (compute {capability[0]}.{capability[1]})" if (
      capability) else name


def visible_devices() -> Dict[str, List[str]]:
  """Physical devices TensorFlow sees: {"CPU"|"GPU"|"TPU": [descriptions]}."""
  out = {}
  for kind in ("CPU", "GPU", "TPU"):
    devices = tf.config.list_physical_devices(kind)
    out[kind] = ([_gpu_name(d) for d in devices] if kind == "GPU"
                 else [d.name for d in devices])
  return out


def describe(runtime, devices: Dict[str, List[str]]) -> str:
  """One line: what is visible and what the runtime config asks for."""
  seen = ", ".join(f"{len(v)} {k}" + (f" [{'; '.join(v)}]" if k == "GPU" and v
                                      else "") for k, v in devices.items())
  tf32 = ""
  if devices["GPU"]:  # float32 matmuls on Ampere/Hopper (README)
    enabled = tf.config.experimental.tensor_float_32_execution_enabled()
    tf32 = f", TF32 {'on' if enabled else 'off'}"
  return (f"devices: {seen}; runtime: distribution_strategy="
          f"{runtime.distribution_strategy}, num_gpus={runtime.num_gpus}, "
          f"mixed_precision_dtype={runtime.mixed_precision_dtype}{tf32}")


def check(runtime) -> str:
  """Logs the devices the run will use; refuses GPUs that are not there.

  Args:
    runtime: the experiment's RuntimeConfig.

  Returns:
    The logged line.

  Raises:
    NoAcceleratorError: runtime.num_gpus is more than the visible GPUs.
  """
  devices = visible_devices()
  line = describe(runtime, devices)
  logging.info("%s", line)
  wanted, gpus = runtime.num_gpus or 0, len(devices["GPU"])
  if wanted > gpus:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    why = (f"CUDA_VISIBLE_DEVICES={visible!r}; " if visible is not None
           else "")
    cuda = ("" if tf.test.is_built_with_cuda() else
            f"this TensorFlow is built without CUDA ({INSTALL}); ")
    raise NoAcceleratorError(
        f"runtime.num_gpus={wanted} but TensorFlow sees {gpus} GPU(s) "
        f"({why}{cuda}check nvidia-smi; {INSTALL} brings the CUDA "
        f"libraries); set runtime.num_gpus={gpus} to train on what is there")
  return line
