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

"""benchmarks/demo_tuning.py: each flag changes the demo's params it names."""

import os
import sys

import conftest

sys.path.insert(0, os.path.join(conftest.REPO, "benchmarks"))
import demo_tuning  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def _params(*flags):
  args = demo_tuning.parse_args(["--work_dir", "/unused", "--name", "x", *flags])
  return demo_tuning.tuned_params(args, "/r/train", "/r/heldout", "/r/vocab.txt",
                                  7162)


def test_defaults_are_the_demo():
  params = _params()
  enc = params.task.model.encoder.bert_v2
  assert (enc.num_layers, enc.hidden_size, enc.num_attention_heads,
          enc.intermediate_size, enc.vocab_size) == (2, 256, 4, 1024, 7162)
  assert not enc.norm_first
  assert params.trainer.train_steps == 1200
  assert params.task.train_data.masking_scheme == "span"
  assert params.task.train_data.input_path == "/r/train-*.tfrecord"
  assert params.task.model.use_sbo


def test_flags_reach_the_params():
  params = _params("--steps", "600", "--learning_rate", "3e-3", "--hidden",
                   "128", "--layers", "3", "--norm_first", "--seq_length", "64",
                   "--batch_size", "32", "--max_predictions", "10",
                   "--beta_2", "0.98", "--masking_scheme", "token",
                   "--no_sbo")
  enc = params.task.model.encoder.bert_v2
  assert (enc.num_layers, enc.hidden_size, enc.num_attention_heads,
          enc.intermediate_size, enc.norm_first) == (3, 128, 2, 512, True)
  opt = params.trainer.optimizer_config
  assert opt.learning_rate.polynomial.initial_learning_rate == 3e-3
  assert opt.learning_rate.polynomial.decay_steps == 600
  assert opt.optimizer.adamw.beta_2 == 0.98
  assert params.task.train_data.global_batch_size == 32
  assert not params.task.model.use_sbo
  for data in (params.task.train_data, params.task.validation_data):
    assert (data.seq_length, data.max_predictions_per_seq,
            data.masking_scheme) == (64, 10, "token")


def test_sinusoid_table():
  table = demo_tuning.sinusoid_table(512, 256, 0.02)
  assert table.shape == (512, 256) and table.dtype.name == "float32"
  # Position 0: sin 0 = 0 on even columns, cos 0 = 1 on odd ones, times scale.
  assert abs(table[0, ::2]).max() == 0.0
  assert abs(table[0, 1::2] - 0.02).max() < 1e-9
  assert abs(table).max() <= 0.02 + 1e-9
  # Neighbouring positions are closer than distant ones.
  near = abs(table[10] - table[11]).sum()
  far = abs(table[10] - table[200]).sum()
  assert near < far
  assert demo_tuning.parse_args(
      ["--work_dir", "w", "--name", "x", "--sinusoidal_positions", "0.02"]
  ).sinusoidal_positions == 0.02
