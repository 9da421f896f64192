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

"""The tests' `python` launcher (fork_server.py) behaves as the interpreter.

A forked child gets the command line, environment, working directory,
standard streams, resource limits and signals of the process that started
it, and exits as a fresh interpreter would; what it cannot reproduce runs
the real interpreter. Each check starts a child through sys.executable, as
the other tests do.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import fork_server

pytestmark = pytest.mark.skipif(
    "SPANBERT_FORK_DIR" not in os.environ,
    reason="the launcher is off (SPANBERT_TEST_FORK=0 or Bazel)")

# Printed by a child: whether it was forked (TensorFlow already imported).
FORKED = "import sys; print('tensorflow' in sys.modules)"


@pytest.fixture(scope="module", autouse=True)
def _server():
  fork_server.ensure_server()


def _py(*args, **kwargs):
  kwargs.setdefault("capture_output", True)
  kwargs.setdefault("text", True)
  kwargs.setdefault("timeout", 120)
  return subprocess.run([sys.executable, *args], check=False, **kwargs)


def test_a_child_is_forked_and_gets_argv_env_cwd_and_stdin(tmp_path):
  code = textwrap.dedent("""
      import os, sys
      print('tensorflow' in sys.modules, sys.argv[1:], os.getcwd(),
            os.environ['SPANBERT_PROBE'], sys.stdin.read().strip())
      sys.stderr.write('to stderr\\n')
      """)
  result = _py("-c", code, "a", "b c", cwd=str(tmp_path), input="from stdin",
               env=dict(os.environ, SPANBERT_PROBE="probe"))
  assert result.returncode == 0, result.stderr
  assert result.stdout.split("\n")[0] == (
      f"True ['a', 'b c'] {tmp_path} probe from stdin")
  assert result.stderr == "to stderr\n"


def test_exit_codes_and_tracebacks_are_the_interpreters(tmp_path):
  assert _py("-c", "import sys; sys.exit(3)").returncode == 3
  assert _py("-c", "raise SystemExit('bye')").returncode == 1
  failed = _py("-c", "import sys; print('tensorflow' in sys.modules); 1/0")
  assert failed.returncode == 1
  assert failed.stdout.strip() == "True"
  assert failed.stderr.strip().endswith("ZeroDivisionError: division by zero")
  assert "Traceback" in failed.stderr


def test_a_script_and_a_module_see_the_path_a_fresh_interpreter_would(
    tmp_path):
  (tmp_path / "helper_mod.py").write_text("VALUE = 42\n")
  script = tmp_path / "script.py"
  script.write_text(textwrap.dedent("""
      import atexit, sys
      import helper_mod
      atexit.register(lambda: print('atexit ran'))
      print('tensorflow' in sys.modules, __name__, helper_mod.VALUE,
            sys.argv)
      """))
  result = _py(str(script), "x")
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines() == [
      f"True __main__ 42 ['{script}', 'x']", "atexit ran"]
  # -m: the working directory first; PYTHONPATH next.
  other = tmp_path / "other"
  other.mkdir()
  (other / "other_mod.py").write_text(
      "import sys\nprint('tensorflow' in sys.modules, __name__)\n")
  result = _py("-m", "other_mod", cwd=str(other))
  assert result.stdout.strip() == "True __main__", result.stderr
  result = _py("-m", "other_mod", cwd=str(tmp_path),
               env=dict(os.environ, PYTHONPATH=str(other)))
  assert result.stdout.strip() == "True __main__", result.stderr
  assert _py("-m", "other_mod", cwd=str(tmp_path)).returncode == 1


def test_signals_reach_the_child_and_its_death_is_the_callers(tmp_path):
  code = textwrap.dedent("""
      import signal, sys, time
      def on_term(*_):
          print('terminated', flush=True)
          sys.exit(7)
      signal.signal(signal.SIGTERM, on_term)
      print('ready', flush=True)
      time.sleep(60)
      """)
  proc = subprocess.Popen([sys.executable, "-c", code],
                          stdout=subprocess.PIPE, text=True)
  assert proc.stdout.readline().strip() == "ready"
  proc.send_signal(signal.SIGTERM)
  assert proc.wait(timeout=60) == 7
  assert proc.stdout.read().strip() == "terminated"
  # Unhandled: the caller sees the signal, as with a fresh interpreter.
  # (SIGINT as in a terminal: a background job, CI's say, ignores it, and so
  # would the interpreter.)
  proc = subprocess.Popen([sys.executable, "-c",
                           "print('ready', flush=True); "
                           "import time; time.sleep(60)"],
                          stdout=subprocess.PIPE, text=True,
                          preexec_fn=_sigint_as_in_a_terminal)
  assert proc.stdout.readline().strip() == "ready"
  proc.send_signal(signal.SIGINT)
  assert proc.wait(timeout=60) == -signal.SIGINT


def _sigint_as_in_a_terminal():
  signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_signal_the_caller_ignores_stays_ignored():
  """As in a fresh interpreter: a background job's ignored SIGINT is ignored
  by the child too (it got Python's KeyboardInterrupt handler instead)."""
  proc = subprocess.Popen(
      [sys.executable, "-c", "import signal; print(signal.getsignal("
       "signal.SIGINT) == signal.SIG_IGN, flush=True)"],
      stdout=subprocess.PIPE, text=True,
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
  assert proc.communicate(timeout=60)[0].strip() == "True"


def test_a_killed_launcher_takes_its_child_with_it(tmp_path):
  marker = tmp_path / "pid"
  code = (f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid()))"
          "; time.sleep(120)")
  proc = subprocess.Popen([sys.executable, "-c", code])
  deadline = time.time() + 60
  while not (marker.exists() and marker.read_text()):
    assert time.time() < deadline
    time.sleep(0.1)
  child = int(marker.read_text())
  proc.kill()
  proc.wait(timeout=30)
  deadline = time.time() + 30
  while os.path.exists(f"/proc/{child}") and time.time() < deadline:
    state = open(f"/proc/{child}/stat", encoding="utf-8").read().split()[2]
    if state == "Z":
      break
    time.sleep(0.1)
  gone = (not os.path.exists(f"/proc/{child}")
          or open(f"/proc/{child}/stat", encoding="utf-8").read().split()[2]
          == "Z")
  assert gone, f"the forked child {child} outlived its launcher"


def test_resource_limits_and_numpy_seeds_are_per_process(tmp_path):
  import resource  # pylint: disable=g-import-not-at-top
  soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

  def small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, hard))

  out = tmp_path / "big"
  result = _py("-c", f"with open({str(out)!r}, 'wb') as f: "
               "f.write(b'x' * 5000)", preexec_fn=small_files)
  assert result.returncode == 1
  assert "File too large" in result.stderr
  assert resource.getrlimit(resource.RLIMIT_FSIZE) == (soft, hard)
  draws = {_py("-c", "import numpy; print(numpy.random.rand())").stdout
           for _ in range(2)}
  assert len(draws) == 2


def test_what_a_fork_cannot_reproduce_runs_the_real_interpreter(tmp_path):
  assert _py("-c", FORKED).stdout.strip() == "True"
  for args, env in [
      (["-B", "-c", FORKED], None),                       # an option
      (["-c", FORKED], {"SPANBERT_FRESH_PYTHON": "1"}),  # asked for
  ]:
    result = _py(*args, env=dict(os.environ, **(env or {})))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False", args
  # Each says why in <fork dir>/fallbacks.log, naming the test; the
  # session's summary counts them by reason and file (conftest).
  import conftest  # pylint: disable=g-import-not-at-top
  counts = conftest.fallback_counts(os.environ["SPANBERT_FORK_DIR"])
  for reason in ("options", "off"):
    assert counts.get((reason, "tests/test_fork_server.py"), 0) >= 1, counts
  # Another package on the path: a fork would run the server's.
  fake = tmp_path / "official_spanbert"
  fake.mkdir()
  (fake / "__init__.py").write_text("WHERE = 'elsewhere'\n")
  result = _py("-c", "import official_spanbert as p; print(p.WHERE)",
               cwd=str(tmp_path), env=dict(os.environ,
                                           PYTHONPATH=str(tmp_path)))
  assert result.stdout.strip() == "elsewhere", result.stderr


def test_start_up_variables_a_test_left_changed_are_restored_and_named():
  # conftest's autouse check: a start-up variable left set would send every
  # later process of the worker to the real interpreter.
  import conftest  # pylint: disable=g-import-not-at-top
  before = fork_server.start_env(os.environ)
  saved = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
  os.environ["TF_ENABLE_ONEDNN_OPTS"] = "leaked"
  os.environ["PYTHONPATH_UNRELATED_TO_START"] = "x"  # not a start variable
  try:
    changed = conftest.restore_start_env(before)
  finally:
    os.environ.pop("PYTHONPATH_UNRELATED_TO_START")
  assert changed == {"TF_ENABLE_ONEDNN_OPTS": (saved, "leaked")}
  assert fork_server.start_env(os.environ) == before
  assert conftest.restore_start_env(before) == {}
