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

"""Export: our checkpoint + its params -> a Hugging Face BERT directory.

See the package docstring (interop/__init__.py) for what is written.
"""

import json
import os
import shutil
from typing import Optional, Tuple

import tensorflow as tf
import yaml

from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data import tokenization
from official_spanbert.interop import converter
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import conversion_report
from official_spanbert.interop import sbo_map
from official_spanbert.interop import weight_map
from official_spanbert.modeling import checkpoints

ConversionError = hf_files.ConversionError
# The SBO head's relative-position table in our checkpoints: [T, P].
_SBO_POSITIONS = ("span_boundary/position_embeddings/.ATTRIBUTES/"
                  "VARIABLE_VALUE")


def read_params(path: str) -> Tuple[encoders.EncoderConfig, str]:
  """(encoder config, mlm_activation) from a params YAML (see read_model)."""
  model_config = read_model(path)
  return model_config.encoder, model_config.mlm_activation


def read_model(path: str) -> spanbert_configs.SpanBertPretrainerConfig:
  """task.model of a params YAML, checked for a Hugging Face export.

  Accepts a full params.yaml (as the trainer writes to model_dir) or an
  override with task.model.encoder (configs/models/*.yaml, or the one
  hf_to_tf writes). Unset fields take the SpanBERT experiment defaults.

  Raises:
    ConversionError: no task.model.encoder in it, or a non-bert_v2 encoder.
  """
  if not os.path.exists(path):
    raise ConversionError(f"params file {path} does not exist")
  with open(path, encoding="utf-8") as f:
    try:
      d = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
      raise ConversionError(f"{path}: not valid YAML ({e})") from None
  model_d = (d.get("task") or {}).get("model") or {}
  if "encoder" not in model_d:
    raise ConversionError(f"{path} has no task.model.encoder")
  model_config = spanbert_configs.SpanBertPretrainerConfig()
  try:
    model_config.override(
        {k: model_d[k] for k in ("encoder", "mlm_activation",
                                 "sbo_activation", "clamp_attention")
         if k in model_d}, is_strict=True)
  except (KeyError, ValueError, TypeError) as e:
    raise ConversionError(f"{path}: bad task.model.encoder ({e})") from None
  enc = model_config.encoder
  if enc.type != "bert_v2":
    raise ConversionError(f"{path}: encoder type is {enc.type!r}; only "
                          "bert_v2 (BertEncoderV2) converts")
  b = enc.bert_v2
  for field, ok, why in (
      ("embedding_size", b.embedding_size in (None, b.hidden_size),
       "factorised embeddings"),
      ("norm_first", not b.norm_first, "pre-LN transformers"),
      ("output_range", b.output_range is None, "a truncated output")):
    if not ok:
      raise ConversionError(f"{path}: {field}={getattr(b, field)} "
                            f"({why}) has no Hugging Face BERT counterpart")
  for name in (b.hidden_activation, model_config.mlm_activation,
               model_config.sbo_activation):
    if name not in hf_files.TF_TO_HF_ACTIVATION:
      raise ConversionError(
          f"{path}: activation {name!r} has no Hugging Face counterpart "
          f"(supported: {', '.join(sorted(hf_files.TF_TO_HF_ACTIVATION))})")
  if b.hidden_activation != model_config.mlm_activation:
    raise ConversionError(
        f"{path}: hidden_activation {b.hidden_activation!r} and "
        f"mlm_activation {model_config.mlm_activation!r} differ; Hugging "
        "Face BERT uses one hidden_act for both")
  return model_config


def resolve_checkpoint(path: str) -> str:
  """checkpoints.resolve, raising ConversionError."""
  try:
    return checkpoints.resolve(path)
  except ValueError as e:
    raise ConversionError(str(e)) from None


def tf_to_hf(checkpoint: str, output_dir: str,
             options: Optional[converter.ConversionOptions] = None, *,
             params_file: Optional[str] = None,
             drop_next_sentence: bool = False
             ) -> conversion_report.ConversionResult:
  """Converts one of our checkpoints into a Hugging Face BERT directory.

  Args:
    checkpoint: checkpoint prefix or directory (its latest checkpoint), with
      an `encoder` item (written by hf_to_tf, the trainer, or
      tf.train.Checkpoint(encoder=...)); `masked_lm` and `next_sentence` are
      converted when present, and `span_boundary` is written beside the
      Hugging Face files (sbo_map.FILE).
    output_dir: the Hugging Face directory to write.
    options: as in hf_to_tf (converter.ConversionOptions); vocab_file
      defaults to vocab.txt beside the checkpoint, else the params'
      task.train_data.vocab_file; lower_case (written to
      tokenizer_config.json) to conversion.json beside the checkpoint, else
      False (cased, as SpanBERT).
    params_file: params YAML with task.model.encoder; default: params.yaml
      beside the checkpoint (hf_to_tf and the trainer write one).
    drop_next_sentence: leave out an NSP head (needed when its pooler differs
      from the encoder's).

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (message names the problem).
  """
  return converter.run(
      "tf_to_hf", output_dir, output_dir_lib.HF_EXPORT, options, _convert,
      checkpoint, params_file=params_file,
      drop_next_sentence=drop_next_sentence)


def _convert(out, report, options, checkpoint, *, params_file,
             drop_next_sentence):
  """tf_to_hf's steps, inside converter.run."""
  prefix = resolve_checkpoint(checkpoint)
  ckpt_dir = os.path.dirname(prefix)
  params_file = params_file or os.path.join(ckpt_dir, hf_files.PARAMS_FILE)
  if not os.path.exists(params_file):
    raise ConversionError(f"no params file: {params_file} does not exist; "
                          "pass the params YAML the checkpoint was made with")
  model_config = read_model(params_file)
  encoder_config = model_config.encoder
  vocab_file, vocab = _vocab(options.vocab_file, ckpt_dir, params_file,
                             encoder_config)
  lower_case = options.lower_case
  if lower_case is None:
    lower_case = _lower_case_beside(ckpt_dir)
  shapes, names = _checkpoint_names(prefix)
  items, dropped, use_nsp, use_sbo, sbo_params = _heads(
      names, shapes, drop_next_sentence, model_config.sbo_activation)
  read_items = items + (["span_boundary"] if use_sbo else [])
  try:  # a diverged run's NaN would be written as weights
    checkpoints.check_finite(prefix, [item + "/" for item in read_items])
  except checkpoints.NonFiniteWeightsError as e:
    raise ConversionError(str(e)) from None
  report.note(f"building the model of {params_file}, reading {prefix}")
  model = weight_map.build_model(encoder_config, model_config.mlm_activation,
                                 use_next_sentence=use_nsp, **sbo_params)
  _read_weights(model, read_items, prefix, params_file)
  architectures, key_prefix = _hf_architecture(items, use_nsp)
  state = weight_map.export_hf_state(model, items, prefix=key_prefix,
                                     progress=report)
  written = _write_hf_files(
      out, model, state, vocab_file, vocab, lower_case, encoder_config,
      architectures, model_config.sbo_activation if use_sbo else None,
      report)
  return conversion_report.ConversionResult(
      output=out.path, items=read_items, dropped=dropped,
      lower_case=lower_case, checkpoint=prefix, direction="tf_to_hf",
      tensors=len(state) + (len(sbo_map.ENTRIES) if use_sbo else 0),
      bytes_written=hf_files.files_size(written))


def _vocab(vocab_file, ckpt_dir, params_file, encoder_config):
  """The vocab file to copy (given, beside the checkpoint, or the params')."""
  vocab_file = converter.vocab_file(
      vocab_file, converter.if_exists(os.path.join(ckpt_dir,
                                                   hf_files.VOCAB_FILE)),
      lambda: _params_vocab(params_file),
      missing="no vocab file beside the checkpoint or in the params; pass one")
  vocab = tokenization.load_vocab(vocab_file)
  if vocab.size > encoder_config.bert_v2.vocab_size:
    raise ConversionError(
        f"vocab {vocab_file} has {vocab.size} tokens but the encoder's "
        f"vocab_size is {encoder_config.bert_v2.vocab_size}")
  return vocab_file, vocab


def _params_vocab(params_file):
  """The params' task.train_data.vocab_file, or None."""
  with open(params_file, encoding="utf-8") as f:
    data = ((yaml.safe_load(f) or {}).get("task") or {}).get(
        "train_data") or {}
  return data.get("vocab_file") or None


def _lower_case_beside(ckpt_dir):
  """lower_case from conversion.json beside the checkpoint, else False."""
  lower_case = None
  meta = os.path.join(ckpt_dir, hf_files.CONVERSION_FILE)
  if os.path.exists(meta):
    with open(meta, encoding="utf-8") as f:
      lower_case = json.load(f).get("lower_case")
  return bool(lower_case)


def _checkpoint_names(prefix):
  """The checkpoint's variable shapes and top-level items; needs `encoder`."""
  try:
    shapes = dict(tf.train.list_variables(prefix))
  except tf.errors.OpError as e:
    raise ConversionError(
        f"cannot read {prefix}.index ({' '.join(str(e).split())[:200]}); the "
        "checkpoint is truncated or corrupt: copy it again or use an earlier "
        "one") from None
  names = {n.split("/", 1)[0] for n in shapes}
  if "encoder" not in names:
    raise ConversionError(
        f"checkpoint {prefix} has no `encoder` item (it has "
        f"{sorted(names)}); expected one written by hf_to_tf, the trainer or "
        "tf.train.Checkpoint(encoder=...)")
  return shapes, names


def _heads(names, shapes, drop_next_sentence, sbo_activation):
  """The items to export, those dropped, and the model's head settings."""
  dropped = []
  use_nsp = "next_sentence" in names and not drop_next_sentence
  if "next_sentence" in names and drop_next_sentence:
    dropped.append("next_sentence")
  use_sbo = "span_boundary" in names
  sbo_params = {}
  if use_sbo:  # T and P from the checkpoint, the activation from the params
    t, p = shapes[_SBO_POSITIONS]
    sbo_params = dict(use_sbo=True, max_sbo_targets=t,
                      sbo_position_embedding_size=p,
                      sbo_activation=sbo_activation)
  items = ["encoder"] + (["masked_lm"] if "masked_lm" in names else []) + (
      ["next_sentence"] if use_nsp else [])
  return items, dropped, use_nsp, use_sbo, sbo_params


def _read_weights(model, items, prefix, params_file):
  """Restores the model's `items` from the checkpoint, naming what fails."""
  try:
    status = tf.train.Checkpoint(
        **weight_map.checkpoint_items(model, items)).read(prefix)
    status.expect_partial().assert_existing_objects_matched()
  except (AssertionError, ValueError, tf.errors.OpError) as e:
    first = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
    raise ConversionError(
        f"checkpoint {prefix} does not match the encoder in {params_file}: "
        f"{first}") from None
  except (IndexError, EOFError, OSError) as e:  # a truncated data file
    data = tf.io.gfile.glob(prefix + ".data-*")
    raise ConversionError(
        f"cannot read {', '.join(data) or prefix} ({type(e).__name__}: "
        f"{' '.join(str(e).split())}); the checkpoint is truncated or "
        "corrupt: copy it again or use an earlier one") from None


def _hf_architecture(items, use_nsp):
  """The Hugging Face architectures and state-dict key prefix for `items`."""
  if items == ["encoder"]:
    return ["BertModel"], ""
  if use_nsp:
    return ["BertForPreTraining"], "bert."
  return ["BertForMaskedLM"], "bert."


def _write_hf_files(out, model, state, vocab_file, vocab, lower_case,
                    encoder_config, architectures, sbo_activation, report):
  """Writes the Hugging Face files into out.staging; returns their paths."""
  staging = out.staging
  config = hf_files.hf_config_dict(encoder_config, architectures,
                                   pad_token_id=vocab.pad_id)
  with open(os.path.join(staging, hf_files.HF_CONFIG_FILE), "w",
            encoding="utf-8") as f:
    json.dump(config, f, indent=2)
  report.note(f"writing {out.path}")
  hf_files.write_safetensors(
      state, os.path.join(staging, hf_files.HF_WEIGHTS_FILE))
  shutil.copyfile(vocab_file, os.path.join(staging, hf_files.VOCAB_FILE))
  hf_files.write_tokenizer_files(
      staging, lower_case,
      model_max_length=encoder_config.bert_v2.max_position_embeddings)
  written = [os.path.join(staging, name) for name in (
      hf_files.HF_CONFIG_FILE, hf_files.HF_WEIGHTS_FILE, hf_files.VOCAB_FILE,
      hf_files.TOKENIZER_CONFIG_FILE, hf_files.SPECIAL_TOKENS_FILE)]
  # An earlier export's SBO head is removed with it (output_dir.py).
  if sbo_activation is not None:  # Hugging Face has no SBO class: beside
    written.append(sbo_map.write_file(
        model, staging, hf_files.TF_TO_HF_ACTIVATION[sbo_activation]))
  return written
