"""Import layering of official_spanbert, read from the source (no imports).

Every import of an official_spanbert module counts, at module level or
inside a function. Checked: no cycle between modules; modeling/ and interop/
never import tasks/ (the old modeling -> tasks -> modeling knot); the only
import from modeling/ up to interop/ is the deprecated re-export
modeling/hf_conversion.py.
"""

import ast
import collections
import os

from conftest import REPO

PACKAGE = "official_spanbert"


def _modules():
  """{dotted module name: path} of the package's .py files."""
  out = {}
  for directory, _, files in os.walk(os.path.join(REPO, PACKAGE)):
    for name in files:
      if name.endswith(".py"):
        path = os.path.join(directory, name)
        dotted = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
        out[dotted[:-len(".__init__")] if dotted.endswith(".__init__")
            else dotted] = path
  return out


def import_graph():
  """{module: set of the package's modules it imports}."""
  modules = _modules()

  def resolve(name):  # `from a.b import c`: module a.b.c, else a.b
    while name and name not in modules:
      name = name.rpartition(".")[0]
    return name

  graph = collections.defaultdict(set)
  for module, path in modules.items():
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
  return modules, graph


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


def _subpackage(module):
  return module.split(".")[1] if "." in module else module


def _edges(graph, source, target):
  return sorted(f"{a} -> {b}" for a, targets in graph.items()
                for b in targets
                if _subpackage(a) == source and _subpackage(b) == target)


def test_no_import_cycle_between_modules():
  modules, graph = import_graph()
  assert "official_spanbert.interop.hf_to_tf" in modules
  assert cycles(modules, graph) == []


def test_modeling_and_interop_never_import_tasks():
  _, graph = import_graph()
  assert _edges(graph, "modeling", "tasks") == []
  assert _edges(graph, "interop", "tasks") == []


def test_modeling_reaches_interop_only_through_the_deprecated_shim():
  _, graph = import_graph()
  assert {e.split(" -> ")[0] for e in _edges(graph, "modeling", "interop")
          } == {"official_spanbert.modeling.hf_conversion"}
  # ... and no interop module imports the shim back.
  assert not [e for e in _edges(graph, "interop", "modeling")
              if e.endswith("hf_conversion")]
