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

"""dev/install_venv.py: pip's sources become uv's flags; pip where uv fails.

The installs themselves are `make venv`'s (every CI run); here the commands
it would run are recorded instead of run.
"""

import subprocess
import types

from dev import install_venv

# `pip config list` on the CI machines (pip.conf plus PIP_* variables).
_MACHINE = """\
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
"""


def test_pips_sources_become_uvs_flags_once_each():
  assert install_venv.pip_sources(_MACHINE) == [
      "--constraint", "/etc/xdg/pip/constraints.txt",
      "--extra-index-url", "file:///opt/pypi/simple",
      "--extra-index-url", "file:///opt/pypi-more/simple",
      "--find-links", "/opt/wheels"]


def test_one_default_index_the_last_read_and_first():
  config = ("global.find-links='/w'\nglobal.index-url='https://a/simple'\n"
            "user.index-url='https://b/simple'\n")
  assert install_venv.pip_sources(config) == [
      "--index-url", "https://b/simple", "--find-links", "/w"]


def test_no_sources_no_flags():
  assert install_venv.pip_sources("") == []
  assert install_venv.pip_sources(":env:.timeout='60'\nnot a line\n") == []


def _record(monkeypatch, uv_installs):
  calls = []

  def run(args, **kwargs):
    calls.append((list(args), kwargs.get("env")))
    code = 0
    if args[-2:] == ["-q", install_venv.UV] and not uv_installs:
      code = 1
    stdout = _MACHINE if args[-2:] == ["config", "list"] else ""
    return types.SimpleNamespace(returncode=code, stdout=stdout,
                                 stderr="no uv here\n")

  monkeypatch.setattr(subprocess, "run", run)
  return calls


def test_uv_installs_with_pips_sources_and_ca_bundle(monkeypatch):
  calls = _record(monkeypatch, uv_installs=True)
  monkeypatch.delenv("SSL_CERT_FILE", raising=False)
  assert install_venv.install("test,interop", python="/v/bin/python") == 0
  args, env = calls[-1]
  assert args[:3] == ["/v/bin/uv", "pip", "install"]
  assert args[-2:] == ["-e", ".[test,interop]"]
  assert "--find-links" in args and "--constraint" in args
  assert env["SSL_CERT_FILE"] == "/etc/ssl/certs/ca-certificates.crt"


def test_without_uv_pip_installs_and_says_why(monkeypatch, capsys):
  calls = _record(monkeypatch, uv_installs=False)
  assert install_venv.install("interop", python="/v/bin/python") == 0
  assert [args for args, _ in calls][-1] == [
      "/v/bin/python", "-m", "pip", "install", "-q", "--no-compile", "-e",
      ".[interop]"]
  err = capsys.readouterr().err
  assert err == ("no uv here\ninstall_venv: could not install uv==0.13.9; "
                 "installing with pip\n")
