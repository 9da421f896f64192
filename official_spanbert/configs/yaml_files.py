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

"""Finds the YAML experiment / model configs.

They live in the checkout's `configs/` and, in a wheel, in
`official_spanbert/configs/yaml/`; `path("models/tiny.yaml")` finds them from a
checkout, an editable install, a wheel or Bazel's runfiles (docs/packaging.md).
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
# The wheel's package data first, then the checkout's configs/.
_CANDIDATES = (os.path.join(_HERE, "yaml"),
               os.path.join(os.path.dirname(os.path.dirname(_HERE)), "configs"))
CONFIG_DIR = next((d for d in _CANDIDATES if os.path.isdir(d)), _CANDIDATES[-1])
# The subfolders that hold YAML (the rest of CONFIG_DIR is Python).
YAML_DIRS = ("experiments", "models")


def available() -> list[str]:
  """The names of the packaged configs, e.g. ["experiments/...", ...]."""
  names = []
  for sub in YAML_DIRS:
    for root, _, files in os.walk(os.path.join(CONFIG_DIR, sub)):
      names += [os.path.relpath(os.path.join(root, f), CONFIG_DIR).replace(
          os.sep, "/") for f in files if f.endswith((".yaml", ".yml"))]
  return sorted(names)


def path(name: str) -> str:
  """The absolute path of config `name`, e.g. "models/tiny.yaml".

  Raises:
    FileNotFoundError: no such config (the message lists those that exist).
  """
  parts = name.replace("\\", "/").split("/")
  if (os.path.isabs(name) or ".." in parts or
      not name.endswith((".yaml", ".yml"))):
    raise FileNotFoundError(f"config name {name!r} must be relative to "
                            f"{CONFIG_DIR}, e.g. 'models/tiny.yaml'")
  candidate = os.path.join(CONFIG_DIR, *parts)
  if os.path.isfile(candidate):
    return candidate
  raise FileNotFoundError(
      f"config {name!r} not found in {CONFIG_DIR}; available: "
      f"{', '.join(available()) or 'none (reinstall official-spanbert)'}")


def resolve(value: str) -> str:
  """A --config_file value: an existing file as given, else a packaged name.

  So `spanbert-train --config_file=models/base.yaml` works from any
  directory; a value that is neither is returned unchanged (the caller's
  reader reports it).
  """
  if os.path.isfile(value):
    return value
  try:
    return path(value)
  except FileNotFoundError:
    return value
