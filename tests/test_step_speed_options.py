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

"""Speed options by processor (issue 37): CPU capability detection from faked
flags, the warning for bf16 without native bf16, and XLA-compiled train and
evaluation steps (runtime.enable_xla) that compute what the plain steps do.
"""

from absl import logging
import pytest
import tf_keras

from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.training import precision_check
from official_spanbert.training import train_lib
from official_spanbert.training import trainer
from official_spanbert.utils import cpu_features
from official_spanbert.utils import cpu_threads
from conftest import tiny_params

AVX2_EPYC = ("processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2595.1\n"
             "flags\t\t: fpu sse2 avx fma avx2 bmi2\n\n"
             "processor\t: 1\nmodel name\t: other\nflags\t\t: avx512_bf16\n")
ZEN4 = "model name\t: AMD EPYC 9654\nflags\t\t: avx2 fma avx512f avx512_bf16\n"
SAPPHIRE_RAPIDS = ("model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
                   "flags\t\t: avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile\n")
SKYLAKE = "model name\t: Intel(R) Xeon(R) Gold 6148\nflags\t: fma avx512f\n"
# This machine's first block, shortened: the name does not say Zen 5.
ZEN5 = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n"
        "model\t\t: 2\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.100\n"
        "flags\t\t: fma avx2 avx512f avx512_bf16 avx512_vnni\n")


def test_cpu_capabilities_from_faked_flags(tmp_path, monkeypatch):
  epyc = cpu_features.parse(AVX2_EPYC)  # the first processor's block only
  assert (epyc.name, epyc.mhz, epyc.native_bf16) == ("AMD EPYC", 2595.1,
                                                     False)
  assert epyc.fma_bits == 256
  assert epyc.peak_flops_per_cycle("float32") == 32
  assert epyc.peak_flops_per_cycle("bfloat16") == 32  # emulated: no gain
  assert "bf16 emulated" in epyc.describe()
  zen4 = cpu_features.parse(ZEN4)  # AVX-512 double-pumped on AMD
  assert zen4.native_bf16 and zen4.fma_bits == 256
  assert zen4.peak_flops_per_cycle("bfloat16") == 64
  spr = cpu_features.parse(SAPPHIRE_RAPIDS)
  assert spr.native_bf16 and spr.fma_bits == 512
  assert (spr.peak_flops_per_cycle("float32"),
          spr.peak_flops_per_cycle("bfloat16")) == (64, 1024)
  skylake = cpu_features.parse(SKYLAKE)
  assert not skylake.native_bf16 and skylake.fma_bits == 512
  monkeypatch.setattr(cpu_features, "from_py_cpuinfo",
                      lambda: cpu_features.parse(""))  # py-cpuinfo: nothing
  missing = cpu_features.read(str(tmp_path / "none"))
  assert not missing.flags and not missing.native_bf16
  assert missing.fma_bits == 128


def test_zen5_avx512_is_full_width_zen4_and_zen5_mobile_double_pumped():
  zen5 = cpu_features.parse(ZEN5)
  assert (zen5.vendor, zen5.family, zen5.model) == ("AuthenticAMD", 0x1A, 2)
  assert zen5.fma_bits == 512
  assert (zen5.peak_flops_per_cycle("float32"),
          zen5.peak_flops_per_cycle("bfloat16")) == (64, 128)
  assert "(family 0x1a, model 0x2)" in zen5.describe()
  assert "FMA 512-bit" in zen5.describe()
  zen4 = cpu_features.parse(ZEN5.replace(": 26", ": 25").replace(
      ": 2\n", ": 17\n"))  # Genoa: family 0x19 model 0x11
  assert zen4.family == 0x19 and zen4.fma_bits == 256
  assert zen4.peak_flops_per_cycle("float32") == 32
  strix = cpu_features.parse(ZEN5.replace(": 2\n", ": 36\n"))  # model 0x24
  assert strix.fma_bits == 256
  # Capped at AVX2, Zen 5 computes as an AVX2 core.
  assert cpu_features.capped(zen5, "AVX2").fma_bits == 256
  # An AMD CPU of unknown family keeps the conservative 256.
  assert cpu_features.parse(ZEN4).fma_bits == 256


def test_without_proc_cpuinfo_read_asks_py_cpuinfo(tmp_path, monkeypatch):
  """macOS, Windows: py-cpuinfo's fields, still under the oneDNN cap."""
  import sys  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  info = {"brand_raw": "AMD EPYC 9575F", "vendor_id_raw": "AuthenticAMD",
          "family": 26, "model": 2, "hz_actual": [3300000000, 0],
          "flags": ["avx2", "fma", "avx512f", "avx512_bf16"]}
  monkeypatch.setitem(sys.modules, "cpuinfo", types.SimpleNamespace(
      get_cpu_info=lambda: info))
  # The system's file is missing (another missing file is an unknown CPU,
  # as the demo's tests expect).
  monkeypatch.setattr(cpu_features, "CPUINFO", str(tmp_path / "none"))
  got = cpu_features.read(str(tmp_path / "none"), {})
  assert (got.name, got.mhz, got.family, got.fma_bits, got.native_bf16) == (
      "AMD EPYC 9575F", 3300.0, 0x1A, 512, True)
  capped = cpu_features.read(str(tmp_path / "none"),
                             {"ONEDNN_MAX_CPU_ISA": "AVX2"})
  assert capped.fma_bits == 256 and not capped.native_bf16

  def broken():
    raise RuntimeError("CPUID probe failed")
  monkeypatch.setitem(sys.modules, "cpuinfo", types.SimpleNamespace(
      get_cpu_info=broken))
  assert not cpu_features.read(str(tmp_path / "none"), {}).flags


def test_onednn_isa_cap_drops_the_flags_above_it(tmp_path):
  info = tmp_path / "cpuinfo"
  info.write_text(SAPPHIRE_RAPIDS, encoding="utf-8")
  avx2 = cpu_features.read(str(info), {"ONEDNN_MAX_CPU_ISA": "avx2"})
  assert (avx2.isa_cap, avx2.native_bf16, avx2.fma_bits) == ("AVX2", False,
                                                             256)
  assert avx2.flags == {"avx2", "fma"}
  assert avx2.peak_flops_per_cycle("bfloat16") == 32
  assert "(oneDNN capped at AVX2)" in avx2.describe()
  core = cpu_features.read(str(info), {"DNNL_MAX_CPU_ISA": "AVX512_CORE"})
  assert core.fma_bits == 512 and not core.native_bf16
  bf16 = cpu_features.capped(cpu_features.parse(SAPPHIRE_RAPIDS),
                             "AVX512_CORE_BF16")
  assert bf16.native_bf16 and bf16.peak_flops_per_cycle("bfloat16") == 128
  for same in ({}, {"ONEDNN_MAX_CPU_ISA": "ALL"},
               {"ONEDNN_MAX_CPU_ISA": "no such isa"}):
    full = cpu_features.read(str(info), same)
    assert full.isa_cap is None and "amx_bf16" in full.flags


def test_bf16_without_native_bf16_is_one_warning_line():
  epyc, zen4 = cpu_features.parse(AVX2_EPYC), cpu_features.parse(ZEN4)
  line = precision_check.advice("bfloat16", epyc)
  assert line.startswith("runtime.mixed_precision_dtype=bfloat16: this CPU "
                         "(AMD EPYC) has no AVX512-BF16 or AMX")
  assert "10x slower" in line and "\n" not in line
  assert "mixed_precision_dtype=float32" in line  # what to do
  assert precision_check.advice("bfloat16", zen4) is None
  for fine in (None, "", "float32"):
    assert precision_check.advice(fine, epyc) is None
  assert "float16" in precision_check.advice("float16", zen4)
  # On GPUs the compute capability decides, not the CPU.
  assert precision_check.advice("bfloat16", epyc, [(8, 0)]) is None
  assert "7.5 is below 8.0" in precision_check.advice("bfloat16", zen4,
                                                      [(7, 5)])
  assert precision_check.advice("float16", epyc, [(7, 0)]) is None
  capped = cpu_features.capped(cpu_features.parse(SAPPHIRE_RAPIDS), "AVX2")
  line = precision_check.advice("bfloat16", capped)
  assert "ONEDNN_MAX_CPU_ISA=AVX2" in line and "would abort" in line


def test_a_bf16_run_on_such_a_cpu_logs_the_line(monkeypatch):
  monkeypatch.setattr(cpu_features, "read",
                      lambda *_: cpu_features.parse(AVX2_EPYC))
  warned = []
  monkeypatch.setattr(logging, "warning", lambda f, *a: warned.append(f % a))
  params = tiny_params(dummy_inputs.DUMMY, "", steps=1)
  params.runtime.mixed_precision_dtype = "bfloat16"
  line = precision_check.check(params.runtime, gpu_capabilities=[])
  assert warned == [line] and "AMD EPYC" in line


def test_bf16_under_an_avx2_cap_is_an_error_before_any_step(monkeypatch):
  spr = cpu_features.parse(SAPPHIRE_RAPIDS)
  params = tiny_params(dummy_inputs.DUMMY, "", steps=1)
  params.runtime.mixed_precision_dtype = "bfloat16"
  capped = cpu_features.capped(spr, "AVX2")
  with pytest.raises(precision_check.UnsupportedPrecisionError,
                     match="ONEDNN_MAX_CPU_ISA=AVX2 leaves oneDNN no bfloat16"):
    precision_check.check(params.runtime, capped, gpu_capabilities=[])
  # Uncapped it runs; float32 under the cap runs.
  assert precision_check.check(params.runtime, spr, gpu_capabilities=[]) is None
  params.runtime.mixed_precision_dtype = "float32"
  assert precision_check.check(params.runtime, capped,
                               gpu_capabilities=[]) is None


def test_xla_steps_train_and_evaluate_as_the_plain_steps(tmp_path):
  logs = {}
  for xla in (False, True):
    params = tiny_params(dummy_inputs.DUMMY, "", steps=2, steps_per_loop=2,
                         checkpoint_interval=2)
    params.trainer.validation_steps = 1
    enc = params.task.model.encoder.bert_v2
    enc.dropout_rate = enc.attention_dropout_rate = 0.0
    params.runtime.enable_xla = xla
    assert trainer.use_xla(params.runtime) == xla
    tf_keras.utils.set_random_seed(1)  # the same initial weights
    _, logs[xla] = train_lib.run(params, str(tmp_path / f"xla{xla}"),
                                 mode="train", run_post_eval=True)
  plain, compiled = logs[False], logs[True]
  assert plain["validation_loss"] > 0
  for key in ("validation_loss", "mlm_loss", "sbo_loss"):
    assert compiled[key] == pytest.approx(plain[key], rel=1e-4), key


def test_usable_cores_follow_affinity_and_a_cpu_quota(tmp_path, monkeypatch):
  monkeypatch.setattr(cpu_features.os, "sched_getaffinity",
                      lambda pid: set(range(8)))
  root, proc = tmp_path / "cg", tmp_path / "proc_self_cgroup"
  root.mkdir()
  proc.write_text("0::/\n")  # inside a container's cgroup namespace
  cores = lambda: cpu_features.usable_cores(str(root), str(proc))
  assert cores() == 8  # no quota files
  (root / "cpu.max").write_text("max 100000\n")
  assert cores() == 8  # v2, unlimited
  (root / "cpu.max").write_text("150000 100000\n")  # docker --cpus=1.5
  assert cpu_features.cgroup_cpu_limit(str(root), str(proc)) == 2
  assert cores() == 2
  # The process's own cgroup below the root; the tighter quota wins.
  (root / "pod" / "job").mkdir(parents=True)
  (root / "pod" / "job" / "cpu.max").write_text("400000 100000\n")
  (root / "pod" / "cpu.max").write_text("100000 100000\n")
  proc.write_text("0::/pod/job\n")
  assert cores() == 1
  (root / "cpu.max").unlink()
  (root / "pod" / "cpu.max").unlink()
  assert cores() == 4
  # cgroup v1: the cpu controller's own directory.
  proc.write_text("4:memory:/x\n2:cpu,cpuacct:/sb\n")
  (root / "cpu" / "sb").mkdir(parents=True)
  (root / "cpu" / "sb" / "cpu.cfs_quota_us").write_text("-1\n")
  (root / "cpu" / "sb" / "cpu.cfs_period_us").write_text("100000\n")
  assert cpu_features.cgroup_cpu_limit(str(root), str(proc)) is None
  (root / "cpu" / "sb" / "cpu.cfs_quota_us").write_text("300000\n")
  assert cores() == 3
  monkeypatch.setattr(cpu_features.os, "sched_getaffinity", lambda pid: {0})
  assert cores() == 1


def test_tf_thread_pools_fit_a_cpu_quota(tmp_path, monkeypatch):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  set_to = []
  monkeypatch.setattr(tf.config.threading,
                      "set_intra_op_parallelism_threads", set_to.append)
  monkeypatch.setattr(tf.config.threading,
                      "set_inter_op_parallelism_threads", set_to.append)
  monkeypatch.setattr(cpu_threads.os, "sched_getaffinity",
                      lambda pid: set(range(64)))
  for k in cpu_threads.ENV:
    monkeypatch.delenv(k, raising=False)
  root, proc = tmp_path / "cg", tmp_path / "proc_self_cgroup"
  root.mkdir()
  proc.write_text("0::/\n")
  fit = lambda: cpu_threads.fit_to_quota(str(root), str(proc))
  assert fit() is None and not set_to  # no quota: TF's default
  (root / "cpu.max").write_text("200000 100000\n")  # --cpus=2 on 64 cores
  assert fit() == 2 and set_to == [2, 2]
  monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "8")  # the user's word wins
  assert fit() is None and set_to == [2, 2]
  monkeypatch.delenv("TF_NUM_INTRAOP_THREADS")

  def too_late(n):
    raise RuntimeError("Intra op parallelism cannot be modified after "
                       "initialization.")
  monkeypatch.setattr(tf.config.threading,
                      "set_intra_op_parallelism_threads", too_late)
  warned = []
  monkeypatch.setattr(logging, "warning", lambda f, *a: warned.append(f % a))
  assert fit() is None
  assert "set TF_NUM_INTRAOP_THREADS=2" in warned[0]
