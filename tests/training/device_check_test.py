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

"""GPU set-up on a CPU machine: the device line, the refusal of GPUs that
are not there, and the heads' accelerator path inside the full train step.

(Train steps in bfloat16 and float16 on the accelerator path:
tests/test_distributed_training.py::test_mixed_precision_training_runs.)
"""

from unittest import mock

import numpy as np
import pytest
import tf_keras

from official.core import task_factory
from official_spanbert.training import config_check
from official_spanbert.training import device_check
from official_spanbert.training import train_lib as train
from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.modeling import head_projection as hp
from official_spanbert.modeling import span_bert_pretrainer
from conftest import TINY_PRED, TINY_SEQ, tiny_params


def test_devices_are_logged_and_missing_gpus_refused_in_one_line(tmp_path):
  params = tiny_params(dummy_inputs.DUMMY, "", steps=1)
  line = device_check.check(params.runtime)
  assert line.startswith("devices: 1 CPU, 0 GPU, 0 TPU; runtime: ")
  assert "num_gpus=0" in line
  params.runtime.num_gpus = 2
  params.runtime.distribution_strategy = "mirrored"
  with pytest.raises(device_check.NoAcceleratorError) as e:
    train.run(params, str(tmp_path / "model"), "train")
  assert config_check.is_configuration_error(e.value)  # one line, exit 1
  message = config_check.one_line(e.value)
  assert message.startswith("runtime.num_gpus=2 but TensorFlow sees 0 GPU")
  assert "official-spanbert[gpu]" in message
  assert not (tmp_path / "model").exists()  # stopped before building


def _train_step(model, task, batch):
  """(loss, applied update per variable) of one SGD(lr 1) step."""
  before = [w.numpy() for w in model.trainable_weights]
  optimizer = tf_keras.optimizers.SGD(learning_rate=1.0)
  logs = task.train_step(batch, model, optimizer,
                         task.build_metrics(training=True))
  return float(logs["loss"]), [
      b - w.numpy() for b, w in zip(before, model.trainable_weights)]


def test_accelerator_head_path_in_the_full_train_step():
  """With a GPU/TPU visible "auto" calls the heads as layers; forced on CPU,
  the full train step gives the CPU path's loss and updates (1e-5)."""
  params = tiny_params(dummy_inputs.DUMMY, "", steps=1)
  encoder = params.task.model.encoder.bert_v2
  encoder.dropout_rate = encoder.attention_dropout_rate = 0.0
  task = task_factory.get_task(params.task)
  batch = next(iter(dummy_inputs.load(params.task.train_data)))
  build = span_bert_pretrainer.dummy_inputs(1, TINY_SEQ, TINY_PRED)
  cpu = task.build_model()
  cpu(build)
  with mock.patch.object(hp, "accelerator_visible", return_value=True):
    accelerator = task.build_model()
  accelerator(build)
  accelerator.set_weights(cpu.get_weights())
  resolve, used = hp.resolve, []

  def spy(*args, **kwargs):
    used.append(resolve(*args, **kwargs))
    return used[-1]

  results = {}
  for name, model in (("cpu", cpu), ("accelerator", accelerator)):
    with mock.patch.object(hp, "resolve", side_effect=spy):
      results[name] = _train_step(model, task, batch)
    results[name] += (set(used),)
    used.clear()
  assert results["accelerator"][2] == {hp.LAYERS}
  assert hp.LAYERS not in results["cpu"][2]
  assert np.isfinite(results["cpu"][0])
  np.testing.assert_allclose(results["accelerator"][0], results["cpu"][0],
                             rtol=1e-5)
  for got, want in zip(results["accelerator"][1], results["cpu"][1]):
    np.testing.assert_allclose(got, want, atol=1e-5)
