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
