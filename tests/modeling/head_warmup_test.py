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

"""The pretraining task's head warm-up (task.head_warmup_steps, issue 47).

A tiny model (1 layer, hidden 64, vocab 128, no dropout) on synthetic
batches (input_path: dummy): through the first N steps the encoder's
variables, the tied word embeddings among them, are bit-identical and its
Adam moments zero while the heads move; from step N the encoder moves, its
learning rate rising over encoder_warmup_steps. A run stopped in the middle
of the warm-up and resumed by train_lib keeps the encoder frozen until step
N; float16 goes through a LossScaleOptimizer around the warm-up optimizer.
"""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.core import task_factory
from official.core import train_utils
from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.modeling import head_warmup
from official_spanbert.training import train_lib
from official_spanbert.training import trainer
from conftest import tiny_params

N, E = 3, 2  # head_warmup_steps, encoder_warmup_steps


def _params(steps=N + 2, head_warmup_steps=N, **trainer):
  params = tiny_params(dummy_inputs.DUMMY, "", steps=steps, **trainer)
  enc = params.task.model.encoder.bert_v2
  enc.vocab_size = 128  # the dummy ids are below 100
  enc.dropout_rate = enc.attention_dropout_rate = 0.0  # deterministic steps
  params.task.head_warmup_steps = head_warmup_steps
  params.task.encoder_warmup_steps = E
  params.trainer.optimizer_config.warmup.polynomial.warmup_steps = 1
  return params


def _trained(v) -> bool:
  """Variables that get a gradient (the pooler feeds only NSP)."""
  return "pooler" not in v.name


def _run_steps(params, steps):
  """Builds the task, its model and optimizer (Model Garden's
  create_optimizer) and yields (model, optimizer, {}); then runs `steps`
  train steps, after each yielding (model, optimizer, {metric: value})."""
  task = task_factory.get_task(params.task)
  tf_keras.utils.set_random_seed(1)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  metrics = task.build_metrics(training=True)
  # Traced once, as the trainer traces it (training/trainer.py): the slots
  # made first, no AutoGraph.
  trainer.create_slots(optimizer, model.trainable_variables)
  step = tf.function(lambda x: task.train_step(x, model, optimizer, metrics),
                     autograph=False)
  batches = iter(task.build_inputs(params.task.train_data))
  yield model, optimizer, {}
  for _ in range(steps):
    for m in metrics:
      m.reset_states()
    step(next(batches))
    yield model, optimizer, {m.name: float(m.result()) for m in metrics}


def test_encoder_learning_rate_is_zero_then_ramps_to_the_schedule():
  schedule = head_warmup.EncoderWarmupSchedule(0.1, start_step=3,
                                               warmup_steps=2)
  rates = [float(schedule(s)) for s in range(6)]
  np.testing.assert_allclose(rates, [0, 0, 0, 0.05, 0.1, 0.1])
  ramp_free = head_warmup.EncoderWarmupSchedule(0.1, 3, 0)
  assert [float(ramp_free(s)) for s in (2, 3)] == [0.0, pytest.approx(0.1)]


def test_without_warmup_the_optimizer_is_model_gardens_and_bad_values_fail():
  params = _params(head_warmup_steps=0)
  params.task.encoder_warmup_steps = 0
  task = task_factory.get_task(params.task)
  task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  assert type(optimizer).__name__ == "AdamWeightDecay"
  assert "encoder_learning_rate" not in [
      m.name for m in task.build_metrics(training=True)]
  params.task.head_warmup_steps = -1
  with pytest.raises(ValueError, match="head_warmup_steps must be >= 0"):
    task_factory.get_task(params.task)


def test_encoder_is_bit_identical_through_the_warmup_and_moves_after():
  steps = _run_steps(_params(), N + 2)
  model, optimizer, _ = next(steps)
  encoder = model.encoder_network.trainable_variables
  refs = {v.ref() for v in encoder}
  heads = [v for v in model.trainable_variables if v.ref() not in refs]
  # The MLM and SBO outputs are tied to the encoder's word embeddings.
  table = model.encoder_network.get_embedding_table()
  assert table.ref() in refs and model.masked_lm.embedding_table is table
  assert {v.name.split("/")[1] for v in heads} == {"cls"}  # MLM, SBO
  assert isinstance(optimizer, head_warmup.HeadWarmupOptimizer)
  start = [v.numpy() for v in encoder]
  head_before = [v.numpy() for v in heads]
  for step in range(1, N + 3):
    _, _, logs = next(steps)
    after = [v.numpy() for v in encoder]
    moved = [v.name for v, a, b in zip(encoder, start, after)
             if not np.array_equal(a, b)]
    slots = [optimizer.encoder_optimizer.get_slot(v, s).numpy()
             for v in encoder if _trained(v) for s in ("m", "v")]
    if step <= N:  # steps 1..N are indices 0..N-1: heads only
      assert moved == [], (step, moved)
      assert all(not s.any() for s in slots), step  # Adam moments unused
      assert logs["encoder_learning_rate"] == 0.0
      head_now = [v.numpy() for v in heads]
      assert all(not np.array_equal(a, b)
                 for a, b in zip(head_before, head_now)), step
      head_before = head_now
    else:
      assert sorted(moved) == sorted(v.name for v in encoder if _trained(v))
      assert table.name in moved
      assert logs["encoder_learning_rate"] > 0.0
      assert all(s.any() for s in slots)
  # The encoder optimizer counts its own steps from N (bias correction).
  assert int(optimizer.iterations) == N + 2
  assert int(optimizer.encoder_optimizer.iterations) == 2


# The checkpoint's names of the encoder's variables (the tied word
# embeddings are written once, under the MLM head that shares them).
ENCODER_PREFIXES = ("encoder/", "masked_lm/embedding_table/")


def _encoder_and_slots(path):
  """{name: value} of the encoder's variables in a checkpoint of train_lib,
  and apart {name: value} of their Adam slots."""
  reader = tf.train.load_checkpoint(path)
  names = [n for n, _ in tf.train.list_variables(path)
           if n.startswith(ENCODER_PREFIXES)]
  slots = {n: reader.get_tensor(n) for n in names if "OPTIMIZER_SLOT" in n}
  assert slots and all("/optimizer/encoder/" in n for n in slots), slots
  return ({n: reader.get_tensor(n) for n in names
           if "OPTIMIZER_SLOT" not in n and n.endswith("VARIABLE_VALUE")},
          slots)


def test_resume_in_the_middle_of_the_warmup_keeps_the_encoder_frozen(
    tmp_path):
  n = N + 1  # a warm-up of 4 steps, stopped after 2
  model_dir = str(tmp_path / "run")

  def run(steps):
    params = _params(steps=steps, head_warmup_steps=n, steps_per_loop=1,
                     checkpoint_interval=1)
    params.trainer.max_to_keep = 10
    tf_keras.utils.set_random_seed(1)
    train_lib.run(params, model_dir, mode="train")

  run(2)  # "killed" after the checkpoint of step 2
  encoder = {2: _encoder_and_slots(f"{model_dir}/ckpt-2")}
  run(n + 1)  # resumes at step 2, a new process's Python state
  for step in range(3, n + 2):
    encoder[step] = _encoder_and_slots(f"{model_dir}/ckpt-{step}")
  assert encoder[2][0] and len(encoder[2][0]) == len(encoder[n + 1][0])
  for step in range(3, n + 1):
    for name, value in encoder[2][0].items():
      assert np.array_equal(value, encoder[step][0][name]), (step, name)
    assert all(not v.any() for v in encoder[step][1].values()), step
  moved = [k for k, v in encoder[2][0].items()
           if not np.array_equal(v, encoder[n + 1][0][k])]
  assert ENCODER_PREFIXES[1] + ".ATTRIBUTES/VARIABLE_VALUE" in moved
  assert len(moved) == len(encoder[2][0]) - 2, moved  # all but the pooler
  assert any(v.any() for v in encoder[n + 1][1].values())


def test_float16_wraps_the_warmup_optimizer_in_a_loss_scale_optimizer():
  params = _params()
  params.runtime.mixed_precision_dtype = "float16"
  tf_keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    steps = _run_steps(params, N + 1)
    model, optimizer, _ = next(steps)
    assert isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
    assert head_warmup.find(optimizer) is optimizer.inner_optimizer
    encoder = model.encoder_network.trainable_variables
    start = [v.numpy() for v in encoder]
    heads = model.masked_lm.trainable_variables
    for step in range(1, N + 2):
      _, _, logs = next(steps)
      same = [np.array_equal(a, v.numpy()) for a, v in zip(start, encoder)]
      assert all(same) == (step <= N), step
      assert np.isfinite(logs["mlm_loss"]) and logs["gradient_norm"] > 0
    assert model.masked_lm.embedding_table.dtype == tf.float32
    assert all(v.dtype == tf.float32 for v in heads)
    assert int(optimizer.iterations) == N + 1
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")


def _matmuls(graph_def, function_name):
  """The matrix products (MatMul, BatchMatMulV2, Einsum) that a function of
  `graph_def`'s library runs: those its outputs need (TensorFlow prunes the
  rest of a function's stateless nodes when it runs it)."""
  fn, = [f for f in graph_def.library.function
         if f.signature.name == function_name]
  nodes = {n.name: n for n in fn.node_def}
  todo = [r.split(":")[0] for r in fn.ret.values()]
  needed = set()
  while todo:
    name = todo.pop()
    if name in needed or name not in nodes:  # an argument
      continue
    needed.add(name)
    todo += [i.lstrip("^").split(":")[0] for i in nodes[name].input]
  return sum(nodes[n].op in ("MatMul", "BatchMatMulV2", "Einsum")
             for n in needed)


def test_a_warmup_step_runs_no_backward_pass_of_the_encoder():
  """The warm-up's branch of the step has the heads' gradient products only;
  the other branch has the encoder's too (2 per dense layer and attention
  product)."""
  params = _params()
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  step = tf.function(lambda x: task.train_step(x, model, optimizer),
                     autograph=False)
  batch = next(iter(task.build_inputs(params.task.train_data)))
  graph_def = step.get_concrete_function(batch).graph.as_graph_def()
  conds = [n for n in graph_def.node
           if n.name.startswith("head_warmup_gradients")
           and n.op in ("If", "StatelessIf")]
  assert len(conds) == 1, [n.name for n in conds]
  everything = _matmuls(graph_def, conds[0].attr["then_branch"].func.name)
  heads_only = _matmuls(graph_def, conds[0].attr["else_branch"].func.name)
  # The encoder's layer: the query, key, value and output projections, two
  # attention products, two feed-forward layers: 8 products, 2 gradients each.
  assert everything - heads_only >= 16, (everything, heads_only)
  assert heads_only > 0


def test_mask_gradients_zeroes_nan_before_step_n_and_passes_through_after():
  """Before step N the encoder's gradients become zeros of the same kind
  (a NaN cannot reach its Adam moments; IndexedSlices stay IndexedSlices,
  with or without a dense_shape); from step N they pass through unchanged.
  The step's graph masks with one tf.cond, not a select over each
  gradient."""
  params = _params()
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = train_utils.create_optimizer(task, params)
  warmup = head_warmup.find(optimizer)
  encoder = model.encoder_network.trainable_variables[:2]
  encoder_refs = {v.ref() for v in model.encoder_network.trainable_variables}
  head = [v for v in model.trainable_variables
          if v.ref() not in encoder_refs][0]
  nan = tf.fill(encoder[0].shape, float("nan"))
  rows = tf.IndexedSlices(tf.ones([2] + encoder[1].shape.as_list()[1:]),
                          tf.constant([0, 1]))  # no dense_shape
  grads = [nan, rows, tf.ones(head.shape)]
  variables = [encoder[0], encoder[1], head]

  masked = warmup.mask_gradients(grads, variables)
  np.testing.assert_array_equal(masked[0], np.zeros(encoder[0].shape))
  assert isinstance(masked[1], tf.IndexedSlices)
  assert masked[1].values.shape[0] == 0 and masked[1].dense_shape is None
  assert masked[2] is grads[2]

  optimizer.iterations.assign(N)
  masked = warmup.mask_gradients(grads, variables)
  assert np.isnan(masked[0].numpy()).all()
  np.testing.assert_array_equal(masked[1].values, rows.values)

  graph = tf.function(warmup.mask_gradients).get_concrete_function(
      [tf.TensorSpec(encoder[0].shape), tf.TensorSpec(head.shape)],
      [encoder[0], head]).graph.as_graph_def()
  ops = [n.op for n in graph.node]
  assert "Select" not in ops and "SelectV2" not in ops, ops
  assert sum(op in ("If", "StatelessIf") for op in ops) == 1, ops
