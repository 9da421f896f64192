"""Hugging Face BERT checkpoints <-> our BertEncoderV2 + MaskedLM (+ NSP).

Import (`hf_to_tf`): a Hugging Face BERT directory (config.json, weights in
`model.safetensors` or `pytorch_model.bin`, possibly sharded with an
`*.index.json`, and vocab.txt) in the layout of BertModel (keys without
prefix or with `bert.`), BertForMaskedLM or BertForPreTraining becomes

  <out>/bert_model.ckpt.*   tf.train.Checkpoint(encoder=..., masked_lm=...,
                            next_sentence=...) -- the heads only when the
                            source has them; usable as task.init_checkpoint
                            and by anything that reads `encoder` alone.
  <out>/checkpoint          so that <out> itself works as init_checkpoint.
  <out>/params.yaml         params override: task.model.encoder (bert_v2) and
                            task.model.mlm_activation.
  <out>/vocab.txt           the source's vocab.
  <out>/conversion.json     what was converted (source config, lower_case,
                            items, layers initialised rather than converted).

Export (`tf_to_hf`): one of our checkpoints (converted, encoder-only,
pretraining or trainer checkpoint) plus its params becomes a Hugging Face
directory (config.json, model.safetensors, vocab.txt, tokenizer files) that
transformers' BertModel / BertForMaskedLM / BertForPreTraining load. The SBO
head has no Hugging Face counterpart and is left out.

Weight layout (H hidden, N heads, D = H / N):
  HF query/key/value Linear weight [N*D, H] -> EinsumDense kernel [H, N, D]
  HF attention.output.dense weight [H, N*D]  -> EinsumDense kernel [N, D, H]
  other Linear weights [out, in]             -> Dense kernels [in, out]
  MLM decoder weight                         == word embeddings (tied)
  NSP: HF pooler + seq_relationship          -> our encoder pooler and the
       next_sentence ClassificationHead (pooler_dense = a copy of the pooler,
       logits = seq_relationship), which computes the same function.

Exactness: Model Garden's "gelu" is the tanh approximation (HF "gelu_new" /
"gelu_pytorch_tanh"); HF's "gelu" is the exact erf form, registered here as
the Keras activation `spanbert>gelu_exact` (modeling/activations.py), which the
written params use; the tasks import that module, so they build from such
params. All of
Model Garden's LayerNorms use epsilon 1e-12, the value of BERT's config;
another `layer_norm_eps` is refused unless allowed explicitly.

Heavy dependencies (safetensors, torch) are imported lazily, only when a
checkpoint in their format is read or written.
"""

import dataclasses
import json
import os
import re
import shutil
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import tensorflow as tf
import yaml

from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data import tokenization
from official_spanbert.modeling import activations

EXACT_GELU = activations.EXACT_GELU
# Model Garden's LayerNormalization epsilon (embeddings, transformer blocks
# and MaskedLM all hard-code it).
MODEL_GARDEN_LAYER_NORM_EPS = 1e-12
CHECKPOINT_NAME = "bert_model.ckpt"
PARAMS_FILE = "params.yaml"
VOCAB_FILE = "vocab.txt"
CONVERSION_FILE = "conversion.json"
_HF_TO_TF_OUTPUTS = (CHECKPOINT_NAME + ".index", PARAMS_FILE, CONVERSION_FILE)
_TF_TO_HF_OUTPUTS = ("config.json", "model.safetensors")

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

# HF hidden_act -> our activation name, and back.
_HF_TO_TF_ACTIVATION = {
    "gelu": EXACT_GELU,
    "gelu_new": "gelu",            # Model Garden's gelu is the tanh form
    "gelu_pytorch_tanh": "gelu",
    "gelu_fast": "gelu",
    "relu": "relu",
    "silu": "swish",
    "swish": "swish",
}
_TF_TO_HF_ACTIVATION = {
    EXACT_GELU: "gelu",
    "gelu": "gelu_new",
    "relu": "relu",
    "swish": "silu",
}


class ConversionError(ValueError):
  """A checkpoint or config that cannot be converted (message says why)."""


# ----------------------------------------------------------------------------
# Hugging Face config.


@dataclasses.dataclass(frozen=True)
class HFBertConfig:
  """The fields of a Hugging Face BertConfig that the conversion uses."""
  vocab_size: int
  hidden_size: int
  num_hidden_layers: int
  num_attention_heads: int
  intermediate_size: int
  max_position_embeddings: int = 512
  type_vocab_size: int = 2
  layer_norm_eps: float = 1e-12
  hidden_act: str = "gelu"
  hidden_dropout_prob: float = 0.1
  attention_probs_dropout_prob: float = 0.1
  initializer_range: float = 0.02
  pad_token_id: int = 0

  @classmethod
  def from_dict(cls, d: Mapping[str, Any], source: str = "config.json"
                ) -> "HFBertConfig":
    """Validates a config.json dict.

    Raises:
      ConversionError: not a plain absolute-position BERT encoder.
    """
    model_type = d.get("model_type", "bert")
    if model_type != "bert":
      raise ConversionError(
          f"{source}: model_type is {model_type!r}; only 'bert' checkpoints "
          "are supported (RoBERTa-style models offset their positions)")
    pos = d.get("position_embedding_type", "absolute")
    if pos != "absolute":
      raise ConversionError(
          f"{source}: position_embedding_type is {pos!r}; BertEncoderV2 only "
          "has absolute position embeddings, so only 'absolute' converts")
    for flag in ("is_decoder", "add_cross_attention"):
      if d.get(flag):
        raise ConversionError(f"{source}: {flag} is true; only bidirectional "
                              "encoders without cross-attention convert")
    missing = [f.name for f in dataclasses.fields(cls)
               if f.default is dataclasses.MISSING and f.name not in d]
    if missing:
      raise ConversionError(f"{source}: missing {', '.join(missing)}")
    kwargs = {f.name: d[f.name] for f in dataclasses.fields(cls)
              if d.get(f.name) is not None}
    config = cls(**kwargs)
    if config.hidden_size % config.num_attention_heads:
      raise ConversionError(
          f"{source}: hidden_size {config.hidden_size} is not divisible by "
          f"num_attention_heads {config.num_attention_heads}")
    if config.hidden_act not in _HF_TO_TF_ACTIVATION:
      raise ConversionError(
          f"{source}: hidden_act {config.hidden_act!r} is not supported "
          f"(supported: {', '.join(sorted(_HF_TO_TF_ACTIVATION))})")
    return config

  @property
  def tf_activation(self) -> str:
    return _HF_TO_TF_ACTIVATION[self.hidden_act]

  def encoder_config(self) -> encoders.EncoderConfig:
    """The equivalent `bert_v2` encoder config."""
    return encoders.EncoderConfig(
        type="bert_v2",
        bert_v2=encoders.BertEncoderConfig(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size,
            num_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            intermediate_size=self.intermediate_size,
            hidden_activation=self.tf_activation,
            dropout_rate=self.hidden_dropout_prob,
            attention_dropout_rate=self.attention_probs_dropout_prob,
            max_position_embeddings=self.max_position_embeddings,
            type_vocab_size=self.type_vocab_size,
            initializer_range=self.initializer_range))


def read_hf_config(directory: str) -> HFBertConfig:
  path = os.path.join(directory, "config.json")
  if not os.path.exists(path):
    raise ConversionError(f"{directory} has no config.json")
  try:
    with open(path, encoding="utf-8") as f:
      d = json.load(f)
  except json.JSONDecodeError as e:
    raise ConversionError(f"{path}: not valid JSON ({e})") from None
  return HFBertConfig.from_dict(d, source=path)


# ----------------------------------------------------------------------------
# Reading and writing Hugging Face weights.


def _weight_files(directory: str) -> Tuple[str, List[str]]:
  """(format, files) of the weights in a Hugging Face directory."""
  for fmt, single, index in (
      ("safetensors", "model.safetensors", "model.safetensors.index.json"),
      ("torch", "pytorch_model.bin", "pytorch_model.bin.index.json")):
    if os.path.exists(os.path.join(directory, single)):
      return fmt, [os.path.join(directory, single)]
    index_path = os.path.join(directory, index)
    if os.path.exists(index_path):
      with open(index_path, encoding="utf-8") as f:
        shards = sorted(set(json.load(f)["weight_map"].values()))
      return fmt, [os.path.join(directory, s) for s in shards]
  others = [n for n in ("tf_model.h5", "flax_model.msgpack")
            if os.path.exists(os.path.join(directory, n))]
  hint = (f" (it has {', '.join(others)}, which is not supported: convert "
          "it to PyTorch/safetensors with transformers first)" if others else "")
  raise ConversionError(f"{directory} has no model.safetensors or "
                        f"pytorch_model.bin{hint}")


def _read_safetensors(path: str) -> Dict[str, np.ndarray]:
  import safetensors  # pylint: disable=g-import-not-at-top
  out = {}
  with safetensors.safe_open(path, framework="np") as f:
    keys = list(f.keys())
    low_precision = [k for k in keys if f.get_slice(k).get_dtype() == "BF16"]
    for k in keys:
      if k not in low_precision:
        out[k] = f.get_tensor(k)
  if low_precision:  # NumPy has no bfloat16: read those through torch.
    import torch  # pylint: disable=g-import-not-at-top
    with safetensors.safe_open(path, framework="pt") as f:
      for k in low_precision:
        out[k] = f.get_tensor(k).to(torch.float32).numpy()
  return out


def _read_torch(path: str) -> Dict[str, np.ndarray]:
  try:
    import torch  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ConversionError(
        f"reading {path} needs PyTorch (pip install "
        "'official-spanbert[interop]'); model.safetensors does not") from None
  state = torch.load(path, map_location="cpu", weights_only=True)
  if not isinstance(state, dict):
    raise ConversionError(f"{path} does not hold a state dict")
  out = {}
  for k, t in state.items():
    if not isinstance(t, torch.Tensor):
      raise ConversionError(f"{path}: entry {k!r} is not a tensor")
    if t.is_floating_point():
      t = t.to(torch.float32)
    out[k] = t.detach().cpu().numpy()
  return out


def read_hf_state_dict(directory: str) -> Dict[str, np.ndarray]:
  """All tensors of a Hugging Face checkpoint directory, as NumPy arrays.

  Floating-point tensors come back as float32 (fp16/bf16 are widened).

  Raises:
    ConversionError: no supported weights file, or a key in two shards.
  """
  fmt, files = _weight_files(directory)
  state = {}
  for path in files:
    if not os.path.exists(path):
      raise ConversionError(f"weights shard {path} is missing")
    part = _read_safetensors(path) if fmt == "safetensors" else _read_torch(
        path)
    for k, v in part.items():
      if k in state:
        raise ConversionError(f"key {k!r} appears in more than one shard")
      state[k] = v.astype(np.float32) if v.dtype.kind == "f" else v
  return state


def write_safetensors(state: Mapping[str, np.ndarray], path: str):
  import safetensors.numpy  # pylint: disable=g-import-not-at-top
  safetensors.numpy.save_file(
      {k: np.ascontiguousarray(v) for k, v in state.items()}, path,
      metadata={"format": "pt"})


# ----------------------------------------------------------------------------
# The weight map.

# Transforms between a HF tensor and a TF variable (forward: HF -> TF).
_Fwd = Callable[[np.ndarray, Sequence[int]], np.ndarray]


def _copy(x, shape):
  return x.reshape(shape)


def _transpose(x, shape):
  return x.T.reshape(shape)


# (forward, inverse shape of the HF tensor given the TF variable's shape)
_TRANSFORMS: Dict[str, Tuple[_Fwd, Callable[[Sequence[int]], Tuple[int, ...]]]
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


def _inverse(kind: str, value: np.ndarray) -> np.ndarray:
  """TF variable value -> HF tensor."""
  shape = _TRANSFORMS[kind][1](value.shape)
  if kind in ("copy", "qkv_bias"):
    return value.reshape(shape)
  return value.reshape(shape[::-1]).T


@dataclasses.dataclass(frozen=True)
class _Entry:
  hf_key: str      # without the `bert.` prefix
  item: str        # checkpoint item: encoder, masked_lm, next_sentence
  tf_name: str     # variable name relative to the item
  kind: str        # key of _TRANSFORMS


def _weight_map(num_layers: int) -> List[_Entry]:
  """Every HF tensor and the TF variable it becomes."""
  e = [
      _Entry("embeddings.word_embeddings.weight", "encoder",
             "word_embeddings/embeddings", "copy"),
      _Entry("embeddings.position_embeddings.weight", "encoder",
             "position_embedding/embeddings", "copy"),
      _Entry("embeddings.token_type_embeddings.weight", "encoder",
             "type_embeddings/embeddings", "copy"),
      _Entry("embeddings.LayerNorm.weight", "encoder",
             "embeddings/layer_norm/gamma", "copy"),
      _Entry("embeddings.LayerNorm.bias", "encoder",
             "embeddings/layer_norm/beta", "copy"),
  ]
  for i in range(num_layers):
    hf, tf_ = f"encoder.layer.{i}.", f"transformer/layer_{i}/"
    for p in ("query", "key", "value"):
      e += [_Entry(f"{hf}attention.self.{p}.weight", "encoder",
                   f"{tf_}self_attention/{p}/kernel", "qkv_kernel"),
            _Entry(f"{hf}attention.self.{p}.bias", "encoder",
                   f"{tf_}self_attention/{p}/bias", "qkv_bias")]
    e += [
        _Entry(f"{hf}attention.output.dense.weight", "encoder",
               f"{tf_}self_attention/attention_output/kernel",
               "attn_out_kernel"),
        _Entry(f"{hf}attention.output.dense.bias", "encoder",
               f"{tf_}self_attention/attention_output/bias", "copy"),
        _Entry(f"{hf}attention.output.LayerNorm.weight", "encoder",
               f"{tf_}self_attention_layer_norm/gamma", "copy"),
        _Entry(f"{hf}attention.output.LayerNorm.bias", "encoder",
               f"{tf_}self_attention_layer_norm/beta", "copy"),
        _Entry(f"{hf}intermediate.dense.weight", "encoder",
               f"{tf_}intermediate/kernel", "transpose"),
        _Entry(f"{hf}intermediate.dense.bias", "encoder",
               f"{tf_}intermediate/bias", "copy"),
        _Entry(f"{hf}output.dense.weight", "encoder", f"{tf_}output/kernel",
               "transpose"),
        _Entry(f"{hf}output.dense.bias", "encoder", f"{tf_}output/bias",
               "copy"),
        _Entry(f"{hf}output.LayerNorm.weight", "encoder",
               f"{tf_}output_layer_norm/gamma", "copy"),
        _Entry(f"{hf}output.LayerNorm.bias", "encoder",
               f"{tf_}output_layer_norm/beta", "copy"),
    ]
  e += [
      _Entry("pooler.dense.weight", "encoder", "pooler_transform/kernel",
             "transpose"),
      _Entry("pooler.dense.bias", "encoder", "pooler_transform/bias", "copy"),
      _Entry("cls.predictions.transform.dense.weight", "masked_lm",
             "transform/dense/kernel", "transpose"),
      _Entry("cls.predictions.transform.dense.bias", "masked_lm",
             "transform/dense/bias", "copy"),
      _Entry("cls.predictions.transform.LayerNorm.weight", "masked_lm",
             "transform/LayerNorm/gamma", "copy"),
      _Entry("cls.predictions.transform.LayerNorm.bias", "masked_lm",
             "transform/LayerNorm/beta", "copy"),
      _Entry(MLM_BIAS, "masked_lm", "output_bias/bias", "copy"),
      # BertForPreTraining: NSP = seq_relationship(pooler(h[CLS])); ours is
      # ClassificationHead(pooler_dense, tanh, logits) on h[CLS].
      _Entry("pooler.dense.weight", "next_sentence", "pooler_dense/kernel",
             "transpose"),
      _Entry("pooler.dense.bias", "next_sentence", "pooler_dense/bias",
             "copy"),
      _Entry("cls.seq_relationship.weight", "next_sentence", "logits/kernel",
             "transpose"),
      _Entry("cls.seq_relationship.bias", "next_sentence", "logits/bias",
             "copy"),
  ]
  return e


def _item_variables(model, item: str) -> Dict[str, tf.Variable]:
  """Variables of a checkpoint item by name relative to the item."""
  if item == "encoder":
    module, marker = model.encoder_network, None
  elif item == "masked_lm":
    module, marker = model.masked_lm, "cls/predictions/"
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


# ----------------------------------------------------------------------------
# Building our model.


def build_model(encoder_config: encoders.EncoderConfig, mlm_activation: str,
                use_next_sentence: bool):
  """A SpanBertPretrainer (no SBO head) built as the pretraining task does."""
  # Imported here: the task module pulls in the data pipeline.
  from official_spanbert.tasks import pretraining  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import span_bert_pretrainer  # pylint: disable=g-import-not-at-top
  task_config = spanbert_configs.SpanBertPretrainTaskConfig(
      model=spanbert_configs.SpanBertPretrainerConfig(
          encoder=encoder_config, mlm_activation=mlm_activation,
          use_sbo=False, use_next_sentence=use_next_sentence))
  model = pretraining.SpanBertPretrainTask(task_config).build_model()
  model(span_bert_pretrainer.dummy_inputs(1, 4, 1))
  return model


def checkpoint_items(model, items: Sequence[str]) -> Dict[str, tf.Module]:
  return {k: v for k, v in model.checkpoint_items.items() if k in items}


# ----------------------------------------------------------------------------
# HF -> TF.


@dataclasses.dataclass
class ConversionResult:
  """What a conversion produced.

  Attributes:
    output: the output directory.
    items: checkpoint items written (hf_to_tf) or read (tf_to_hf).
    initialized: TF variables not in the source, left at a seeded
      initialisation (e.g. the pooler of a BertForMaskedLM checkpoint).
    dropped: source parts not converted (e.g. the SBO head for HF).
    lower_case: tokenization the vocab expects (None: unknown).
    checkpoint: checkpoint prefix (hf_to_tf).
  """
  output: str
  items: List[str]
  initialized: List[str] = dataclasses.field(default_factory=list)
  dropped: List[str] = dataclasses.field(default_factory=list)
  lower_case: Optional[bool] = None
  checkpoint: Optional[str] = None


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


def _heads_in(state: Mapping[str, np.ndarray]) -> Tuple[bool, bool]:
  has_mlm = any(k.startswith("cls.predictions.") for k in state)
  has_nsp = any(k.startswith("cls.seq_relationship.") for k in state)
  return has_mlm, has_nsp


def _check_tied(state: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
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
                      config: HFBertConfig, source: str = "checkpoint"
                      ) -> List[str]:
  """Assigns a canonical HF state (see canonical_state) to our model.

  Args:
    model: from build_model(); with a next_sentence head iff the state has
      cls.seq_relationship.
    state: canonical HF tensors.
    config: the source's config.
    source: named in errors.

  Returns:
    Names of TF variables the state has no tensor for and that were given a
    seeded initialisation instead (only the pooler, absent from
    BertForMaskedLM checkpoints).

  Raises:
    ConversionError: an unknown key, a missing key or a shape mismatch.
  """
  state = _check_tied(dict(state))
  has_mlm, has_nsp = _heads_in(state)
  items = ["encoder"] + (["masked_lm"] if has_mlm else []) + (
      ["next_sentence"] if has_nsp else [])
  entries = [e for e in _weight_map(config.num_hidden_layers)
             if e.item in items]
  known = {e.hf_key for e in entries}
  layers = f"config.json says {config.num_hidden_layers} layers"
  unknown = sorted(k for k in state if k not in known)
  if unknown:
    more = f" and {len(unknown) - 1} more" if len(unknown) > 1 else ""
    hint = (layers if unknown[0].startswith("encoder.layer.") else
            "task heads such as qa_outputs or classifier can be dropped "
            "with ignore_prefixes")
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
  variables = {item: _item_variables(model, item) for item in items}
  initialized = []
  for e in entries:
    var = variables[e.item][e.tf_name]
    if e.hf_key not in state:
      initialized.append(f"{e.item}/{e.tf_name}")
      continue
    value = state[e.hf_key]
    want = _TRANSFORMS[e.kind][1](var.shape.as_list())
    if tuple(value.shape) != want:
      raise ConversionError(
          f"{source}: key {e.hf_key!r} has shape {list(value.shape)}, "
          f"expected {list(want)} from config.json (hidden_size="
          f"{config.hidden_size}, intermediate_size={config.intermediate_size}"
          f", vocab_size={config.vocab_size}, max_position_embeddings="
          f"{config.max_position_embeddings}, type_vocab_size="
          f"{config.type_vocab_size})")
    if value.dtype.kind != "f":
      raise ConversionError(f"{source}: key {e.hf_key!r} has dtype "
                            f"{value.dtype}, expected floating point")
    var.assign(_TRANSFORMS[e.kind][0](value, var.shape.as_list()))
  # A missing pooler: seeded, so that conversions are reproducible.
  for name in initialized:
    var = variables["encoder"][name.split("/", 1)[1]]
    if name.endswith("kernel"):
      var.assign(tf.random.stateless_truncated_normal(
          var.shape, seed=[0, 1]) * config.initializer_range)
    else:
      var.assign(tf.zeros_like(var))
  return initialized


def _read_lower_case(directory: str) -> Optional[bool]:
  path = os.path.join(directory, "tokenizer_config.json")
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      value = json.load(f).get("do_lower_case")
    if value is not None:
      return bool(value)
  return None


def params_dict(encoder_config: encoders.EncoderConfig,
                mlm_activation: str) -> Dict[str, Any]:
  """The params override (task.model) for a converted encoder."""
  return {"task": {"model": {
      "encoder": {"type": encoder_config.type,
                  encoder_config.type: encoder_config.get().as_dict()},
      "mlm_activation": mlm_activation}}}


def _check_output(output_dir: str, names: Sequence[str], overwrite: bool):
  """Refuses to overwrite an earlier conversion (before any work is done)."""
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ConversionError(f"output {output_dir} is not a directory")
  present = [n for n in names if os.path.exists(os.path.join(output_dir, n))]
  if present and not overwrite:
    raise ConversionError(f"output {output_dir} already holds {present[0]}; "
                          "choose an empty directory or allow overwriting")


def hf_to_tf(input_dir: str, output_dir: str, *,
             approximate_gelu: bool = False,
             allow_layer_norm_eps_mismatch: bool = False,
             ignore_prefixes: Sequence[str] = (),
             vocab_file: Optional[str] = None,
             lower_case: Optional[bool] = None,
             overwrite: bool = False) -> ConversionResult:
  """Converts a Hugging Face BERT directory into our checkpoint.

  Args:
    input_dir: the Hugging Face directory.
    output_dir: where to write (see the module docstring).
    approximate_gelu: with hidden_act "gelu", use Model Garden's tanh "gelu"
      instead of the exact `spanbert>gelu_exact` (outputs then differ slightly
      from PyTorch's; params need no registration).
    allow_layer_norm_eps_mismatch: convert even if config.json's
      layer_norm_eps is not Model Garden's 1e-12 (outputs then differ).
    ignore_prefixes: source key prefixes to drop (e.g. "qa_outputs.").
    vocab_file: vocab to copy if input_dir has no vocab.txt.
    lower_case: tokenization to record (default: the input's
      tokenizer_config.json do_lower_case, if any).
    overwrite: replace an earlier conversion in output_dir.

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (message names the key or setting).
  """
  _check_output(output_dir, _HF_TO_TF_OUTPUTS, overwrite)
  config = read_hf_config(input_dir)
  if (not np.isclose(config.layer_norm_eps, MODEL_GARDEN_LAYER_NORM_EPS,
                     rtol=1e-6, atol=0) and not allow_layer_norm_eps_mismatch):
    raise ConversionError(
        f"{input_dir}/config.json: layer_norm_eps is {config.layer_norm_eps}, "
        f"but Model Garden's BertEncoderV2 and MaskedLM use "
        f"{MODEL_GARDEN_LAYER_NORM_EPS}; outputs would differ slightly (allow "
        "the mismatch to convert anyway)")
  vocab_src = os.path.join(input_dir, VOCAB_FILE)
  if not os.path.exists(vocab_src):
    vocab_src = vocab_file
    if not vocab_src:
      raise ConversionError(f"{input_dir} has no vocab.txt; pass a vocab file")
  vocab = tokenization.load_vocab(vocab_src)
  if vocab.size > config.vocab_size:
    raise ConversionError(
        f"vocab {vocab_src} has {vocab.size} tokens but config.json's "
        f"vocab_size is {config.vocab_size}")
  state = canonical_state(read_hf_state_dict(input_dir), ignore_prefixes)
  has_mlm, has_nsp = _heads_in(state)
  encoder_config = config.encoder_config()
  activation = config.tf_activation
  if approximate_gelu and activation == EXACT_GELU:
    activation = "gelu"
    encoder_config.bert_v2.hidden_activation = "gelu"
  model = build_model(encoder_config, activation, use_next_sentence=has_nsp)
  initialized = assign_hf_weights(model, state, config, source=input_dir)
  items = ["encoder"] + (["masked_lm"] if has_mlm else []) + (
      ["next_sentence"] if has_nsp else [])

  os.makedirs(output_dir, exist_ok=True)
  prefix = os.path.join(output_dir, CHECKPOINT_NAME)
  tf.train.Checkpoint(**checkpoint_items(model, items)).write(prefix)
  # The checkpoint state file, so that output_dir works as a checkpoint dir.
  with open(os.path.join(output_dir, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(f'model_checkpoint_path: "{CHECKPOINT_NAME}"\n'
            f'all_model_checkpoint_paths: "{CHECKPOINT_NAME}"\n')
  with open(os.path.join(output_dir, PARAMS_FILE), "w",
            encoding="utf-8") as f:
    f.write("# Converted from a Hugging Face BERT checkpoint: a params "
            "override for the\n# SpanBERT experiments. Use "
            f"task.init_checkpoint={prefix}.\n")
    yaml.safe_dump(params_dict(encoder_config, activation), f,
                   sort_keys=False)
  if os.path.abspath(vocab_src) != os.path.abspath(
      os.path.join(output_dir, VOCAB_FILE)):
    shutil.copyfile(vocab_src, os.path.join(output_dir, VOCAB_FILE))
  lower = lower_case if lower_case is not None else _read_lower_case(
      input_dir)
  result = ConversionResult(output=output_dir, items=items,
                            initialized=initialized, lower_case=lower,
                            checkpoint=prefix)
  with open(os.path.join(output_dir, CONVERSION_FILE), "w",
            encoding="utf-8") as f:
    json.dump({"direction": "hf_to_tf", "source": os.path.abspath(input_dir),
               "source_config": dataclasses.asdict(config),
               "items": items, "initialized": initialized,
               "lower_case": lower, "activation": activation,
               "checkpoint": CHECKPOINT_NAME}, f, indent=2)
  logging.info("Converted %s (%s) to %s", input_dir, items, prefix)
  return result


# ----------------------------------------------------------------------------
# TF -> HF.


def read_params(path: str) -> Tuple[encoders.EncoderConfig, str]:
  """(encoder config, mlm_activation) from a params YAML.

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
        {"encoder": model_d["encoder"],
         "mlm_activation": model_d.get("mlm_activation",
                                       model_config.mlm_activation)},
        is_strict=True)
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
  for name in (b.hidden_activation, model_config.mlm_activation):
    if name not in _TF_TO_HF_ACTIVATION:
      raise ConversionError(
          f"{path}: activation {name!r} has no Hugging Face counterpart "
          f"(supported: {', '.join(sorted(_TF_TO_HF_ACTIVATION))})")
  if b.hidden_activation != model_config.mlm_activation:
    raise ConversionError(
        f"{path}: hidden_activation {b.hidden_activation!r} and "
        f"mlm_activation {model_config.mlm_activation!r} differ; Hugging "
        "Face BERT uses one hidden_act for both")
  return enc, model_config.mlm_activation


def hf_config_dict(encoder_config: encoders.EncoderConfig,
                   architectures: Sequence[str], pad_token_id: int = 0
                   ) -> Dict[str, Any]:
  b = encoder_config.bert_v2
  return {
      "architectures": list(architectures),
      "model_type": "bert",
      "vocab_size": b.vocab_size,
      "hidden_size": b.hidden_size,
      "num_hidden_layers": b.num_layers,
      "num_attention_heads": b.num_attention_heads,
      "intermediate_size": b.intermediate_size,
      "hidden_act": _TF_TO_HF_ACTIVATION[b.hidden_activation],
      "hidden_dropout_prob": b.dropout_rate,
      "attention_probs_dropout_prob": b.attention_dropout_rate,
      "max_position_embeddings": b.max_position_embeddings,
      "type_vocab_size": b.type_vocab_size,
      "initializer_range": b.initializer_range,
      "layer_norm_eps": MODEL_GARDEN_LAYER_NORM_EPS,
      "position_embedding_type": "absolute",
      "pad_token_id": pad_token_id,
      "tie_word_embeddings": True,
  }


def export_hf_state(model, items: Sequence[str], prefix: str = "bert."
                    ) -> Dict[str, np.ndarray]:
  """Our model's items as HF tensors (encoder keys get `prefix`)."""
  num_layers = len(model.encoder_network.transformer_layers)
  variables = {item: _item_variables(model, item) for item in items}
  state = {}
  for e in _weight_map(num_layers):
    if e.item not in items:
      continue
    value = _inverse(e.kind, variables[e.item][e.tf_name].numpy())
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


def _resolve_checkpoint(path: str) -> str:
  from official_spanbert.modeling import checkpoints  # pylint: disable=g-import-not-at-top
  try:
    return checkpoints.resolve(path)
  except ValueError as e:
    raise ConversionError(str(e)) from None


def tf_to_hf(checkpoint: str, output_dir: str, *,
             params_file: Optional[str] = None,
             vocab_file: Optional[str] = None,
             lower_case: Optional[bool] = None,
             drop_next_sentence: bool = False,
             overwrite: bool = False) -> ConversionResult:
  """Converts one of our checkpoints into a Hugging Face BERT directory.

  Args:
    checkpoint: checkpoint prefix or directory (its latest checkpoint), with
      an `encoder` item (written by hf_to_tf, the trainer, or
      tf.train.Checkpoint(encoder=...)); `masked_lm` and `next_sentence` are
      converted when present.
    output_dir: the Hugging Face directory to write.
    params_file: params YAML with task.model.encoder; default: params.yaml
      beside the checkpoint (hf_to_tf and the trainer write one).
    vocab_file: default: vocab.txt beside the checkpoint, else the params'
      task.train_data.vocab_file.
    lower_case: the vocab's tokenization, written to tokenizer_config.json;
      default: conversion.json beside the checkpoint, else False (cased, as
      SpanBERT).
    drop_next_sentence: leave out an NSP head (needed when its pooler differs
      from the encoder's).
    overwrite: replace an earlier export in output_dir.

  Returns:
    A ConversionResult.

  Raises:
    ConversionError: unusable input (message names the problem).
  """
  _check_output(output_dir, _TF_TO_HF_OUTPUTS, overwrite)
  prefix = _resolve_checkpoint(checkpoint)
  ckpt_dir = os.path.dirname(prefix)
  params_file = params_file or os.path.join(ckpt_dir, PARAMS_FILE)
  if not os.path.exists(params_file):
    raise ConversionError(f"no params file: {params_file} does not exist; "
                          "pass the params YAML the checkpoint was made with")
  encoder_config, mlm_activation = read_params(params_file)
  if vocab_file is None:
    beside = os.path.join(ckpt_dir, VOCAB_FILE)
    if os.path.exists(beside):
      vocab_file = beside
    else:
      with open(params_file, encoding="utf-8") as f:
        data = ((yaml.safe_load(f) or {}).get("task") or {}).get(
            "train_data") or {}
      vocab_file = data.get("vocab_file") or None
  if not vocab_file:
    raise ConversionError("no vocab file beside the checkpoint or in the "
                          "params; pass one")
  vocab = tokenization.load_vocab(vocab_file)
  if vocab.size > encoder_config.bert_v2.vocab_size:
    raise ConversionError(
        f"vocab {vocab_file} has {vocab.size} tokens but the encoder's "
        f"vocab_size is {encoder_config.bert_v2.vocab_size}")
  if lower_case is None:
    meta = os.path.join(ckpt_dir, CONVERSION_FILE)
    if os.path.exists(meta):
      with open(meta, encoding="utf-8") as f:
        lower_case = json.load(f).get("lower_case")
    lower_case = bool(lower_case)

  names = {n.split("/", 1)[0] for n, _ in tf.train.list_variables(prefix)}
  if "encoder" not in names:
    raise ConversionError(
        f"checkpoint {prefix} has no `encoder` item (it has "
        f"{sorted(names)}); expected one written by hf_to_tf, the trainer or "
        "tf.train.Checkpoint(encoder=...)")
  dropped = sorted(n for n in names if n in ("span_boundary",))
  use_nsp = "next_sentence" in names and not drop_next_sentence
  if "next_sentence" in names and drop_next_sentence:
    dropped.append("next_sentence")
  items = ["encoder"] + (["masked_lm"] if "masked_lm" in names else []) + (
      ["next_sentence"] if use_nsp else [])
  model = build_model(encoder_config, mlm_activation, use_next_sentence=use_nsp)
  try:
    status = tf.train.Checkpoint(**checkpoint_items(model, items)).read(prefix)
    status.expect_partial().assert_existing_objects_matched()
  except (AssertionError, ValueError, tf.errors.OpError) as e:
    first = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
    raise ConversionError(
        f"checkpoint {prefix} does not match the encoder in {params_file}: "
        f"{first}") from None

  if items == ["encoder"]:
    architectures, key_prefix = ["BertModel"], ""
  elif use_nsp:
    architectures, key_prefix = ["BertForPreTraining"], "bert."
  else:
    architectures, key_prefix = ["BertForMaskedLM"], "bert."
  state = export_hf_state(model, items, prefix=key_prefix)
  os.makedirs(output_dir, exist_ok=True)
  config = hf_config_dict(encoder_config, architectures,
                          pad_token_id=vocab.pad_id)
  with open(os.path.join(output_dir, "config.json"), "w",
            encoding="utf-8") as f:
    json.dump(config, f, indent=2)
  write_safetensors(state, os.path.join(output_dir, "model.safetensors"))
  shutil.copyfile(vocab_file, os.path.join(output_dir, VOCAB_FILE))
  special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
             "cls_token": "[CLS]", "mask_token": "[MASK]"}
  with open(os.path.join(output_dir, "tokenizer_config.json"), "w",
            encoding="utf-8") as f:
    json.dump(dict(tokenizer_class="BertTokenizer", do_lower_case=lower_case,
                   strip_accents=None, tokenize_chinese_chars=True,
                   model_max_length=encoder_config.bert_v2
                   .max_position_embeddings, **special), f, indent=2)
  with open(os.path.join(output_dir, "special_tokens_map.json"), "w",
            encoding="utf-8") as f:
    json.dump(special, f, indent=2)
  logging.info("Exported %s (%s) to %s", prefix, items, output_dir)
  return ConversionResult(output=output_dir, items=items, dropped=dropped,
                          lower_case=lower_case, checkpoint=prefix)
