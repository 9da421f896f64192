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

r"""Reports Python files without the Apache-2.0 license header; --fix adds it.

The header is Model Garden's, with this project's copyright line:

  # Copyright 2026 The official_spanbert Authors. All Rights Reserved.
  #
  # Licensed under the Apache License, Version 2.0 (the "License");
  # ...
  # limitations under the License.

It goes first in the file (after a `#!` line and an encoding line, if any).
Any year and any copyright holder are accepted, so files that keep another
project's header (e.g. code adapted from Model Garden) pass.

  python dev/check_headers.py         # exit 1 if a *.py file lacks it
  python dev/check_headers.py --fix   # add it where it is missing
  python dev/check_headers.py tests/ setup.py  # only these files/folders

Without paths it checks the *.py files git knows (tracked, or untracked and
not ignored) under the repository root.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys

COPYRIGHT_HOLDER = "The official_spanbert Authors"
LICENSE_LINES = (
    "#",
    '# Licensed under the Apache License, Version 2.0 (the "License");',
    "# you may not use this file except in compliance with the License.",
    "# You may obtain a copy of the License at",
    "#",
    "#     http://www.apache.org/licenses/LICENSE-2.0",
    "#",
    "# Unless required by applicable law or agreed to in writing, software",
    '# distributed under the License is distributed on an "AS IS" BASIS,',
    "# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or "
    "implied.",
    "# See the License for the specific language governing permissions and",
    "# limitations under the License.",
)
_COPYRIGHT = re.compile(r"# Copyright (\d{4})(-\d{4})? \S.*$")
_PREAMBLE = re.compile(r"#!|#.*coding[:=]")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = {".git", ".venv", "venv", "build", "dist", "__pycache__",
              ".pytest_cache"}


def header(year: int) -> str:
  return "\n".join((f"# Copyright {year} {COPYRIGHT_HOLDER}. "
                    "All Rights Reserved.",) + LICENSE_LINES) + "\n"


def _split_preamble(lines: list[str]) -> int:
  """How many leading lines are a `#!` line and/or an encoding line."""
  n = 0
  while n < min(2, len(lines)) and _PREAMBLE.match(lines[n]):
    n += 1
  return n


def has_header(text: str) -> bool:
  """Whether `text` starts (after a #! / encoding line) with the header."""
  lines = text.splitlines()
  start = _split_preamble(lines)
  block = lines[start:start + 1 + len(LICENSE_LINES)]
  return (len(block) == 1 + len(LICENSE_LINES)
          and bool(_COPYRIGHT.match(block[0]))
          and tuple(line.rstrip() for line in block[1:]) == LICENSE_LINES)


def add_header(text: str, year: int) -> str:
  """`text` with the header inserted; unchanged if it already has one."""
  if has_header(text):
    return text
  lines = text.splitlines(keepends=True)
  start = _split_preamble(lines)
  preamble = "".join(lines[:start])
  if preamble and not preamble.endswith("\n"):
    preamble += "\n"
  rest = "".join(lines[start:]).lstrip("\n")
  return preamble + header(year) + ("\n" + rest if rest else "")


def python_files(paths: list[str], root: str = REPO_ROOT) -> list[str]:
  """The *.py files under `paths` (default: git's files under `root`)."""
  if not paths:
    try:
      out = subprocess.run(
          ["git", "ls-files", "-z", "--cached", "--others",
           "--exclude-standard", "--", "*.py"],
          cwd=root, check=True, capture_output=True, text=True).stdout
      return sorted(os.path.join(root, p) for p in out.split("\0")
                    if p and os.path.isfile(os.path.join(root, p)))
    except (OSError, subprocess.CalledProcessError):
      paths = [root]  # Not a git checkout: walk it.
  files = []
  for path in paths:
    if os.path.isfile(path):
      files.append(path)
      continue
    if not os.path.isdir(path):
      raise FileNotFoundError(path)
    for dirpath, dirnames, filenames in os.walk(path):
      dirnames[:] = [d for d in dirnames
                     if d not in _SKIP_DIRS and not d.startswith("bazel-")]
      files += [os.path.join(dirpath, f) for f in filenames
                if f.endswith(".py")]
  return sorted(files)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
      description=__doc__.splitlines()[0],
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("paths", nargs="*",
                      help="files or folders (default: the repository)")
  parser.add_argument("--fix", action="store_true",
                      help="add the header to the files that lack it")
  parser.add_argument("--year", type=int,
                      default=datetime.date.today().year,
                      help="year in the added copyright line")
  args = parser.parse_args(argv)
  missing = []
  for path in python_files(args.paths):
    with open(path, encoding="utf-8") as f:
      text = f.read()
    if has_header(text):
      continue
    missing.append(path)
    if args.fix:
      with open(path, "w", encoding="utf-8") as f:
        f.write(add_header(text, args.year))
  for path in missing:
    print(("added: " if args.fix else "missing: ") +
          os.path.relpath(path))
  if missing and not args.fix:
    print(f"{len(missing)} file(s) without the license header "
          "(add it with --fix)", file=sys.stderr)
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
