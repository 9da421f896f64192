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

"""Import: a Hugging Face BERT directory -> our checkpoint, params and vocab.

See the package docstring (interop/__init__.py) for what is written.
"""

import dataclasses
import os
from typing import Optional, Sequence

import numpy as np

from official_spanbert.interop import converted_output
from official_spanbert.interop import converter
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import conversion_report
from official_spanbert.interop import sbo_map
from official_spanbert.interop import weight_map

ConversionError = hf_files.ConversionError
params_dict = converted_output.params_dict


def hf_to_tf(input_dir: str, output_dir: str,
             options: Optional[converter.ConversionOptions] = None, *,
             approximate_gelu: bool = False,
             allow_layer_norm_eps_mismatch: bool = False,
             ignore_prefixes: Sequence[str] = ()
             ) -> conversion_report.ConversionResult:
  """Converts a Hugging Face BERT directory into our checkpoint.

  Args:
    input_dir: the Hugging Face directory.
    output_dir: where to write (see the module docstring).
    options: vocab, tokenization, overwrite, progress (converter.py;
      default: ConversionOptions()); the vocab_file is used when input_dir
      has no vocab.txt, lower_case defaults to its tokenizer_config.json
      do_lower_case, if any.
    approximate_gelu: with hidden_act "gelu", use Model Garden's tanh "gelu"
      instead of the exact `spanbert>gelu_exact` (outputs then differ slightly
      from PyTorch's; params need no registration).
    allow_layer_norm_eps_mismatch: convert even if config.json's
      layer_norm_eps is not Model Garden's 1e-12 (outputs then differ).
    ignore_prefixes: source key prefixes to drop (e.g. "qa_outputs.").

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (message names the key or setting).

  Example:
    options = converter.ConversionOptions(progress=False)
    result = hf_to_tf(hf_dir, out_dir, options)
    # out_dir now holds params.yaml, vocab.txt and the checkpoint, which
    # task.init_checkpoint (fine-tuning) or spanbert-export-* restores.
    assert result.checkpoint.startswith(out_dir) and "encoder" in result.items
  """
  return converter.run(
      "hf_to_tf", output_dir, output_dir_lib.IMPORT, options, _convert,
      input_dir, approximate_gelu=approximate_gelu,
      allow_layer_norm_eps_mismatch=allow_layer_norm_eps_mismatch,
      ignore_prefixes=ignore_prefixes)


def _convert(out, report, options, input_dir, *, approximate_gelu,
             allow_layer_norm_eps_mismatch, ignore_prefixes):
  """hf_to_tf's steps, inside converter.run."""
  config = hf_files.read_hf_config(input_dir)
  _check_layer_norm_eps(config, input_dir, allow_layer_norm_eps_mismatch)
  vocab_src = converter.vocab_file(
      converter.if_exists(os.path.join(input_dir, hf_files.VOCAB_FILE)),
      options.vocab_file,
      missing=f"{input_dir} has no vocab.txt; pass a vocab file")
  warnings = converter.checked_vocab(vocab_src, config.vocab_size,
                                     f"{input_dir}/config.json",
                                     options.allow_vocab_mismatch)
  source_state = hf_files.read_hf_state_dict(input_dir)
  sbo = sbo_map.read_file(input_dir)  # tf_to_hf writes the SBO head beside
  report.note(f"read {len(source_state)} tensors "
              f"({sum(v.nbytes for v in source_state.values()) / 1e6:.1f} MB)"
              f" from {input_dir}; building the model")
  state = weight_map.canonical_state(source_state, ignore_prefixes)
  has_mlm, has_nsp = weight_map.heads_in(state)
  encoder_config, activation, sbo_params = _model_settings(
      config, sbo, approximate_gelu, input_dir)
  model = weight_map.build_model(encoder_config, activation,
                                 use_next_sentence=has_nsp, **sbo_params)
  initialized = weight_map.assign_hf_weights(
      model, state, config, source=input_dir, progress=report)
  items = ["encoder"] + (["masked_lm"] if has_mlm else []) + (
      ["next_sentence"] if has_nsp else [])
  if sbo is not None:
    sbo_map.assign_state(model, sbo[0], None, f"{input_dir}/{sbo_map.FILE}")
    items.append("span_boundary")
  converter.log_warnings(warnings)
  lower = (options.lower_case if options.lower_case is not None
           else hf_files.read_lower_case(input_dir))
  prefix, written = converted_output.write(
      model, items, out,
      params_dict(encoder_config, activation, **sbo_params), vocab_src,
      {"direction": "hf_to_tf", "source": os.path.abspath(input_dir),
       "source_config": dataclasses.asdict(config),
       "initialized": initialized, "lower_case": lower,
       "activation": activation, "warnings": warnings},
      "Converted from a Hugging Face BERT checkpoint", report)
  return converted_output.result(
      "hf_to_tf", out.path, items, config.num_hidden_layers,
      sbo is not None, written, initialized=initialized, warnings=warnings,
      lower_case=lower, checkpoint=prefix)


def _check_layer_norm_eps(config, input_dir, allow_mismatch):
  """Raises unless layer_norm_eps is Model Garden's or a mismatch is allowed."""
  if (not np.isclose(config.layer_norm_eps,
                     hf_files.MODEL_GARDEN_LAYER_NORM_EPS, rtol=1e-6, atol=0)
      and not allow_mismatch):
    raise ConversionError(
        f"{input_dir}/config.json: layer_norm_eps is "
        f"{config.layer_norm_eps}, but Model Garden's BertEncoderV2 and "
        f"MaskedLM use {hf_files.MODEL_GARDEN_LAYER_NORM_EPS}; outputs would "
        "differ slightly (pass --allow_layer_norm_eps_mismatch to convert "
        "anyway)")


def _model_settings(config, sbo, approximate_gelu, input_dir):
  """The encoder config, MLM activation and SBO head settings to build."""
  encoder_config = config.encoder_config()
  activation = config.tf_activation
  if approximate_gelu and activation == hf_files.EXACT_GELU:
    activation = "gelu"
    encoder_config.bert_v2.hidden_activation = "gelu"
  sbo_params = {}
  if sbo is not None:
    t, p = sbo_map.head_sizes(sbo[0], f"{input_dir}/{sbo_map.FILE}")
    sbo_activation = hf_files.HF_TO_TF_ACTIVATION.get(sbo[1], activation)
    if approximate_gelu and sbo_activation == hf_files.EXACT_GELU:
      sbo_activation = "gelu"
    sbo_params = dict(use_sbo=True, max_sbo_targets=t,
                      sbo_position_embedding_size=p,
                      sbo_activation=sbo_activation)
  return encoder_config, activation, sbo_params
