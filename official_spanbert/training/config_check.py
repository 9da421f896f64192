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

"""Configuration errors of spanbert-train: task-independent checks, the line.

`check_value_types` names a --params_override value of the wrong type;
`check_values` refuses step counts, sizes and input paths that cannot work
(each task config checks the rest itself: its `validate(data_fields(mode))`);
`is_configuration_error` tells one-line errors from bugs.
"""

import dataclasses
import re
import typing
from typing import Tuple

import gin
import yaml

import tensorflow as tf
from official.core import train_lib
from official.modeling import hyperparams
from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.utils import run_lock
from official_spanbert.utils import write_errors

_SCALARS = {int: "an integer", float: "a number", bool: "true or false"}
# What TensorFlow adds to an op's error message: the function node it ran in
# and the op's name, e.g. `{{function_node __wrapped__SaveV2_dtypes_117_...}}`
# and `[Op:SaveV2]` or `[Op:CreateSummaryFileWriter] name:`.
_OP_DECORATIONS = re.compile(
    r"\{\{function_node [^}]*\}\}\s*|\s*\[Op:\w+\](?: name:\s?\S*)?")

# Errors in the configuration, in the inputs it names or with the model_dir,
# also from gin-wrapped builders -- when raised while the run is set up.
CONFIGURATION_ERRORS = (
    ValueError, TypeError, KeyError, OSError, yaml.YAMLError,
    tf.errors.NotFoundError, tf.errors.InvalidArgumentError,
    run_lock.ModelDirLockedError)


class ConfigTypeError(ValueError):
  """A numeric or boolean config field holds a string, list or mapping."""


class ConfigValueError(ValueError):
  """A config field holds a value of the right type that cannot work."""


def _scalar(annotation):
  """int, float or bool for those annotations (also Optional); else None."""
  args = [a for a in typing.get_args(annotation) if a is not type(None)]
  if typing.get_origin(annotation) is typing.Union and len(args) == 1:
    annotation = args[0]
  return annotation if annotation in _SCALARS else None


def check_value_types(config: hyperparams.Config, prefix: str = "") -> None:
  """Raises ConfigTypeError for a value other than a number (or true/false)
  in an int, float or bool field."""
  hints = typing.get_type_hints(type(config))
  for field in dataclasses.fields(config):
    value = getattr(config, field.name)
    name = prefix + field.name
    expected = _scalar(hints.get(field.name))
    if isinstance(value, hyperparams.Config):
      check_value_types(value, name + ".")
    elif expected and not isinstance(value, (int, float, type(None))):
      raise ConfigTypeError(
          f"{name} must be {_SCALARS[expected]}, got {value!r}")


# Sizes, lengths and counts of a data config that must be positive (else a
# TensorFlow op fails deep in tf.data: "Batch size must be greater than zero").
POSITIVE_DATA_FIELDS = ("global_batch_size", "seq_length", "max_seq_length",
                        "query_length", "max_predictions_per_seq",
                        "max_segment_len")


def data_fields(mode: str) -> Tuple[str, ...]:
  """The task's data configs `mode` reads: train_data, validation_data."""
  return (("train_data",) if "train" in mode else ()) + (
      ("validation_data",) if "eval" in mode else ())


def check_values(params, mode: str) -> None:
  """Raises ConfigValueError for values that cannot work: step counts of a
  training mode, and sizes, lengths and counts of the data it reads (also
  an input_path matching no file), before anything is built or written."""
  if "train" in mode:
    for field in ("train_steps", "steps_per_loop"):
      value = getattr(params.trainer, field)
      if value is not None and value < 1:
        raise ConfigValueError(
            f"trainer.{field} must be a positive number of steps, got {value}")
  for name in data_fields(mode):
    data = getattr(params.task, name)
    for field in POSITIVE_DATA_FIELDS:
      value = getattr(data, field, None)
      if value is not None and not isinstance(value, bool) and value < 1:
        raise ConfigValueError(
            f"task.{name}.{field} must be a positive integer, got {value}")
    if not dummy_inputs.is_dummy(data):  # dummy: generated, no files
      _check_input_path(f"task.{name}", getattr(data, "input_path", None))


def _check_input_path(name: str, input_path) -> None:
  """Refuses a local input_path pattern that matches no file (the input
  reader would say so only after the model is built)."""
  if not isinstance(input_path, str):
    return  # e.g. named inputs for weighted sampling
  for pattern in (p.strip() for p in input_path.split(",")):
    if pattern and "://" not in pattern and not tf.io.gfile.glob(pattern):
      raise ConfigValueError(
          f"{name}.input_path: {pattern} does not match any files")


def is_disk_full(e: BaseException) -> bool:
  """Whether `e` is a write that failed for lack of space."""
  return bool(write_errors.out_of_space(_original(e)))


def _during_setup(e: BaseException) -> bool:
  """Whether `e` was raised before Model Garden's runner started training or
  evaluating (while it built the task, trainer, datasets or controller), not
  by a step, where a TypeError is a bug."""
  tb = e.__traceback__
  while tb is not None:
    if tb.tb_frame.f_code is train_lib.OrbitExperimentRunner.run.__code__:
      return False
    tb = tb.tb_next
  return True


def is_configuration_error(e: BaseException) -> bool:
  """Whether spanbert-train reports `e` in one line."""
  return isinstance(e, CONFIGURATION_ERRORS) and _during_setup(e)


def _original(e: BaseException) -> BaseException:
  """The exception that gin re-raised as `e` to add "In call to configurable
  ..." to its message (gin's proxy has the original as its context)."""
  while (e.__context__ is not None and
         getattr(type(e).__str__, "__module__", None) == gin.utils.__name__):
    e = e.__context__
  return e


def one_line(e: BaseException) -> str:
  """`e`'s message on one line, without gin's call-site notes."""
  e = _original(e)
  if isinstance(e, tf.errors.OpError):
    message = _OP_DECORATIONS.sub("", e.message)
  elif isinstance(e, KeyError) and e.args:
    message = str(e.args[0])
  else:
    message = str(e)
  return " ".join(message.split()) or type(e).__name__
