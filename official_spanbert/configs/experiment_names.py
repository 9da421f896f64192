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

"""The registered experiment names, and one line for a name that is not.

Model Garden's exp_factory raises a LookupError that lists no experiment; the
tools call `check` first, which names the nearest registered experiments.
"""

import difflib
from typing import Iterator, List, Mapping

from official.core import exp_factory


# Old names that still work (their configs log a deprecation warning) -> the
# experiment's name now.
DEPRECATED = {"spanbert/glue": "spanbert/classification"}


class UnknownExperimentError(ValueError):
  """No experiment of that name is registered."""


def _names(tree: Mapping, prefix: str = "") -> Iterator[str]:
  for key, value in tree.items():
    name = f"{prefix}/{key}" if prefix else key
    if isinstance(value, Mapping):
      yield from _names(value, name)
    else:
      yield name


def registered() -> List[str]:
  """The registered experiments (the caller imports registry_imports, as the
  tools do, for all of the package's)."""
  # pylint: disable-next=protected-access  (exp_factory keeps no public list)
  return sorted(_names(exp_factory._REGISTERED_CONFIGS))


def nearest_first(name: str, names: List[str]) -> List[str]:
  """`names` ordered by their similarity to `name` (difflib), then by name."""
  return sorted(names, key=lambda n: (
      -difflib.SequenceMatcher(None, name, n).ratio(), n))


def check(name: str) -> None:
  """Raises UnknownExperimentError, listing the registered names nearest
  first, if `name` is not registered."""
  names = registered()
  if name not in names:
    raise UnknownExperimentError(
        f"unknown experiment {name!r}; the registered experiments, nearest "
        f"first: {', '.join(nearest_first(name or '', names))}")


def get(name: str):
  """exp_factory.get_exp_config(name), after check(name)."""
  check(name)
  return exp_factory.get_exp_config(name)
