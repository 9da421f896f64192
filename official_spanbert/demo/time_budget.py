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

"""The demo's step count: from the processor and its steps' CPU time.

Unless --train_steps is given, the demo times a loop of its first steps (the
pilot) in process CPU seconds, which another process on the machine changes
far less than the wall time, and picks the steps with which an idle machine of this kind (its
precision, its cores) ends the demo within DEMO_BUDGET_S. A busy machine
trains the same steps, takes longer and says so. See docs/demo.md, "How many
steps".

  probe = time_budget.Probe(steps=10, batch=16, cpu_s=19.0, wall_s=10.6)
  steps = time_budget.pick_steps(probe, cores=2, spent_cpu_s=90.0,
                                 after_s=40.0)
  print(time_budget.busy_line(probe, cores=2))  # "" on an idle machine
"""

import dataclasses
import os
import time
from typing import Optional

from official_spanbert.utils import cpu_features

# `make demo` from a fresh clone, the .venv step included (issue 56 item 5).
MAKE_DEMO_BUDGET_S = 300.0
# The .venv step before it: `make demo` installs the interop extra only,
# 41 s on the 2-core Zen 4 EPYC (2026-12-06, load 1-2; the five extras of
# `make test`: 69 s); 47 s on the AMX Xeon with all five extras.
VENV_S = 60.0
DEMO_BUDGET_S = MAKE_DEMO_BUDGET_S - VENV_S  # from the process's start
MAX_STEPS = 500
MIN_STEPS = 100
PILOT_STEPS = 40
PILOT_LOOP = 20  # steps per loop of the pilot: the second loop is timed
# CPU seconds a wall second of an idle machine gives the training steps, on 2
# cores or more (TF's thread pools; more cores are not counted: on 2 cores
# only was it measured) ...
TRAIN_PARALLELISM = 1.6
# ... and the other stages (imports, corpus, conversion, records, held-out
# passes, export; mostly one thread).
OTHER_PARALLELISM = 1.0
# The same two (training steps, other stages) where measured for a kind
# (cpu_kind) in idle fresh-clone runs, a little under what they showed. No
# AVX-512: the 2-core AVX2 Zen 3 (float32, oneDNN on), c3895b7 and 7830fe4
# (2026-12-06/07): steps 1.90 and 1.92 cores busy, the stages before the
# pick 1.31x and 1.29x (97 CPU-s in 74 s, 90 in 70); both demos ended 45 and
# 64 s under 300 s, filling no word (docs/demo.md).
KIND_PARALLELISM = {"no AVX-512": (1.85, 1.25)}
# The stages after training (measure after, export, fills) take at least
# these seconds on an idle machine, by the precision the processor's kind
# picks. Their wall time, not their CPU time: the float32 export waits
# (idle 2-core Zen 4 of 2026-12-05, bf16: 5 + 8 + 3 s; capped at AVX2, float32:
# 6 + 62 + 4 s, where a capped run of 2026-12-06 spent about 28 CPU-s on all
# it did after its steps; the AVX2 EPYC's first act: 66 s). The float32
# export's wait was the training iterator's end, now collected beside it
# (train_lib.release_in_background): idle AVX2 Zen 3 runs of 2026-12-07 took
# 19 and 18 s for all three ...
AFTER_TRAINING_S = {"bfloat16": 25.0, "float32": 30.0}
# ... and at least 3x the "measure before" stage's CPU seconds.
AFTER_PER_BEFORE = 3.0
# A pilot whose wall time is this many times an idle machine's (its CPU time
# over TRAIN_PARALLELISM) ran on a busy machine.
BUSY_FACTOR = 1.3
# A head warm-up step runs the forward pass and the heads' backward only
# (modeling/head_warmup.py); a whole step costs this many times its CPU time.
# The demo's MiniLM on an AVX2-only Zen 3 with oneDNN, 2026-12-06 evening
# (load 7): 10.5 examples per CPU-second in the warm-up's timed loop, 5.0,
# 4.7 and 4.3 in the three loops of whole steps after it (2.1-2.4x; 1.8 was
# from a run without oneDNN, 7.7 against 4.3). With the word embeddings
# frozen (demo_continued.yaml), 20 + 120 steps on the same Zen 3, 2026-12-07
# (load 6-8): 1.43 CPU-s a warm-up step, 2.89 a whole step (2.02x; 2.13x in
# the same run without the freeze).
FULL_PER_WARMUP_STEP = 2.05
# The trainer's logs a Probe is read from (training/trainer.py).
PROBE_TAGS = ("examples_per_second", "examples_per_cpu_second")


@dataclasses.dataclass(frozen=True)
class Probe:
  """A timed loop of training steps: wall and process CPU seconds (all the
  process's threads) that its `steps` steps of `batch` examples took."""
  steps: int
  batch: int
  cpu_s: float
  wall_s: float

  @property
  def cpu_s_per_step(self) -> float:
    return self.cpu_s / self.steps

  @classmethod
  def from_rates(cls, steps: int, batch: int, examples_per_second: float,
                 examples_per_cpu_second: float) -> "Probe":
    """The Probe of a loop the trainer logged as these two rates."""
    examples = steps * batch
    return cls(steps, batch, cpu_s=examples / examples_per_cpu_second,
               wall_s=examples / examples_per_second)


def whole_steps(warmup: Probe) -> Probe:
  """What the probe's loop would have taken with whole steps, from a loop of
  head warm-up steps."""
  return dataclasses.replace(warmup,
                             cpu_s=warmup.cpu_s * FULL_PER_WARMUP_STEP,
                             wall_s=warmup.wall_s * FULL_PER_WARMUP_STEP)


def train_parallelism(cores: int, kind: Optional[str] = None) -> float:
  """CPU seconds a wall second of an idle machine with `cores` usable cores
  gives the training steps; `kind`: cpu_kind's (KIND_PARALLELISM)."""
  measured = KIND_PARALLELISM.get(kind, (TRAIN_PARALLELISM,))[0]
  return min(float(max(1, cores)), measured)


def other_parallelism(cores: int, kind: Optional[str] = None) -> float:
  """The same for the stages before the steps (OTHER_PARALLELISM)."""
  measured = KIND_PARALLELISM.get(kind, (None, OTHER_PARALLELISM))[1]
  return min(float(max(1, cores)), measured)


def idle_step_s(probe: Probe, cores: int, kind: Optional[str] = None
                ) -> float:
  """Wall seconds a training step takes on an idle machine of this kind."""
  return probe.cpu_s_per_step / train_parallelism(cores, kind)


def busy(probe: Probe, cores: int, kind: Optional[str] = None) -> float:
  """How many times an idle machine's wall time the probe took (its CPU
  time over train_parallelism); above BUSY_FACTOR the machine was busy."""
  return probe.wall_s / (probe.cpu_s / train_parallelism(cores, kind))


def busy_line(probe: Probe, cores: int,
              load: Optional[float] = None, kind: Optional[str] = None) -> str:
  """One line saying the machine is busy and what follows; "" if idle.

  load: the 1-minute load average (default: os.getloadavg's).
  """
  slower = busy(probe, cores, kind)
  if slower <= BUSY_FACTOR:
    return ""
  if load is None:
    try:
      load = os.getloadavg()[0]
    except OSError:
      load = None
  load_text = f", load average {load:.1f}" if load is not None else ""
  return (f"   this machine is busy (the timed steps took {slower:.1f}x "
          f"an idle machine's wall time{load_text}, {cores} "
          f"core{'s' * (cores != 1)}): the demo trains the steps an idle "
          "one fits, so it takes longer than its budget")


def after_training_s(precision: str, before_cpu_s: float) -> float:
  """Seconds the stages after training take on an idle machine, from the
  precision and "measure before"'s CPU seconds."""
  return max(AFTER_TRAINING_S.get(precision, max(AFTER_TRAINING_S.values())),
             AFTER_PER_BEFORE * before_cpu_s)


def resume_overhead_cpu_s(pilot_cpu_s: float, probe: Probe,
                          steps: int = PILOT_STEPS) -> float:
  """The resumed run's start-up and final save, in CPU seconds: twice the
  pilot's CPU time beyond its `steps` steps at the probe's cost (restore,
  tracing, data)."""
  return 2.0 * max(0.0, pilot_cpu_s - steps * probe.cpu_s_per_step)


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


def pick_steps(probe: Probe, cores: int, spent_cpu_s: float,
               after_s: float, budget_s: float = DEMO_BUDGET_S,
               done: int = PILOT_STEPS, low: int = MIN_STEPS,
               high: int = MAX_STEPS, kind: Optional[str] = None) -> int:
  """Steps with which an idle machine of this kind ends the demo within
  budget_s, clipped to [low, high]. No wall time enters: the same probe CPU
  time gives the same steps however busy the machine was.

  probe: a timed loop of the steps (its CPU time per step counts).
  cores: the cores this process may use (cpu_features.usable_cores()).
  spent_cpu_s: the process's CPU time so far (time.process_time()).
  after_s: idle seconds of what follows the steps (after_training_s +
    resume_overhead_cpu_s for a resumed run: the first act).
  done: steps trained already.
  kind: the processor's (cpu_kind), for its measured parallelism.
  """
  left = budget_s - spent_cpu_s / other_parallelism(cores, kind) - after_s
  steps = done + int(max(0.0, left) / idle_step_s(probe, cores, kind))
  return max(low, min(high, steps))


def pilot_probe(scalars, batch: int) -> Optional[Probe]:
  """The Probe of the last logged training loop past the first (which
  traces the step function); None if there is no such loop.

  scalars: {tag: [(step, value)]} of PROBE_TAGS, as evaluation.read_scalars
    gives them; a loop's steps are its step less the loop's before.
  """
  series = sorted(scalars.get(PROBE_TAGS[0], []))
  cpu = dict(scalars.get(PROBE_TAGS[1], []))
  if len(series) < 2 or series[-1][0] not in cpu:
    return None
  (before, _), (step, rate) = series[-2:]
  return Probe.from_rates(step - before, batch, float(rate), float(cpu[step]))


def cpu_name(cpuinfo: str = cpu_features.CPUINFO) -> str:
  """'AMD EPYC, 2 cores, no AVX-512': the CPU the demo's time depends on, as
  TF's oneDNN kernels see it (ONEDNN_MAX_CPU_ISA=AVX2 makes any CPU 'no
  AVX-512', and says so)."""
  cpu = cpu_features.read(cpuinfo)
  avx = cpu_kind(cpu)
  cap = f" (oneDNN capped at {cpu.isa_cap})" if cpu.isa_cap else ""
  cores = cpu_features.usable_cores()
  return f"{cpu.name}, {cores} core{'s' * (cores != 1)}, {avx}{cap}"


def cpu_kind(cpu: cpu_features.CpuFeatures) -> str:
  """The processor's kind as the demo's steps depend on it: 'AMX',
  'AVX512-BF16' (both bfloat16), 'AVX-512, no BF16' or 'no AVX-512'."""
  if "amx_bf16" in cpu.flags:
    return "AMX"
  return ("AVX512-BF16" if "avx512_bf16" in cpu.flags else
          "AVX-512, no BF16" if "avx512f" in cpu.flags else "no AVX-512")
