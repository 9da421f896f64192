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

"""One model builder: the task, the converter and the export build alike."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.interop import weight_map
from official_spanbert.modeling import bits_dropout
from official_spanbert.modeling import builder
from official_spanbert.modeling import span_bert_pretrainer
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module

TINY = {"task": {"model": {
    "encoder": {"type": "bert_v2", "bert_v2": {
        "vocab_size": 40, "hidden_size": 16, "num_layers": 1,
        "num_attention_heads": 2, "intermediate_size": 32,
        "max_position_embeddings": 16}},
    "mlm_activation": "spanbert>gelu_exact",
    "sbo_activation": "spanbert>gelu_exact"}}}


def _params(experiment="spanbert/pretraining"):
  params = exp_factory.get_exp_config(experiment)
  return params_dict.override_params_dict(params, TINY, is_strict=True)


def _shapes(model):
  return sorted((v.name.split("/", 1)[-1], tuple(v.shape))
                for v in model.weights)


@pytest.fixture
def calls(monkeypatch):
  """The configs that builder.build_pretrainer was called with."""
  seen = []
  build = builder.build_pretrainer

  def counting(config):
    seen.append(config)
    return build(config)

  monkeypatch.setattr(builder, "build_pretrainer", counting)
  return seen


def test_task_export_and_converter_use_the_one_builder(calls):
  params = _params()
  task_model = task_factory.get_task(params.task).build_model()
  export_model = pretraining_module.build_pretrainer(serving_module.Run(params))
  converter_model = weight_map.build_model(
      params.task.model.encoder, params.task.model.mlm_activation,
      use_next_sentence=True)
  assert len(calls) == 3
  assert calls[0] is params.task.model and calls[1] is params.task.model
  assert not calls[2].use_sbo and calls[2].use_next_sentence
  for model in (task_model, export_model, converter_model):
    assert isinstance(model, span_bert_pretrainer.SpanBertPretrainer)
  assert _shapes(task_model) == _shapes(export_model)
  assert set(converter_model.checkpoint_items) == {
      "encoder", "masked_lm", "next_sentence"}


def test_builder_follows_the_config():
  params = _params("bert/token_nsp")
  model = builder.build_pretrainer(params.task.model)
  assert model.span_boundary is None and model.next_sentence is not None
  config = model.get_config()
  assert config["head_projection"] == params.task.model.head_projection
  # The heads use the configured (exact) GeLU.
  x = tf.constant([-1.5, 0.3, 2.0])
  np.testing.assert_allclose(model.masked_lm.dense.activation(x),
                             tf.nn.gelu(x, approximate=False), atol=1e-6)


def test_dropout_mask_bits_swaps_every_dropout_and_keeps_the_model():
  """dropout_mask: bits (modeling/bits_dropout.py) changes the encoder's and
  the NSP head's Dropout layers only: same variables, same outputs without
  dropout."""
  params = _params("bert/token_nsp")
  inputs = dict(input_word_ids=tf.constant([[2, 5, 7, 9, 3, 0]]),
                input_mask=tf.constant([[1, 1, 1, 1, 1, 0]]),
                input_type_ids=tf.zeros([1, 6], tf.int32),
                masked_lm_positions=tf.constant([[1, 3]]))
  outputs, names = {}, {}
  # auto: bits on a CPU with native bfloat16, keras on others.
  auto = bits_dropout.resolve("auto", on_accelerator=False)
  for mask in ("keras", "bits", "auto"):
    params.task.model.dropout_mask = mask
    tf_keras.utils.set_random_seed(2)
    model = builder.build_pretrainer(params.task.model)
    kinds = {type(m) for m in model.submodules
             if isinstance(m, tf_keras.layers.Dropout)}
    runs = auto if mask == "auto" else mask
    assert kinds == {tf_keras.layers.Dropout if runs == "keras"
                     else bits_dropout.BitsDropout}, kinds
    outputs[mask] = model(inputs, training=False)
    names[mask] = _shapes(model)
  assert names["keras"] == names["bits"] == names["auto"]
  for key in ("mlm_logits", "next_sentence"):
    for mask in ("bits", "auto"):
      np.testing.assert_array_equal(outputs[mask][key].numpy(),
                                    outputs["keras"][key].numpy())
  params.task.model.dropout_mask = "uniform"
  with pytest.raises(ValueError, match="dropout_mask"):
    builder.build_pretrainer(params.task.model)


def test_export_refuses_a_fine_tuning_experiment():
  params = exp_factory.get_exp_config("spanbert/classification")
  assert not isinstance(params.task.model,
                        spanbert_configs.SpanBertPretrainerConfig)
  with pytest.raises(ValueError, match="pretraining experiment"):
    pretraining_module.build_pretrainer(serving_module.Run(params))


def test_an_older_params_yaml_with_sbo_max_targets_still_builds():
  """task.model.sbo_max_targets, max_sbo_targets's name before issue 36, is
  what every older model dir's params.yaml sets."""
  params = params_dict.override_params_dict(
      _params(), {"task": {"model": {"sbo_max_targets": 5}}}, is_strict=True)
  model = builder.build_pretrainer(params.task.model)
  assert model.span_boundary.max_targets == 5
  assert _params().task.model.sbo_targets() == 15
  params.task.model.max_sbo_targets = 7
  with pytest.raises(ValueError, match="keep max_sbo_targets only"):
    params.task.model.sbo_targets()


def test_the_old_experiment_name_is_the_classification_experiment():
  """spanbert/glue, spanbert/classification's name before issue 36."""
  old = exp_factory.get_exp_config("spanbert/glue")
  assert old.as_dict() == exp_factory.get_exp_config(
      "spanbert/classification").as_dict()


def test_encoder_layout_matmul_keeps_the_model_its_outputs_and_gradients():
  """encoder_layout: matmul swaps the encoder's attention and projections
  for batched matmuls and MatMul + BiasAdd: same variables, and the same
  loss and gradients within float32 rounding."""
  from official_spanbert.modeling import attention_layout  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import matmul_projections  # pylint: disable=g-import-not-at-top
  params = _params("bert/token_nsp")
  inputs = dict(input_word_ids=tf.constant([[2, 5, 7, 9, 3, 0]] * 2),
                input_mask=tf.constant([[1, 1, 1, 1, 1, 0],
                                        [1, 1, 1, 1, 1, 1]]),
                input_type_ids=tf.zeros([2, 6], tf.int32),
                masked_lm_positions=tf.constant([[1, 3]] * 2))
  outputs, names, grads = {}, {}, {}
  for layout in ("keras", "matmul"):
    params.task.model.encoder_layout = layout
    tf_keras.utils.set_random_seed(2)
    model = builder.build_pretrainer(params.task.model)
    kinds = {type(m) for m in model.encoder_network.submodules
             if isinstance(m, (tf_keras.layers.MultiHeadAttention,
                               tf_keras.layers.EinsumDense))}
    matmul = {attention_layout.MatmulMultiHeadAttention,
              matmul_projections.MatmulEinsumDense}
    assert (kinds == matmul) == (layout == "matmul"), kinds
    with tf.GradientTape() as tape:
      outputs[layout] = model(inputs, training=False)
      loss = tf.reduce_sum(outputs[layout]["mlm_logits"] ** 2)
    grads[layout] = tape.gradient(loss, model.trainable_variables)
    names[layout] = _shapes(model)
  assert names["keras"] == names["matmul"]
  for key in ("mlm_logits", "next_sentence"):
    np.testing.assert_allclose(outputs["matmul"][key].numpy(),
                               outputs["keras"][key].numpy(),
                               atol=2e-5, rtol=1e-5)
  for a, b in zip(grads["matmul"], grads["keras"]):
    assert (a is None) == (b is None)
    if a is not None:
      np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(),
                                 tf.convert_to_tensor(b).numpy(),
                                 atol=1e-4, rtol=1e-4)
  params.task.model.encoder_layout = "fused"
  with pytest.raises(ValueError, match="encoder_layout"):
    builder.build_pretrainer(params.task.model)


def test_encoder_layout_matmul_compiles_with_xla():
  """Issue 58: the matmul layout (its tf.cond that skips an all-ones mask
  included) compiles with XLA and gives the eager loss and gradients."""
  params = _params("bert/token_nsp")
  params.task.model.encoder_layout = "matmul"
  tf_keras.utils.set_random_seed(2)
  model = builder.build_pretrainer(params.task.model)
  inputs = dict(input_word_ids=tf.constant([[2, 5, 7, 9, 3, 0]] * 2),
                input_mask=tf.constant([[1, 1, 1, 1, 1, 0],
                                        [1, 1, 1, 1, 1, 1]]),
                input_type_ids=tf.zeros([2, 6], tf.int32),
                masked_lm_positions=tf.constant([[1, 3]] * 2))

  def loss_and_grads(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(model(x, training=False)["mlm_logits"] ** 2)
    return loss, tape.gradient(loss, model.trainable_variables)

  compiled = tf.function(loss_and_grads, jit_compile=True)
  for mask in ([[1] * 6] * 2, [[1, 1, 1, 1, 1, 0]] * 2):  # both cond branches
    x = dict(inputs, input_mask=tf.constant(mask))
    want, want_g = loss_and_grads(x)
    got, got_g = compiled(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    for a, b in zip(got_g, want_g):
      if a is not None:
        np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(),
                                   tf.convert_to_tensor(b).numpy(),
                                   atol=1e-4, rtol=1e-4)
