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

"""The reference's fairseq checkpoints: reading them safely, and their sizes.

Reads `model.pt` of `spanbert_large_with_head` with
`torch.load(weights_only=True)` (only argparse.Namespace and the reference's
BertConfig allowed besides tensors) and infers its BERT config.
"""

import argparse
import os
import re
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from official_spanbert.interop import hf_files

ConversionError = hf_files.ConversionError

# The reference's named architectures (register_model_architecture in
# pair_bert.py): (layers, hidden, FFN) -> (name, attention heads).
ARCHITECTURES = {
    (12, 768, 3072): ("cased_bert_pair", 12),
    (24, 1024, 4096): ("cased_bert_pair_large", 16),
}
HEADS_BY_NAME = {"bert_pair": 12, "cased_bert_pair": 12,
                 "bert_pair_large": 16, "cased_bert_pair_large": 16}


class _ReferenceBertConfig:
  """Data-only stand-in for pair_bert.BertConfig inside fairseq's `args`."""


EXPECTED = ("the reference's model.pt, from "
            "spanbert_large_with_head.tar.gz")
_ALLOWED = [argparse.Namespace,
            (_ReferenceBertConfig, "fairseq.models.pair_bert.BertConfig")]


def _load(path: str) -> Any:
  try:
    import torch  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ConversionError(
        f"reading {path} needs PyTorch (pip install "
        "'official-spanbert[interop]')") from None
  if not os.path.isfile(path):
    raise ConversionError(f"{path} does not exist (expected the reference's "
                          "model.pt)")
  hf_files.check_torch_file(path, EXPECTED)
  return hf_files.load_tensors_only(
      path, allowed=_ALLOWED, resave="re-save its state dict with "
      "torch.save(torch.load(path)['model'] or the dict itself) where you "
      "trust the file")


def _arch_of(args: Any) -> Tuple[Optional[str], Optional[int]]:
  """(architecture name, attention heads) recorded in fairseq's args."""
  if args is None:
    return None, None
  config = getattr(args, "config", None)
  heads = getattr(config, "num_attention_heads", None) or getattr(
      args, "num_attention_heads", None)
  return getattr(args, "arch", None), heads


def read_state(path: str) -> Tuple[Dict[str, np.ndarray],
                                   Tuple[Optional[str], Optional[int]]]:
  """(tensors without the `decoder.` prefix, (arch, heads) from args).

  Floating-point tensors come back as float32.

  Raises:
    ConversionError: unreadable, unsafe or not a state dict.
  """
  import torch  # pylint: disable=g-import-not-at-top
  obj = _load(path)
  arch = (None, None)
  if isinstance(obj, dict) and isinstance(obj.get("model"), dict):
    arch = _arch_of(obj.get("args"))
    obj = obj["model"]
  if not isinstance(obj, dict) or not obj:
    raise ConversionError(f"{path} holds no state dict (expected the "
                          "reference's model.pt or a fairseq checkpoint)")
  prefixed = any(k.startswith("decoder.") for k in obj)
  out = {}
  for key, t in obj.items():
    if not isinstance(t, torch.Tensor):
      raise ConversionError(f"{path}: entry {key!r} is not a tensor")
    if prefixed and not key.startswith("decoder."):
      raise ConversionError(f"{path}: key {key!r} is outside the model "
                            "(`decoder.`) of a fairseq bert_pair checkpoint")
    name = key[len("decoder."):] if prefixed else key
    if t.is_floating_point():
      t = t.to(torch.float32)
    out[name] = t.detach().cpu().numpy()
  hf_files.check_finite(
      {(f"decoder.{k}" if prefixed else k): v for k, v in out.items()}, path)
  return out, arch


def infer_config(state: Mapping[str, np.ndarray], source: str,
                 arch: Tuple[Optional[str], Optional[int]] = (None, None)
                 ) -> hf_files.HFBertConfig:
  """The encoder's sizes from a canonical state (weight_map.canonical_state).

  The attention heads are not in any tensor's shape: they come from the
  checkpoint's args, else from the reference architecture with these
  sizes.

  Raises:
    ConversionError: a missing tensor, or heads that cannot be told.
  """
  def shape(key):
    if key not in state:
      raise ConversionError(f"{source}: missing key {key!r}; not a BERT "
                            "checkpoint of the reference")
    return state[key].shape

  vocab, hidden = shape("embeddings.word_embeddings.weight")
  layers = 1 + max((int(m.group(1)) for k in state
                    for m in [re.match(r"encoder\.layer\.(\d+)\.", k)] if m),
                   default=-1)
  if not layers:
    raise ConversionError(f"{source}: no encoder layers "
                          "(encoder.layer.N.*)")
  ffn = shape("encoder.layer.0.intermediate.dense.weight")[0]
  name, heads = arch
  heads = heads or HEADS_BY_NAME.get(name or "")
  if not heads and (layers, hidden, ffn) in ARCHITECTURES:
    name, heads = ARCHITECTURES[(layers, hidden, ffn)]
  if not heads:
    raise ConversionError(
        f"{source}: {layers} layers, hidden {hidden}, FFN {ffn} match none "
        f"of the reference's architectures ({', '.join(sorted(HEADS_BY_NAME))})"
        ", so the number of attention heads is unknown: pass "
        "--bert_config=bert_config.json")
  return hf_files.HFBertConfig.from_dict(
      {"vocab_size": int(vocab), "hidden_size": int(hidden),
       "num_hidden_layers": layers, "num_attention_heads": int(heads),
       "intermediate_size": int(ffn),
       "max_position_embeddings": int(
           shape("embeddings.position_embeddings.weight")[0]),
       "type_vocab_size": int(
           shape("embeddings.token_type_embeddings.weight")[0]),
       "hidden_act": "gelu"}, source=f"{source} ({name or 'sizes'})")
