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

"""NaN and emptiness that passed as results (issue 55, item 5).

- a checkpoint with NaN weights exported with exit 0 and served NaN;
- a NaN init_checkpoint stopped training with "lower the learning rate";
- an evaluation that read no batch (validation set smaller than its batch,
  drop_remainder) reported `mlm_loss 0` as a result.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from official.core import task_factory
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from official_spanbert.training import train_lib
from conftest import tiny_params
from train_helpers import trained  # noqa: F401  pylint: disable=unused-import

_KEY = "encoder/_transformer_layers/0/_attention_layer/_key_dense/kernel"


def _nan_copy(trained_dir, tmp_path):
  """The run's model, restored from its last checkpoint with one NaN in a
  key kernel, saved as the trainer saves its items; returns the prefix."""
  params = export_lib.load_params("spanbert/pretraining", trained_dir)
  model = task_factory.get_task(params.task).build_model()
  checkpoints.restore(model, trained_dir)
  kernel = next(v for v in model.checkpoint_items["encoder"].weights
                if "key" in v.name and "kernel" in v.name)
  value = kernel.numpy()
  value[1, 0, 0] = np.nan
  kernel.assign(value)
  prefix = str(tmp_path / "nan" / "ckpt-8")
  tf.train.Checkpoint(**model.checkpoint_items).write(prefix)
  return prefix


def test_an_export_of_nan_weights_is_refused(trained, tmp_path):
  prefix = _nan_copy(trained, tmp_path)
  with pytest.raises(checkpoints.NonFiniteWeightsError) as e:
    pretraining_module.build_pretrainer(serving_module.Run(
        export_lib.load_params("spanbert/pretraining", trained), trained,
        prefix))
  assert str(e.value) == (
      f"checkpoint {prefix}: tensor '{_KEY}' holds 1 NaN or infinite values "
      "(of 4096); the checkpoint is corrupt (or of a diverged run): use "
      "another one")


def test_a_nan_init_checkpoint_is_refused_naming_it(
    pretraining_records, cased_vocab, trained, tmp_path):
  prefix = _nan_copy(trained, tmp_path)
  params = tiny_params(pretraining_records, cased_vocab, steps=4)
  params.task.init_checkpoint = prefix
  with pytest.raises(ValueError) as e:
    train_lib.run(params, str(tmp_path / "run"))
  assert str(e.value).startswith(
      f"checkpoint {prefix}: tensor '{_KEY}' holds 1 NaN"), str(e.value)
  assert "learning rate" not in str(e.value)


def test_an_evaluation_of_no_batch_is_an_error_not_zeros(
    pretraining_records, cased_vocab, tmp_path):
  params = tiny_params(pretraining_records, cased_vocab, steps=4)
  params.task.validation_data.global_batch_size = 100_000
  params.trainer.validation_steps = -1
  params.trainer.validation_interval = 4
  with pytest.raises(train_lib.EmptyEvaluationError) as e:
    train_lib.run(params, str(tmp_path / "run"), mode="train_and_eval")
  assert str(e.value) == (
      "the evaluation at step 4 read no batch of task.validation_data "
      f"({pretraining_records}): it holds fewer examples than "
      "global_batch_size=100000 and drop_remainder drops the rest, or none; "
      "its metrics would be zeros, not a result: use more validation data or "
      "a smaller task.validation_data.global_batch_size")
  assert os.path.exists(tmp_path / "run" / "ckpt-4.index")
