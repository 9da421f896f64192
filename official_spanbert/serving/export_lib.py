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

"""The shared export machinery: TF Serving version dirs, saving, warmup.

Every serving module's write (serving_module.py, pretraining_module.py) claims,
writes and publishes its version directory through this module (what a
failed export leaves: docs/serving.md, "Versions").
"""

import contextlib
import os
import time
from typing import Dict, Iterator, List, Optional, Sequence

import tensorflow as tf
# Private modules, pinned with TF 2.20 / tf-keras 2.20 (save_with_warmup).
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.saved_model import save_context
from tf_keras.src.saving.legacy.saved_model import utils as keras_save
# pylint: enable=g-direct-tensorflow-import

from official.modeling.hyperparams import params_dict
from official_spanbert.utils import atomic_io
from official_spanbert.utils import progress as progress_lib
from official_spanbert.utils import write_errors
from official_spanbert.data import tfrecord_writer
from official_spanbert.configs import experiment_names
from official_spanbert.configs import override_keys
from official_spanbert.configs import yaml_files


class ExportOutputError(OSError):
  """The export cannot be written (a full disk); nothing was left behind."""


class _Writing:
  """What an export is writing (for the error line); set as it goes on."""

  def __init__(self, target: str):
    self.target = target


@contextlib.contextmanager
def written_whole(target: str, dirs: Sequence[str]) -> Iterator[_Writing]:
  """For an export writing `target`: if the block raises, those of `dirs`
  that did not exist before it and are empty are removed, and an error for
  lack of space becomes ExportOutputError naming the target (the block
  removes its own temporary dirs)."""
  created = [d for d in dirs if not tf.io.gfile.exists(d)]
  writing = _Writing(target)
  try:
    yield writing
  except BaseException as e:
    for d in reversed(created):
      if tf.io.gfile.isdir(d) and not tf.io.gfile.listdir(d):
        tf.io.gfile.rmtree(d)
    reason = write_errors.out_of_space(e)
    if reason:
      raise ExportOutputError(
          f"cannot write the export {writing.target}: {reason}; free space "
          f"in {os.path.dirname(writing.target.rstrip('/'))} and rerun "
          "(nothing was left behind)") from None
    raise


def load_params(experiment: str, model_dir: Optional[str] = None,
                config_files: Sequence[str] = (),
                params_override: str = ""):
  """An experiment config: the experiment, then <model_dir>/params.yaml (if
  there is one, loosely), then config files (paths or packaged names such as
  "models/tiny.yaml") and overrides (strictly)."""
  params = experiment_names.get(experiment)
  yaml = model_dir and os.path.join(model_dir, "params.yaml")
  overrides = [(yaml, False)] if yaml and os.path.exists(yaml) else []
  overrides += [(yaml_files.resolve(f), True) for f in config_files]
  overrides += [(params_override, True)] if params_override else []
  for override, strict in overrides:
    if strict:  # a typo'd key named in full, not Model Garden's advice
      override_keys.check(params, override, "--params_override")
    params = params_dict.override_params_dict(params, override,
                                              is_strict=strict)
  return params


def vocab_of(params, vocab_file: Optional[str] = None) -> str:
  """`vocab_file`, else the run's (validation, then training data config).

  Raises:
    ValueError: none of them names one.
  """
  task = params.task
  vocab = vocab_file or getattr(task.validation_data, "vocab_file", None) or (
      getattr(task.train_data, "vocab_file", None))
  if not vocab:
    raise ValueError("give --vocab_file (params have no vocab_file)")
  return vocab


class VersionTakenError(ValueError):
  """The export version exists, or another export is writing it."""


def check_export_base(path: str) -> None:
  """Refuses an export base that is a file (TF's makedirs would say
  FailedPreconditionError in a traceback).

  Raises:
    ValueError: `path` exists and is not a directory.
  """
  if tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path):
    raise ValueError(
        f"--export_base {path} is a file, not a directory: TF Serving's model "
        "base path is a folder of numbered versions; give a new or existing "
        "folder")


def check_version_free(export_base: str, version: Optional[int]) -> None:
  """Refuses an explicit version that <export_base> already holds; the
  tools check it before loading the model (the claim checks it again).

  Raises:
    VersionTakenError: <export_base>/<version> exists.

  Example:
    check_version_free("/models/spanbert", 3)  # before the slow part
  """
  if version is None:
    return
  path = os.path.join(export_base, str(version))
  if tf.io.gfile.exists(path):
    raise VersionTakenError(f"{path} already exists; pick another --version")


def _next_version(export_bases: Sequence[str]) -> int:
  versions = [int(d.strip("/")) for base in export_bases
              if tf.io.gfile.isdir(base) for d in tf.io.gfile.listdir(base)
              if d.strip("/").isdigit()]
  return max(versions + [int(time.time()) - 1]) + 1


def _make_dir(path: str) -> bool:
  """Creates `path`; False if it exists. Atomic on local filesystems."""
  if "://" in path:  # object stores have no exclusive create: best effort
    if tf.io.gfile.exists(path):
      return False
    tf.io.gfile.makedirs(path)
    return True
  try:
    os.mkdir(path)
  except FileExistsError:
    return False
  return True


def _claim(export_bases: Sequence[str], version: int) -> List[str]:
  """Claims `version` in every base: creates and returns <base>/.tmp-<version>.

  Whoever creates a temp dir owns the version until it renames the dir to
  <base>/<version>, so concurrent exports never share one.

  Raises:
    VersionTakenError: (nothing left claimed) a base has the version or its
      temp dir.
  """
  claimed = []
  try:
    for base in export_bases:
      check_export_base(base)
      tf.io.gfile.makedirs(base)
      tmp = os.path.join(base, f".tmp-{version}")
      if not _make_dir(tmp):
        raise VersionTakenError(
            f"{tmp} exists: another export is writing version {version} (if "
            "none is running, remove it)")
      claimed.append(tmp)
      # Checked after the claim: a finished export renamed its temp dir.
      check_version_free(base, version)
  except BaseException:
    for tmp in claimed:
      tf.io.gfile.rmtree(tmp)
    raise
  return claimed


def claim_version(export_bases: Sequence[str], version: Optional[int]):
  """(version, temp dirs): `version`, or the next free one (>= the time)."""
  if version is not None:
    return version, _claim(export_bases, version)
  version = _next_version(export_bases)
  while True:
    try:
      return version, _claim(export_bases, version)
    except VersionTakenError:
      version += 1


def warmup_requests(signature_inputs: Dict[str, Dict[str, Sequence]]
                    ) -> List[bytes]:
  """Serialized PredictionLog records, one per signature."""
  from tensorflow_serving.apis import predict_pb2  # pylint: disable=g-import-not-at-top
  from tensorflow_serving.apis import prediction_log_pb2  # pylint: disable=g-import-not-at-top
  records = []
  for name, inputs in signature_inputs.items():
    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = name
    for key, value in inputs.items():
      request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
    log = prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=request))
    records.append(log.SerializeToString())
  return records


def _write_warmup(export_dir: str, signature_inputs) -> str:
  extra = os.path.join(export_dir, "assets.extra")
  tf.io.gfile.makedirs(extra)
  path = os.path.join(extra, "tf_serving_warmup_requests")
  tfrecord_writer.write_records(path, warmup_requests(signature_inputs))
  return path


@contextlib.contextmanager
def tracing_for_save(options: tf.saved_model.SaveOptions) -> Iterator[None]:
  """Traces tf.functions as tf.saved_model.save(..., options=options) (or
  a Keras save with those options) looks them up: its save context's
  variable policy is part of tf.function's cache key, so a function traced
  outside it is traced again by the save. Leave the block before saving.

  Example:
    options = tf.saved_model.SaveOptions()
    with tracing_for_save(options):
      fn = module.serve.get_concrete_function()
    tf.saved_model.save(module, path, signatures=fn, options=options)
  """
  with save_context.save_context(options):
    yield


def save_with_warmup(module, export_dir: str, signature_inputs) -> None:
  """Saves `module` with its `signatures()` and their warmup requests.

  Each function is traced once: save() looks a module's functions up again
  under its save context, whose variable policy is part of tf.function's
  cache key, so the signatures are traced in that context (outside it they
  were traced twice, about half an export's CPU). `signature_inputs` is
  {signature: {input: values}}, or a function returning it that runs in
  that context after the signatures (warmup inputs computed by the
  module's own tf.functions reuse their traces). The Keras layers inside
  are saved without their own traced call functions (save_traces=False):
  TF Serving calls the signatures only.

  Example:
    save_with_warmup(module, "/tmp/export/1", module.warmup_inputs)
  """
  options = tf.saved_model.SaveOptions()
  with tracing_for_save(options):
    signatures = module.signatures()
    if callable(signature_inputs):
      signature_inputs = signature_inputs()
  with keras_save.keras_option_scope(save_traces=False):
    tf.saved_model.save(module, export_dir, signatures=signatures,
                        options=options)
  _write_warmup(export_dir, signature_inputs)


def export_module(module, export_base: str, warmup_inputs, *,
                  version: Optional[int] = None, what: str = "model"
                  ) -> Dict[str, str]:
  """Saves a module with `signatures()` as <export_base>/<version>/.

  The version is claimed atomically (claim_version), warmup requests for
  `warmup_inputs` ({signature: {input: values}}) go to assets.extra/, and a
  failed save leaves nothing behind. Returns {"model": the export dir}.

  Example:
    export_module(qa_module, "/models/squad", {"answer": {...}})
  """
  report = progress_lib.Progress("export")
  with written_whole(export_base, [export_base]) as writing:
    version, (tmp,) = claim_version([export_base], version)
    export_dir = writing.target = f"{export_base.rstrip('/')}/{version}"
    with atomic_io.removed_on_error(tmp):
      report.note(f"tracing and saving the {what} (version {version}, "
                  f"{', '.join(warmup_inputs)}, warmup requests)")
      save_with_warmup(module, tmp, warmup_inputs)
      atomic_io.move_into_place(tmp, export_dir, overwrite=False)
  report.done(f"export: wrote the {what} to {export_dir} in "
              f"{report.elapsed():.1f} s")
  return {"model": export_dir}
