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

"""mandarjoshi90/coref's TF1 checkpoints -> the `reference` coref variant.

BERT's variables under `bert/` and the task's by independent.py's names
(TASK_VARIABLES); optimizer slots and step counters are skipped.

Example:
  model = coref_reference.ReferenceCorefModel(encoder, ...)
  model(features)  # builds the variables
  assign_checkpoint(model, "spanbert_base/model.max.ckpt")
"""

import os
from typing import Dict, List, Tuple

import numpy as np
import tensorflow as tf

from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import tf1_shapes
from official_spanbert.interop import weight_map

SKIPPED_SUFFIXES = ("/adam_m", "/adam_v", "/Adam", "/Adam_1")
SKIPPED_NAMES = ("global_step", "beta1_power", "beta2_power")


def _ffnn(tf1_scope: str, layer: str, depth: int = 1) -> Dict[str, str]:
  """util.ffnn's variables -> a modeling/ffnn.FFNN's."""
  out = {}
  for i in range(depth):
    out[f"{tf1_scope}hidden_weights_{i}"] = f"{layer}/hidden_{i}/kernel"
    out[f"{tf1_scope}hidden_bias_{i}"] = f"{layer}/hidden_{i}/bias"
  out[f"{tf1_scope}output_weights"] = f"{layer}/output/kernel"
  out[f"{tf1_scope}output_bias"] = f"{layer}/output/bias"
  return out


def task_variables(ffnn_depth: int = 1) -> Dict[str, str]:
  """TF1 name -> our variable path (layer name/weight) for the task layers."""
  names = {
      "span_width_embeddings": "span_width_embedding/embeddings",
      "mention_word_attn/output_weights": "head_scores/kernel",
      "mention_word_attn/output_bias": "head_scores/bias",
      "span_width_prior_embeddings": "span_width_prior_embeddings/embeddings",
      "genre_embeddings": "genre_embeddings/embeddings",
      "src_projection/output_weights": "src_projection/kernel",
      "src_projection/output_bias": "src_projection/bias",
      # The coarse distance prior: util.projection at the root scope.
      "antecedent_distance_emb": "coarse_distance_embedding/embeddings",
      "output_weights": "coarse_distance_scores/kernel",
      "output_bias": "coarse_distance_scores/bias",
      "coref_layer/same_speaker_emb": "same_speaker_embedding/embeddings",
      "coref_layer/antecedent_distance_emb":
          "antecedent_distance_embedding/embeddings",
      "coref_layer/segment_distance/segment_distance_embeddings":
          "segment_distance_embeddings/embeddings",
      "coref_layer/f/output_weights": "refinement_gate/kernel",
      "coref_layer/f/output_bias": "refinement_gate/bias",
  }
  names.update(_ffnn("mention_scores/", "mention_scores", ffnn_depth))
  names.update(_ffnn("width_scores/", "width_scores", ffnn_depth))
  names.update(_ffnn("coref_layer/slow_antecedent_scores/",
                     "antecedent_scores", ffnn_depth))
  return names


def bert_name(hf_key: str) -> Tuple[str, bool]:
  """Google BERT's TF1 name of a Hugging Face key, and whether the TF1
  tensor is the transpose of the HF one (a Linear weight)."""
  parts = hf_key.replace("layer.", "layer_").split(".")
  leaf, parent = parts[-1], parts[-2]
  if parent == "LayerNorm":
    parts[-1] = {"weight": "gamma", "bias": "beta"}[leaf]
    return "bert/" + "/".join(parts), False
  if parent.endswith("_embeddings"):
    return "bert/" + "/".join(parts[:-1]), False
  if leaf == "weight":
    parts[-1] = "kernel"
    return "bert/" + "/".join(parts), True
  return "bert/" + "/".join(parts), False


def encoder_values(encoder, num_layers: int
                   ) -> Dict[str, Tuple[tf.Variable, str, bool]]:
  """TF1 name -> (our encoder variable, transform kind, transposed)."""
  marker = encoder.name + "/"
  ours = {v.name.split(":")[0].split(marker)[-1]: v
          for v in encoder.variables}
  out = {}
  for e in weight_map.weight_map(num_layers):
    if e.item != "encoder":
      continue
    name, transposed = bert_name(e.hf_key)
    out[name] = (ours[e.tf_name], e.kind, transposed)
  return out


def assign_checkpoint(model, checkpoint: str) -> List[str]:
  """Assigns a TF1 coref checkpoint to a built ReferenceCorefModel.

  Returns the names read. Raises ValueError naming the first missing or
  unknown variable or a shape mismatch.
  """
  reader = tf.train.load_checkpoint(checkpoint)
  shapes = reader.get_variable_to_shape_map()
  wanted = {n for n in shapes
            if not n.endswith(SKIPPED_SUFFIXES) and n not in SKIPPED_NAMES}
  layers = model.encoder.get_config()["num_layers"]
  encoder = encoder_values(model.encoder, layers)
  depth = len(model.mention_scorer.hidden_layers)
  task = task_variables(depth)
  ours = {}
  for v in model.variables:
    name = v.name.split(":")[0]
    ours["/".join(name.split("/")[-3:])] = v
    ours["/".join(name.split("/")[-2:])] = v
  unknown = sorted(wanted - set(encoder) - set(task))
  if unknown:
    raise ValueError(f"{checkpoint}: unknown variable {unknown[0]!r} "
                     f"({len(unknown)} in all); expected a mandarjoshi90/coref "
                     "independent model with ffnn_depth "
                     f"{depth} and {layers} BERT layers")
  read = []
  for name in sorted(set(encoder) | set(task)):
    if name not in shapes:
      raise ValueError(f"{checkpoint}: no variable {name!r}; check "
                       "bert_config.json and the experiment's settings")
    value = reader.get_tensor(name)
    if name in encoder:
      var, kind, transposed = encoder[name]
      hf = value.T if transposed else value
      value = weight_map.TRANSFORMS[kind][0](hf, var.shape)
    else:
      var = ours[task[name]]
    if tuple(np.shape(value)) != tuple(var.shape):
      raise ValueError(f"{checkpoint}: {name} has shape {np.shape(value)}, "
                       f"the model's {task.get(name, name)} {var.shape}: "
                       "check the experiment's settings")
    var.assign(value)
    read.append(name)
  return read


# experiments.conf `max_num_speakers` (the `best` block all models inherit).
MAX_NUM_SPEAKERS = 20
# experiments.conf settings of the released models that shape the weights
# or the input (the rest are the `best` defaults, as CorefModelConfig's).
EXPERIMENTS = {
    "spanbert_base": {"max_segment_len": 384, "max_training_sentences": 3},
    "spanbert_large": {"max_segment_len": 512, "max_training_sentences": 3},
    "bert_base": {"max_segment_len": 128, "max_training_sentences": 11},
    "bert_large": {"max_segment_len": 384, "max_training_sentences": 3},
}


def coref_params(bert_config: Dict, experiment: str, vocab_file: str):
  """spanbert/coref params of the reference variant for a released model
  (the caller imports registry_imports, as spanbert-convert-checkpoint does)."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  if experiment not in EXPERIMENTS:
    raise ValueError(f"unknown experiment {experiment!r}; one of "
                     f"{', '.join(EXPERIMENTS)}")
  settings = EXPERIMENTS[experiment]
  params = exp_factory.get_exp_config("spanbert/coref")
  enc = params.task.model.encoder.bert_v2
  enc.vocab_size = bert_config["vocab_size"]
  enc.hidden_size = bert_config["hidden_size"]
  enc.num_layers = bert_config["num_hidden_layers"]
  enc.num_attention_heads = bert_config["num_attention_heads"]
  enc.intermediate_size = bert_config["intermediate_size"]
  enc.max_position_embeddings = bert_config["max_position_embeddings"]
  enc.type_vocab_size = bert_config["type_vocab_size"]
  enc.initializer_range = bert_config.get("initializer_range", 0.02)
  enc.dropout_rate = bert_config.get("hidden_dropout_prob", 0.1)
  enc.attention_dropout_rate = bert_config.get(
      "attention_probs_dropout_prob", 0.1)
  enc.hidden_activation = "spanbert>gelu_exact"  # modeling.py's erf GELU
  model = params.task.model
  model.variant = "reference"
  model.ffnn_size, model.ffnn_depth, model.feature_size = 3000, 1, 20
  model.max_span_width, model.top_span_ratio = 30, 0.4
  model.max_top_antecedents, model.max_top_spans = 50, 3900
  model.coref_depth = 2
  model.max_segment_distance = settings["max_training_sentences"]
  model.dropout_rate = 0.3
  for data in (params.task.train_data, params.task.validation_data):
    data.vocab_file, data.do_lower_case = vocab_file, False
    data.max_segment_len = settings["max_segment_len"]
    data.max_num_speakers = MAX_NUM_SPEAKERS
  params.task.mention_loss_weight = 0.0
  params.task.predict_singletons = False
  return params


def convert(checkpoint: str, bert_config_file: str, output_dir: str, *,
            experiment: str = "spanbert_base",
            vocab_file: str = "", overwrite: bool = False) -> str:
  """A released checkpoint -> a spanbert/coref run dir (ckpt + params.yaml),
  written whole or not at all (interop/output_dir.py).

  Returns the checkpoint path written.
  """
  import json  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import builder  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import coref_model  # pylint: disable=g-import-not-at-top
  with output_dir_lib.converting(output_dir, output_dir_lib.COREF_RUN,
                                 overwrite) as out:
    with open(bert_config_file, encoding="utf-8") as f:
      bert_config = json.load(f)
    # Sizes against the checkpoint's index first: a config of other sizes
    # names the variable and the config's field, not a failed reshape.
    tf1_shapes.check(checkpoint, hf_files.HFBertConfig.from_dict(
        bert_config, source=bert_config_file), bert_config_file)
    params = coref_params(bert_config, experiment, vocab_file)
    model = builder.build_coref_model(params.task.model)
    model(coref_model.dummy_features(), training=False)
    assign_checkpoint(model, checkpoint)
    train_utils.serialize_config(params, out.staging)
    # global_step as the trainer writes it: --mode=eval reads it, and a
    # training run in this dir resumes from step 0 of the release.
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model,
                            global_step=tf.Variable(0, dtype=tf.int64)),
        out.staging, max_to_keep=1)
    written = manager.save(checkpoint_number=0)
  return os.path.join(output_dir, os.path.basename(written))
