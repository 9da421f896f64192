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

r"""The longest functions in official_spanbert/ and tools/, in lines.

  python dev/function_lengths.py          # the checkout this file is in
  python dev/function_lengths.py ROOT --most 20

Prints how many functions there are, how many run to 100+ and to 60+ lines
(first line of the `def` to its last line, decorators not counted), then the
longest ones: length, path, name.
"""

import argparse
import ast
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("official_spanbert", "tools")


def function_lengths(root):
  """(lines, path, name) of each function below FOLDERS, longest first."""
  rows = []
  for folder in FOLDERS:
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
      for name in files:
        if not name.endswith(".py"):
          continue
        path = os.path.join(dirpath, name)
        with open(path, encoding="utf-8") as f:
          tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rows.append((node.end_lineno - node.lineno + 1,
                         os.path.relpath(path, root), node.name))
  rows.sort(reverse=True)
  return rows


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("root", nargs="?", default=REPO,
                      help="the checkout to measure")
  parser.add_argument("--most", type=int, default=40,
                      help="how many of the longest functions to list")
  args = parser.parse_args(argv)
  rows = function_lengths(args.root)
  print("functions:", len(rows), ">=100:", sum(r[0] >= 100 for r in rows),
        ">=60:", sum(r[0] >= 60 for r in rows))
  for row in rows[:args.most]:
    print(*row)


if __name__ == "__main__":
  main()
