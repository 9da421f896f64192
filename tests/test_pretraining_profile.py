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

"""experiments/pretraining_profile.py (`--mode=profile`, issue 58 item 1) on
tiny steps: real TF and torch traces reduce to categories and phases that
add up, each kind of op lands in its category, and the seq-512 batch holds
the seq-128 batch's tokens.
"""

import numpy as np
import pytest

pytest.importorskip("torch")
from experiments import pretraining_profile as prof  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position


def _adds_up(red):
  total = red["total_ms"]
  assert total > 0, red
  # Each figure is rounded to 0.001 ms.
  assert sum(red["categories"].values()) == pytest.approx(total, abs=0.006)
  assert sum(red["phases"].values()) == pytest.approx(total, abs=0.002)
  assert all(red["phases"][p] > 0 for p in prof.PHASES), red["phases"]


def test_tf_names_land_in_their_category_and_phase():
  cases = [
      ("_MklEinsum", "model/layer_0/intermediate/einsum/Einsum", "matmul",
       "forward"),
      ("_MklMatMul", "gradient_tape/model/dense/MatMul/MatMul_1", "matmul",
       "backward"),
      ("RandomUniform", "model/layer_0/dropout/random_uniform/RandomUniform",
       "dropout", "forward"),
      ("Mul", "gradient_tape/model/layer_0/output_layer_norm/mul/Mul",
       "LayerNorm", "backward"),
      ("_MklSoftmax", "model/layer_0/self_attention/masked_softmax/Softmax",
       "softmax", "forward"),
      ("SparseSoftmaxCrossEntropyWithLogits",
       "SparseSoftmaxCrossEntropyWithLogits/"
       "SparseSoftmaxCrossEntropyWithLogits", "loss", "forward"),
      ("Cast", "gradient_tape/model/Cast/Cast", "casts", "backward"),
      ("ResourceApplyAdam", "AdamWeightDecay/ResourceApplyAdam_3",
       "AdamW update", "optimizer"),
      ("ResourceGather", "model/word_embeddings/embedding_lookup", "gathers",
       "forward"),
      ("Erf", "model/layer_0/activation/Gelu/Erf", "elementwise / activation",
       "forward"),
  ]
  for op_type, name, category, phase in cases:
    assert (prof.tf_category(op_type, name), prof.tf_phase(name)) == (
        category, phase), (op_type, name)


def test_a_tf_trace_of_a_tiny_step_reduces(tmp_path):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  tf_keras.utils.set_random_seed(1)
  model = tf_keras.Sequential([
      tf_keras.layers.Dense(32, activation="gelu"),
      tf_keras.layers.Dropout(0.1), tf_keras.layers.LayerNormalization(),
      tf_keras.layers.Dense(8), tf_keras.layers.Softmax()])
  opt = tf_keras.optimizers.Adam(1e-3, global_clipnorm=1.0)
  x = tf.random.normal([16, 8])

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.math.log(model(x, training=True) + 1e-3))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  step()
  rows, cpu_s = prof.tf_trace(step, 2, str(tmp_path))
  assert cpu_s > 0
  red = prof.reduce_ops(rows, "tf", steps=2, top=5)
  _adds_up(red)
  cats = red["categories"]
  for c in ("matmul", "dropout", "LayerNorm", "softmax", "AdamW update",
            "gradient clipping"):
    assert cats[c] > 0, (c, cats)
  assert red["phases"]["optimizer"] == pytest.approx(
      cats["AdamW update"] + cats["gradient clipping"], abs=0.002)
  assert len(red["top_types"]) == 5
  assert red["top_ops"][0]["ms"] == max(o["ms"] for o in red["top_ops"])


def test_a_torch_trace_of_a_tiny_step_reduces():
  import torch  # pylint: disable=g-import-not-at-top
  torch.manual_seed(1)
  model = torch.nn.Sequential(
      torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Dropout(0.1),
      torch.nn.LayerNorm(32), torch.nn.Linear(32, 8), torch.nn.Softmax(-1))
  opt = torch.optim.AdamW(model.parameters(), 1e-3)
  x = torch.randn(16, 8)

  def step(phase):
    with phase("forward"), torch.autocast("cpu", dtype=torch.bfloat16):
      loss = torch.log(model(x) + 1e-3).float().mean()
    with phase("backward"):
      loss.backward()
    with phase("optimizer"):
      with phase("clip"):
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
      opt.step()
      opt.zero_grad()

  rows, cpu_s = prof.torch_trace(step, 2)
  assert cpu_s > 0
  red = prof.reduce_ops(rows, "torch", steps=2)
  _adds_up(red)
  for c in ("matmul", "dropout", "LayerNorm", "softmax", "casts",
            "AdamW update", "gradient clipping"):
    assert red["categories"][c] > 0, (c, red["categories"])


def test_seq_512_rows_hold_the_seq_128_tokens():
  rng = np.random.default_rng(0)
  seq, rows, preds = 6, 4, 2
  ids = rng.integers(5, 100, size=(rows, seq)).astype(np.int32)
  positions = np.stack([rng.choice(seq, preds, replace=False)
                        for _ in range(rows)]).astype(np.int32)
  batch = dict(input_word_ids=ids, input_mask=np.ones_like(ids),
               masked_lm_positions=positions,
               masked_lm_ids=np.take_along_axis(ids, positions, 1),
               masked_lm_weights=np.ones((rows, preds), np.float32),
               sbo_relative_positions=np.ones((rows, preds), np.int32))
  out = {k: v.numpy() for k, v in prof.stack_rows(batch, 2, seq).items()}
  assert out["input_word_ids"].shape == (2, 2 * seq)
  np.testing.assert_array_equal(out["input_word_ids"].reshape(rows, seq), ids)
  # Each masked position still points at its token in the longer row.
  np.testing.assert_array_equal(
      np.take_along_axis(out["input_word_ids"], out["masked_lm_positions"], 1),
      out["masked_lm_ids"])
  assert out["sbo_relative_positions"].max() == 1  # not a token index
  with pytest.raises(ValueError, match="not a multiple"):
    prof.stack_rows(batch, 3, seq)


def test_the_tf_reader_keeps_every_op(tmp_path):
  """TF's framework_op_stats table keeps its 500 longest ops only; the
  trace reader keeps all (at base size the table dropped LayerNorm)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  x = tf.ones([4])

  @tf.function
  def many_ops(x):  # an argument: no constant folding
    y = x
    for _ in range(600):
      y = tf.math.squared_difference(y, x)
    return y

  many_ops(x)
  rows, _ = prof.tf_trace(lambda: many_ops(x), 1, str(tmp_path))
  assert len([r for r in rows if r["type"] == "SquaredDifference"]) == 600


def test_nested_op_events_count_once():
  # (offset, duration, name, type): b and c run inside a.
  events = [(0, 10, "a", "Call"), (2, 3, "b", "Mul"), (6, 2, "c", "Add"),
            (20, 4, "d", "Mul")]
  assert prof._self_times(events) == {  # pylint: disable=protected-access
      ("a", "Call"): 5, ("b", "Mul"): 3, ("c", "Add"): 2, ("d", "Mul"): 4}
