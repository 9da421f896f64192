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

"""Runs one pytest file as a Bazel py_test (the `main` of every //:test_*).

Bazel runs this with the test file's runfiles path as the argument, in the
runfiles tree of the workspace. Output goes to the test log, per-test results
to Bazel's XML_OUTPUT_FILE, and temporary files under TEST_TMPDIR.
"""

import os
import sys

import pytest


def main(argv: list[str]) -> int:
  if not argv:
    print("usage: bazel_pytest_main.py TEST_FILE.py [pytest args...]",
          file=sys.stderr)
    return 2
  args = [
      "-q", "-rs",
      "-p", "no:cacheprovider",  # the runfiles tree is not ours to write
      f"--rootdir={os.getcwd()}",
  ]
  if os.environ.get("XML_OUTPUT_FILE"):
    args.append(f"--junitxml={os.environ['XML_OUTPUT_FILE']}")
  if os.environ.get("TEST_TMPDIR"):
    args.append(f"--basetemp={os.path.join(os.environ['TEST_TMPDIR'], 'pytest')}")
  code = int(pytest.main(args + argv))
  if code == pytest.ExitCode.NO_TESTS_COLLECTED:
    print(f"{argv[0]}: no tests collected", file=sys.stderr)
  return code


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
