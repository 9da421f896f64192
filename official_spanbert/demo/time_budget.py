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

"""The demo's step count, picked from a measured first-steps throughput.

Unless --train_steps is given, the demo times PILOT_STEPS steps and picks the
steps that fit what is left of DEMO_BUDGET_S, between MIN_STEPS and
MAX_STEPS. See docs/demo.md, "How many steps".
"""

import os
import time
from typing import Optional

from official_spanbert.utils import cpu_features

DEMO_BUDGET_S = 300.0
MAX_STEPS = 500
MIN_STEPS = 100
PILOT_STEPS = 40
PILOT_LOOP = 20  # steps per loop of the pilot: the second loop is timed
# Measuring after training + plot, export and fills: 27 s on the idle
# AVX512-BF16 machine, up to ~60 s on the loaded 2-core EPYC without AVX-512.
AFTER_TRAINING_S = 60.0
# ... and at most 3x the "measure before" stage (model build, two held-out
# passes): 27/10 s on the idle Xeon, 45/22 s capped at AVX2 on one core,
# 66/22 s on the idle 2-core AVX2 EPYC (2026-12-03), where a flat 60 s
# ended the demo at 377 s.
AFTER_PER_BEFORE = 3.0


def after_training_s(before_s: float) -> float:
  """Seconds the stages after training take, from "measure before"'s."""
  return max(AFTER_TRAINING_S, AFTER_PER_BEFORE * before_s)


def resume_overhead_s(pilot_wall_s: float, examples_per_second: float,
                      batch: int, steps: int = PILOT_STEPS) -> float:
  """The resumed run's start-up and final save: twice the pilot's time beyond
  its steps at the measured rate (restore, tracing, data; 2 x 14 s against
  28 s measured on the AVX2 EPYC)."""
  return 2.0 * max(0.0, pilot_wall_s - steps * batch / examples_per_second)


def process_start(stat_path: str = "/proc/self/stat",
                  uptime_path: str = "/proc/uptime") -> float:
  """time.time() when this process started (Linux), so that the budget
  counts the imports a user waits for; now where /proc cannot tell."""
  try:
    with open(stat_path, encoding="utf-8") as f:
      # Field 22, starttime in clock ticks after boot; comm may hold spaces.
      ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open(uptime_path, encoding="utf-8") as f:
      uptime = float(f.read().split()[0])
    age = uptime - ticks / os.sysconf("SC_CLK_TCK")
  except (OSError, ValueError, IndexError):
    return time.time()
  return time.time() - max(0.0, age)


def pick_steps(examples_per_second: float, batch: int, elapsed_s: float,
               budget_s: float = DEMO_BUDGET_S,
               after_s: float = AFTER_TRAINING_S,
               done: int = PILOT_STEPS, low: int = MIN_STEPS,
               high: int = MAX_STEPS) -> int:
  """Steps whose training ends the demo within budget_s, clipped to
  [low, high]; `done` steps are trained already, elapsed_s spent."""
  left = max(0.0, budget_s - elapsed_s - after_s)
  steps = done + int(left * examples_per_second / batch)
  return max(low, min(high, steps))


def pilot_rate(series) -> Optional[float]:
  """examples/s of the last logged training loop past the first (which
  traces the step function); None if there is no such loop.

  series: [(step, examples_per_second)], as evaluation.read_scalars gives.
  """
  timed = sorted(series)[1:]
  return float(timed[-1][1]) if timed else None


def cpu_name(cpuinfo: str = cpu_features.CPUINFO) -> str:
  """'AMD EPYC, 2 cores, no AVX-512': the CPU the demo's time depends on, as
  TF's oneDNN kernels see it (ONEDNN_MAX_CPU_ISA=AVX2 makes any CPU 'no
  AVX-512', and says so)."""
  cpu = cpu_features.read(cpuinfo)
  avx = ("AVX512-BF16" if "avx512_bf16" in cpu.flags else
         "AVX-512, no BF16" if "avx512f" in cpu.flags else "no AVX-512")
  cap = f" (oneDNN capped at {cpu.isa_cap})" if cpu.isa_cap else ""
  cores = cpu_features.usable_cores()
  return f"{cpu.name}, {cores} core{'s' * (cores != 1)}, {avx}{cap}"
