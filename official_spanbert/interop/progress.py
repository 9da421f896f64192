"""What a conversion reports: progress with an ETA, and one summary line."""

import dataclasses
import sys
import time
from typing import List, Optional, TextIO, Union


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


class Progress:
  """Progress of one conversion, on stderr.

  Lines start with the label and the time so far: one for each stage
  (note), one about every 10% of the tensors with an ETA (from the rate so
  far), and at the end the result's summary line.

  Args:
    label: the line prefix (the direction).
    enabled: False: print nothing.
    summary: print the summary line at the end (a caller that prints its
      own, e.g. the command-line tool on stdout, passes False).
    stream: where to write (default: sys.stderr at the time of writing).
  """

  def __init__(self, label: str, enabled: bool = True, summary: bool = True,
               stream: Optional[TextIO] = None):
    self.label = label
    self.enabled = enabled
    self._summary = summary
    self._stream = stream
    self._started = time.monotonic()
    self._total = 0
    self._done = 0
    self._shown = 0  # tenths of the total already reported
    self._what = "tensors"
    self._phase_start = self._started

  def _prefix(self) -> str:
    return f"{self.label} [{time.monotonic() - self._started:.1f} s]"

  def _write(self, line: str):
    if self.enabled:
      stream = self._stream or sys.stderr
      stream.write(line + "\n")
      stream.flush()

  def note(self, text: str):
    """A line on what the conversion does now, with the time so far."""
    self._write(f"{self._prefix()} {text}")

  def start(self, total: int, what: str = "tensors"):
    """Begins counting `total` units (e.g. the tensors to convert)."""
    self._total, self._done, self._shown = total, 0, 0
    self._what = what
    self._phase_start = time.monotonic()

  def advance(self, n: int = 1):
    """Counts `n` units; reports when another tenth is done."""
    self._done += n
    if not self._total:
      return
    tenth = min(10, self._done * 10 // self._total)
    if tenth <= self._shown:
      return
    self._shown = tenth
    rate = (time.monotonic() - self._phase_start) / self._done
    self._write(f"{self._prefix()} {self._done}/{self._total} {self._what} "
                f"({100 * self._done // self._total}%), "
                f"ETA {rate * (self._total - self._done):.1f} s")

  def finish(self, result: ConversionResult) -> ConversionResult:
    """Sets result.seconds and direction; prints its summary line."""
    result.seconds = time.monotonic() - self._started
    result.direction = result.direction or self.label
    if self._summary:
      self._write(result.summary())
    return result


def reporter(progress: Union[bool, Progress], label: str) -> Progress:
  """A Progress from the `progress` argument of hf_to_tf / tf_to_hf."""
  if isinstance(progress, Progress):
    return progress
  return Progress(label, enabled=bool(progress))
