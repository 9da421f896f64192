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

"""Finds the YAML experiment / model configs (configs/ in the repository).

The YAML files live in the repository's top-level `configs/` folder
(`configs/models/tiny.yaml`, `configs/experiments/demo_tiny.yaml`, ...), where
the README's commands name them. setup.py installs the same files into the
package as `official_spanbert/yaml_configs/`, so that an installed
(non-editable) wheel has them too:

  from official_spanbert.configs import yaml_files
  params_dict.override_params_dict(params, yaml_files.path("models/tiny.yaml"),
                                   is_strict=True)
"""

import os

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Where the files are in an installed wheel, then in a source checkout (also
# an editable install, and Bazel's runfiles, which hold //:configs).
SEARCH_DIRS = (
    os.path.join(_PACKAGE_DIR, "yaml_configs"),
    os.path.join(os.path.dirname(_PACKAGE_DIR), "configs"),
)


def _available(directory: str) -> list[str]:
  names = []
  for root, _, files in os.walk(directory):
    names += [os.path.relpath(os.path.join(root, f), directory).replace(
        os.sep, "/") for f in files if f.endswith((".yaml", ".yml"))]
  return sorted(names)


def path(name: str) -> str:
  """The absolute path of config `name`, e.g. "models/tiny.yaml".

  Raises:
    FileNotFoundError: no such config (the message lists those that exist).
  """
  parts = name.replace("\\", "/").split("/")
  if os.path.isabs(name) or ".." in parts:
    raise FileNotFoundError(f"config name {name!r} must be relative to "
                            "configs/, e.g. 'models/tiny.yaml'")
  for directory in SEARCH_DIRS:
    candidate = os.path.join(directory, *parts)
    if os.path.isfile(candidate):
      return candidate
  existing = next((d for d in SEARCH_DIRS if os.path.isdir(d)), None)
  if existing is None:
    raise FileNotFoundError(
        f"config {name!r}: no YAML config folder at {' or '.join(SEARCH_DIRS)}"
        " (reinstall official-spanbert, or run from a checkout)")
  raise FileNotFoundError(
      f"config {name!r} not found in {existing}; available: "
      f"{', '.join(_available(existing)) or 'none'}")
