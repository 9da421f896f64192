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

r"""Writes a keras-hub BERT preset from a Hugging Face BERT directory.

The Keras 3 half of keras_hub_preset.py, run as a script in its own process
(one process cannot have tf.keras be both tf_keras and Keras 3), so it imports
nothing of official_spanbert. See docs/keras3.md.

  python -P keras_hub_writer.py HF_DIR OUT_DIR SEQUENCE_LENGTH
"""

import json
import os
import sys

import numpy as np

# Keras 3's backend is chosen by KERAS_BACKEND before keras is imported; the
# weights file is the same for every backend.
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import keras_hub  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
from safetensors import numpy as safetensors_np  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def _transpose(x, shape):
  """Linear [out, in] -> Dense / EinsumDense kernel of `shape`."""
  return np.reshape(np.transpose(x), shape)


def _reshape(x, shape):
  return np.reshape(x, shape)


def weight_assignments(backbone, num_layers):
  """(keras variable, Hugging Face key without `bert.`, transform) for every
  weight of a keras_hub BertBackbone."""
  out = [
      (backbone.get_layer("token_embedding").embeddings,
       "embeddings.word_embeddings.weight", _reshape),
      (backbone.get_layer("position_embedding").position_embeddings,
       "embeddings.position_embeddings.weight", _reshape),
      (backbone.get_layer("segment_embedding").embeddings,
       "embeddings.token_type_embeddings.weight", _reshape),
      (backbone.get_layer("embeddings_layer_norm").gamma,
       "embeddings.LayerNorm.weight", _reshape),
      (backbone.get_layer("embeddings_layer_norm").beta,
       "embeddings.LayerNorm.bias", _reshape),
  ]
  for i in range(num_layers):
    block = backbone.get_layer(f"transformer_layer_{i}")
    # pylint: disable=protected-access
    attn = block._self_attention_layer
    hf = f"encoder.layer.{i}."
    for name, dense in (("query", attn.query_dense), ("key", attn.key_dense),
                        ("value", attn.value_dense)):
      out += [(dense.kernel, f"{hf}attention.self.{name}.weight", _transpose),
              (dense.bias, f"{hf}attention.self.{name}.bias", _reshape)]
    out += [
        (attn.output_dense.kernel, f"{hf}attention.output.dense.weight",
         _transpose),
        (attn.output_dense.bias, f"{hf}attention.output.dense.bias",
         _reshape),
        (block._self_attention_layer_norm.gamma,
         f"{hf}attention.output.LayerNorm.weight", _reshape),
        (block._self_attention_layer_norm.beta,
         f"{hf}attention.output.LayerNorm.bias", _reshape),
        (block._feedforward_intermediate_dense.kernel,
         f"{hf}intermediate.dense.weight", _transpose),
        (block._feedforward_intermediate_dense.bias,
         f"{hf}intermediate.dense.bias", _reshape),
        (block._feedforward_output_dense.kernel, f"{hf}output.dense.weight",
         _transpose),
        (block._feedforward_output_dense.bias, f"{hf}output.dense.bias",
         _reshape),
        (block._feedforward_layer_norm.gamma, f"{hf}output.LayerNorm.weight",
         _reshape),
        (block._feedforward_layer_norm.beta, f"{hf}output.LayerNorm.bias",
         _reshape),
    ]
    # pylint: enable=protected-access
  out += [
      (backbone.get_layer("pooled_dense").kernel, "pooler.dense.weight",
       _transpose),
      (backbone.get_layer("pooled_dense").bias, "pooler.dense.bias",
       _reshape),
  ]
  return out


def write_preset(hf_dir, out_dir, sequence_length):
  """Builds the backbone from HF_DIR's config and tensors; saves the preset."""
  with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as f:
    config = json.load(f)
  with open(os.path.join(hf_dir, "tokenizer_config.json"),
            encoding="utf-8") as f:
    lower_case = bool(json.load(f).get("do_lower_case", False))
  state = safetensors_np.load_file(os.path.join(hf_dir, "model.safetensors"))
  state = {k[len("bert."):] if k.startswith("bert.") else k: v
           for k, v in state.items()}
  backbone = keras_hub.models.BertBackbone(
      vocabulary_size=config["vocab_size"],
      num_layers=config["num_hidden_layers"],
      num_heads=config["num_attention_heads"],
      hidden_dim=config["hidden_size"],
      intermediate_dim=config["intermediate_size"],
      dropout=config.get("hidden_dropout_prob", 0.1),
      max_sequence_length=config["max_position_embeddings"],
      num_segments=config["type_vocab_size"],
      dtype="float32")
  assignments = weight_assignments(backbone, config["num_hidden_layers"])
  assigned = {id(v) for v, _, _ in assignments}
  missing = [w.path for w in backbone.weights if id(w) not in assigned]
  if missing:
    raise ValueError(f"keras-hub BertBackbone weights without a source: "
                     f"{missing} (a keras-hub version this file does not "
                     "know?)")
  used = set()
  for variable, key, transform in assignments:
    if key not in state:
      raise ValueError(f"{hf_dir}/model.safetensors has no {key}")
    variable.assign(transform(state[key], tuple(variable.shape)))
    used.add(key)
  unused = sorted(k for k in state if k not in used and
                  not k.startswith("cls."))
  if unused:
    raise ValueError(f"tensors of {hf_dir} with no place in a keras-hub "
                     f"BertBackbone: {unused}")

  # Uncased BERT lower-cases and strips accents (as tf_text.BertTokenizer
  # and transformers' BasicTokenizer do); cased does neither.
  tokenizer = keras_hub.models.BertTokenizer(
      vocabulary=os.path.join(hf_dir, "vocab.txt"), lowercase=lower_case,
      strip_accents=lower_case)
  preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
      tokenizer=tokenizer, sequence_length=sequence_length)
  os.makedirs(out_dir, exist_ok=True)
  backbone.save_to_preset(out_dir)
  preprocessor.save_to_preset(out_dir)  # also the tokenizer and vocab
  files = sorted(os.path.relpath(os.path.join(d, f), out_dir)
                 for d, _, names in os.walk(out_dir) for f in names)
  return {"files": files, "parameters": int(backbone.count_params()),
          "tensors": len(assignments), "lower_case": lower_case,
          "sequence_length": sequence_length,
          "keras_version": keras.__version__,
          "keras_hub_version": keras_hub.__version__,
          "backend": keras.backend.backend()}


def main(argv):
  if len(argv) != 4:
    sys.stderr.write(f"usage: {argv[0]} HF_DIR OUT_DIR SEQUENCE_LENGTH\n")
    return 2
  summary = write_preset(argv[1], argv[2], int(argv[3]))
  print(json.dumps(summary))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
