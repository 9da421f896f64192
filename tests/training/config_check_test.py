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

"""config_check: task-independent; each task config validates itself.

(The messages of the checks, through spanbert-train: test_train_errors.py.)
"""

import pytest

from official.core import exp_factory
from official.core import registry
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import experiment_names
from official_spanbert.training import config_check
from conftest import REPO
from dev import layout_report


def test_config_check_knows_no_task():
  """Issue 56 item 2: it dispatched on three task config classes
  (isinstance); train_lib now calls the task config's validate()."""
  _, graph = layout_report.import_graph(REPO)
  imported = graph["official_spanbert.training.config_check"]
  assert [m for m in imported if ".tasks" in m or "pretrain_dataloader" in m
          ] == []


@pytest.mark.parametrize("mode,fields", [
    ("train", ("train_data",)), ("eval", ("validation_data",)),
    ("continuous_eval", ("validation_data",)),
    ("train_and_eval", ("train_data", "validation_data")),
    ("train_and_post_eval", ("train_data", "validation_data"))])
def test_data_fields_are_those_the_mode_reads(mode, fields):
  assert config_check.data_fields(mode) == fields


def test_every_registered_task_config_takes_the_data_fields():
  """train_lib calls params.task.validate(data_fields) on any experiment;
  Model Garden's ParamsDict.validate() takes none."""
  ours = [n for n in experiment_names.registered()
          # pylint: disable-next=protected-access  (no public lookup)
          if registry.lookup(exp_factory._REGISTERED_CONFIGS, n).__module__
          .startswith("official_spanbert.")]
  # Model Garden's own (bert/squad, ...) are registered too in a worker
  # where a test imported official.nlp.configs: not the package's configs.
  assert "spanbert/pretraining" in ours and "bert/token_nsp" in ours, ours
  for name in ours:
    task = exp_factory.get_exp_config(name).task
    task.validate(())  # no data read: the config's own checks only
    assert "data_fields" in type(task).validate.__code__.co_varnames, name
