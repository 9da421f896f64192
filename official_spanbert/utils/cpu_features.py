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

"""What the CPU can compute fast, from its flags (/proc/cpuinfo on Linux).

Native bf16, FMA width and an estimated peak, honouring ONEDNN_MAX_CPU_ISA.
Not py-cpuinfo on Linux: it takes 1-2 s a call and knows neither the ISA cap,
the FMA width nor the usable cores (it is the fallback elsewhere). See
docs/pretraining.md, "Speed by processor".
"""

import dataclasses
import os
import platform
from typing import FrozenSet, Mapping, Optional

CPUINFO = "/proc/cpuinfo"
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
# int8 dot products in hardware (oneDNN's int8 kernels use them).
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")
FMA_PIPES = 2  # FMA units a core (Zen 2-4, Intel server cores since Skylake)
AMX_BF16_FLOPS_PER_CYCLE = 1024
# AMD families: Zen 5 (0x1A) has full-width AVX-512 except its mobile cores.
ZEN5_FAMILY = 0x1A
ZEN5_MOBILE_MODELS = range(0x20, 0x30)  # Strix Point: double-pumped 256-bit
ISA_CAP_ENV = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
# oneDNN's ISA names (dnnl_cpu_isa_t, oneDNN 3.x), lowest first; a name's
# rank is its index, aliases share one.
ONEDNN_ISAS = (("SSE41",), ("AVX",), ("AVX2",), ("AVX2_VNNI",),
               ("AVX2_VNNI_2",), ("AVX512_CORE",), ("AVX512_CORE_VNNI",),
               ("AVX512_CORE_BF16",), ("AVX10_1_512", "AVX512_CORE_FP16"),
               ("AVX10_1_512_AMX", "AVX512_CORE_AMX"),
               ("AVX10_1_512_AMX_FP16", "AVX512_CORE_AMX_FP16"), ("ALL",))


def _isa_rank(name: str) -> Optional[int]:
  for rank, names in enumerate(ONEDNN_ISAS):
    if name.upper() in names:
      return rank
  return None


def _flag_rank(flag: str) -> int:
  """The lowest oneDNN ISA rank that uses a cpuinfo flag (0: below AVX)."""
  if flag.startswith("amx"):
    return _isa_rank("AVX10_1_512_AMX")
  for prefix, isa in (("avx512_fp16", "AVX10_1_512"),
                      ("avx512_bf16", "AVX512_CORE_BF16"),
                      ("avx512_vnni", "AVX512_CORE_VNNI"),
                      ("avx512", "AVX512_CORE"), ("avx_vnni", "AVX2_VNNI"),
                      ("avx2", "AVX2"), ("fma", "AVX2"), ("avx", "AVX")):
    if flag.startswith(prefix):
      return _isa_rank(isa)
  return 0


@dataclasses.dataclass(frozen=True)
class CpuFeatures:
  """A processor's name, flags and what follows from them."""
  name: str
  flags: FrozenSet[str]
  mhz: Optional[float] = None
  isa_cap: Optional[str] = None  # ONEDNN_MAX_CPU_ISA, when it drops flags
  vendor: str = ""               # vendor_id: AuthenticAMD, GenuineIntel
  family: Optional[int] = None   # cpu family: 0x19 Zen 3/4, 0x1A Zen 5
  model: Optional[int] = None

  @property
  def amd(self) -> bool:
    return self.vendor == "AuthenticAMD" or "AMD" in self.name

  @property
  def native_bf16(self) -> bool:
    """AVX512-BF16 or AMX-BF16: bfloat16 math in hardware."""
    return bool(self.flags & set(BF16_FLAGS))

  @property
  def native_int8(self) -> bool:
    """VNNI or AMX-INT8 (int8 dot products in hardware), within oneDNN's
    ISA cap if one is set."""
    have = [_flag_rank(f) for f in self.flags & set(INT8_FLAGS)]
    if not have:
      return False
    cap = self.isa_cap and _isa_rank(self.isa_cap)
    return cap is None or cap is False or cap >= min(have)

  @property
  def fma_bits(self) -> int:
    """Effective width of one FMA pipe: 512, 256, or 128 (no FMA flag).

    AVX-512 counts 512 on Intel and on AMD from Zen 5 (family 0x1A, not its
    mobile models 0x20-0x2F); Zen 4's double-pumped AVX-512 counts 256.
    """
    if "avx512f" in self.flags and (not self.amd or self.full_width_amd):
      return 512
    if "fma" in self.flags or "avx512f" in self.flags:
      return 256
    return 128

  @property
  def full_width_amd(self) -> bool:
    """An AMD core whose AVX-512 datapaths are 512 bits wide (Zen 5)."""
    return (self.family is not None and self.family >= ZEN5_FAMILY
            and not (self.family == ZEN5_FAMILY and self.model is not None
                     and self.model in ZEN5_MOBILE_MODELS))

  def peak_flops_per_cycle(self, dtype: str = "float32") -> int:
    """Estimated peak FLOPs a cycle of one core in `dtype` (see above)."""
    fp32 = FMA_PIPES * (self.fma_bits // 32) * 2
    if dtype != "bfloat16":
      return fp32
    if "amx_bf16" in self.flags:
      return AMX_BF16_FLOPS_PER_CYCLE
    return 2 * fp32 if self.native_bf16 else fp32

  def describe(self) -> str:
    """One line: name, clock, FMA width, bf16 support and the peaks."""
    isa = sorted(f for f in self.flags if f in (
        "avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile",
        "avx512_vnni", "avx_vnni"))
    clock = f" at {self.mhz:.0f} MHz" if self.mhz else ""
    if self.family is not None:
      clock += f" (family {self.family:#x}, model {self.model or 0:#x})"
    cap = f" (oneDNN capped at {self.isa_cap})" if self.isa_cap else ""
    return (f"{self.name}{clock}{cap}; flags {' '.join(isa) or 'none of note'}; "
            f"FMA {self.fma_bits}-bit; bf16 "
            f"{'native' if self.native_bf16 else 'emulated (no AVX512-BF16/AMX)'}"
            f"; peak FLOPs/cycle/core float32 "
            f"{self.peak_flops_per_cycle('float32')}, bfloat16 "
            f"{self.peak_flops_per_cycle('bfloat16')}")


def parse(text: str) -> CpuFeatures:
  """CpuFeatures of the first processor in /proc/cpuinfo's text."""
  fields = {}
  for line in text.splitlines():
    key, sep, value = line.partition(":")
    if not sep:
      if fields:  # the first processor's block ended
        break
      continue
    fields.setdefault(key.strip(), value.strip())
  return CpuFeatures(name=fields.get("model name") or platform.processor()
                     or "unknown CPU",
                     flags=frozenset(fields.get("flags", "").split()),
                     mhz=_number(fields.get("cpu MHz"), float),
                     vendor=fields.get("vendor_id", ""),
                     family=_number(fields.get("cpu family"), int),
                     model=_number(fields.get("model"), int))


def _number(text, kind):
  try:
    return kind(text) if text else None
  except (TypeError, ValueError):
    return None


def from_py_cpuinfo() -> CpuFeatures:
  """CpuFeatures from py-cpuinfo (no /proc/cpuinfo: macOS, Windows); none
  of its fields when it is not installed or fails."""
  try:
    import cpuinfo  # pylint: disable=g-import-not-at-top
    info = cpuinfo.get_cpu_info()
  except Exception:  # pylint: disable=broad-except  (ImportError, its probes)
    return parse("")
  hz = info.get("hz_actual") or info.get("hz_advertised") or [0]
  return CpuFeatures(
      name=info.get("brand_raw") or platform.processor() or "unknown CPU",
      flags=frozenset(info.get("flags", ())), mhz=(hz[0] / 1e6) or None,
      vendor=info.get("vendor_id_raw", ""),
      family=_number(info.get("family"), int),
      model=_number(info.get("model"), int))


CGROUP = "/sys/fs/cgroup"


def _own_cgroups(proc_cgroup: str) -> dict:
  """{"v2": path, "v1": path of the cpu controller} from /proc/self/cgroup
  ("/" inside a container's cgroup namespace; missing: root)."""
  paths = {}
  try:
    with open(proc_cgroup, encoding="utf-8") as f:
      for line in f:
        _, controllers, path = line.rstrip("\n").split(":", 2)
        if controllers == "":
          paths["v2"] = path
        elif "cpu" in controllers.split(","):
          paths["v1"] = path
  except (OSError, ValueError):
    pass
  return paths


def _read_ints(*files) -> Optional[tuple]:
  try:
    fields = []
    for name in files:
      with open(name, encoding="utf-8") as f:
        fields += f.read().split()
    return int(fields[0]), int(fields[1])
  except (OSError, ValueError, IndexError):  # absent, unreadable, "max"
    return None


def cgroup_cpu_limit(root: str = CGROUP,
                     proc_cgroup: str = "/proc/self/cgroup") -> Optional[int]:
  """Cores a CPU quota allows (`docker --cpus`, a Kubernetes limit), rounded
  up: the tightest cgroup v2 cpu.max or v1 cpu.cfs_quota_us /
  cpu.cfs_period_us on the way from this process's cgroup up to the root;
  None without a quota."""
  own = _own_cgroups(proc_cgroup)
  limits = []
  for version in ("v2", "v1"):
    parts = [p for p in own.get(version, "/").split("/") if p]
    for depth in range(len(parts), -1, -1):  # own cgroup, then its parents
      here = os.path.join(root, *(["cpu"] if version == "v1" else []),
                          *parts[:depth])
      pair = (_read_ints(os.path.join(here, "cpu.max")) if version == "v2"
              else _read_ints(os.path.join(here, "cpu.cfs_quota_us"),
                              os.path.join(here, "cpu.cfs_period_us")))
      if pair and pair[0] > 0 and pair[1] > 0:
        limits.append(max(1, -(-pair[0] // pair[1])))
  return min(limits) if limits else None


def usable_cores(cgroup_root: str = CGROUP,
                 proc_cgroup: str = "/proc/self/cgroup") -> int:
  """Cores this process may use: its affinity (`taskset`, a cpuset), capped
  by a CPU quota; os.cpu_count() sees neither."""
  try:
    cores = len(os.sched_getaffinity(0)) or 1
  except (AttributeError, OSError):  # not Linux
    cores = os.cpu_count() or 1
  limit = cgroup_cpu_limit(cgroup_root, proc_cgroup)
  return min(cores, limit) if limit else cores


def capped(features: CpuFeatures, isa: Optional[str]) -> CpuFeatures:
  """`features` without the flags above oneDNN ISA `isa` (unknown or empty
  names, which oneDNN ignores too, change nothing).

    capped(parse(text), "AVX2").native_bf16   # False on any CPU
  """
  rank = _isa_rank(isa or "")
  if rank is None:
    return features
  kept = frozenset(f for f in features.flags if _flag_rank(f) <= rank)
  if kept == features.flags:
    return features
  return dataclasses.replace(features, flags=kept, isa_cap=isa.upper())


def read(cpuinfo: str = CPUINFO,
         environ: Optional[Mapping[str, str]] = None) -> CpuFeatures:
  """This machine's CpuFeatures as TensorFlow's oneDNN kernels see them: the
  flags in cpuinfo (py-cpuinfo's when the system's /proc/cpuinfo cannot be
  read; another missing file is an unknown CPU), capped by ONEDNN_MAX_CPU_ISA
  when set."""
  environ = os.environ if environ is None else environ
  try:
    with open(cpuinfo, encoding="utf-8", errors="replace") as f:
      features = parse(f.read())
  except OSError:
    features = from_py_cpuinfo() if cpuinfo == CPUINFO else parse("")
  cap = next((environ[k] for k in ISA_CAP_ENV if environ.get(k)), None)
  return capped(features, cap)
