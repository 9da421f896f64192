"""Model Garden trainer with the extra training summaries SpanBERT logs."""

import time

import official_spanbert  # noqa: F401
from official.core import base_trainer


class SpanBertTrainer(base_trainer.Trainer):
  """base_trainer.Trainer that also reports examples_per_second.

  Task metrics (both losses and accuracies, gradient norm) and the learning
  rate are logged by the base trainer; this adds throughput in examples/s over
  each training loop (global batch size x steps / wall time).
  """

  def train_loop_begin(self):
    self._loop_start = (time.time(), int(self.global_step.numpy()))
    super().train_loop_begin()

  def train_loop_end(self):
    logs = super().train_loop_end()
    start = getattr(self, "_loop_start", None)
    if start is not None:
      elapsed = time.time() - start[0]
      steps = int(self.global_step.numpy()) - start[1]
      if elapsed > 0 and steps > 0:
        batch = self.config.task.train_data.global_batch_size
        logs["examples_per_second"] = steps * batch / elapsed
    return logs
