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

"""tests/conftest.py's xdist groups: the tests of a file that share a
module-scoped fixture of that file run on one worker (`--dist loadgroup`),
so the fixture is built once; session fixtures and SPREAD ones do not group.
"""

import os
import types

import conftest


def exported():  # stands for a module-scoped fixture of this file
  return None


def trained():  # SPREAD here (the test sets it)
  return None


def tokenizer():
  return None


def _item(name, **fixtures):
  """A collected test of this file using `fixtures` ({name: (scope, func)})."""
  defs = {n: [types.SimpleNamespace(scope=scope, func=func)]
          for n, (scope, func) in fixtures.items()}
  return _Item(name=name, fspath=__file__, fixturenames=list(fixtures),
               _fixtureinfo=types.SimpleNamespace(name2fixturedefs=defs))


class _Item(types.SimpleNamespace):
  __hash__ = object.__hash__  # as pytest's items: by identity


def test_users_of_a_shared_fixture_form_one_group_the_rest_stay_free(
    monkeypatch):
  here = "test_xdist_groups.py"
  monkeypatch.setattr(conftest, "SPREAD", ((here, "trained"),))
  a = _item("a", exported=("module", exported))
  b = _item("b", exported=("module", exported), tmp_path=("function", _item))
  both = _item("both", exported=("module", exported),
               tokenizer=("module", tokenizer))
  c = _item("c", tokenizer=("module", tokenizer))
  free = _item("free", trained=("module", trained),
               vocab=("session", tokenizer))
  # A module fixture defined in another file (conftest's) does not group.
  elsewhere = _item("elsewhere", order=("module", conftest._run_order))
  groups = conftest.xdist_groups([a, b, both, c, free, elsewhere])
  # `both` joins the two fixtures, so c (tokenizer only) goes with a and b.
  assert {item.name for item in groups} == {"a", "b", "both", "c"}
  assert len(set(groups.values())) == 1
  assert next(iter(groups.values())).startswith(here + ":")


def test_files_are_named_by_their_path_under_tests():
  """LONGEST_FIRST and SPREAD name files as groups do: by path under tests/
  (a file moved into a folder keeps its place), every listed file exists."""
  item = types.SimpleNamespace(
      fspath=os.path.join(conftest.TESTS_DIR, "serving", "x_test.py"))
  assert conftest.relative_file(item) == "serving/x_test.py"
  listed = conftest.LONGEST_FIRST + tuple(f for f, _ in conftest.SPREAD)
  assert [f for f in listed
          if not os.path.isfile(os.path.join(conftest.TESTS_DIR, f))] == []


def test_spread_names_a_file_not_only_a_fixture(monkeypatch):
  """tasks/coreference_test.py's `trained` (60 s) groups although another
  file's `trained` spreads."""
  monkeypatch.setattr(conftest, "SPREAD", (("test_other.py", "trained"),))
  a = _item("a", trained=("module", trained))
  b = _item("b", trained=("module", trained))
  assert set(conftest.xdist_groups([a, b]).values()) == {
      "test_xdist_groups.py:trained"}


def test_the_makefile_runs_every_pytest_target_with_loadgroup():
  with open(f"{conftest.REPO}/Makefile", encoding="utf-8") as f:
    make = f.read()
  assert "XDIST := -n 3 --dist loadgroup --no-loadscope-reorder" in make
  assert "$(XDIST) -m unit," in make
  assert "$(XDIST) -m integration," in make
  assert "pytest (both tiers),$(XDIST),)" in make
