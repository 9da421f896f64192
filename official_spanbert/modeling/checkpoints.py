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

"""Restoring SpanBERT models from the checkpoints users have.

`resolve` finds a checkpoint and refuses a truncated one in one line;
`reading` turns a read that still fails into the same error; `restore_encoder`
takes the encoder from any of the package's checkpoints. Both refuse weights
that hold NaN or Inf (`check_finite`; the conversions use `non_finite` too).
"""

import contextlib
import os
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf


class CheckpointReadError(ValueError):
  """A checkpoint's files are truncated or corrupt (one line, naming them)."""


def _read_error(prefix: str, what: str) -> CheckpointReadError:
  return CheckpointReadError(
      f"cannot read checkpoint {prefix}: {what}; the files are truncated or "
      "corrupt (a full disk or an interrupted copy): copy them again or use "
      "an earlier checkpoint")


def unreadable(prefix: str) -> Optional[str]:
  """Why checkpoint `prefix` cannot be read, from its index and file sizes
  alone (no tensor is read); None if its files are long enough.

  The data files must hold at least the bytes of the numeric tensors the
  index lists (string tensors add more, of unknown length).
  """
  try:
    reader = tf.train.load_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
  except (tf.errors.OpError, IndexError) as e:
    message = e.message if isinstance(e, tf.errors.OpError) else str(e)
    return f"{prefix}.index: {type(e).__name__}: {' '.join(message.split())}"
  needed = sum(int(np.prod(shape, dtype=np.int64)) * dtypes[name].size
               for name, shape in shapes.items()
               if dtypes[name] != tf.string)
  data = sorted(tf.io.gfile.glob(prefix + ".data-*"))
  have = sum(tf.io.gfile.stat(f).length for f in data)
  if have < needed:
    names = ", ".join(os.path.basename(f) for f in data) or "no .data file"
    return (f"{names} in {os.path.dirname(prefix) or '.'} hold {have} bytes, "
            f"fewer than the {needed} of the tensors its index lists")
  return None


@contextlib.contextmanager
def reading(prefix: str) -> Iterator[None]:
  """Turns a failed read of checkpoint `prefix` in the block (TensorFlow's
  "IndexError: Read less bytes than requested", a checksum error) into
  CheckpointReadError."""
  try:
    yield
  except (IndexError, tf.errors.DataLossError, tf.errors.OutOfRangeError
          ) as e:
    message = e.message if isinstance(e, tf.errors.OpError) else str(e)
    raise _read_error(prefix, f"{type(e).__name__}: "
                      f"{' '.join(message.split())}") from None


class CheckpointShapeError(ValueError):
  """A checkpoint whose weights have other shapes than the model's (another
  model size)."""


class CheckpointMismatchError(ValueError):
  """A checkpoint of another model (e.g. a SQuAD run given to the
  pretraining export); `path` is the resolved checkpoint."""

  def __init__(self, message: str, path: str):
    super().__init__(message)
    self.path = path


_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _variable_keys(root: tf.train.Checkpoint):
  """(checkpoint key, variable) of every variable `root` would restore, as
  TensorFlow names them when it writes or reads `root`; [] if TensorFlow's
  object-graph helpers moved (then TF's own error comes on a mismatch)."""
  try:
    # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
    from tensorflow.python.checkpoint import graph_view
    from tensorflow.python.checkpoint import util
    # pylint: enable=g-import-not-at-top,g-direct-tensorflow-import
    objects, _, _, _, names = util.objects_ids_and_slot_variables_and_paths(
        graph_view.ObjectGraphView(root))
  except (ImportError, AttributeError, TypeError, ValueError):
    return []
  return [(names[o] + _VALUE, o) for o in objects
          if isinstance(o, tf.Variable) and o in names]


def check_shapes(root: tf.train.Checkpoint, path: str, mismatch: str) -> None:
  """Refuses checkpoint `path` before it is read into `root` if a variable
  of both has another shape in the checkpoint (TensorFlow would fail on the
  first one, after logging every value it left unrestored). `mismatch`
  starts the message ("checkpoint X does not fit ...").

  Raises:
    CheckpointShapeError: naming the first such variable and their count.
  """
  shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
  keys = _variable_keys(root)
  differ = sorted((key[:-len(_VALUE)], shapes[key], var.shape.as_list())
                  for key, var in keys
                  if key in shapes and list(shapes[key]) != var.shape.as_list())
  if differ:
    name, have, want = differ[0]
    raise CheckpointShapeError(
        f"{mismatch}: {name} has shape "
        f"{list(have)} there but {want} in the model ({len(differ)} of its "
        f"{sum(k in shapes for k, _ in keys)} weights differ); build the "
        "model with the checkpoint's sizes (those of the run or conversion "
        "that wrote it) or use another checkpoint")


class NonFiniteWeightsError(ValueError):
  """A checkpoint whose weights hold NaN or Inf (a diverged run's save)."""


def non_finite(arrays: Iterable[Tuple[str, np.ndarray]], source: str
               ) -> Optional[str]:
  """The message naming the first floating-point array of (name, array)
  `arrays` that holds NaN or Inf, or None if all are finite. The one check
  of the package's exports, init checkpoints and conversions."""
  for key, value in arrays:
    if value.dtype.kind == "f" and not np.isfinite(value).all():
      bad = int(value.size - np.count_nonzero(np.isfinite(value)))
      return (f"{source}: tensor {key!r} holds {bad} NaN or infinite values "
              f"(of {value.size}); the checkpoint is corrupt (or of a "
              "diverged run): use another one")
  return None


def check_finite(path: str, prefixes: Sequence[str]) -> None:
  """Refuses checkpoint `path` if a weight whose key starts with one of
  `prefixes` (items, e.g. "model/" or "encoder/") holds NaN or Inf:
  restored, it would serve NaN, or stop fine-tuning as a divergence.
  Optimizer slots are not read.

  Raises:
    NonFiniteWeightsError: naming the checkpoint and the first such weight.
  """
  reader = tf.train.load_checkpoint(path)
  names = sorted(
      n for n, dtype in reader.get_variable_to_dtype_map().items()
      if dtype.is_floating and n.startswith(tuple(prefixes)) and
      "OPTIMIZER_SLOT" not in n)
  with reading(path):
    message = non_finite(
        ((n[:-len(_VALUE)] if n.endswith(_VALUE) else n,
          np.asarray(reader.get_tensor(n), np.float32)) for n in names),
        f"checkpoint {path}")
  if message:
    raise NonFiniteWeightsError(message)


# A Hugging Face model directory's weights: (format, one file, sharded index),
# in the order the converter prefers them (interop/hf_files reads these).
HF_WEIGHT_LAYOUTS = (
    ("safetensors", "model.safetensors", "model.safetensors.index.json"),
    ("torch", "pytorch_model.bin", "pytorch_model.bin.index.json"))
HF_WEIGHTS = tuple(name for layout in HF_WEIGHT_LAYOUTS for name in layout[1:])


def _hint(path: str) -> str:
  """What to do with a directory that holds another framework's model."""
  names = set(tf.io.gfile.listdir(path))
  if "config.json" in names and names & set(HF_WEIGHTS):
    return (": it holds a Hugging Face model; convert it first with "
            f"spanbert-convert-checkpoint --direction=hf_to_tf --input={path} "
            "--output=<a new directory>, and use that as the checkpoint")
  if "model.pt" in names:
    return (": it holds a PyTorch model.pt; convert it first with "
            f"spanbert-convert-checkpoint --direction=fairseq_to_tf "
            f"--input={path}/model.pt --output=<a new directory>")
  return ""


def resolve(path: str) -> str:
  """A checkpoint prefix from a file prefix or a directory (latest in it).

  Raises:
    ValueError: nothing checkpoint-like at `path`.
    CheckpointReadError (a ValueError): its files are cut short.
  """
  if tf.io.gfile.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if not latest:
      raise ValueError(f"no checkpoint in directory {path}{_hint(path)}")
    path = latest
  elif not tf.io.gfile.glob(path + ".index") and not tf.io.gfile.exists(path):
    raise ValueError(f"checkpoint {path} does not exist")
  why = unreadable(path) if tf.io.gfile.exists(path + ".index") else None
  if why:
    raise _read_error(path, why)
  return path


def restore(model: tf.keras.Model, path: str) -> List[str]:
  """Restores `model` from a training, pretraining or encoder checkpoint.

  A checkpoint written by the trainer (with a `model` item) restores the whole
  model; otherwise every item of model.checkpoint_items the checkpoint holds
  (e.g. `encoder` alone, or `encoder` + `masked_lm` from a converted BERT) is
  restored, and each must match completely.

  Args:
    model: a SpanBertPretrainer (or any model with checkpoint_items).
    path: checkpoint prefix or directory.

  Returns:
    The names of the restored items.

  Raises:
    ValueError: the checkpoint holds nothing this model has.
    NonFiniteWeightsError (a ValueError): a restored weight holds NaN/Inf.
    CheckpointMismatchError: its objects are of another model.
  """
  path = resolve(path)
  names = {name.split("/", 1)[0] for name, _ in tf.train.list_variables(path)}
  # Checkpoint keys escape "." and "/" in item names (BertClassifier's
  # `sentence_prediction.pooler_dense` is stored as
  # `sentence_prediction..pooler_dense`).
  stored = lambda k: k.replace(".", "..").replace("/", ".S")  # pylint: disable=unnecessary-lambda-assignment
  if "model" in names:
    # The trainer also saves model.checkpoint_items (e.g. `encoder`): their
    # weights are stored under those names, not again under model/.
    items = {"model": model}
    items.update({k: v for k, v in getattr(model, "checkpoint_items",
                                           {}).items() if stored(k) in names})
  else:
    items = {k: v for k, v in getattr(model, "checkpoint_items", {}).items()
             if stored(k) in names}
  if not items:
    raise ValueError(
        f"checkpoint {path} holds none of "
        f"{sorted(getattr(model, 'checkpoint_items', {}))} (it has "
        f"{sorted(names)}); expected a checkpoint written by the trainer or "
        "with tf.train.Checkpoint(encoder=...)")
  root = tf.train.Checkpoint(**items)
  check_shapes(root, path,
               f"checkpoint {path} does not fit the model the config builds")
  check_finite(path, [stored(k) + "/" for k in items])
  with reading(path):
    status = root.read(path)
  try:
    status.expect_partial().assert_existing_objects_matched()
  except AssertionError as e:  # lists every unmatched object: 100s of lines
    raise CheckpointMismatchError(
        f"checkpoint {path} was written for another model than the one built "
        f"({type(model).__name__}): {str(e).splitlines()[0][:120]}",
        path) from None
  if "model" in items:
    saved = [name for name, _ in tf.train.list_variables(path)
             if name.split("/", 1)[0] in {stored(k) for k in items} and
             "OPTIMIZER_SLOT" not in name]
    weights = {id(v) for v in model.weights}
    if len(saved) < len(weights):
      raise ValueError(
          f"checkpoint {path} holds {len(saved)} of the model's "
          f"{len(weights)} weights; it was written for a different model "
          "config (check the encoder size and the heads)")
  missing = sorted(set(getattr(model, "checkpoint_items", {})) - set(items))
  if "model" not in items and missing:
    logging.warning("Checkpoint %s has no %s: those keep their fresh "
                    "initialisation.", path, missing)
  logging.info("Restored %s from %s", sorted(items), path)
  return sorted(items)


def restore_encoder(encoder: tf.Module, path: str) -> str:
  """Restores only the encoder from any checkpoint that holds one.

  Fine-tuning starts from the encoder of a pretraining run. Accepted are a
  trainer checkpoint of SpanBertPretrainer (`model/encoder_network`), a
  checkpoint with a top-level `encoder` item (a converted Hugging Face
  checkpoint, an encoder-only export) and a fine-tuning checkpoint of Model
  Garden's span labeler / classifier (`model/network`, `model/encoder`).

  Args:
    encoder: the encoder network to fill (e.g. networks.BertEncoderV2).
    path: checkpoint prefix or directory (latest in it).

  Returns:
    The resolved checkpoint prefix.

  Raises:
    ValueError: the checkpoint has no encoder, or its encoder does not match
      (e.g. other sizes) or holds NaN/Inf (NonFiniteWeightsError); the
      message names the checkpoint.
  """
  path = resolve(path)
  names = {name for name, _ in tf.train.list_variables(path)}
  top = {name.split("/", 1)[0] for name in names}
  candidates = [("encoder",), ("model", "encoder_network"),
                ("model", "network"), ("model", "encoder")]
  for keys in candidates:
    prefix = "/".join(keys) + "/"
    if keys[0] in top and any(n.startswith(prefix) for n in names):
      item = encoder
      for key in reversed(keys[1:]):
        item = tf.train.Checkpoint(**{key: item})
      root = tf.train.Checkpoint(**{keys[0]: item})
      check_shapes(root, path, f"checkpoint {path}: its encoder does not "
                   "match the configured encoder (task.model.encoder)")
      check_finite(path, [prefix])
      with reading(path):
        status = root.read(path)
      try:
        status.expect_partial().assert_existing_objects_matched()
      except AssertionError as e:
        raise ValueError(
            f"checkpoint {path}: its encoder ({prefix[:-1]}) does not match "
            f"the configured encoder (check the model size in the params): "
            f"{str(e)[:300]}") from None
      logging.info("Restored the encoder from %s (%s)", path, prefix[:-1])
      return path
  raise ValueError(
      f"checkpoint {path} holds no encoder (top-level items {sorted(top)}); "
      "expected a pretraining checkpoint or one with "
      "tf.train.Checkpoint(encoder=...)")
