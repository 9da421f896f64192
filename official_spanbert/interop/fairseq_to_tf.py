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

"""Import: the reference's fairseq SpanBERT (model.pt), heads included.

The encoder, MLM and SBO heads of `spanbert_large_with_head`, written as every
import, with params (SBO sizes, exact GELU, attention clamp) that work as
task.init_checkpoint and as an export's --model_dir.
"""

import os
from typing import Optional

from official_spanbert.data import tokenization
from official_spanbert.interop import converted_output
from official_spanbert.interop import converter
from official_spanbert.interop import fairseq_files
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import conversion_report
from official_spanbert.interop import sbo_map
from official_spanbert.interop import vocab_check
from official_spanbert.interop import weight_map

ConversionError = hf_files.ConversionError


def fairseq_to_tf(model_file: str, output_dir: str,
                  options: converter.ConversionOptions, *,
                  bert_config: Optional[str] = None,
                  clamp_attention: bool = True
                  ) -> conversion_report.ConversionResult:
  """Converts the reference's model.pt into our checkpoint.

  Args:
    model_file: the fairseq `model.pt` (flat state dict, or a training
      checkpoint with the weights under "model"; keys with or without
      `decoder.`).
    output_dir: where to write (converted_output.py).
    options: as in hf_to_tf (converter.ConversionOptions), with the
      vocab_file it was trained with (the release: BERT's cased vocab,
      28,996 tokens; model.pt holds none); lower_case None is cased, as
      SpanBERT.
    bert_config: a bert_config.json for the sizes; default: read from the
      tensors, the attention heads from the reference's architectures.
    clamp_attention: write task.model.clamp_attention (the reference's
      `--clamp-attention`; matters in float16 / bfloat16).

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (the message names the file and key).
  """
  return converter.run(
      "fairseq_to_tf", output_dir, output_dir_lib.IMPORT, options, _convert,
      model_file, bert_config=bert_config, clamp_attention=clamp_attention)


def _convert(out, report, options, model_file, *, bert_config,
             clamp_attention):
  """fairseq_to_tf's steps, inside converter.run."""
  config = hf_files.read_bert_config(bert_config) if bert_config else None
  vocab_file, lower_case = options.vocab_file, bool(options.lower_case)
  if not vocab_file:
    raise ConversionError(
        "fairseq_to_tf needs a vocab_file: model.pt has no vocab (the "
        "release was trained with BERT's cased vocab, 28,996 tokens)")
  vocab = tokenization.load_vocab(vocab_file)
  source, arch = fairseq_files.read_state(model_file)
  report.note(f"read {len(source)} tensors "
              f"({sum(v.nbytes for v in source.values()) / 1e6:.1f} MB) from "
              f"{model_file}; building the model")
  sbo = {k[len(sbo_map.PREFIX):]: v for k, v in source.items()
         if k.startswith(sbo_map.PREFIX)}
  state = weight_map.canonical_state(
      {k: v for k, v in source.items() if not k.startswith(sbo_map.PREFIX)})
  if config is None:
    config = fairseq_files.infer_config(state, model_file, arch)
  words = state.get("embeddings.word_embeddings.weight")
  warnings = vocab_check.check(
      vocab, config.vocab_size if words is None else words.shape[0],
      model_file, options.allow_vocab_mismatch)
  has_mlm, has_nsp = weight_map.heads_in(state)
  activation = config.tf_activation
  encoder_config = config.encoder_config()
  model_params = {"clamp_attention": clamp_attention}
  if sbo:
    t, p = sbo_map.head_sizes(sbo, model_file)
    model_params.update(use_sbo=True, max_sbo_targets=t,
                        sbo_position_embedding_size=p,
                        sbo_activation=activation)
  model = weight_map.build_model(encoder_config, activation,
                                 use_next_sentence=has_nsp, **model_params)
  initialized = weight_map.assign_hf_weights(
      model, state, config, source=model_file, progress=report,
      config_source=bert_config or f"the sizes of {model_file}'s tensors")
  items = ["encoder"] + (["masked_lm"] if has_mlm else []) + (
      ["next_sentence"] if has_nsp else [])
  if sbo:
    sbo_map.assign_state(model, sbo, words, model_file)
    items.append("span_boundary")
  if not has_nsp and initialized:
    warnings.append(
        f"{model_file} has no pooler and no NSP head (trained with "
        "--no-nsp): none is written, and the encoder's pooler keeps a seeded "
        "initialisation, so pooled_output is untrained")
  converter.log_warnings(warnings)
  prefix, written = converted_output.write(
      model, items, out,
      converted_output.params_dict(encoder_config, activation,
                                   **model_params),
      vocab_file,
      {"direction": "fairseq_to_tf", "source": os.path.abspath(model_file),
       "architecture": arch[0], "initialized": initialized,
       "lower_case": lower_case, "activation": activation,
       "warnings": warnings},
      "Converted from the reference's fairseq SpanBERT checkpoint", report)
  return converted_output.result(
      "fairseq_to_tf", out.path, items, config.num_hidden_layers,
      bool(sbo), written, initialized=initialized, warnings=warnings,
      lower_case=lower_case, checkpoint=prefix)
