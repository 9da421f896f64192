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

"""The span NER model's parts against direct computations (unit tier)."""

import itertools

import numpy as np
import pytest

import official_spanbert  # noqa: F401
import tensorflow as tf

from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.modeling import span_embedding
from official_spanbert.modeling import span_ner_model

W = 4


def _inputs():
  """Two windows of 10 positions: [CLS], words of 1-2 wordpieces in one or
  two sentences, [SEP], padding (window 1)."""
  word_start = [[0, 1, 1, 0, 1, 1, 1, 1, 1, 0], [0, 1, 1, 0, 1, 0, 0, 0, 0, 0]]
  word_end = [[0, 1, 0, 1, 1, 1, 1, 1, 1, 0], [0, 1, 0, 1, 1, 0, 0, 0, 0, 0]]
  sentence = [[-1, 0, 0, 0, 1, 1, 1, 1, 1, -1],
              [-1, 1, 1, 1, 1, -1, -1, -1, -1, -1]]
  length = [10, 6]
  ids = np.zeros([2, 10], np.int32)
  mask = np.zeros([2, 10], np.int32)
  for b, n in enumerate(length):
    ids[b, :n] = np.arange(5, 5 + n)
    mask[b, :n] = 1
  return {"input_word_ids": tf.constant(ids), "input_mask": tf.constant(mask),
          "word_start": tf.constant(word_start),
          "word_end": tf.constant(word_end),
          "sentence_ids": tf.constant(sentence)}


@pytest.fixture(scope="module")
def model():
  tf.random.set_seed(0)
  encoder = encoders.build_encoder(spanbert_configs.bert_encoder(
      num_layers=1, hidden_size=16, num_attention_heads=2,
      intermediate_size=32, vocab_size=20))
  return span_ner_model.SpanNerModel(encoder, max_span_width=W, ffnn_size=8,
                                     dropout_rate=0.0)


def test_label_counts_are_the_readers():
  """modeling/ holds its own counts (builder.py imports no data reader):
  they must be the LitBank reader's labels and BIO tags."""
  assert span_ner_model.NUM_LABELS == span_ner_data.NUM_LABELS
  assert span_ner_model.NUM_BIO_TAGS == len(span_ner_data.BIO_TAGS) == 13


def test_candidates_stay_in_a_window_and_sentence_on_word_boundaries(model):
  inputs = _inputs()
  out = model(inputs)
  assert out["span_logits"].shape == (2, 10, W, span_ner_model.NUM_LABELS)
  mask = out["span_mask"].numpy()
  expected = np.zeros_like(mask)
  for b, t, w in itertools.product(range(2), range(10), range(W)):
    e = t + w
    if e < 10:
      sentence = inputs["sentence_ids"][b].numpy()
      expected[b, t, w] = (inputs["word_start"][b, t] == 1 and
                           inputs["word_end"][b, e] == 1 and
                           sentence[t] >= 0 and sentence[t] == sentence[e])
  np.testing.assert_array_equal(mask, expected)
  # Window 0's last word (position 8) and window 1's first (1) are in
  # sentences numbered 1 and 4 positions apart in the flattened batch: not a
  # span.
  assert mask[0, 8, 0] and mask[1, 1, 0] and not mask[0, 8, 3]
  assert mask.sum() == 17 + 6
  # Non-candidates have zero logits; untrained, "no entity" has the prior.
  logits = out["span_logits"].numpy()
  assert not logits[~mask].any()
  probs = tf.nn.softmax(logits[mask]).numpy()
  np.testing.assert_allclose(probs[:, 0], 0.99, atol=0.01)


def test_span_embedding_is_coreferences(model):
  """The labels are scored from SpanEmbedding's g of the flattened batch."""
  inputs = _inputs()
  x = model.encoder(dict(input_word_ids=inputs["input_word_ids"],
                         input_mask=inputs["input_mask"],
                         input_type_ids=tf.zeros_like(
                             inputs["input_word_ids"])))["sequence_output"]
  mask = np.zeros([2, 10, W], bool)
  mask[1, 2, 1] = True  # window 1, positions 2..3
  g = model.span_embedding(tf.reshape(x, [20, 16]), tf.constant([12]),
                           tf.constant([13]))
  assert g.shape == (1, 3 * 16 + 20)
  direct = model.label_scorer(g)
  np.testing.assert_allclose(model(inputs)["span_logits"].numpy()[mask],
                             direct.numpy(), atol=1e-5)
  assert isinstance(model.span_embedding, span_embedding.SpanEmbedding)


def test_span_labels_and_loss():
  gold_starts = tf.constant([[1, 1, 4, 2], [1, -1, -1, -1]])
  gold_ends = tf.constant([[1, 3, 9, 2], [2, -1, -1, -1]])
  gold_labels = tf.constant([[1, 3, 2, 6], [5, 0, 0, 0]])
  mask = np.zeros([2, 10, W], bool)
  mask[0, 1, :3] = mask[1, 1, 1] = mask[0, 5, 0] = True
  labels = span_ner_model.span_labels(gold_starts, gold_ends, gold_labels,
                                      tf.constant(mask)).numpy()
  expected = np.zeros([2, 10, W], np.int32)
  expected[0, 1, 0], expected[0, 1, 2], expected[0, 2, 0] = 1, 3, 6
  expected[1, 1, 1] = 5  # (4, 9) is wider than W: no cell
  np.testing.assert_array_equal(labels, expected)
  # Two labels on one span: the larger is kept.
  both = span_ner_model.span_labels(tf.constant([[1, 1]]),
                                    tf.constant([[2, 2]]),
                                    tf.constant([[6, 1]]),
                                    tf.zeros([1, 10, W], tf.bool)).numpy()
  assert both[0, 1, 1] == 6 and both.sum() == 6
  rng = np.random.default_rng(0)
  logits = rng.normal(size=(2, 10, W, 7)).astype(np.float32)
  loss = span_ner_model.span_loss(
      {"span_logits": tf.constant(logits), "span_mask": tf.constant(mask)},
      tf.constant(labels))
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  direct = -np.mean([log_probs[b, t, w, labels[b, t, w]]
                     for b, t, w in zip(*np.nonzero(mask))])
  assert float(loss) == pytest.approx(direct, rel=1e-5)


def test_decode_keeps_nested_and_drops_crossing_spans():
  logits = np.full([8, W, 7], -5.0, np.float32)
  logits[..., 0] = 5.0
  mask = np.ones([8, W], bool)
  for (s, e, label, score) in ((0, 3, 1, 9.0), (0, 0, 1, 8.0), (2, 4, 3, 7.0),
                               (5, 6, 2, 6.0), (4, 5, 4, 9.5)):
    logits[s, e - s, label] = score
  mask[7] = False
  logits[7, 0, 1] = 20.0  # not a candidate
  spans = span_ner_model.candidates(logits, mask)
  assert sorted((s, e, k) for s, e, k, _ in spans) == [
      (0, 0, 1), (0, 3, 1), (2, 4, 3), (4, 5, 4), (5, 6, 2)]
  # (4, 5) first; (0, 3) holds (0, 0); (2, 4) crosses (0, 3) and (4, 5);
  # (5, 6) crosses (4, 5).
  assert span_ner_model.decode(spans) == [(0, 0, 1), (0, 3, 1), (4, 5, 4)]


def test_decode_matches_a_brute_force_search_for_the_greedy_set():
  rng = np.random.default_rng(3)
  for _ in range(20):
    spans = []
    for s in range(10):
      for e in range(s, min(s + 4, 10)):
        if rng.random() < 0.4:
          spans.append((s, e, int(rng.integers(1, 7)), float(rng.random())))
    kept = span_ner_model.decode(spans)
    ordered = sorted(spans, key=lambda t: -t[3])
    greedy = []
    for s, e, k, _ in ordered:
      if all(not (a < s <= b < e or s < a <= e < b) for a, b, _ in greedy):
        greedy.append((s, e, k))
    assert kept == sorted(greedy)
    for (a, b, _), (c, d, _) in itertools.combinations(kept, 2):
      assert not (a < c <= b < d or c < a <= d < b)
