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

"""What a conversion reports: progress with an ETA, and one summary line."""

import dataclasses
import time
from typing import List, Optional, Union

from official_spanbert.utils import progress as core_progress


@dataclasses.dataclass
class ConversionResult:
  """What a conversion produced.

  Attributes:
    output: the output directory.
    items: checkpoint items written (hf_to_tf) or read (tf_to_hf).
    initialized: TF variables not in the source, left at a seeded
      initialisation (e.g. the pooler of a BertForMaskedLM checkpoint).
    dropped: source parts not converted (e.g. the NSP head on request).
    warnings: what the user should know (e.g. vocab ids without a token).
    lower_case: tokenization the vocab expects (None: unknown).
    checkpoint: checkpoint prefix (hf_to_tf: written; tf_to_hf: read).
    direction: "hf_to_tf" or "tf_to_hf".
    tensors: tensors written (TF variables, or Hugging Face tensors).
    bytes_written: total size of the files written.
    seconds: wall time of the conversion.
  """
  output: str
  items: List[str]
  initialized: List[str] = dataclasses.field(default_factory=list)
  dropped: List[str] = dataclasses.field(default_factory=list)
  warnings: List[str] = dataclasses.field(default_factory=list)
  lower_case: Optional[bool] = None
  checkpoint: Optional[str] = None
  direction: str = ""
  tensors: int = 0
  bytes_written: int = 0
  seconds: float = 0.0

  def summary(self) -> str:
    """One line: what was written where, its size and the time it took."""
    return (f"{self.direction}: wrote {', '.join(self.items)} "
            f"({self.tensors} tensors, {self.bytes_written / 1e6:.1f} MB) to "
            f"{self.output} in {self.seconds:.1f} s")


class ConversionProgress(core_progress.Progress):
  """Progress of one conversion (see official_spanbert/utils/progress.py), whose
  summary line is the ConversionResult's."""

  def finish(self, result: ConversionResult) -> ConversionResult:
    """Sets result.seconds and direction; prints its summary line."""
    result.seconds = time.monotonic() - self._started
    result.direction = result.direction or self.label
    if self._summary:
      self._write(result.summary())
    return result


def reporter(progress: Union[bool, ConversionProgress],
             label: str) -> ConversionProgress:
  """A ConversionProgress from a converter's `progress` option."""
  if isinstance(progress, ConversionProgress):
    return progress
  return ConversionProgress(label, enabled=bool(progress))
