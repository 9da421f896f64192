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

"""The skeleton every converter shares: options, progress, output, vocab.

`ConversionOptions` holds what every direction takes; `run` opens the
progress report and the output's staging directory, calls the conversion
with them, moves the files into place and prints the summary.

Example:
  options = converter.ConversionOptions(overwrite=True, progress=False)
  interop.hf_to_tf(hf_dir, out_dir, options, approximate_gelu=True)
"""

import dataclasses
import os
from typing import Callable, List, Optional, Sequence, Union

from absl import logging

from official_spanbert.data import tokenization
from official_spanbert.interop import conversion_report
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import vocab_check

ConversionError = hf_files.ConversionError


@dataclasses.dataclass(frozen=True)
class ConversionOptions:
  """The options of every direction (convert_checkpoint's shared flags).

  Attributes:
    vocab_file: the vocab to write with the output; default: the input's
      own (vocab.txt beside it, or the params' vocab_file). fairseq_to_tf
      needs it: model.pt holds none.
    lower_case: the vocab's tokenization to record; default: read or
      guessed from the input (fairseq_to_tf: cased).
    allow_vocab_mismatch: import with a vocab shorter than the embeddings
      (warns, naming the ids without a token); tf_to_hf writes the vocab
      its checkpoint was trained with and ignores it.
    overwrite: replace an earlier conversion in the output directory.
    progress: True: a line about every 10% of the tensors on stderr, with
      an ETA, and a summary line (conversion_report.py); False: quiet; or a
      ConversionProgress to report to.
  """
  vocab_file: Optional[str] = None
  lower_case: Optional[bool] = None
  allow_vocab_mismatch: bool = False
  overwrite: bool = False
  progress: Union[bool, conversion_report.ConversionProgress] = True


def run(direction: str, output_dir: str, kind: output_dir_lib.Kind,
        options: Optional[ConversionOptions],
        convert: Callable[..., conversion_report.ConversionResult], *args,
        **kwargs) -> conversion_report.ConversionResult:
  """convert(out, report, options, *args, **kwargs) into output_dir
  (options None: the defaults)."""
  options = options or ConversionOptions()
  report = conversion_report.reporter(options.progress, direction)
  with output_dir_lib.converting(output_dir, kind, options.overwrite,
                                  direction) as out:
    result = convert(out, report, options, *args, **kwargs)
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
