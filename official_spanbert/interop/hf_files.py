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

"""The files of a conversion: Hugging Face's, and the names of ours.

Reads and writes Hugging Face BERT directories; defines ConversionError, which
every interop module raises.
"""

import dataclasses
import json
import os
import pickle
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from official.nlp.configs import encoders
from official_spanbert.modeling import activations
from official_spanbert.modeling import checkpoints

EXACT_GELU = activations.EXACT_GELU
# Model Garden's LayerNormalization epsilon (embeddings, transformer blocks
# and MaskedLM all hard-code it).
MODEL_GARDEN_LAYER_NORM_EPS = 1e-12
# What hf_to_tf writes (and tf_to_hf reads beside a checkpoint).
CHECKPOINT_NAME = "bert_model.ckpt"
PARAMS_FILE = "params.yaml"
VOCAB_FILE = "vocab.txt"
CONVERSION_FILE = "conversion.json"
HF_TO_TF_OUTPUTS = (CHECKPOINT_NAME + ".index", PARAMS_FILE, CONVERSION_FILE)
# What tf_to_hf writes.
HF_CONFIG_FILE = "config.json"
HF_WEIGHTS_FILE = "model.safetensors"
TF_TO_HF_OUTPUTS = (HF_CONFIG_FILE, HF_WEIGHTS_FILE)
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_FILE = "special_tokens_map.json"
SPECIAL_TOKENS = {"unk_token": "[UNK]", "sep_token": "[SEP]",
                  "pad_token": "[PAD]", "cls_token": "[CLS]",
                  "mask_token": "[MASK]"}

# HF hidden_act -> our activation name, and back.
HF_TO_TF_ACTIVATION = {
    "gelu": EXACT_GELU,
    "gelu_new": "gelu",            # Model Garden's gelu is the tanh form
    "gelu_pytorch_tanh": "gelu",
    "gelu_fast": "gelu",
    "relu": "relu",
    "silu": "swish",
    "swish": "swish",
}
TF_TO_HF_ACTIVATION = {
    EXACT_GELU: "gelu",
    "gelu": "gelu_new",
    "relu": "relu",
    "swish": "silu",
}


class ConversionError(ValueError):
  """A checkpoint or config that cannot be converted (message says why)."""


# ----------------------------------------------------------------------------
# Hugging Face config.

# JSON types of the HFBertConfig fields (a bool is no number here).
_FIELD_TYPES = {int: (int, "an integer"), float: ((int, float), "a number"),
                str: (str, "a string")}


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
    file_name = (os.path.basename(source) if source.endswith(".json")
                 else "the config")
    for field in dataclasses.fields(cls):
      value = kwargs.get(field.name)
      kind, what = _FIELD_TYPES[field.type]
      if value is not None and (isinstance(value, bool) or
                                not isinstance(value, kind)):
        raise ConversionError(f"{source}: {field.name} must be {what}, got "
                              f"{value!r}; fix it in {file_name}")
    config = cls(**kwargs)
    if config.hidden_size % config.num_attention_heads:
      raise ConversionError(
          f"{source}: hidden_size {config.hidden_size} is not divisible by "
          f"num_attention_heads {config.num_attention_heads}")
    if config.hidden_act not in HF_TO_TF_ACTIVATION:
      raise ConversionError(
          f"{source}: hidden_act {config.hidden_act!r} is not supported "
          f"(supported: {', '.join(sorted(HF_TO_TF_ACTIVATION))})")
    return config

  @property
  def tf_activation(self) -> str:
    return HF_TO_TF_ACTIVATION[self.hidden_act]

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
  return read_bert_config(path)


def read_bert_config(path: str) -> HFBertConfig:
  """A Hugging Face config.json or Google's bert_config.json."""
  if not os.path.exists(path):
    raise ConversionError(f"bert config {path} does not exist")
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
  for fmt, single, index in checkpoints.HF_WEIGHT_LAYOUTS:
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


def unreadable(path: str, e: BaseException) -> ConversionError:
  return ConversionError(
      f"cannot read {path} ({type(e).__name__}: {' '.join(str(e).split())}); "
      "it is truncated or corrupt: download or copy it again")


def _not_torch(path: str) -> Optional[Tuple[str, str]]:
  """(what the file is, what to do) if `path` is plainly no PyTorch
  checkpoint (torch.save writes a zip archive, or a pickle in the legacy
  format); None when it may be one. Reads the first 4 KiB."""
  with open(path, "rb") as f:
    head = f.read(4096)
  if head.startswith((b"PK\x03\x04", b"\x80")):
    return None
  if not head:
    return "an empty file", "copy or download it again"
  text = head.lstrip().lower()
  if head.startswith(b"\x1f\x8b"):
    return ("a gzip archive (a .tar.gz?)",
            "unpack it (tar xzf) and pass the model.pt inside")
  if head[257:262] == b"ustar":
    return "a tar archive", "unpack it (tar xf) and pass the model.pt inside"
  if head.startswith(b"version https://git-lfs.github.com/spec/"):
    size = re.search(rb"^size (\d+)", head, re.M)
    return (f"a Git LFS pointer to {size.group(1).decode() if size else 'the'}"
            " bytes that were never downloaded",
            "run `git lfs pull` in its repository (or download the file "
            "itself)")
  if text.startswith((b"<!doctype html", b"<html")) or b"<html" in text[:512]:
    return ("an HTML page (a download that returned a web page, e.g. a "
            "sign-in or error page)", "download the file itself")
  if len(head) > 8 and head[8:10] == b'{"':
    return ("a safetensors file", "convert the Hugging Face directory it "
            "belongs to with --direction=hf_to_tf")
  try:
    start = head.decode("utf-8")
  except UnicodeDecodeError:
    start = "\0"
  if "\0" in start:
    return (f"a file of another format (it starts with the bytes "
            f"{head[:4]!r})", "")
  first = start.strip().splitlines()[0] if start.strip() else ""
  return f"a text file (it starts {first[:40]!r})", ""


def check_torch_file(path: str, expected: str) -> None:
  """Refuses a file that is no PyTorch checkpoint, saying what it is.

  Raises:
    ConversionError: e.g. an HTML page, an archive, a Git LFS pointer.
  """
  found = _not_torch(path)
  if found is None:
    return
  what, advice = found
  raise ConversionError(f"{path} is {what}, not a PyTorch checkpoint "
                        f"(expected {expected})"
                        + (f"; {advice}" if advice else ""))


def check_finite(state: Mapping[str, np.ndarray], source: str) -> None:
  """Refuses NaN or infinite weights, naming the first such tensor
  (checkpoints.non_finite).

  Raises:
    ConversionError: a floating-point tensor holds NaN or Inf.
  """
  message = checkpoints.non_finite(state.items(), source)
  if message:
    raise ConversionError(message)


def read_safetensors(path: str) -> Dict[str, np.ndarray]:
  import safetensors  # pylint: disable=g-import-not-at-top
  try:
    return _read_safetensors_file(path)
  except (safetensors.SafetensorError, OSError) as e:
    raise unreadable(path, e) from None


def _read_safetensors_file(path: str) -> Dict[str, np.ndarray]:
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


def load_tensors_only(path: str, resave: str, allowed: Sequence[Any] = ()
                      ) -> Any:
  """torch.load(path) with weights_only=True (and `allowed` globals): a file
  that needs other objects to load is refused as one that could run code.

  Raises:
    ConversionError: "could run code; refused" (with `resave`, what to do
      where the file is trusted), or unreadable.
  """
  import torch  # pylint: disable=g-import-not-at-top
  try:
    with torch.serialization.safe_globals(list(allowed)):
      return torch.load(path, map_location="cpu", weights_only=True)
  except pickle.UnpicklingError as e:
    text = " ".join(str(e).split())
    if "weights_only" not in text and "Weights only" not in text:
      raise unreadable(path, e) from None
    wanted = re.search(r"GLOBAL ([\w.]+)", text)
    what = wanted.group(1) if wanted else "objects other than tensors"
    raise ConversionError(
        f"{path} needs {what} to load, which could run code; refused (only "
        f"tensors are read). To use it, {resave}") from None
  except (RuntimeError, EOFError, OSError, KeyError, ValueError) as e:
    raise unreadable(path, e) from None


def _read_torch(path: str) -> Dict[str, np.ndarray]:
  try:
    import torch  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ConversionError(
        f"reading {path} needs PyTorch (pip install "
        "'official-spanbert[interop]'); model.safetensors does not") from None
  check_torch_file(path, "a PyTorch state dict saved by transformers")
  state = load_tensors_only(
      path, resave="re-save it as model.safetensors (transformers' "
      "save_pretrained) where you trust the file")
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
    part = read_safetensors(path) if fmt == "safetensors" else _read_torch(
        path)
    for k, v in part.items():
      if k in state:
        raise ConversionError(f"key {k!r} appears in more than one shard")
      state[k] = v.astype(np.float32) if v.dtype.kind == "f" else v
    check_finite(part, path)
  return state


def write_safetensors(state: Mapping[str, np.ndarray], path: str,
                      metadata: Optional[Mapping[str, str]] = None):
  """Writes `state` to a safetensors file of the mode open() gives (umask);
  `metadata` adds to {"format": "pt"}."""
  import safetensors.numpy  # pylint: disable=g-import-not-at-top
  safetensors.numpy.save_file(
      {k: np.ascontiguousarray(v) for k, v in state.items()}, path,
      metadata={"format": "pt", **(metadata or {})})
  # safetensors creates the file 0600; the other files get open()'s mode.
  mask = os.umask(0)
  os.umask(mask)
  os.chmod(path, 0o666 & ~mask)


def hf_config_dict(encoder_config: encoders.EncoderConfig,
                   architectures: Sequence[str], pad_token_id: int = 0
                   ) -> Dict[str, Any]:
  """The config.json of a `bert_v2` encoder (see read_params in tf_to_hf)."""
  b = encoder_config.bert_v2
  return {
      "architectures": list(architectures),
      "model_type": "bert",
      "vocab_size": b.vocab_size,
      "hidden_size": b.hidden_size,
      "num_hidden_layers": b.num_layers,
      "num_attention_heads": b.num_attention_heads,
      "intermediate_size": b.intermediate_size,
      "hidden_act": TF_TO_HF_ACTIVATION[b.hidden_activation],
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


# ----------------------------------------------------------------------------
# Tokenizer files.


def read_lower_case(directory: str) -> Optional[bool]:
  """do_lower_case of a Hugging Face tokenizer_config.json (None: unknown)."""
  path = os.path.join(directory, TOKENIZER_CONFIG_FILE)
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      value = json.load(f).get("do_lower_case")
    if value is not None:
      return bool(value)
  return None


def write_tokenizer_files(output_dir: str, lower_case: bool,
                          model_max_length: int):
  """tokenizer_config.json (BertTokenizer) and special_tokens_map.json."""
  with open(os.path.join(output_dir, TOKENIZER_CONFIG_FILE), "w",
            encoding="utf-8") as f:
    json.dump(dict(tokenizer_class="BertTokenizer", do_lower_case=lower_case,
                   strip_accents=None, tokenize_chinese_chars=True,
                   model_max_length=model_max_length, **SPECIAL_TOKENS), f,
              indent=2)
  with open(os.path.join(output_dir, SPECIAL_TOKENS_FILE), "w",
            encoding="utf-8") as f:
    json.dump(SPECIAL_TOKENS, f, indent=2)


# ----------------------------------------------------------------------------
# Output directories.


def check_output(output_dir: str, names: Sequence[str], overwrite: bool):
  """Refuses to overwrite an earlier conversion (before any work is done)."""
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise ConversionError(f"output {output_dir} is not a directory")
  present = [n for n in names if os.path.exists(os.path.join(output_dir, n))]
  if present and not overwrite:
    raise ConversionError(f"output {output_dir} already holds {present[0]}; "
                          "choose an empty directory or pass --overwrite to "
                          "replace it")


def files_size(paths: Sequence[str]) -> int:
  """Total bytes of the files among `paths` that exist."""
  return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))

