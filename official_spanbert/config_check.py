"""Type check of an experiment config's numeric and boolean fields.

Model Garden stores a --params_override value as YAML parses it, so a typo
such as `task.train_data.masking_rate=abc` leaves the string 'abc' in a float
field and surfaces much later as a TypeError that names no field.
`check_value_types` names the field instead.
"""

import dataclasses
import typing

from official.modeling import hyperparams

_SCALARS = {int: "an integer", float: "a number", bool: "true or false"}


class ConfigTypeError(ValueError):
  """A numeric or boolean config field holds a string."""


def _scalar(annotation):
  """int, float or bool for those annotations (also Optional); else None."""
  args = [a for a in typing.get_args(annotation) if a is not type(None)]
  if typing.get_origin(annotation) is typing.Union and len(args) == 1:
    annotation = args[0]
  return annotation if annotation in _SCALARS else None


def check_value_types(config: hyperparams.Config, prefix: str = "") -> None:
  """Raises ConfigTypeError for a string in an int, float or bool field."""
  hints = typing.get_type_hints(type(config))
  for field in dataclasses.fields(config):
    value = getattr(config, field.name)
    name = prefix + field.name
    expected = _scalar(hints.get(field.name))
    if isinstance(value, hyperparams.Config):
      check_value_types(value, name + ".")
    elif expected and isinstance(value, str):
      raise ConfigTypeError(
          f"{name} must be {_SCALARS[expected]}, got {value!r}")
