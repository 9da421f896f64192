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

"""Google BERT's TF1 variable shapes against a bert_config.json, before a read.

`check` reads the checkpoint's index only and names the first variable whose
shape the config does not give, instead of a deep reshape error.

Example:

  check("/x/bert_model.ckpt", config, "/x/bert_config.json")
  # ConversionError: /x/bert_model.ckpt: bert/embeddings/word_embeddings has
  # shape [28996, 768], but /x/bert_config.json (vocab_size 30522,
  # hidden_size 768) gives [30522, 768]; ...
"""

import re
from typing import Dict, Tuple

import tensorflow as tf

from official_spanbert.interop import hf_files

# Google's variable names (a regex; layer_N for every N) -> the config fields
# of each dimension.
_FIELDS = (
    (r"bert/embeddings/word_embeddings", ("vocab_size", "hidden_size")),
    (r"bert/embeddings/token_type_embeddings",
     ("type_vocab_size", "hidden_size")),
    (r"bert/embeddings/position_embeddings",
     ("max_position_embeddings", "hidden_size")),
    (r"bert/encoder/layer_\d+/attention/(self/(query|key|value)|output/dense)"
     r"/kernel", ("hidden_size", "hidden_size")),
    (r"bert/encoder/layer_\d+/intermediate/dense/kernel",
     ("hidden_size", "intermediate_size")),
    (r"bert/encoder/layer_\d+/intermediate/dense/bias",
     ("intermediate_size",)),
    (r"bert/encoder/layer_\d+/output/dense/kernel",
     ("intermediate_size", "hidden_size")),
    (r"bert/pooler/dense/kernel", ("hidden_size", "hidden_size")),
    (r"cls/predictions/transform/dense/kernel",
     ("hidden_size", "hidden_size")),
    (r"cls/predictions/output_bias", ("vocab_size",)),
    (r"cls/seq_relationship/output_weights", (2, "hidden_size")),
    # Every other bias and LayerNorm of the encoder and the MLM transform.
    (r"(bert|cls/predictions/transform)/.*(bias|beta|gamma)",
     ("hidden_size",)),
)


def variable_shapes(checkpoint: str) -> Dict[str, Tuple[int, ...]]:
  """{name: shape} from the checkpoint's index (no tensor is read).

  Raises:
    ConversionError: the index cannot be read.
  """
  try:
    reader = tf.train.load_checkpoint(checkpoint)
  except (tf.errors.OpError, ValueError) as e:
    raise hf_files.ConversionError(
        f"cannot read TF1 checkpoint {checkpoint} "
        f"({' '.join(str(e).split())[:200]}); it is truncated or not a TF1 "
        "checkpoint") from None
  return {n: tuple(s) for n, s in reader.get_variable_to_shape_map().items()}


def expected(name: str, config: hf_files.HFBertConfig):
  """(shape, fields) the config gives a Google variable, or None."""
  for pattern, fields in _FIELDS:
    if re.fullmatch(pattern, name):
      shape = tuple(f if isinstance(f, int) else getattr(config, f)
                    for f in fields)
      return shape, [f for f in fields if isinstance(f, str)]
  return None


def check(checkpoint: str, config: hf_files.HFBertConfig,
          config_file: str) -> None:
  """Raises ConversionError at the first BERT variable the config misfits."""
  shapes = variable_shapes(checkpoint)
  for name in sorted(shapes):
    if name.endswith(("/adam_m", "/adam_v")):
      continue
    want = expected(name, config)
    if want is None or tuple(shapes[name]) == want[0]:
      continue
    shape, fields = want
    said = ", ".join(f"{f} {getattr(config, f)}"
                     for f in dict.fromkeys(fields))
    raise hf_files.ConversionError(
        f"{checkpoint}: {name} has shape {list(shapes[name])}, but "
        f"{config_file} ({said}) gives {list(shape)}; pass the "
        "bert_config.json that came with this checkpoint (--bert_config)")
