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


"""The demo's step count from a measured first-steps throughput (time_budget.py).

The two kinds of machine of issue 36: 500 steps of 16 blocks in 76 s on a CPU
with AVX512-BF16 (105 examples/s), 17 examples/s in float32 on a 2-core AMD
EPYC without AVX-512.
"""

import os
import time

from official_spanbert.demo import time_budget


def test_a_fast_cpu_keeps_all_500_steps():
  assert time_budget.pick_steps(105.0, 16, elapsed_s=60.0) == time_budget.MAX_STEPS


def test_a_cpu_without_avx512_trains_what_fits_in_five_minutes():
  steps = time_budget.pick_steps(17.0, 16, elapsed_s=110.0)
  # 300 - 110 - 60 = 130 s left at 1.06 steps/s, after the 40 pilot steps.
  assert steps == 40 + int(130 * 17.0 / 16) == 178
  training_s = (steps - time_budget.PILOT_STEPS) * 16 / 17.0
  assert 110.0 + training_s + time_budget.AFTER_TRAINING_S <= time_budget.DEMO_BUDGET_S


def test_the_idle_avx2_epyc_of_2026_12_03_fits_with_what_it_measured():
  """Measured there (fresh clone, make demo): 110 s from the process's start
  to the pick, "measure before" 22 s, pilot 35.1 s at 30.0 examples/s, then
  the resumed run's start-up and save 28 s and the stages after it 66 s. A
  flat 60 s after training picked 333 steps and the demo took 377 s."""
  after = time_budget.after_training_s(22.0) + time_budget.resume_overhead_s(
      35.1, 30.0, 16)
  assert after == 66.0 + 2 * (35.1 - 40 * 16 / 30.0)
  steps = time_budget.pick_steps(30.0, 16, elapsed_s=110.0, after_s=after)
  assert steps < 333
  # What those steps then take there, by the measured costs: <= 5 minutes.
  training_s = (steps - time_budget.PILOT_STEPS) * 16 / 30.0 + 28.0
  assert 110.0 + training_s + 66.0 <= time_budget.DEMO_BUDGET_S


def test_a_fast_machine_keeps_the_flat_allowance():
  # The idle Xeon: measure before 10 s, 27 s after training.
  assert time_budget.after_training_s(10.0) == time_budget.AFTER_TRAINING_S
  assert time_budget.resume_overhead_s(9.0, 118.0, 16) == 2 * (9.0 - 640 / 118.0)
  assert time_budget.resume_overhead_s(1.0, 118.0, 16) == 0.0


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


def test_a_very_slow_cpu_still_trains_the_minimum():
  assert time_budget.pick_steps(2.0, 16, elapsed_s=280.0) == time_budget.MIN_STEPS


def test_the_timed_loop_is_the_last_past_the_first():
  assert time_budget.pilot_rate([(40, 17.5), (20, 9.0)]) == 17.5
  assert time_budget.pilot_rate([(20, 9.0)]) is None
  assert time_budget.pilot_rate([]) is None


def test_cpu_name_says_whether_there_is_avx512(tmp_path):
  info = tmp_path / "cpuinfo"
  info.write_text("model name\t: AMD EPYC\nflags\t\t: fpu avx2 fma\n",
                  encoding="utf-8")
  assert time_budget.cpu_name(str(info)).startswith("AMD EPYC, ")
  assert time_budget.cpu_name(str(info)).endswith(", no AVX-512")
  info.write_text("model name\t: Intel Xeon\nflags\t: avx512f avx512_bf16\n",
                  encoding="utf-8")
  assert time_budget.cpu_name(str(info)).endswith(", AVX512-BF16")
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
