"""What the benchmark scripts print about the machine they ran on."""

import os
import platform
import subprocess

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf


def cpu_model() -> str:
  """The CPU's model name from lscpu (platform.processor() without it)."""
  try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True,
                         check=False).stdout
    for line in out.splitlines():
      if line.startswith("Model name:"):
        return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "?"


def load_avg() -> str:
  """The 1/5/15-minute load averages, e.g. "1.42/1.60/1.55"."""
  return "/".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
  """Cores, CPU model, TF and Python versions and the load now."""
  return (f"{os.cpu_count()} cores ({cpu_model()}), TF {tf.__version__}, "
          f"Python {platform.python_version()}, load avg at start "
          f"{load_avg()}")
