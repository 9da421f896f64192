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

"""Which Hugging Face BERT tensor is which of our variables, and in which layout.

Our side is a SpanBertPretrainer without the SBO head (`encoder`, `masked_lm`,
`next_sentence`); attention kernels are reshaped per head, Linear weights
transposed. The full layout table: docs/interop.md.
"""

import dataclasses
import re
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.interop import hf_files
from official_spanbert.interop import conversion_report
from official_spanbert.modeling import builder

ConversionError = hf_files.ConversionError

# Keys of Hugging Face checkpoints that hold no weights (buffers); dropped.
IGNORED_KEYS = (
    "embeddings.position_ids",     # arange buffer, older transformers
    "embeddings.token_type_ids",   # zeros buffer, some transformers versions
)
# Keys handled specially (tied or aliased); checked, not assigned.
DECODER_WEIGHT = "cls.predictions.decoder.weight"
DECODER_BIAS = "cls.predictions.decoder.bias"
MLM_BIAS = "cls.predictions.bias"
POOLER_KEYS = ("pooler.dense.weight", "pooler.dense.bias")


# Transforms between a HF tensor and a TF variable (forward: HF -> TF).
_Fwd = Callable[[np.ndarray, Sequence[int]], np.ndarray]


def _copy(x, shape):
  return x.reshape(shape)


def _transpose(x, shape):
  return x.T.reshape(shape)


# (forward, inverse shape of the HF tensor given the TF variable's shape)
TRANSFORMS: Dict[str, Tuple[_Fwd, Callable[[Sequence[int]], Tuple[int, ...]]]
                 ] = {
    "copy": (_copy, lambda s: tuple(s)),
    # Linear [out, in] <-> Dense kernel [in, out]
    "transpose": (_transpose, lambda s: (s[1], s[0])),
    # Linear [N*D, H] <-> EinsumDense kernel [H, N, D]
    "qkv_kernel": (_transpose, lambda s: (s[1] * s[2], s[0])),
    # bias [N*D] <-> [N, D]
    "qkv_bias": (_copy, lambda s: (s[0] * s[1],)),
    # Linear [H, N*D] <-> EinsumDense kernel [N, D, H]
    "attn_out_kernel": (_transpose, lambda s: (s[2], s[0] * s[1])),
}


def inverse(kind: str, value: np.ndarray) -> np.ndarray:
  """TF variable value -> HF tensor."""
  shape = TRANSFORMS[kind][1](value.shape)
  if kind in ("copy", "qkv_bias"):
    return value.reshape(shape)
  return value.reshape(shape[::-1]).T


@dataclasses.dataclass(frozen=True)
class Entry:
  hf_key: str      # without the `bert.` prefix
  item: str        # checkpoint item: encoder, masked_lm, next_sentence
  tf_name: str     # variable name relative to the item
  kind: str        # key of TRANSFORMS


def weight_map(num_layers: int) -> List[Entry]:
  """Every HF tensor and the TF variable it becomes."""
  e = [
      Entry("embeddings.word_embeddings.weight", "encoder",
            "word_embeddings/embeddings", "copy"),
      Entry("embeddings.position_embeddings.weight", "encoder",
            "position_embedding/embeddings", "copy"),
      Entry("embeddings.token_type_embeddings.weight", "encoder",
            "type_embeddings/embeddings", "copy"),
      Entry("embeddings.LayerNorm.weight", "encoder",
            "embeddings/layer_norm/gamma", "copy"),
      Entry("embeddings.LayerNorm.bias", "encoder",
            "embeddings/layer_norm/beta", "copy"),
  ]
  for i in range(num_layers):
    hf, tf_ = f"encoder.layer.{i}.", f"transformer/layer_{i}/"
    for p in ("query", "key", "value"):
      e += [Entry(f"{hf}attention.self.{p}.weight", "encoder",
                  f"{tf_}self_attention/{p}/kernel", "qkv_kernel"),
            Entry(f"{hf}attention.self.{p}.bias", "encoder",
                  f"{tf_}self_attention/{p}/bias", "qkv_bias")]
    e += [
        Entry(f"{hf}attention.output.dense.weight", "encoder",
              f"{tf_}self_attention/attention_output/kernel",
              "attn_out_kernel"),
        Entry(f"{hf}attention.output.dense.bias", "encoder",
              f"{tf_}self_attention/attention_output/bias", "copy"),
        Entry(f"{hf}attention.output.LayerNorm.weight", "encoder",
              f"{tf_}self_attention_layer_norm/gamma", "copy"),
        Entry(f"{hf}attention.output.LayerNorm.bias", "encoder",
              f"{tf_}self_attention_layer_norm/beta", "copy"),
        Entry(f"{hf}intermediate.dense.weight", "encoder",
              f"{tf_}intermediate/kernel", "transpose"),
        Entry(f"{hf}intermediate.dense.bias", "encoder",
              f"{tf_}intermediate/bias", "copy"),
        Entry(f"{hf}output.dense.weight", "encoder", f"{tf_}output/kernel",
              "transpose"),
        Entry(f"{hf}output.dense.bias", "encoder", f"{tf_}output/bias",
              "copy"),
        Entry(f"{hf}output.LayerNorm.weight", "encoder",
              f"{tf_}output_layer_norm/gamma", "copy"),
        Entry(f"{hf}output.LayerNorm.bias", "encoder",
              f"{tf_}output_layer_norm/beta", "copy"),
    ]
  e += [
      Entry("pooler.dense.weight", "encoder", "pooler_transform/kernel",
            "transpose"),
      Entry("pooler.dense.bias", "encoder", "pooler_transform/bias", "copy"),
      Entry("cls.predictions.transform.dense.weight", "masked_lm",
            "transform/dense/kernel", "transpose"),
      Entry("cls.predictions.transform.dense.bias", "masked_lm",
            "transform/dense/bias", "copy"),
      Entry("cls.predictions.transform.LayerNorm.weight", "masked_lm",
            "transform/LayerNorm/gamma", "copy"),
      Entry("cls.predictions.transform.LayerNorm.bias", "masked_lm",
            "transform/LayerNorm/beta", "copy"),
      Entry(MLM_BIAS, "masked_lm", "output_bias/bias", "copy"),
      # BertForPreTraining: NSP = seq_relationship(pooler(h[CLS])); ours is
      # ClassificationHead(pooler_dense, tanh, logits) on h[CLS].
      Entry("pooler.dense.weight", "next_sentence", "pooler_dense/kernel",
            "transpose"),
      Entry("pooler.dense.bias", "next_sentence", "pooler_dense/bias",
            "copy"),
      Entry("cls.seq_relationship.weight", "next_sentence", "logits/kernel",
            "transpose"),
      Entry("cls.seq_relationship.bias", "next_sentence", "logits/bias",
            "copy"),
  ]
  return e


def item_variables(model, item: str) -> Dict[str, tf.Variable]:
  """Variables of a checkpoint item by name relative to the item."""
  if item == "encoder":
    module, marker = model.encoder_network, None
  elif item == "masked_lm":
    module, marker = model.masked_lm, "cls/predictions/"
  elif item == "span_boundary":
    module, marker = model.span_boundary, "cls/span_boundary/"
  else:
    module, marker = model.next_sentence, "next_sentence/"
  table = model.encoder_network.get_embedding_table()
  out = {}
  for v in module.variables:
    if item != "encoder" and v is table:
      continue  # the MLM's tied table is the encoder's word embeddings
    name = v.name.split(":")[0]
    name = name.split(marker, 1)[1] if marker else name.split("/", 1)[1]
    out[name] = v
  return out


def build_model(encoder_config: encoders.EncoderConfig, mlm_activation: str,
                use_next_sentence: bool, **sbo):
  """Our side: a SpanBertPretrainer (modeling/builder.py), without SBO head
  unless `sbo` sets use_sbo=True (and max_sbo_targets,
  sbo_position_embedding_size, sbo_activation)."""
  return builder.build_pretrainer(spanbert_configs.SpanBertPretrainerConfig(
      encoder=encoder_config, mlm_activation=mlm_activation,
      use_next_sentence=use_next_sentence, **{"use_sbo": False, **sbo}))


def checkpoint_items(model, items: Sequence[str]) -> Dict[str, tf.Module]:
  return {k: v for k, v in model.checkpoint_items.items() if k in items}


def canonical_state(state: Mapping[str, np.ndarray],
                    ignore_prefixes: Sequence[str] = ()
                    ) -> Dict[str, np.ndarray]:
  """Strips the `bert.` prefix and drops IGNORED_KEYS and ignore_prefixes.

  Old checkpoints' LayerNorm `gamma`/`beta` are renamed `weight`/`bias`.

  Raises:
    ConversionError: a key appears both with and without the prefix.
  """
  out = {}
  for key, value in state.items():
    if any(key.startswith(p) for p in ignore_prefixes):
      continue
    name = key[len("bert."):] if key.startswith("bert.") else key
    name = re.sub(r"(LayerNorm)\.gamma$", r"\1.weight", name)
    name = re.sub(r"(LayerNorm)\.beta$", r"\1.bias", name)
    if name in IGNORED_KEYS:
      continue
    if name in out:
      raise ConversionError(f"key {name!r} appears twice (with and without "
                            "the 'bert.' prefix)")
    out[name] = value
  return out


def heads_in(state: Mapping[str, np.ndarray]) -> Tuple[bool, bool]:
  has_mlm = any(k.startswith("cls.predictions.") for k in state)
  has_nsp = any(k.startswith("cls.seq_relationship.") for k in state)
  return has_mlm, has_nsp


def check_tied(state: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
  """Resolves the MLM decoder (tied weight, aliased bias); returns the rest."""
  state = dict(state)
  decoder = state.pop(DECODER_WEIGHT, None)
  words = state.get("embeddings.word_embeddings.weight")
  if decoder is not None and words is not None:
    if decoder.shape != words.shape or not np.array_equal(decoder, words):
      raise ConversionError(
          f"key {DECODER_WEIGHT!r} differs from "
          "embeddings.word_embeddings.weight: only MLM decoders tied to the "
          "word embeddings convert (Model Garden's MaskedLM ties them)")
  decoder_bias = state.pop(DECODER_BIAS, None)
  if decoder_bias is not None:
    if MLM_BIAS not in state:
      state[MLM_BIAS] = decoder_bias
    elif not np.array_equal(state[MLM_BIAS], decoder_bias):
      raise ConversionError(f"keys {MLM_BIAS!r} and {DECODER_BIAS!r} differ "
                            "(they are one tensor in BERT)")
  return state


def assign_hf_weights(model, state: Mapping[str, np.ndarray],
                      config: hf_files.HFBertConfig,
                      source: str = "checkpoint",
                      progress: Optional[
                          conversion_report.ConversionProgress] = None,
                      config_source: str = "config.json"
                      ) -> List[str]:
  """Assigns a canonical HF state (see canonical_state) to our model.

  Args:
    model: from build_model(); with a next_sentence head iff the state has
      cls.seq_relationship.
    state: canonical HF tensors.
    config: the source's config.
    source: named in errors.
    progress: counts the variables (assigned or initialised).
    config_source: where `config`'s sizes come from, for errors.

  Returns:
    Names of TF variables the state has no tensor for and that were given a
    seeded initialisation instead (only the pooler, absent from
    BertForMaskedLM checkpoints).

  Raises:
    ConversionError: an unknown key, a missing key or a shape mismatch.
  """
  state = check_tied(dict(state))
  has_mlm, has_nsp = heads_in(state)
  items = ["encoder"] + (["masked_lm"] if has_mlm else []) + (
      ["next_sentence"] if has_nsp else [])
  entries = [e for e in weight_map(config.num_hidden_layers)
             if e.item in items]
  known = {e.hf_key for e in entries}
  layers = f"{config_source} says {config.num_hidden_layers} layers"
  unknown = sorted(k for k in state if k not in known)
  if unknown:
    more = f" and {len(unknown) - 1} more" if len(unknown) > 1 else ""
    hint = (layers if unknown[0].startswith("encoder.layer.") else
            "task heads such as qa_outputs or classifier can be dropped "
            f"with --ignore_prefix={unknown[0].rsplit('.', 1)[0]}.")
    raise ConversionError(
        f"{source}: unknown key {unknown[0]!r}{more}; expected a BertModel, "
        f"BertForMaskedLM or BertForPreTraining checkpoint ({hint})")
  # BertForMaskedLM (and BertModel(add_pooling_layer=False)) have no pooler:
  # allowed, and reported, unless the NSP head needs it.
  optional = set() if has_nsp else set(POOLER_KEYS)
  missing = sorted(k for k in known if k not in state and k not in optional)
  if missing:
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    hint = f" ({layers})" if missing[0].startswith("encoder.layer.") else ""
    raise ConversionError(
        f"{source}: missing key {missing[0]!r}{more}{hint}")
  variables = {item: item_variables(model, item) for item in items}
  initialized = []
  if progress:
    progress.start(len(entries))
  for e in entries:
    var = variables[e.item][e.tf_name]
    if e.hf_key not in state:
      initialized.append(f"{e.item}/{e.tf_name}")
      continue
    value = state[e.hf_key]
    want = TRANSFORMS[e.kind][1](var.shape.as_list())
    if tuple(value.shape) != want:
      raise ConversionError(
          f"{source}: key {e.hf_key!r} has shape {list(value.shape)}, "
          f"expected {list(want)} from {config_source} (hidden_size="
          f"{config.hidden_size}, intermediate_size={config.intermediate_size}"
          f", vocab_size={config.vocab_size}, max_position_embeddings="
          f"{config.max_position_embeddings}, type_vocab_size="
          f"{config.type_vocab_size})")
    if value.dtype.kind != "f":
      raise ConversionError(f"{source}: key {e.hf_key!r} has dtype "
                            f"{value.dtype}, expected floating point")
    var.assign(TRANSFORMS[e.kind][0](value, var.shape.as_list()))
    if progress:
      progress.advance()
  # A missing pooler: seeded, so that conversions are reproducible.
  for name in initialized:
    var = variables["encoder"][name.split("/", 1)[1]]
    if name.endswith("kernel"):
      var.assign(tf.random.stateless_truncated_normal(
          var.shape, seed=[0, 1]) * config.initializer_range)
    else:
      var.assign(tf.zeros_like(var))
    if progress:
      progress.advance()
  return initialized


def export_hf_state(model, items: Sequence[str], prefix: str = "bert.",
                    progress: Optional[
                        conversion_report.ConversionProgress] = None
                    ) -> Dict[str, np.ndarray]:
  """Our model's items as HF tensors (encoder keys get `prefix`).

  `progress` counts our variables converted.
  """
  num_layers = len(model.encoder_network.transformer_layers)
  variables = {item: item_variables(model, item) for item in items}
  entries = [e for e in weight_map(num_layers) if e.item in items]
  if progress:
    progress.start(len(entries))
  state = {}
  for e in entries:
    if progress:
      progress.advance()
    value = inverse(e.kind, variables[e.item][e.tf_name].numpy())
    key = e.hf_key if e.hf_key.startswith("cls.") else prefix + e.hf_key
    if key in state:  # the pooler, also in the NSP head: must agree
      if not np.array_equal(state[key], value):
        raise ConversionError(
            "the next_sentence head's pooler_dense differs from the "
            "encoder's pooler_transform; Hugging Face's BertForPreTraining "
            "has one pooler for both (drop the NSP head to convert)")
      continue
    state[key] = value
  return state

