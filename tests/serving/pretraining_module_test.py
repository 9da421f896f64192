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

"""fill_spans runs its heads on the request's [MASK]s, not max_masks slots
of every text (issue 55: +1.9 GB for 1,000 one-mask texts)."""

import types

import numpy as np
import tensorflow as tf

from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import pretraining_module
import export_helpers

THAI = "ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน"[:35]


class _Counting:
  """A head that counts the (row, slot) pairs it is asked to predict."""

  def __init__(self, head, count: tf.Variable):
    self.head, self.count = head, count

  def __call__(self, x, positions, *rest):
    shape = tf.shape(positions)
    with tf.control_dependencies([self.count.assign_add(shape[0] *
                                                        shape[1])]):
      return self.head(tf.identity(x), positions, *rest)


def test_fill_spans_runs_the_heads_on_the_masks_only(cased_vocab):
  model = task_factory.get_task(export_helpers.params().task).build_model()
  module = pretraining_module.SpanBertServingModule(
      model, cased_vocab, seq_length=export_helpers.SEQ, top_k=3,
      max_masks=20)
  mlm, sbo = tf.Variable(0), tf.Variable(0)
  module.model = types.SimpleNamespace(
      encoder_network=model.encoder_network,
      masked_lm=_Counting(model.masked_lm, mlm),
      span_boundary=_Counting(model.span_boundary, sbo))
  texts = ["Mr. Bennet, who [MASK] in London.",
           f"{THAI} [MASK] [MASK]; " + "x" * 120, "", "no mask here."] * 25
  out = module.fill_spans(tf.constant(texts))
  masks = 25 * (1 + 2)  # one and two [MASK]s a copy
  assert int(mlm.numpy()) == masks and int(sbo.numpy()) == masks
  weights = out["masked_weights"].numpy()
  assert weights.shape == (100, 20) and weights.sum() == masks
  # The real slots are the heads' predictions at those positions.
  inputs = module.preprocessor(tf.constant(texts[:2]))
  x = model.encoder_network(inputs, training=False)["sequence_output"]
  positions = out["masked_positions"][:2]
  log_probs = tf.nn.log_softmax(model.masked_lm(x, positions)).numpy()
  top = np.argsort(-log_probs, -1)[..., :3]
  real = weights[:2] > 0
  np.testing.assert_array_equal(out["mlm_top_k_ids"].numpy()[:2][real],
                                top[real])
  ids = out["mlm_top_k_ids"].numpy()
  assert (ids[weights == 0] == -1).all()
  assert (out["mlm_top_k_tokens"].numpy()[weights == 0] == b"").all()
  filled = [t.decode() for t in out["filled_text"].numpy()[:2]]
  assert "[MASK]" not in "".join(filled)
