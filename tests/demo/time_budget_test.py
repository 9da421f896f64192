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


"""The demo's step count from its steps' CPU time (time_budget.py).

The steps must not depend on what else the machine runs (issue 56 item 5: a
second process on the other core made the wall-clock rule pick 123 steps
instead of 229): the same CPU time with twice the wall time picks the same
steps, and the demo says the machine is busy.
"""

import os
import time

import pytest

from official_spanbert.demo import time_budget

# A 2-core machine's pilot loop: 20 steps of 16 examples, 1.5 CPU-s each.
IDLE = time_budget.Probe(steps=20, batch=16, cpu_s=30.0,
                         wall_s=30.0 / time_budget.TRAIN_PARALLELISM)


def test_the_same_cpu_time_with_doubled_wall_time_picks_the_same_steps():
  loaded = time_budget.Probe(steps=20, batch=16, cpu_s=30.0,
                             wall_s=2 * IDLE.wall_s)
  idle_steps = time_budget.pick_steps(IDLE, 2, spent_cpu_s=80.0,
                                      after_s=50.0)
  assert time_budget.pick_steps(loaded, 2, spent_cpu_s=80.0,
                                after_s=50.0) == idle_steps
  assert time_budget.MIN_STEPS < idle_steps < time_budget.MAX_STEPS
  assert time_budget.busy_line(IDLE, 2, load=1.0) == ""
  line = time_budget.busy_line(loaded, 2, load=3.2)
  assert line.startswith("   this machine is busy (the timed steps took "
                         "2.0x an idle machine's wall time, load average "
                         "3.2, 2 cores)")
  assert "\n" not in line


def test_the_picked_steps_fit_the_budget_of_an_idle_machine():
  steps = time_budget.pick_steps(IDLE, 2, spent_cpu_s=80.0, after_s=50.0,
                                 done=40)
  idle_s = (80.0 / time_budget.OTHER_PARALLELISM + 50.0 +
            (steps - 40) * time_budget.idle_step_s(IDLE, 2))
  assert idle_s <= time_budget.DEMO_BUDGET_S
  assert idle_s + time_budget.idle_step_s(IDLE, 2) > time_budget.DEMO_BUDGET_S


def test_the_budget_leaves_the_venv_its_time_within_five_minutes():
  assert (time_budget.DEMO_BUDGET_S + time_budget.VENV_S ==
          time_budget.MAKE_DEMO_BUDGET_S == 300.0)


def test_one_core_gives_the_steps_one_cores_worth_of_cpu_time():
  assert time_budget.train_parallelism(1) == 1.0
  assert time_budget.train_parallelism(64) == time_budget.TRAIN_PARALLELISM
  one = time_budget.pick_steps(IDLE, 1, spent_cpu_s=80.0, after_s=50.0,
                               low=0, high=10_000)
  two = time_budget.pick_steps(IDLE, 2, spent_cpu_s=80.0, after_s=50.0,
                               low=0, high=10_000)
  assert one < two


def test_a_measured_kind_counts_its_own_parallelism():
  kind = "no AVX-512"
  train, other = time_budget.KIND_PARALLELISM[kind]
  assert time_budget.train_parallelism(2, kind) == train
  assert time_budget.other_parallelism(2, kind) == other
  assert time_budget.train_parallelism(2, "AMX") == (
      time_budget.TRAIN_PARALLELISM)  # not measured: the defaults
  assert time_budget.other_parallelism(2, None) == (
      time_budget.OTHER_PARALLELISM)
  assert time_budget.train_parallelism(1, kind) == 1.0  # one core: one
  assert time_budget.other_parallelism(1, kind) == 1.0
  measured = time_budget.pick_steps(IDLE, 2, spent_cpu_s=80.0, after_s=50.0,
                                    done=40, kind=kind)
  assert measured > time_budget.pick_steps(IDLE, 2, spent_cpu_s=80.0,
                                           after_s=50.0, done=40)
  idle_s = (80.0 / other + 50.0 +
            (measured - 40) * time_budget.idle_step_s(IDLE, 2, kind))
  assert idle_s <= time_budget.DEMO_BUDGET_S
  assert idle_s + time_budget.idle_step_s(IDLE, 2, kind) > (
      time_budget.DEMO_BUDGET_S)


def test_cheap_steps_keep_the_maximum_and_dear_ones_the_minimum():
  fast = time_budget.Probe(steps=20, batch=16, cpu_s=2.0, wall_s=1.0)
  slow = time_budget.Probe(steps=20, batch=16, cpu_s=400.0, wall_s=300.0)
  assert time_budget.pick_steps(fast, 2, 60.0, 40.0) == time_budget.MAX_STEPS
  assert time_budget.pick_steps(slow, 2, 60.0, 40.0) == time_budget.MIN_STEPS
  # Past the budget already: the minimum, not fewer.
  assert time_budget.pick_steps(IDLE, 2, 500.0, 40.0) == time_budget.MIN_STEPS


def test_what_follows_training_allows_for_the_float32_exports_wait():
  assert time_budget.after_training_s("bfloat16", 5.0) == 25.0
  assert time_budget.after_training_s("float32", 5.0) == 30.0
  assert time_budget.after_training_s("bfloat16", 30.0) == 90.0
  assert time_budget.after_training_s("float16", 5.0) == 30.0  # unknown
  # The pilot's 40 steps took 75 CPU-s, 60 of them its steps at the probe's
  # cost: the resumed run's start-up and save are twice the other 15.
  assert time_budget.resume_overhead_cpu_s(75.0, IDLE) == pytest.approx(30.0)
  assert time_budget.resume_overhead_cpu_s(50.0, IDLE) == 0.0


def test_the_probe_is_the_last_loop_past_the_first():
  scalars = {"examples_per_second": [(40, 16.0), (20, 8.0)],
             "examples_per_cpu_second": [(20, 5.0), (40, 10.0)]}
  probe = time_budget.pilot_probe(scalars, batch=16)
  assert probe == time_budget.Probe(steps=20, batch=16, cpu_s=32.0,
                                    wall_s=20.0)
  # A last loop shorter than the others (20 warm-up steps, loops of 15).
  short = time_budget.pilot_probe(
      {"examples_per_second": [(15, 8.0), (20, 16.0)],
       "examples_per_cpu_second": [(15, 5.0), (20, 10.0)]}, batch=16)
  assert short.steps == 5 and short.cpu_s_per_step == 1.6
  assert time_budget.pilot_probe(
      {"examples_per_second": [(20, 8.0)],
       "examples_per_cpu_second": [(20, 5.0)]}, 16) is None
  # A run logged before the CPU rate existed: no probe.
  assert time_budget.pilot_probe(
      {"examples_per_second": [(20, 8.0), (40, 16.0)]}, 16) is None
  assert time_budget.pilot_probe({}, 16) is None


def test_process_start_reads_proc_and_falls_back_to_now(tmp_path):
  stat = tmp_path / "stat"
  uptime = tmp_path / "uptime"
  hz = os.sysconf("SC_CLK_TCK")
  # comm with a space and a parenthesis; starttime (field 22) = 100 s.
  fields = ["S"] + ["0"] * 18 + [str(100 * hz)] + ["0"] * 30
  stat.write_text("4242 (my (prog)) " + " ".join(fields), encoding="utf-8")
  uptime.write_text("130.00 200.00\n", encoding="utf-8")
  now = time.time()
  started = time_budget.process_start(str(stat), str(uptime))
  assert abs((now - started) - 30.0) < 1.0
  assert abs(time_budget.process_start(str(tmp_path / "none")) - time.time()) < 1.0
  # This process: started before this test, not in the future.
  assert time_budget.process_start() <= time.time()


def test_cpu_name_says_whether_there_is_avx512(tmp_path):
  info = tmp_path / "cpuinfo"
  info.write_text("model name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\n",
                  encoding="utf-8")
  assert time_budget.cpu_name(str(info)).startswith("AMD EPYC, ")
  assert time_budget.cpu_name(str(info)).endswith(", no AVX-512")
  info.write_text("model name\t: Intel Xeon\nflags\t: avx512f avx512_bf16\n",
                  encoding="utf-8")
  assert time_budget.cpu_name(str(info)).endswith(", AVX512-BF16")
  info.write_text("model name\t: Intel Xeon\nflags\t: avx512f avx512_bf16 "
                  "amx_bf16 amx_tile\n", encoding="utf-8")
  assert time_budget.cpu_name(str(info)).endswith(", AMX")
  assert time_budget.cpu_name(str(tmp_path / "missing")).startswith("unknown CPU")


def test_cpu_name_follows_the_onednn_isa_cap(tmp_path, monkeypatch):
  info = tmp_path / "cpuinfo"
  info.write_text("model name\t: Intel Xeon\nflags\t: avx2 avx512f "
                  "avx512_bf16 amx_bf16\n", encoding="utf-8")
  monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
  assert time_budget.cpu_name(str(info)).endswith(
      ", no AVX-512 (oneDNN capped at AVX2)")


def test_cpu_name_counts_the_cores_this_process_may_use(tmp_path, monkeypatch):
  monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
  assert ", 1 core, " in time_budget.cpu_name(str(tmp_path / "missing"))
