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

"""console.py: quiet console scripts unless --verbosity / -v (issue 24)."""

import _ctypes
import logging
import os
import subprocess
import sys

import pytest

from official_spanbert.utils import console

from conftest import REPO


def test_verbosity_is_read_from_every_spelling():
  read = console.verbosity_in_argv
  assert read(["prog"]) is None
  assert read(["prog", "-v"]) == 1
  assert read(["prog", "--verbosity=0"]) == 0
  assert read(["prog", "--verbosity", "2"]) == 2
  assert read(["prog", "-v=-1"]) == -1
  assert read(["prog", "--", "-v"]) is None  # not a flag after --
  assert console.is_verbose(["prog", "-v"])
  assert not console.is_verbose(["prog", "--verbosity=-1"])
  assert console.normalize_argv(["prog", "-v", "--x=1"]) == [
      "prog", "--verbosity=1", "--x=1"]
  assert console.normalize_argv(["prog", "-v", "2"]) == ["prog", "-v", "2"]


def _script(verbose: bool) -> subprocess.CompletedProcess:
  """A console script that logs INFO, warns, hits the known noise and runs
  an XLA-compiled function (the C++ absl INFO line)."""
  code = (
      "import warnings\n"
      "from absl import logging\n"
      "import official_spanbert\n"
      "from official_spanbert.utils import console\n"
      "import tensorflow as tf\n"
      "def main(_):\n"
      "  logging.info('library detail')\n"
      "  logging.warning('a real warning')\n"
      "  warnings.warn('The initializer TruncatedNormal is unseeded and')\n"
      "  f = tf.function(lambda x: x * 2, jit_compile=True)\n"
      "  print('result', float(f(tf.constant(2.0))))\n"
      "console.run(main)\n")
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  env.update(PYTHONPATH=REPO, TF_NUM_INTRAOP_THREADS="1",
             TF_NUM_INTEROP_THREADS="1")
  return subprocess.run(
      [sys.executable, "-c", code] + (["-v"] if verbose else []), env=env,
      capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.usefixtures("fresh_python")  # what a start-up imports
def test_quiet_by_default_and_the_detail_with_v():
  quiet = _script(verbose=False)
  assert quiet.returncode == 0, quiet.stderr
  assert quiet.stdout == "result 4.0\n"
  assert "a real warning" in quiet.stderr  # real warnings still show
  for noise in ("library detail", "unseeded", "cuInit",
                "Compiled cluster using XLA", "pkg_resources"):
    assert noise not in quiet.stderr, quiet.stderr
  verbose = _script(verbose=True)
  assert verbose.returncode == 0, verbose.stderr
  assert "library detail" in verbose.stderr
  assert "unseeded" in verbose.stderr
  assert "a real warning" in verbose.stderr


# Their flags need nothing from TensorFlow's side of the package.
LIGHT_HELP_TOOLS = ("train", "export_savedmodel", "export_tfhub",
                    "convert_checkpoint", "export_keras_hub",
                    "build_demo_corpus")


@pytest.mark.usefixtures("fresh_python")  # what a start-up imports
@pytest.mark.parametrize("tool", LIGHT_HELP_TOOLS)
def test_help_does_not_load_tensorflow(tool):
  """--help is answered while the flags are parsed, before main imports TF."""
  code = (f"import sys\nfrom official_spanbert.tools import {tool} as t\n"
          "sys.argv = ['prog', '--help']\n"
          "try:\n  t.run()\nexcept SystemExit:\n  pass\n"
          "print('tensorflow loaded:', 'tensorflow' in sys.modules)\n")
  result = subprocess.run([sys.executable, "-c", code],
                          env={**os.environ, "PYTHONPATH": REPO},
                          capture_output=True, text=True, timeout=120,
                          check=False)
  assert "USAGE:" in result.stdout + result.stderr, result.stderr[-2000:]
  assert result.stdout.strip().endswith("tensorflow loaded: False"), (
      result.stdout[-500:], result.stderr[-2000:])


def _run_tool(tool, argv):
  """(exit code, last stderr line) of official_spanbert.tools.<tool> run
  with argv in a fresh process."""
  code = (f"import sys\nfrom official_spanbert.tools import {tool} as t\n"
          f"sys.argv = ['prog', *{argv!r}]\nt.run()\n")
  result = subprocess.run([sys.executable, "-c", code],
                          env={**os.environ, "PYTHONPATH": REPO},
                          capture_output=True, text=True, timeout=300,
                          check=False)
  lines = result.stderr.strip().splitlines()
  return result.returncode, lines[-1] if lines else ""


@pytest.mark.parametrize("tool, flags", [
    ("build_demo_corpus", ["--output=out"])])
def test_words_beside_the_flags_are_one_error_line(tool, flags):
  """The tools share console.unexpected_arguments: exit 2, one line (a tool
  that does not import TensorFlow first)."""
  rc, last = _run_tool(tool, [*flags, "stray", "words"])
  assert (rc, last) == (2, f"{tool}: error: unexpected arguments stray words")


def test_unexpected_arguments_names_the_tool_and_the_hint(capsys):
  assert not console.unexpected_arguments("t", ["prog"])
  assert console.unexpected_arguments("t", ["prog", "a"], "inputs go in --x")
  assert capsys.readouterr().err == (
      "t: error: unexpected arguments a; inputs go in --x\n")


def test_coref_tf1_to_tf_reads_bert_config_under_either_name(tmp_path):
  """Issue 48 item 11: --bert_config (tf1_to_tf) beside --bert_config_file
  (coref_tf1_to_tf); now one flag, the old spelling an alias of it."""
  config = str(tmp_path / "missing" / "bert_config.json")
  rc, last = _run_tool("convert_checkpoint", [
      "--direction=coref_tf1_to_tf", f"--input={tmp_path}/model.max.ckpt",
      f"--bert_config_file={config}", f"--output={tmp_path}/out"])
  assert (rc, last) == (1, "convert_checkpoint: error: [Errno 2] No such file "
                        f"or directory: '{config}'")


@pytest.mark.parametrize("library", ["none", "empty", "other"])
def test_a_tensorflow_without_the_absl_symbol_quiets_less_and_warns(
    library, tmp_path, caplog):
  """Issue 56 item 3: quiet_cxx_absl_log calls absl::SetMinLogLevel in
  libtensorflow_framework through ctypes (no supported setting exists); a
  release that moves it must cost a warning, not the run."""
  libraries = {
      "none": [],  # no libtensorflow_framework.so* at all
      "empty": [str(tmp_path / "libtensorflow_framework.so.2")],
      "other": [_ctypes.__file__],  # a shared library without absl
  }[library]
  if library == "empty":
    open(libraries[0], "wb").close()
  with caplog.at_level(logging.WARNING):
    assert not console.set_cxx_absl_min_level(libraries)
  assert "no absl::SetMinLogLevel in " in caplog.text
  assert "may show in quiet mode" in caplog.text



def test_prefer_onednn_sets_the_variable_unless_it_is_set(monkeypatch):
  # Set first, so that monkeypatch restores the variable's absence too: a
  # delenv of an unset variable records nothing, and the "1" set below
  # outlived the test.
  monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "unset below")
  monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS")
  console.prefer_onednn()
  assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "1"
  monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")  # the user's choice stays
  console.prefer_onednn()
  assert os.environ["TF_ENABLE_ONEDNN_OPTS"] == "0"
