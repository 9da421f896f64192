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

"""How the pretrainer projects its MLM and SBO heads onto the vocabulary.

`task.model.head_projection` picks `layers`, `transposed`, `joint` or `auto`:
the same logits and gradients from the same variables, at different speeds.
The choices and their measured costs: docs/pretraining.md, "The model and its
heads".
"""

import tensorflow as tf

from official_spanbert.modeling import span_boundary_head

AUTO, LAYERS, TRANSPOSED, JOINT = "auto", "layers", "transposed", "joint"
HEAD_PROJECTIONS = (AUTO, LAYERS, TRANSPOSED, JOINT)
# Hidden width from which "auto" projects the MLM and SBO states together on
# CPU (faster at 768, slower at 128).
JOINT_MIN_WIDTH = 512


def check(projection: str) -> str:
  """Returns `projection` if it is one of HEAD_PROJECTIONS.

  Raises:
    ValueError: an unknown value (the message lists the choices).
  """
  if projection not in HEAD_PROJECTIONS:
    raise ValueError(
        f"task.model.head_projection must be one of {HEAD_PROJECTIONS}, not "
        f"{projection!r}")
  return projection


def accelerator_visible() -> bool:
  """Whether TensorFlow sees a GPU or TPU (where "auto" means "layers")."""
  return bool(tf.config.list_logical_devices("GPU") or
              tf.config.list_logical_devices("TPU"))


def resolve(projection: str, hidden_size: int, with_sbo: bool,
            on_accelerator: bool,
            joint_min_width: int = JOINT_MIN_WIDTH) -> str:
  """The projection that runs: "layers", "transposed" or "joint".

  Args:
    projection: one of HEAD_PROJECTIONS.
    hidden_size: H of the heads' states.
    with_sbo: the SBO logits are computed too.
    on_accelerator: a GPU or TPU is visible (see accelerator_visible).
    joint_min_width: the H from which "auto" picks "joint" on CPU.
  """
  if check(projection) == AUTO:
    if on_accelerator:
      return LAYERS
    projection = JOINT if hidden_size >= joint_min_width else TRANSPOSED
  if projection == JOINT and not with_sbo:
    return TRANSPOSED
  return projection


def head_logits(masked_lm, span_boundary, sequence_output, masked_positions,
                left_positions=None, right_positions=None,
                relative_positions=None, *, projection: str = LAYERS):
  """MLM (and SBO) logits against the tied embedding table.

  Args:
    masked_lm: Model Garden's layers.MaskedLM with the tied table.
    span_boundary: a SpanBoundaryHead (None, or unused without SBO inputs).
    sequence_output: encoder output [batch, seq_length, H].
    masked_positions: [batch, P] int32.
    left_positions: SBO s - 1 per slot [batch, P] (None: no SBO).
    right_positions: SBO e + 1 per slot [batch, P].
    relative_positions: SBO i - s per slot [batch, P].
    projection: a resolved projection ("layers", "transposed", "joint"; see
      resolve).

  Returns:
    mlm_logits [batch, P, vocab], or (mlm_logits, sbo_logits) with SBO.
  """
  mlm, sbo = masked_lm, span_boundary
  with_sbo = left_positions is not None
  slots = masked_positions.shape[1]

  def sbo_layer():
    return sbo(sequence_output, left_positions, right_positions,
               relative_positions)

  if (projection == LAYERS or not mlm.built or (with_sbo and not sbo.built)
      or slots is None or (with_sbo and slots != left_positions.shape[1])):
    mlm_logits = mlm(sequence_output, masked_positions=masked_positions)
    return (mlm_logits, sbo_layer()) if with_sbo else mlm_logits
  # MaskedLM.call up to its projection.
  hidden = sequence_output.shape[-1]
  gathered = tf.reshape(
      span_boundary_head.gather_positions(sequence_output, masked_positions),
      [-1, hidden])
  mlm_states = mlm.layer_norm(mlm.dense(gathered))
  shape = [tf.shape(masked_positions)[0], slots, mlm.embedding_table.shape[0]]
  if projection == TRANSPOSED or not with_sbo:
    mlm_logits = tf.reshape(span_boundary_head.tied_logits(
        mlm_states, mlm.embedding_table, [mlm.bias]), shape)
    # The SBO layer projects the same way.
    return (mlm_logits, sbo_layer()) if with_sbo else mlm_logits
  if projection != JOINT:
    raise ValueError(f"unresolved head projection {projection!r}")
  sbo_states = sbo.hidden_states(sequence_output, left_positions,
                                 right_positions, relative_positions)
  sbo_states = tf.cast(tf.reshape(sbo_states, [-1, mlm_states.shape[-1]]),
                       mlm_states.dtype)
  logits = span_boundary_head.tied_logits(
      tf.concat([mlm_states, sbo_states], 0), mlm.embedding_table,
      [mlm.bias, sbo.bias])
  # Splitting the outer dimension of [2, M * vocab] shares the buffer.
  mlm_logits, sbo_logits = tf.split(tf.reshape(logits, [2, -1]), 2)
  return tf.reshape(mlm_logits, shape), tf.reshape(sbo_logits, shape)

