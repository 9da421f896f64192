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

"""How much a console script prints: quiet by default, detail with -v.

Quiet runs show stage lines, progress, a summary and real warnings, with
library INFO logs and known third-party noise off; `--verbosity` gives them
back. `run` wraps every tool's main. See docs/architecture.md, "What a command
prints".
"""

import ctypes
import glob
import mmap
import os
import re
import sys
import warnings
from typing import Callable, List, Optional, Sequence

QUIET_TF_CPP_MIN_LOG_LEVEL = "3"
VERBOSE_TF_CPP_MIN_LOG_LEVEL = "2"
# (message regex, category) of the third-party warnings quiet mode hides.
KNOWN_WARNINGS = (
    (r"pkg_resources is deprecated as an API", UserWarning),
    (r"The initializer \w+ is unseeded", UserWarning),
)
_VERBOSITY = re.compile(r"^--?(?:verbosity|v)(?:=(-?\d+))?$")
_cxx_applied = []


def verbosity_in_argv(argv: Sequence[str]) -> Optional[int]:
  """The --verbosity/-v an argv gives (a bare -v is 1), or None.

  Reads `--verbosity=N`, `--verbosity N`, `-v=N`, `-v N` and `-v`, up to a
  `--` (after which arguments are not flags).
  """
  found = None
  args = list(argv[1:])
  for i, arg in enumerate(args):
    if arg == "--":
      break
    match = _VERBOSITY.match(arg)
    if not match:
      continue
    if match.group(1) is not None:
      found = int(match.group(1))
    elif i + 1 < len(args) and re.fullmatch(r"-?\d+", args[i + 1]):
      found = int(args[i + 1])
    elif arg == "-v":
      found = 1
  return found


def is_verbose(argv: Optional[Sequence[str]] = None) -> bool:
  """Whether argv (default sys.argv) asks for detail: any --verbosity >= 0."""
  v = verbosity_in_argv(sys.argv if argv is None else argv)
  return v is not None and v >= 0


def hide_known_warnings() -> None:
  """Filters out the KNOWN_WARNINGS (third-party noise, see the docstring)."""
  for message, category in KNOWN_WARNINGS:
    warnings.filterwarnings("ignore", message=message, category=category)


def setup_before_tensorflow(argv: Optional[Sequence[str]] = None) -> None:
  """The C++ log level and warning filters; call before TF is imported."""
  verbose = is_verbose(argv)
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL",
                        VERBOSE_TF_CPP_MIN_LOG_LEVEL if verbose
                        else QUIET_TF_CPP_MIN_LOG_LEVEL)
  if not verbose:
    hide_known_warnings()


def prefer_onednn() -> None:
  """Turns TensorFlow's oneDNN kernels on unless TF_ENABLE_ONEDNN_OPTS is set.

  TensorFlow does so by itself only on CPUs with AVX-512 VNNI, BF16 or AMX;
  on an AVX2-only Zen 3 oneDNN made the demo's MiniLM steps 1.18x cheaper in
  CPU time (docs/demo.md). The demo's binary calls this before TensorFlow is
  imported (later it has no effect); library code never does.
  """
  os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def _absl_set_min_log_level(library: str) -> Optional[Callable[[int], None]]:
  """absl::SetMinLogLevel of a TensorFlow shared library, or None.

  The symbol's name holds absl's inline namespace (lts_YYYYMMDD), which
  changes between TF releases; it is read from the library's symbol table.
  """
  try:
    with open(library, "rb") as f, mmap.mmap(f.fileno(), 0,
                                              access=mmap.ACCESS_READ) as m:
      tail = b"14SetMinLogLevelENS0_18LogSeverityAtLeastE"
      end = m.find(tail)
      window = m[max(0, end - 40):end + len(tail)] if end >= 0 else b""
    match = re.search(rb"_ZN4absl\d+lts_\d+" + re.escape(tail) + rb"$",
                      window)
    if not match:
      return None
    fn = getattr(ctypes.CDLL(library), match.group(0).decode())
    fn.argtypes = [ctypes.c_int]
    fn.restype = None
    return fn
  except (OSError, AttributeError, ValueError):
    return None


def set_cxx_absl_min_level(libraries: Sequence[str]) -> bool:
  """absl::SetMinLogLevel(kError) in the first of `libraries` that has it.

  Returns whether one had it; else warns once (on absl's log) that the C++
  INFO lines may show, and changes nothing: a TensorFlow that renamed or
  hid the symbol quiets less, it does not fail.
  """
  for library in libraries:
    fn = _absl_set_min_log_level(library)
    if fn is not None:
      fn(2)  # absl::LogSeverityAtLeast::kError
      return True
  from absl import logging  # pylint: disable=g-import-not-at-top
  logging.warning(
      "no absl::SetMinLogLevel in %s: TensorFlow's C++ INFO lines (e.g. "
      "XLA's \"Compiled cluster using XLA!\") may show in quiet mode",
      ", ".join(libraries) or "TensorFlow (no libtensorflow_framework.so*)")
  return False


def quiet_cxx_absl_log() -> bool:
  """Quiet mode: the C++ absl log below ERROR off (XLA's INFO lines,
  Grappler's warnings).

  No supported setting reaches that log in TF 2.20 (measured: with
  TF_CPP_MIN_LOG_LEVEL=3, also with TF_CPP_MAX_VLOG_LEVEL=-1,
  GLOG_minloglevel=2 or ABSL_MIN_LOG_LEVEL=2 set, a jit_compile function
  still prints `device_compiler.h:196] Compiled cluster using XLA!`):
  TF_CPP_MIN_LOG_LEVEL governs TensorFlow's own logging only, absl's
  --minloglevel is a C++ flag that TensorFlow never parses, and TensorFlow
  binds no Python call to it. So this calls absl::SetMinLogLevel, which
  libtensorflow_framework exports, through ctypes (once, after TF is
  imported); where it is missing, set_cxx_absl_min_level warns instead.
  Does nothing when TF_CPP_MIN_LOG_LEVEL is below 3 (verbose, or set by the
  user); returns whether it set the level.
  """
  if _cxx_applied:
    return _cxx_applied[0]
  applied = False
  if os.environ.get("TF_CPP_MIN_LOG_LEVEL") == QUIET_TF_CPP_MIN_LOG_LEVEL:
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    applied = set_cxx_absl_min_level(sorted(glob.glob(os.path.join(
        os.path.dirname(tf.__file__), "libtensorflow_framework.so*"))))
  _cxx_applied.append(applied)
  return applied


def normalize_argv(argv: Sequence[str]) -> List[str]:
  """argv with a bare `-v` as `--verbosity=1` (absl's -v takes a value)."""
  out = []
  args = list(argv)
  for i, arg in enumerate(args):
    nxt = args[i + 1] if i + 1 < len(args) else None
    if (i and arg == "-v" and
        (nxt is None or not re.fullmatch(r"-?\d+", nxt)) and "--" not in
        args[1:i]):
      out.append("--verbosity=1")
    else:
      out.append(arg)
  return out


def apply_verbosity(tensorflow: bool = True) -> bool:
  """After flags are parsed: absl's level (WARNING unless --verbosity was
  given) and, in quiet mode, the C++ absl level (which imports TensorFlow,
  unless `tensorflow` is False and nothing imported it). Returns whether
  verbose."""
  from absl import flags  # pylint: disable=g-import-not-at-top
  from absl import logging  # pylint: disable=g-import-not-at-top
  verbose = flags.FLAGS["verbosity"].present and flags.FLAGS.verbosity >= 0
  if not flags.FLAGS["verbosity"].present:
    logging.set_verbosity(logging.WARNING)
  if not verbose:
    hide_known_warnings()
    if tensorflow or "tensorflow" in sys.modules:
      quiet_cxx_absl_log()
  return verbose


def unexpected_arguments(tool: str, argv: Sequence[str],
                         hint: str = "") -> bool:
  """Writes `<tool>: error: unexpected arguments …` if argv holds more than
  the program's name (absl leaves non-flag words there); True if it did.

  Example:

    if console.unexpected_arguments("build_vocab", argv, "inputs go in "
                                    "--input_file"):
      return 2
  """
  if len(argv) <= 1:
    return False
  sys.stderr.write(f"{tool}: error: unexpected arguments {' '.join(argv[1:])}"
                   f"{'; ' + hint if hint else ''}\n")
  return True


def run(main: Callable, argv: Optional[Sequence[str]] = None,
        tensorflow: bool = True, **kwargs):
  """absl's app.run(main) with the verbosity above (kwargs go to app.run).

  Tools whose flags need nothing from TensorFlow's side of the package
  (spanbert-train, -export-*, -convert-checkpoint) import it inside `main`,
  so `--help`, answered while the flags are parsed, does not load it: 0.2 s
  instead of ~7 s of CPU. `tensorflow=False`: a tool that never uses it
  (the C++ log level is then left alone).
  """
  from absl import app  # pylint: disable=g-import-not-at-top

  def quiet_main(args):
    apply_verbosity(tensorflow)
    return main(args)

  app.run(quiet_main, argv=normalize_argv(sys.argv if argv is None else argv),
          **kwargs)
