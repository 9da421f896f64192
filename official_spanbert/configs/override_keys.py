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

"""A typo'd key of a --config_file or --params_override, named in full.

Model Garden's strict override names no path and no file; `check` walks the
override against the experiment's config and names the dotted key, where it is
written and the nearest keys that exist.

Example:

  check(params, "task.train_data.seq_lenght=384", "--params_override")
  # UnknownKeyError: --params_override: unknown key
  # task.train_data.seq_lenght; did you mean task.train_data.seq_length?
"""

import difflib
import os
import re
from typing import Optional, Sequence, Tuple

import yaml

from official.modeling import hyperparams
from official.modeling.hyperparams import params_dict


class UnknownKeyError(ValueError):
  """An override names a key the experiment's config does not have."""


def _as_dict(override: str) -> Tuple[Optional[dict], Optional[str]]:
  """(the override as a dict, its file or None); (None, None) unreadable."""
  if os.path.isfile(override):
    try:
      with open(override, encoding="utf-8") as f:
        loaded = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
      return None, None  # Model Garden's reader reports it
    return (loaded if isinstance(loaded, dict) else None), override
  try:
    text = params_dict.nested_csv_str_to_json_str(override)
  except ValueError:
    text = override
  try:
    loaded = yaml.safe_load(text)
  except yaml.YAMLError:
    return None, None
  return (loaded if isinstance(loaded, dict) else None), None


def _unknown(config: hyperparams.Config, values: dict, path: str
             ) -> Optional[Tuple[str, str, Sequence[str]]]:
  """(path, key, known keys) of the first key `config` lacks, or None."""
  known = config.as_dict()
  for key, value in values.items():
    if key not in known:
      return path, str(key), sorted(known)
    sub = getattr(config, key)
    if isinstance(value, dict) and isinstance(sub, hyperparams.Config):
      found = _unknown(sub, value, f"{path}{key}.")
      if found:
        return found
  return None


def _line(file: str, key: str) -> Optional[int]:
  with open(file, encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      if re.match(rf"\s*['\"]?{re.escape(key)}['\"]?\s*:", line):
        return number
  return None


def check(params: hyperparams.Config, override: str, source: str) -> None:
  """Raises UnknownKeyError if `override` (YAML file or string) names a key
  that `params` does not have; unreadable overrides are left to Model Garden.

  Args:
    params: the experiment's config.
    override: a YAML file path, or a --params_override string.
    source: how the user gave it, for the message ("--params_override").
  """
  values, file = _as_dict(override) if override else (None, None)
  found = values and _unknown(params, values, "")
  if not found:
    return
  path, key, known = found
  where = source
  if file:
    line = _line(file, key)
    where = f"{file}:{line}" if line else file
  nearest = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
  if nearest:
    advice = f"did you mean {path}{nearest[0]}?"
  else:
    advice = (f"{path.rstrip('.') or 'the top level'} has "
              f"{', '.join(known)}")
  raise UnknownKeyError(f"{where}: unknown key {path}{key}; {advice}")


def check_all(params: hyperparams.Config, config_files: Sequence[str],
              params_override: str) -> None:
  """`check` of each --config_file, then of --params_override."""
  for file in config_files or ():
    check(params, file, file)
  check(params, params_override, "--params_override")
