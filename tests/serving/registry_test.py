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

"""serving/registry.py: a new task is served by adding its module and one
map entry (docs/extending.md), and `precision` is applied in one place."""

import dataclasses
import os
import types

import pytest
import tensorflow as tf
import tf_keras

from official.core import config_definitions as cfg
from official_spanbert import registry_imports  # noqa: F401  (as a binary does)
from official_spanbert.serving import export_precision
from official_spanbert.serving import registry
from official_spanbert.serving import serving_module


@dataclasses.dataclass
class ToyConfig(cfg.TaskConfig):
  """A task config that no module serves until the test maps it."""
  width: int = 3


class ToyModule(serving_module.ServingModule):
  """`scale(x)`: the toy model's output times an option of the module."""

  @dataclasses.dataclass
  class Params(serving_module.Params):
    factor: float = 2.0

  SIGNATURES = ("scale",)
  WHAT = "toy model"
  built_under = []  # the Keras policy each from_run saw
  traced_under = []  # and each trace of `scale` (at write: layers build)

  @classmethod
  def from_run(cls, run, params):
    cls.built_under.append(tf_keras.mixed_precision.global_policy().name)
    return cls(run.restore(_toy_model(run.params.task.width)), params.factor)

  def __init__(self, model, factor: float):
    super().__init__(name="toy")
    self.model, self.factor = model, factor

  @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
  def scale(self, x):
    type(self).traced_under.append(
        tf_keras.mixed_precision.global_policy().name)
    return {"y": tf.cast(self.model(x), tf.float32) * self.factor}

  def signatures(self):
    return {"scale": self.scale.get_concrete_function()}

  def warmup_inputs(self):
    return {"scale": {"x": [[1.0, 2.0, 3.0]]}}


def _toy_model(width: int):
  model = tf_keras.Sequential([tf_keras.layers.Dense(
      1, use_bias=False, kernel_initializer="ones")])
  model.build([None, width])
  return model


@pytest.fixture
def toy_run(tmp_path, monkeypatch):
  monkeypatch.setitem(registry.SERVING_MODULES, ToyConfig, ToyModule)
  ToyModule.built_under.clear()
  ToyModule.traced_under.clear()
  checkpoint = tf.train.Checkpoint(model=_toy_model(3)).write(
      str(tmp_path / "ckpt"))
  return serving_module.Run(types.SimpleNamespace(task=ToyConfig()), "toy",
                            checkpoint_path=checkpoint)


def test_a_toy_task_is_served_by_its_module_and_one_map_entry(toy_run,
                                                              tmp_path):
  assert registry.module_for(ToyConfig()) is ToyModule
  paths = registry.export(toy_run, {"factor": 3.0}, str(tmp_path / "toy"),
                          version=4)
  assert paths == {"model": str(tmp_path / "toy" / "4")}
  scale = tf.saved_model.load(paths["model"]).signatures["scale"]
  assert scale(x=tf.constant([[1.0, 2.0, 3.0]]))["y"].numpy().tolist() == [
      [18.0]]  # (1 + 2 + 3) * 3: the restored kernel and the option
  assert os.path.exists(os.path.join(paths["model"], "assets.extra",
                                     "tf_serving_warmup_requests"))


def test_an_option_of_another_module_is_one_line_naming_the_options(
    toy_run, tmp_path):
  with pytest.raises(ValueError) as e:
    registry.export(toy_run, {"max_wordpieces": 8}, str(tmp_path / "toy"))
  assert str(e.value) == (
      "serving params max_wordpieces are not options of ToyModule (serving "
      "scale); its options: precision, vocab_file, factor")
  assert not os.path.exists(tmp_path / "toy")


def test_precision_is_applied_to_every_module_in_one_place(
    toy_run, tmp_path, monkeypatch):
  monkeypatch.setattr(export_precision, "check", lambda precision: None)
  registry.export(toy_run, {}, str(tmp_path / "a"))
  registry.export(toy_run, {"precision": "bfloat16"}, str(tmp_path / "b"))
  assert ToyModule.built_under == ["float32", "mixed_bfloat16"]
  # The signatures are traced (and Keras builds layers) in the scope too.
  assert set(ToyModule.traced_under) == {"float32", "mixed_bfloat16"}
  assert tf_keras.mixed_precision.global_policy().name == "float32"


def test_an_unknown_precision_is_one_line(toy_run, tmp_path):
  with pytest.raises(export_precision.PrecisionError,
                     match=r"^--precision must be one of float32, bfloat16"):
    registry.export(toy_run, {"precision": "fp8"}, str(tmp_path / "toy"))


def test_a_task_without_a_module_names_the_served_experiments(tmp_path):
  run = serving_module.Run(types.SimpleNamespace(task=ToyConfig()), "toy",
                           checkpoint_path=str(tmp_path))
  with pytest.raises(ValueError, match=r"^no export for task ToyConfig; the "
                     r"export serves the experiments .*spanbert/squad_v1"):
    registry.export(run, {}, str(tmp_path / "toy"))
