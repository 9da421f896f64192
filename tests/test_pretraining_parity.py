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

"""The pretraining lockstep (experiments/pretraining_lockstep.py) at tiny size.

The package's train step and the PyTorch transcription (BertForMaskedLM + the
reference's SBO head, AdamW as the package's) start from the same weights and
take the same batches; their losses and gradient norms must agree to float32
noise, and the check must catch a real difference in the update (Adam's eps
in torch's place instead of Keras' and the reference's).
"""


import pytest

import conftest

pytest.importorskip("torch")
pytest.importorskip("transformers")
from experiments import pretraining_lockstep  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

STEPS = 5


@pytest.fixture(scope="module")
def tiny_records(tmp_path_factory, prose_slice, small_vocab):
  from official_spanbert.data.pretraining.records import pretraining_records as pr
  prefix = str(tmp_path_factory.mktemp("parity") / "r")
  pr.create_pretraining_records([prose_slice], small_vocab, prefix,
                                max_seq_length=conftest.TINY_SEQ,
                                progress=False)
  return prefix + "-*.tfrecord"


def _params(records, vocab, objective, encoder_layout="keras"):
  from official_spanbert.data import tokenization
  params = conftest.tiny_params(records, vocab,
                                pretraining_lockstep.EXPERIMENTS[objective],
                                steps=STEPS)
  params.task.model.encoder.bert_v2.vocab_size = tokenization.load_vocab(
      vocab).size
  params.task.train_data.global_batch_size = 4
  enc = params.task.model.encoder.bert_v2
  enc.dropout_rate = enc.attention_dropout_rate = 0.0
  opt = params.trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = 1e-3
  opt.learning_rate.polynomial.decay_steps = STEPS
  opt.warmup.polynomial.warmup_steps = 2
  # A larger eps makes where Adam adds it (the drift checked below) show more.
  opt.optimizer.adamw.epsilon = 1e-6
  params.task.model.encoder_layout = encoder_layout
  return params


@pytest.mark.parametrize("objective,encoder_layout", [
    ("token", "keras"), ("span_sbo", "keras"),
    # Issue 58: the matmul layout trains as HF does, too.
    ("span_sbo", "matmul")])
def test_lockstep_sides_agree_and_a_drift_is_caught(tiny_records, small_vocab,
                                                    objective, encoder_layout):
  out = pretraining_lockstep.lockstep_run(
      _params(tiny_records, small_vocab, objective, encoder_layout),
      objective, STEPS,
      variants={"torch_eps": {"epsilon_hat": False}})
  rows = out["rows"]
  assert len(rows) == STEPS
  assert out["max_rel_loss_diff"] < 1e-5, rows
  assert out["max_rel_grad_norm_diff"] < 1e-4, rows
  # The loss on the first batch falls, so the steps are real updates.
  first = out["first_batch_loss"]
  assert first["after"] < first["before"] - 0.05, first
  # A torch side that differs only in where Adam adds eps drifts away.
  assert out["max_rel_grad_norm_diff_torch_eps"] > (
      10 * out["max_rel_grad_norm_diff"])
