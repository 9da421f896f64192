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

r"""The package's structure in numbers: files, lines, import cycles, layering.

Reads the source only (no imports), at the working tree or at a git revision:

  python dev/layout_report.py              # the working tree
  python dev/layout_report.py --rev 7085087  # an earlier commit

Prints a Markdown table of .py files and lines per folder of
official_spanbert/, the import cycles between modules (every import of a
package module counts, at module level or inside a function) and the imports
that run from a lower layer up (LAYERS, lowest first) and the largest module.
"""

import argparse
import ast
import collections
import os
import subprocess
import sys
import tempfile

PACKAGE = "official_spanbert"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The checkout's folders installed as the package's subpackages (setup.py's
# package_dir): tools/ is official_spanbert.tools.
MAPPED = {"tools": PACKAGE + ".tools"}
# The module that imports every experiment registration; the modules it
# imports (configs/<task>.py) form the "registrations" layer (a new one
# joins the layer by its line there, not by a list here).
REGISTRY = PACKAGE + ".registry_imports"


def registry_modules(root):
  """The modules official_spanbert/registry_imports.py imports."""
  path = os.path.join(root, *REGISTRY.split(".")) + ".py"
  if not os.path.exists(path):
    return ()
  with open(path, encoding="utf-8") as f:
    tree = ast.parse(f.read(), path)
  return tuple(sorted(f"{n.module}.{a.name}" for n in ast.walk(tree)
                      if isinstance(n, ast.ImportFrom) and n.module
                      for a in n.names))


def layers(root):
  """Lowest first; a module belongs to the longest prefix that names it."""
  return (
      ("core", ("official_spanbert", "official_spanbert.utils")),
      # The scorers read the data's file formats (data/finetuning/
      # conll2012.py, litbank_tsv.py); data/finetuning/mrqa.py scores with
      # squad_evaluate: one floor, no cycle between their modules.
      ("data", ("official_spanbert.data", "official_spanbert.metrics")),
      ("modeling", ("official_spanbert.modeling",)),
      ("configs", ("official_spanbert.configs",)),
      ("tasks", ("official_spanbert.tasks",)),
      # Experiment registrations sit above the tasks they register.
      ("registrations", registry_modules(root) + (REGISTRY,)),
      # Hugging Face conversion builds models from configs, beside the tasks.
      ("interop", ("official_spanbert.interop",)),
      ("serving", ("official_spanbert.serving",)),
      ("training", ("official_spanbert.training",)),
      ("demo", ("official_spanbert.demo",)),
      # The command-line binaries (console scripts, tools/) sit on top.
      ("tools", ("official_spanbert.tools",)),
  )


LAYERS = layers(REPO)


def modules(root):
  """{dotted module name: path} of the package's .py files under root."""
  out = {}
  for top, dotted_top in [(PACKAGE, PACKAGE)] + sorted(MAPPED.items()):
    for directory, _, files in os.walk(os.path.join(root, top)):
      for name in files:
        if name.endswith(".py"):
          path = os.path.join(directory, name)
          rel = os.path.relpath(path, os.path.join(root, top))[:-3]
          dotted = ".".join([dotted_top] + rel.split(os.sep))
          out[dotted[:-len(".__init__")] if dotted.endswith(".__init__")
              else dotted] = path
  return out


def import_graph(root):
  """(modules, {module: set of the package's modules it imports})."""
  mods = modules(root)

  def resolve(name):  # `from a.b import c`: module a.b.c, else a.b
    while name and name not in mods:
      name = name.rpartition(".")[0]
    return name

  graph = collections.defaultdict(set)
  for module, path in mods.items():
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
      if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
      elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        names = [f"{node.module}.{a.name}" for a in node.names]
      else:
        continue
      for name in names:
        target = resolve(name) if name.startswith(PACKAGE + ".") else None
        if target and target not in (module, PACKAGE):
          graph[module].add(target)
  return mods, graph


def cycles(nodes, graph):
  """Strongly connected components of more than one node (Tarjan)."""
  index, low, stack, on_stack, found = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph.get(v, ()):
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = []
      while True:
        w = stack.pop()
        on_stack.discard(w)
        component.append(w)
        if w == v:
          break
      if len(component) > 1:
        found.append(sorted(component))

  for v in sorted(nodes):
    if v not in index:
      visit(v)
  return found


def layer(module, table=None):
  """Index in LAYERS (or table) of the longest prefix naming module."""
  best, best_len = 0, -1
  for i, (_, prefixes) in enumerate(table or LAYERS):
    for p in prefixes:
      if (module == p or module.startswith(p + ".")) and len(p) > best_len:
        best, best_len = i, len(p)
  return best


def upward_imports(graph, table=None):
  """[(importer, imported)] where the importer's layer is the lower one."""
  return sorted((a, b) for a, targets in graph.items() for b in targets
                if layer(a, table) < layer(b, table))


def line_counts(mods):
  """{module: lines of its file}."""
  out = {}
  for module, path in mods.items():
    with open(path, encoding="utf-8") as f:
      out[module] = sum(1 for _ in f)
  return out


def folder_table(root, mods, lines):
  counts = collections.defaultdict(lambda: [0, 0])
  for module, path in mods.items():
    folder = os.path.relpath(os.path.dirname(path), root)
    counts[folder][0] += 1
    counts[folder][1] += lines[module]
  return counts


def report(root) -> dict:
  mods, graph = import_graph(root)
  lines = line_counts(mods)
  largest = max(lines, key=lambda m: (lines[m], m))
  return {"folders": folder_table(root, mods, lines),
          "cycles": cycles(mods, graph),
          "upward": upward_imports(graph, layers(root)),
          "modules": len(mods),
          "largest": (os.path.relpath(mods[largest], root), lines[largest])}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--rev", default=None, help="a git revision (default: the "
                  "working tree)")
  args = ap.parse_args()
  with tempfile.TemporaryDirectory() as tmp:
    root = REPO
    if args.rev:
      tops = subprocess.run(["git", "-C", REPO, "ls-tree", "--name-only",
                             args.rev], check=True, capture_output=True,
                            text=True).stdout.split()
      archive = subprocess.run(
          ["git", "-C", REPO, "archive", args.rev] +
          [t for t in [PACKAGE, *MAPPED] if t in tops],
          check=True, capture_output=True)
      subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout,
                     check=True)
      root = tmp
    r = report(root)
  print(f"{args.rev or 'working tree'}: {r['modules']} modules")
  print("| folder | .py files | lines |\n|---|---:|---:|")
  for folder, (files, lines) in sorted(r["folders"].items()):
    print(f"| {folder}/ | {files} | {lines} |")
  total = [sum(v[i] for v in r["folders"].values()) for i in (0, 1)]
  print(f"| total | {total[0]} | {total[1]} |")
  print(f"largest module: {r['largest'][0]} ({r['largest'][1]} lines)")
  print(f"module import cycles: {len(r['cycles'])}")
  for c in r["cycles"]:
    print("  " + " <-> ".join(c))
  print(f"imports from a lower layer up: {len(r['upward'])}")
  for a, b in r["upward"]:
    print(f"  {a} ({LAYERS[layer(a)][0]}) -> {b} ({LAYERS[layer(b)][0]})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
