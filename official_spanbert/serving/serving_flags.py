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

"""The export tools' --serving_params and its alias flags (no TensorFlow at
import: the tools' --help stays fast).

Example:
  serving_params("max_context_wordpieces=8192", {"precision": "bfloat16"},
                 {"precision": ("precision", None)}, ("answer",))
  # -> {"max_context_wordpieces": 8192, "precision": "bfloat16"}
"""

from typing import Dict, Optional, Sequence, Tuple

from absl import flags


def define_serving_params() -> None:
  """Defines --serving_params (Model Garden's flag of the same name)."""
  flags.DEFINE_string(
      "serving_params", None,
      "The serving module's options (the fields of its Params, "
      "docs/serving.md) as YAML/JSON or key=value,key=value; e.g. "
      "precision=bfloat16 (float32, bfloat16: needs a CPU with AVX512-BF16 "
      "or AMX; int8: needs VNNI or AMX-INT8 and the int8 extra at "
      "export).")


def serving_params(text: Optional[str], aliases: Dict[str, object],
                   table: Dict[str, Tuple[str, Optional[str]]],
                   signatures: Sequence[str]) -> Dict[str, object]:
  """{field: value} of --serving_params and the alias flags given.

  Args:
    text: --serving_params (YAML/JSON or key=value pairs), or None.
    aliases: {alias flag: its value} of the alias flags given.
    table: alias flag -> (field, the signature whose export it is for, or
      None for any export whose Params have the field).
    signatures: what the run's serving module serves.

  Raises:
    ValueError: unparsable text, an alias for another task's export, or an
      alias and --serving_params that disagree.
  """
  # pylint: disable=g-import-not-at-top
  import yaml
  from official.modeling import hyperparams
  # pylint: enable=g-import-not-at-top
  values = {}
  if text:
    try:
      values = yaml.safe_load(text)
      if not isinstance(values, (dict, list)):  # key=value pairs
        values = yaml.safe_load(hyperparams.nested_csv_str_to_json_str(text))
    except (yaml.YAMLError, ValueError) as e:
      raise ValueError(f"--serving_params {text!r} is neither YAML/JSON nor "
                       f"key=value pairs: {e}") from None
    if not isinstance(values, dict):
      raise ValueError(f"--serving_params {text!r} is not a mapping of "
                       "option names to values")
  for flag, value in aliases.items():
    field, signature = table[flag]
    if signature and signature not in signatures:
      raise ValueError(f"--{flag} is for exports serving {signature}; this "
                       f"run's serves {', '.join(signatures)}")
    if field in values and values[field] != value:
      raise ValueError(f"--{flag}={value} and --serving_params "
                       f"{field}={values[field]} disagree; give one")
    values[field] = value
  return values
