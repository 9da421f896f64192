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

"""The SBO head in the reference's layout <-> our SpanBoundaryHead.

The reference's `cls.pair_target_predictions` maps onto SpanBoundaryHead;
tf_to_hf writes it beside the Hugging Face files as
`span_boundary_head.safetensors`, which hf_to_tf reads back.
"""

import os
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from official_spanbert.interop import hf_files
from official_spanbert.interop import conversion_report
from official_spanbert.interop import weight_map

ConversionError = hf_files.ConversionError

PREFIX = "cls.pair_target_predictions."   # in the reference's state dict
FILE = "span_boundary_head.safetensors"   # beside a Hugging Face export
DECODER = "decoder.weight"                # tied to the word embeddings
POSITIONS = "position_embeddings.weight"

# Head-relative reference key -> (our variable name, transpose?).
ENTRIES = {POSITIONS: ("position_embeddings", False), "bias": (
    "output_bias", False)}
for _i in (1, 2):
  ENTRIES[f"mlp_layer_norm.linear{_i}.weight"] = (f"mlp/dense_{_i}/kernel",
                                                  True)
  ENTRIES[f"mlp_layer_norm.linear{_i}.bias"] = (f"mlp/dense_{_i}/bias", False)
  ENTRIES[f"mlp_layer_norm.layer_norm{_i}.gamma"] = (
      f"mlp/layer_norm_{_i}/gamma", False)
  ENTRIES[f"mlp_layer_norm.layer_norm{_i}.beta"] = (
      f"mlp/layer_norm_{_i}/beta", False)


def head_sizes(state: Mapping[str, np.ndarray], source: str
               ) -> Tuple[int, int]:
  """(max_targets T, position_embedding_size P) from the head's tensors."""
  if POSITIONS not in state:
    raise ConversionError(f"{source}: the SBO head has no {POSITIONS!r}")
  shape = state[POSITIONS].shape
  if len(shape) != 2:
    raise ConversionError(f"{source}: SBO {POSITIONS!r} has shape "
                          f"{list(shape)}, expected [T, P]")
  return int(shape[0]), int(shape[1])


def assign_state(model, state: Mapping[str, np.ndarray],
                 word_embeddings: Optional[np.ndarray], source: str,
                 progress: Optional[
                     conversion_report.ConversionProgress] = None):
  """Assigns a head-relative reference state to model.span_boundary.

  Raises:
    ConversionError: an unknown or missing key, a shape mismatch, or a
      decoder that is not the word embeddings.
  """
  state = dict(state)
  decoder = state.pop(DECODER, None)
  if decoder is not None and word_embeddings is not None and (
      decoder.shape != word_embeddings.shape or
      not np.array_equal(decoder, word_embeddings)):
    raise ConversionError(
        f"{source}: {PREFIX}{DECODER} differs from the word embeddings; only "
        "SBO heads tied to them convert (ours ties them)")
  unknown = sorted(set(state) - set(ENTRIES))
  missing = sorted(set(ENTRIES) - set(state))
  for what, keys in (("unknown", unknown), ("missing", missing)):
    if keys:
      more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
      raise ConversionError(f"{source}: {what} SBO key "
                            f"'{PREFIX}{keys[0]}'{more}")
  variables = weight_map.item_variables(model, "span_boundary")
  for key, (name, transpose) in ENTRIES.items():
    var = variables[name]
    value = state[key].T if transpose else state[key]
    if tuple(value.shape) != tuple(var.shape.as_list()):
      want = var.shape.as_list()[::-1] if transpose else var.shape.as_list()
      raise ConversionError(
          f"{source}: SBO key '{PREFIX}{key}' has shape "
          f"{list(state[key].shape)}, expected {want}")
    var.assign(value.astype(np.float32))
    if progress:
      progress.advance()


def export_state(model) -> Dict[str, np.ndarray]:
  """model.span_boundary as head-relative reference tensors (no decoder)."""
  variables = weight_map.item_variables(model, "span_boundary")
  out = {}
  for key, (name, transpose) in ENTRIES.items():
    value = variables[name].numpy()
    out[key] = value.T if transpose else value
  return out


def write_file(model, output_dir: str, hidden_act: str) -> str:
  """Writes FILE into output_dir (metadata: T, P, the HF activation)."""
  state = export_state(model)
  t, p = state[POSITIONS].shape
  path = os.path.join(output_dir, FILE)
  hf_files.write_safetensors(state, path, metadata={
      "head": "BertPairTargetPredictionHead", "max_targets": str(t),
      "position_embedding_size": str(p), "hidden_act": hidden_act,
      "decoder": "tied to bert.embeddings.word_embeddings.weight"})
  return path


def read_file(directory: str) -> Optional[Tuple[Dict[str, np.ndarray], str]]:
  """(head-relative state, HF activation) of FILE in directory, or None."""
  path = os.path.join(directory, FILE)
  if not os.path.exists(path):
    return None
  import safetensors  # pylint: disable=g-import-not-at-top
  state = hf_files.read_safetensors(path)  # one line naming a bad file
  with safetensors.safe_open(path, framework="np") as f:
    metadata = f.metadata() or {}
  return state, metadata.get("hidden_act", "gelu")
