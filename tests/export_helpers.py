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

"""The tiny pretraining model the serving tests export, and its tool flags."""

import os

import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import pretraining_module
from conftest import REPO, built_once

# The exports' sequence length.
SEQ = 32


def params():
  """A 1-layer, hidden-32 pretraining experiment (configs/models/tiny.yaml)."""
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(REPO, "configs/models/tiny.yaml"), is_strict=True)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = 32, 64, 1
  return params


def seeded_model(seed):
  """The params() model with the weights of random seed `seed`."""
  tf.keras.utils.set_random_seed(seed)
  return task_factory.get_task(params().task).build_model()


# What this process built of shared_export(): {path: (model, module)}.
_BUILT = {}


def shared_export(tmp_path_factory, cased_vocab):
  """The seed-1 params() model's checkpoint (ckpt) and its TF Serving export
  (SpanBertServingModule of cased_vocab at SEQ, version 1, under
  spanbert/ and spanbert_preprocessing/), written once per pytest run for
  the reliability, TF Hub and span encoder tests (one export is ~7 s of
  CPU). Returns {dir, ckpt, model, preprocessing, keras, vocab, module}:
  keras is the model restored from ckpt, module the one that wrote the
  export when this process did, else None (a new one traces again).

  Example:
    exported = shared_export(tmp_path_factory, cased_vocab)
  """
  built = {}

  def build(d):
    model = seeded_model(1)
    tf.train.Checkpoint(model=model).write(os.path.join(d, "ckpt", "ckpt"))
    module = pretraining_module.SpanBertServingModule(
        model, cased_vocab, seq_length=SEQ)
    module.write(os.path.join(d, "spanbert"), version=1)
    built.update(model=model, module=module)

  d = built_once(tmp_path_factory, "tiny_pretraining_export", build)
  if built:
    _BUILT[d] = (built["model"], built["module"])
  ckpt = os.path.join(d, "ckpt", "ckpt")
  if d in _BUILT:
    model, module = _BUILT[d]
  else:
    model, module = task_factory.get_task(params().task).build_model(), None
    tf.train.Checkpoint(model=model).read(ckpt).assert_consumed()
  return {"dir": d, "ckpt": ckpt, "keras": model, "module": module,
          "vocab": cased_vocab,
          "model": os.path.join(d, "spanbert", "1"),
          "preprocessing": os.path.join(d, "spanbert_preprocessing", "1")}


def tool_flags(ckpt, vocab, export_base):
  """export_savedmodel.py flags for a checkpoint of the params() model."""
  override = ("task.model.encoder.bert_v2.hidden_size=32,"
              "task.model.encoder.bert_v2.intermediate_size=64,"
              "task.model.encoder.bert_v2.num_layers=1")
  return ["--config_file=" + os.path.join(REPO, "configs/models/tiny.yaml"),
          "--params_override=" + override, "--checkpoint_path=" + ckpt,
          "--vocab_file=" + vocab, "--export_base=" + export_base,
          f"--seq_length={SEQ}", "--top_k=4", "--max_masks=3"]


def run_dir(path, params):
  """A model dir as the trainer leaves it (params.yaml, a checkpoint of the
  task's model and its checkpoint items); returns the model."""
  os.makedirs(path, exist_ok=True)
  train_utils.serialize_config(params, str(path))
  model = task_factory.get_task(params.task.replace(
      train_data=None, validation_data=None)).build_model()
  tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
      os.path.join(str(path), "ckpt"))
  return model


def saved_ops(export_dir):
  """The op names of a SavedModel's graphs and functions."""
  from tensorflow.core.protobuf import saved_model_pb2  # pylint: disable=g-import-not-at-top
  sm = saved_model_pb2.SavedModel()
  with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
    sm.ParseFromString(f.read())
  ops = set()
  for mg in sm.meta_graphs:
    ops |= {n.op for n in mg.graph_def.node}
    for fn in mg.graph_def.library.function:
      ops |= {n.op for n in fn.node_def}
  return ops
