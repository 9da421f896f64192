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

"""Import: Google's TF1 BERT checkpoints (bert_model.ckpt + bert_config.json).

Through Model Garden's tf1_bert_checkpoint_converter_lib, then assigned to our
encoder, MLM and NSP heads with the checks and output of every import.
"""

import os
import tempfile
from typing import Dict, Optional

import numpy as np
import tensorflow as tf

from official.nlp.tools import tf1_bert_checkpoint_converter_lib as mg_tf1
from official_spanbert.interop import converted_output
from official_spanbert.interop import converter
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import conversion_report
from official_spanbert.interop import tf1_shapes
from official_spanbert.interop import weight_map

ConversionError = hf_files.ConversionError

# Not weights: optimizer slots (Model Garden's patterns) and the step.
EXCLUDE = ("adam", "Adam", "global_step")
# Model Garden's names of the heads (BERT_V2_NAME_REPLACEMENTS) -> our items.
_HEADS = (("bert/cls/predictions/", "masked_lm", ""),
          ("predictions/transform/logits/", "next_sentence", "logits/"))


def resolve(path: str) -> str:
  """The checkpoint prefix: given, or the one checkpoint in a directory."""
  if os.path.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    found = [latest] if latest else sorted(
        p[:-len(".index")] for p in tf.io.gfile.glob(
            os.path.join(path, "*.index")))
    if len(found) != 1:
      raise ConversionError(
          f"{path} holds {len(found)} checkpoints ({', '.join(found)}); pass "
          "the prefix, e.g. .../bert_model.ckpt" if found else
          f"{path} holds no TF1 checkpoint (*.index)")
    return found[0]
  if not tf.io.gfile.exists(path + ".index"):
    raise ConversionError(f"TF1 checkpoint {path} does not exist (no "
                          f"{path}.index)")
  return path


def _renamed(prefix: str, num_heads: int) -> Dict[str, np.ndarray]:
  """Google's tensors under BertEncoderV2 names, by Model Garden's converter."""
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "ckpt")
    # Model Garden's converter logs a line per variable at INFO.
    verbosity = tf.compat.v1.logging.get_verbosity()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.WARN)
    try:
      mg_tf1.convert(prefix, out, num_heads,
                     mg_tf1.BERT_V2_NAME_REPLACEMENTS,
                     mg_tf1.BERT_V2_PERMUTATIONS, exclude_patterns=EXCLUDE)
    except tf.errors.OpError as e:
      raise ConversionError(
          f"cannot read TF1 checkpoint {prefix} "
          f"({' '.join(str(e).split())[:200]}); it is truncated or not a "
          "TF1 checkpoint") from None
    except ValueError as e:  # the shapes were checked: the heads' split
      raise ConversionError(
          f"cannot split the attention of {prefix} into num_attention_heads="
          f"{num_heads} heads ({' '.join(str(e).split())[:200]}); pass the "
          "bert_config.json that came with this checkpoint") from None
    finally:
      tf.compat.v1.logging.set_verbosity(verbosity)
    reader = tf.train.load_checkpoint(out)
    return {name: reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map()}


def _split(tensors: Dict[str, np.ndarray]
           ) -> Dict[str, Dict[str, np.ndarray]]:
  """{item: {our variable name: value}}."""
  items = {"encoder": {}}
  for name, value in tensors.items():
    for marker, item, rename in _HEADS:
      if name.startswith(marker):
        items.setdefault(item, {})[rename + name[len(marker):]] = value
        break
    else:
      items["encoder"][name] = value
  return items


def _assign(model, items: Dict[str, Dict[str, np.ndarray]], source: str,
            config: hf_files.HFBertConfig,
            report: conversion_report.ConversionProgress) -> None:
  """Checks names and shapes and assigns (the NSP's pooler is BERT's)."""
  if "next_sentence" in items:
    pooler = {k: v for k, v in items["encoder"].items()
              if k.startswith("pooler_transform/")}
    items["next_sentence"].update(
        {"pooler_dense/" + k.split("/", 1)[1]: v for k, v in pooler.items()})
  variables = {item: weight_map.item_variables(model, item) for item in items}
  report.start(sum(len(v) for v in variables.values()))
  for item, values in items.items():
    unknown = sorted(set(values) - set(variables[item]))
    missing = sorted(set(variables[item]) - set(values))
    layers = f"bert_config.json says {config.num_hidden_layers} layers"
    for what, names in (("unknown", unknown), ("missing", missing)):
      if names:
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        raise ConversionError(
            f"{source}: {what} variable {names[0]!r} of {item} (Model "
            f"Garden's name){more}; {layers}")
    for name, var in variables[item].items():
      value = values[name]
      if tuple(value.shape) != tuple(var.shape.as_list()):
        raise ConversionError(
            f"{source}: {item}/{name} has shape {list(value.shape)}, "
            f"expected {var.shape.as_list()} from bert_config.json")
      var.assign(value.astype(np.float32))
      report.advance()


def _convert(out, report, options, checkpoint, *, bert_config):
  """tf1_to_tf's steps, inside converter.run."""
  prefix = resolve(checkpoint)
  config = hf_files.read_bert_config(bert_config)
  # Before the vocab: a config of other sizes is the config's fault.
  tf1_shapes.check(prefix, config, bert_config)
  vocab_file = options.vocab_file or os.path.join(os.path.dirname(prefix),
                                                  hf_files.VOCAB_FILE)
  vocab_file = converter.vocab_file(
      converter.if_exists(vocab_file),
      missing=(f"no vocab: {vocab_file} does not exist; pass the vocab.txt "
               "of the checkpoint"))
  warnings = converter.checked_vocab(vocab_file, config.vocab_size,
                                     bert_config,
                                     options.allow_vocab_mismatch)
  report.note(f"renaming {prefix} with Model Garden's TF1 converter")
  items = _split(_renamed(prefix, config.num_attention_heads))
  has_nsp = "next_sentence" in items
  encoder_config = config.encoder_config()
  # Google's modeling.py "gelu" is the tanh approximation: Model Garden's.
  activation = "gelu" if config.hidden_act == "gelu" else config.tf_activation
  encoder_config.bert_v2.hidden_activation = activation
  model = weight_map.build_model(encoder_config, activation,
                                 use_next_sentence=has_nsp)
  _assign(model, items, prefix, config, report)
  names = [n for n in ("encoder", "masked_lm", "next_sentence") if n in items]
  converter.log_warnings(warnings)
  lower_case = options.lower_case
  if lower_case is None:
    base = os.path.basename(os.path.dirname(os.path.abspath(prefix)))
    lower_case = (True if base.startswith("uncased") else
                  False if base.startswith("cased") else None)
  written_prefix, written = converted_output.write(
      model, names, out, converted_output.params_dict(encoder_config,
                                                     activation),
      vocab_file,
      {"direction": "tf1_to_tf", "source": os.path.abspath(prefix),
       "bert_config": os.path.abspath(bert_config), "lower_case": lower_case,
       "activation": activation, "warnings": warnings, "initialized": []},
      "Converted from a Google TF1 BERT checkpoint", report)
  return conversion_report.ConversionResult(
      output=out.path, items=names, warnings=warnings,
      lower_case=lower_case, checkpoint=written_prefix,
      direction="tf1_to_tf",
      tensors=sum(len(weight_map.item_variables(model, n)) for n in names),
      bytes_written=hf_files.files_size(written))


def tf1_to_tf(checkpoint: str, output_dir: str,
              options: Optional[converter.ConversionOptions] = None, *,
              bert_config: str) -> conversion_report.ConversionResult:
  """Converts a Google TF1 BERT checkpoint into ours, heads included.

  Args:
    checkpoint: `.../bert_model.ckpt` (the prefix) or its directory.
    output_dir: where to write (converted_output.py).
    options: as in hf_to_tf (converter.ConversionOptions); vocab_file
      defaults to vocab.txt beside the checkpoint, lower_case is guessed
      from Google's directory name (`uncased_*` / `cased_*`; else unknown).
    bert_config: Google's bert_config.json.

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (the message names the file).
  """
  return converter.run(
      "tf1_to_tf", output_dir, output_dir_lib.IMPORT, options, _convert,
      checkpoint, bert_config=bert_config)
