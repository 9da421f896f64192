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

"""The shape of every served task: its options live on its module.

A serving module is a tf.Module whose class has `Params` (the export's
options, defaults stated once, beside the code that reads them),
`SIGNATURES`, `from_run(run, params)` (builds the run's model, restores it
and the module) and `warmup_inputs()`; `write` saves it as a TF Serving
version. serving/registry.py maps task config classes to these classes, as
Model Garden's `SERVING_MODULES` does.

Example:
  run = serving_module.Run(params, checkpoint_path="/runs/squad/best_ckpt")
  module = qa_module.QuestionAnsweringModule.from_run(
      run, qa_module.QuestionAnsweringModule.Params(max_context_wordpieces=0))
  module.write("/models/squad")   # -> {"model": "/models/squad/<version>"}
"""

import dataclasses
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import tensorflow as tf

from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib


@dataclasses.dataclass
class Params:
  """The options every export takes; a module's Params subclass this.

  Attributes:
    precision: what the graph computes in, export_precision.PRECISIONS
      (registry.export applies it, for every module alike).
    vocab_file: the tokenizer's vocab (None: the run's).
  """
  precision: str = "float32"
  vocab_file: Optional[str] = None


@dataclasses.dataclass
class Run:
  """A run to export: its experiment config and where its weights are.

  Attributes:
    params: the experiment config (params.task decides the module).
    experiment: its registered name, for messages.
    model_dir: the run's directory (params.yaml, checkpoints, predictions).
    checkpoint_path: a checkpoint other than model_dir's latest.
  """
  params: Any
  experiment: str = ""
  model_dir: Optional[str] = None
  checkpoint_path: Optional[str] = None

  @property
  def checkpoint(self) -> Optional[str]:
    return self.checkpoint_path or self.model_dir

  def restore(self, model):
    """`model` with the run's weights (as built if the run names none)."""
    if self.checkpoint:
      checkpoints.restore(model, self.checkpoint)
    return model

  def vocab(self, vocab_file: Optional[str] = None) -> str:
    """`vocab_file`, else the data configs', else a converted checkpoint's
    vocab.txt beside it.

    Raises:
      ValueError: none of them names one.
    """
    beside = self.model_dir and os.path.join(self.model_dir, "vocab.txt")
    try:
      return export_lib.vocab_of(self.params, vocab_file)
    except ValueError:
      if beside and tf.io.gfile.exists(beside):
        return beside
      raise


class ServingModule(tf.Module):
  """Base of the served tasks' modules (see the module docstring)."""

  Params = Params
  SIGNATURES: Tuple[str, ...] = ()
  WHAT = "model"  # for the progress and final lines

  @classmethod
  def from_run(cls, run: Run, params: Params) -> "ServingModule":
    raise NotImplementedError(f"{cls.__name__}.from_run")

  def warmup_inputs(self) -> Dict[str, Mapping[str, Sequence]]:
    """{signature: inputs} of the warmup requests in assets.extra/."""
    raise NotImplementedError(f"{type(self).__name__}.warmup_inputs")

  def encoder_part(self, run: Run):
    """The part that runs the encoder, a quantization.EncoderPart: what
    `precision: int8` quantizes and the other precisions serve in
    attention_layout.serving_layout. A module without its own
    (has_encoder_part) takes no int8 and keeps its layout."""
    raise NotImplementedError(f"{type(self).__name__}.encoder_part")

  def write(self, export_base: str, version: Optional[int] = None
            ) -> Dict[str, str]:
    """Saves the module as <export_base>/<version>/; {"model": that dir}."""
    return export_lib.export_module(self, export_base, self.warmup_inputs(),
                                    version=version, what=self.WHAT)


def has_encoder_part(module_cls: type) -> bool:
  """Whether a ServingModule class names its encoder_part."""
  return getattr(module_cls, "encoder_part", None) not in (
      None, ServingModule.encoder_part)
