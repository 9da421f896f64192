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

"""The skeleton every converter shares: progress, output directory, vocab.

`run` opens the progress report and the output's staging directory, calls the
conversion with them, moves the files into place and prints the summary.
"""

import os
from typing import Callable, List, Optional, Sequence, Union

from absl import logging

from official_spanbert.data import tokenization
from official_spanbert.interop import conversion_report
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import vocab_check

ConversionError = hf_files.ConversionError


def run(direction: str, output_dir: str, kind: output_dir_lib.Kind,
        overwrite: bool, progress: Union[bool, conversion_report.Progress],
        convert: Callable[..., conversion_report.ConversionResult], *args,
        **kwargs) -> conversion_report.ConversionResult:
  """convert(out, report, *args, **kwargs) into output_dir, reported."""
  report = conversion_report.reporter(progress, direction)
  with output_dir_lib.converting(output_dir, kind, overwrite,
                                  direction) as out:
    result = convert(out, report, *args, **kwargs)
  return report.finish(result)


def if_exists(path: str) -> Optional[str]:
  """`path` if that file exists, else None (a vocab_file candidate)."""
  return path if os.path.exists(path) else None


def vocab_file(*candidates: Union[Optional[str], Callable[[], Optional[str]]],
               missing: str) -> str:
  """The first candidate that is not None (a callable is called for it).

  Raises:
    ConversionError(missing): every candidate is None, or the first one that
      is not is empty.
  """
  for candidate in candidates:
    path = candidate() if callable(candidate) else candidate
    if path is not None:
      if not path:
        break
      return path
  raise ConversionError(missing)


def checked_vocab(path: str, rows: int, source: str,
                  allow_mismatch: bool) -> List[str]:
  """Loads the vocab and checks it against `rows` embeddings (vocab_check)."""
  return vocab_check.check(tokenization.load_vocab(path), rows, source,
                           allow_mismatch)


def log_warnings(warnings: Sequence[str]) -> None:
  """Logs each of a conversion's warnings."""
  for warning in warnings:
    logging.warning("%s", warning)
