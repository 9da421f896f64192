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

"""The coreference model's parts against direct computations (unit tier)."""

import numpy as np
import pytest

import official_spanbert  # noqa: F401
import tensorflow as tf

from official.modeling import optimization
from official.nlp.configs import encoders
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.modeling import coref_model
from official_spanbert.modeling import coref_optimizer


def _encoder(vocab_size=50):
  return encoders.build_encoder(spanbert_configs.bert_encoder(
      num_layers=1, hidden_size=16, num_attention_heads=2,
      intermediate_size=32, vocab_size=vocab_size))


def test_distance_buckets():
  distances = tf.constant([0, 1, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 1000])
  assert coref_model.bucket_distance(distances).numpy().tolist() == [
      0, 1, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9]


def test_candidates_stay_in_sentences_and_on_word_boundaries():
  model = coref_model.CorefModel(_encoder(), max_span_width=3, ffnn_size=8)
  sentence_map = tf.constant([0, 0, 0, 1, 1, 1, 1])
  word_start = tf.constant([1, 0, 1, 1, 1, 0, 1])
  word_end = tf.constant([0, 1, 1, 1, 0, 1, 1])
  starts, ends = model.candidates(sentence_map, word_start, word_end)
  got = list(zip(starts.numpy().tolist(), ends.numpy().tolist()))
  expected = [(s, e) for s in range(7) for e in range(s, min(s + 3, 7))
              if sentence_map[s] == sentence_map[e] and word_start[s] and
              word_end[e]]
  assert got == expected == [(0, 1), (0, 2), (2, 2), (3, 3), (3, 5),
                             (4, 5), (4, 6), (6, 6)]


def _crosses(a, b):
  (s1, e1), (s2, e2) = sorted([a, b])
  return s1 < s2 <= e1 < e2


def _top_spans(scores, spans, k, suppress_crossing=True):
  starts, ends = zip(*spans)
  kept = coref_model.top_spans(
      tf.constant(scores, tf.float32), tf.constant(starts),
      tf.constant(ends), tf.constant(k), tf.constant(max(ends) + 1),
      suppress_crossing)
  return [spans[i] for i in kept.numpy()]


# Candidates in (start, end) order, as CorefModel.candidates gives them.
_SPANS = [(0, 1), (0, 3), (1, 2), (2, 4), (4, 5), (5, 6)]
_SCORES = [0.5, 0.9, 0.8, 0.7, 0.6, 0.1]


def test_top_spans_skip_crossing_keep_nested_and_stop_at_k():
  # By score: (0, 3) kept; (1, 2) nested in it, kept; (2, 4) crosses (0, 3)
  # (0 < 2 <= 3 < 4), skipped; (4, 5) kept: k = 3 reached, so (0, 1) is
  # never looked at. Back in document order.
  assert _top_spans(_SCORES, _SPANS, 3) == [(0, 3), (1, 2), (4, 5)]
  # k = 4: (0, 1) crosses (1, 2) and (5, 6) crosses (4, 5): fewer than k.
  assert _top_spans(_SCORES, _SPANS, 4) == [(0, 3), (1, 2), (4, 5)]
  assert _top_spans(_SCORES, _SPANS, 100) == [(0, 3), (1, 2), (4, 5)]
  # A candidate crossing a kept span from the left: (0, 1) vs (1, 2).
  assert _top_spans([0.9, 0.8], [(0, 1), (1, 2)], 2) == [(0, 1)]
  # Ties go to the earlier candidate, as top_k's.
  assert _top_spans([0.5, 0.5], [(0, 1), (1, 2)], 2) == [(0, 1)]
  # Without the filter: the plain top k by score, in document order.
  assert _top_spans(_SCORES, _SPANS, 4, suppress_crossing=False) == [
      (0, 3), (1, 2), (2, 4), (4, 5)]


def _greedy(scores, spans, k):
  """The reference's extract_spans in plain Python (sorted output)."""
  kept = []
  for i in sorted(range(len(spans)), key=lambda i: (-scores[i], i)):
    if len(kept) == k:
      break
    if not any(_crosses(spans[i], spans[j]) for j in kept):
      kept.append(i)
  return [spans[i] for i in sorted(kept)]


def test_top_spans_match_the_greedy_reference_in_a_graph():
  rng = np.random.default_rng(1)
  fn = tf.function(coref_model.top_spans, input_signature=[
      tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32),
      tf.TensorSpec([None], tf.int32), tf.TensorSpec([], tf.int32),
      tf.TensorSpec([], tf.int32)])
  for _ in range(20):
    n = int(rng.integers(1, 25))
    spans = sorted({(s, min(n - 1, s + int(rng.integers(0, 6))))
                    for s in rng.integers(0, n, size=30)})
    scores = rng.normal(size=len(spans)).round(1).astype(np.float32)
    k = int(rng.integers(1, len(spans) + 2))
    starts, ends = (np.array(v, np.int32) for v in zip(*spans))
    got = [spans[i] for i in fn(scores, starts, ends, k, n).numpy()]
    assert got == _greedy(list(scores), spans, k)
    assert not any(_crosses(a, b) for a in got for b in got)


def _outputs(antecedent_scores, antecedents, mask, starts, ends):
  return {"top_span_starts": tf.constant(starts),
          "top_span_ends": tf.constant(ends),
          "top_antecedents": tf.constant(antecedents),
          "top_antecedents_mask": tf.constant(mask),
          "antecedent_scores": tf.constant(antecedent_scores, tf.float32)}


def test_antecedent_loss_marginalises_over_gold_antecedents():
  # Spans 0, 1, 2; gold: 0 and 2 corefer (cluster 1), span 1 is no mention.
  scores = np.array([[0.0, -1e9, -1e9],     # span 0: no antecedent possible
                     [0.0, 1.0, -1e9],      # span 1: dummy is gold
                     [0.0, 2.0, 0.5]])      # span 2: antecedent 0 is gold
  outputs = _outputs(scores, [[0, 0], [0, 0], [1, 0]],
                     [[False, False], [True, False], [True, True]],
                     [0, 2, 5], [0, 3, 5])
  loss = coref_model.antecedent_loss(outputs, tf.constant([0, 5]),
                                     tf.constant([0, 5]), tf.constant([1, 1]))
  # Span 0: only the dummy (loss 0); span 1: -log softmax(0 | 0, 1);
  # span 2: antecedents are (1, 0) with scores (2.0, 0.5); gold is 0 (0.5).
  expected = (np.log(1 + np.e) - 0.0) + (np.log(1 + np.e**2 + np.e**0.5)
                                         - 0.5)
  assert float(loss) == pytest.approx(expected, rel=1e-5)


def test_a_window_without_gold_mentions_has_no_mention_labels():
  """A training window of a document's last lines can hold no gold mention:
  every candidate is then a non-mention (label 0), not int32 min, which made
  the LitBank run's mention loss -2.3e10 at one step of each epoch."""
  scores = np.array([[0.0, -1e9], [0.0, 1.5]])
  outputs = _outputs(scores, [[0], [0]], [[False], [True]], [0, 2], [0, 3])
  outputs["candidate_starts"] = tf.constant([0, 1, 2])
  outputs["candidate_ends"] = tf.constant([0, 1, 3])
  outputs["candidate_mention_scores"] = tf.constant([-2.0, 0.5, 1.0])
  none = tf.zeros([0], tf.int32)
  labels = coref_model._span_labels(outputs["candidate_starts"],
                                    outputs["candidate_ends"], none, none,
                                    none)
  assert labels.numpy().tolist() == [0, 0, 0]
  x = np.array([-2.0, 0.5, 1.0])
  expected = np.mean(np.log1p(np.exp(x)))  # -log(1 - sigmoid(x))
  assert float(coref_model.mention_loss(outputs, none, none)) == (
      pytest.approx(expected, rel=1e-5))
  # Every span's gold antecedent is the dummy: -log softmax(0 | 0, 1.5).
  assert float(coref_model.antecedent_loss(outputs, none, none, none)) == (
      pytest.approx(np.log(1 + np.exp(1.5)), rel=1e-5))


def test_predict_clusters_follows_the_best_antecedent():
  starts, ends = np.array([0, 2, 5, 7]), np.array([0, 3, 5, 8])
  antecedents = np.array([[0, 0], [0, 0], [1, 0], [2, 1]])
  scores = np.array([[0, -9, -9], [0, -1, -9], [0, 0.2, 3.0],
                     [0, 1.0, 0.5]])
  # Span 2 -> span 0 (score 3.0); span 3 -> span 2 (1.0); span 1 alone.
  assert coref_model.predict_clusters(starts, ends, antecedents, scores) == [
      [(0, 0), (5, 5), (7, 8)]]
  # With mention scores: span 1 (score > 0, unlinked) is a singleton.
  clusters = coref_model.predict_clusters(starts, ends, antecedents, scores,
                                          np.array([1.0, 0.5, 2.0, 1.0]))
  assert clusters == [[(0, 0), (5, 5), (7, 8)], [(2, 3)]]


def test_model_outputs_are_consistent():
  tf.random.set_seed(0)
  model = coref_model.CorefModel(_encoder(), max_span_width=4, ffnn_size=8,
                                 max_top_antecedents=3, dropout_rate=0.0,
                                 suppress_crossing_spans=False)
  n = 20
  inputs = {
      "input_word_ids": tf.random.uniform([1, 2, 12], 1, 50, tf.int32),
      "input_mask": tf.ones([1, 2, 12], tf.int32),
      "sentence_map": tf.constant([[0] * 8 + [1] * 12]),
      "word_start": tf.ones([1, n], tf.int32),
      "word_end": tf.ones([1, n], tf.int32),
      "speaker_ids": tf.zeros([1, n], tf.int32),
  }
  out = {k: v.numpy() for k, v in model(inputs).items()}
  k = int(0.4 * n)
  assert out["top_span_starts"].shape == (k,)
  spans = list(zip(out["top_span_starts"], out["top_span_ends"]))
  assert spans == sorted(spans)
  # The top spans are the k best by mention score.
  cand = out["candidate_mention_scores"]
  assert sorted(out["top_span_mention_scores"]) == pytest.approx(
      sorted(cand)[-k:])
  # Antecedents come before their span; the dummy column is 0.
  i = np.arange(k)[:, None]
  assert np.all(out["top_antecedents_mask"] == (out["top_antecedents"] < i))
  assert np.all(out["antecedent_scores"][:, 0] == 0)
  assert np.all(out["antecedent_scores"][:, 1:][~out["top_antecedents_mask"]]
                < -1e8)
  # The default (the reference's) prunes crossing spans: the same weights
  # keep the greedy non-crossing subset, and the antecedents follow it.
  # The default (the reference's) prunes crossing spans: whatever the
  # weights, the greedy non-crossing subset is kept and the antecedents
  # follow it.
  model.suppress_crossing_spans = True
  out = {k: v.numpy() for k, v in model(inputs).items()}
  candidates = list(zip(out["candidate_starts"], out["candidate_ends"]))
  spans = list(zip(out["top_span_starts"], out["top_span_ends"]))
  assert spans == _greedy(list(out["candidate_mention_scores"]), candidates,
                          k)
  assert 0 < len(spans) <= k
  kept = len(spans)
  assert out["top_antecedents"].shape == (kept, min(3, kept))
  assert out["antecedent_scores"].shape == (kept, min(3, kept) + 1)
  # Equal mention scores (a zero output layer) fix the choice: ties go to
  # the first candidates, (0, 0) ... (1, 4), but (1, 2), (1, 3) and (1, 4)
  # cross (0, 1); the filter skips them and the later ones crossing a kept
  # span, down to (4, 4).
  for weight in model.mention_scorer.trainable_weights[-2:]:
    weight.assign(tf.zeros_like(weight))
  spans = [tuple(map(int, s)) for s in zip(*(
      model(inputs)[f"top_span_{e}"].numpy() for e in ("starts", "ends")))]
  model.suppress_crossing_spans = False
  plain = [tuple(map(int, s)) for s in zip(*(
      model(inputs)[f"top_span_{e}"].numpy() for e in ("starts", "ends")))]
  assert plain == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3),
                   (1, 4)]
  assert spans == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (2, 2), (3, 3),
                   (4, 4)]


def test_split_optimizer_applies_two_learning_rates():
  config = optimization.OptimizationConfig({
      "optimizer": {"type": "adam", "adam": {"epsilon": 1e-12}},
      "learning_rate": {"type": "constant",
                        "constant": {"learning_rate": 1e-3}}})
  enc = tf.Variable([1.0, 1.0])
  head = tf.Variable([1.0, -1.0])
  opt = coref_optimizer.SplitLearningRateOptimizer(config, 5.0, lambda: [enc])
  opt.apply_gradients([(tf.constant([0.3, -2.0]), enc),
                       (tf.constant([4.0, -0.1]), head)])
  # Adam's first step moves each weight by lr against its gradient's sign.
  np.testing.assert_allclose(enc.numpy(), [1 - 1e-3, 1 + 1e-3], rtol=1e-6)
  np.testing.assert_allclose(head.numpy(), [1 - 5e-3, -1 + 5e-3], rtol=1e-6)
  assert float(opt.learning_rate) == pytest.approx(1e-3)  # the encoder's
  assert int(opt.iterations) == 1


def test_split_optimizer_clips_the_global_norm_of_all_gradients():
  config = optimization.OptimizationConfig({
      "optimizer": {"type": "sgd", "sgd": {"global_clipnorm": 1.0,
                                           "momentum": 0.0}},
      "learning_rate": {"type": "constant",
                        "constant": {"learning_rate": 1.0}}})
  enc, head = tf.Variable([0.0]), tf.Variable([0.0])
  opt = coref_optimizer.SplitLearningRateOptimizer(config, 2.0, lambda: [enc])
  opt.apply_gradients([(tf.constant([3.0]), enc), (tf.constant([4.0]), head)])
  # Norm 5 -> scaled by 1/5: steps 0.6 (lr 1) and 0.8 * 2 (lr 2).
  np.testing.assert_allclose(enc.numpy(), [-0.6], rtol=1e-6)
  np.testing.assert_allclose(head.numpy(), [-1.6], rtol=1e-6)


def _document_inputs(n=300, segment=64, seed=0):
  """A random document of n wordpieces: sentences of 7-30 wordpieces, words
  of 1-3 wordpieces, two speakers, segments of `segment` wordpieces."""
  rng = np.random.default_rng(seed)
  sentence_map, word_start, word_end = [], [], []
  sentence = 0
  while len(sentence_map) < n:
    length = int(rng.integers(7, 31))
    pieces = 0
    while pieces < length:
      w = int(rng.integers(1, 4))
      word_start += [1] + [0] * (w - 1)
      word_end += [0] * (w - 1) + [1]
      pieces += w
    sentence_map += [sentence] * pieces
    sentence += 1
  n = len(sentence_map)
  rows = -(-n // (segment - 2))
  ids = np.zeros([rows, segment], np.int32)
  mask = np.zeros([rows, segment], np.int32)
  for r in range(rows):
    content = min(segment - 2, n - r * (segment - 2))
    ids[r, :content + 2] = rng.integers(1, 50, content + 2)
    mask[r, :content + 2] = 1
  speakers = np.repeat(rng.integers(0, 2, sentence), np.bincount(sentence_map))
  return {"input_word_ids": tf.constant(ids[None]),
          "input_mask": tf.constant(mask[None]),
          "sentence_map": tf.constant([sentence_map]),
          "word_start": tf.constant([word_start]),
          "word_end": tf.constant([word_end]),
          "speaker_ids": tf.constant(speakers[None], tf.int32)}


def _by_antecedent(out):
  """top_antecedents, their mask and antecedent_scores (dummy column first),
  each row ordered by antecedent id."""
  order = np.argsort(out["top_antecedents"], axis=1, kind="stable")
  take = lambda x: np.take_along_axis(x, order, 1)  # pylint: disable=unnecessary-lambda-assignment
  scores = out["antecedent_scores"]
  return (take(out["top_antecedents"]), take(out["top_antecedents_mask"]),
          np.concatenate([scores[:, :1], take(scores[:, 1:])], 1))


def test_chunked_inference_predicts_what_the_whole_document_does():
  """Windows of 16 wordpieces and chunks of 16 top spans (a window's spans
  reach 5 wordpieces into the next), in a graph as served: the same spans,
  antecedents and clusters, scores within 1e-4."""
  tf.random.set_seed(1)
  model = coref_model.CorefModel(_encoder(), max_span_width=6, ffnn_size=32,
                                 max_top_antecedents=10, dropout_rate=0.0,
                                 initializer_range=0.5, chunk_size=0)
  inputs = _document_inputs()
  whole = {k: v.numpy() for k, v in model(inputs).items()}
  model.chunk_size = 16
  chunked = {k: v.numpy() for k, v in
             tf.function(lambda i: model(i, training=False))(inputs).items()}
  n = inputs["sentence_map"].shape[1]
  assert len(whole["top_span_starts"]) == int(0.4 * n) > 100
  for key in ("candidate_starts", "candidate_ends", "top_span_starts",
              "top_span_ends"):
    np.testing.assert_array_equal(chunked[key], whole[key], err_msg=key)
  np.testing.assert_allclose(chunked["candidate_mention_scores"],
                             whole["candidate_mention_scores"], atol=1e-4,
                             rtol=1e-5)
  # The same antecedents with the same scores; the rank of two near-tied
  # antecedents can differ between the graphs (it did in 1 run of 10 under
  # xdist at load 13: scores ~1e-6 apart), so rows compare by antecedent id.
  for got, want in zip(_by_antecedent(chunked), _by_antecedent(whole)):
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-5)
  fields = ("top_span_starts", "top_span_ends", "top_antecedents",
            "antecedent_scores")
  clusters = coref_model.predict_clusters(*(whole[f] for f in fields))
  assert sum(map(len, clusters)) > 10  # links to compare, not all dummy
  assert coref_model.predict_clusters(*(chunked[f] for f in fields)) == \
      clusters
  # max_top_spans caps k: the greedy non-crossing pick stops at 50.
  model.max_top_spans = 50
  capped = model(inputs)
  spans = list(zip(capped["top_span_starts"].numpy(),
                   capped["top_span_ends"].numpy()))
  assert spans == _greedy(list(whole["candidate_mention_scores"]), list(zip(
      whole["candidate_starts"], whole["candidate_ends"])), 50)
  assert capped["top_antecedents"].shape == (50, 10)


def test_serving_refuses_a_text_over_max_wordpieces(tmp_path):
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                               "jane", "saw", "eliza", "##beth", "."]))
  module = coref_module.CorefServingModule(None, str(vocab), lower_case=True,
                                           max_wordpieces=5)
  within_limit = tf.function(module._within_limit)  # pylint: disable=protected-access
  assert int(within_limit(tf.constant("Jane saw Elizabeth ."))) == 5
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"\[the text has 6 wordpieces, more than the 5 "
                     r"this model was exported for \(max_wordpieces\): split "
                     r"the text or re-export with a larger "
                     r"--coref_max_wordpieces \(memory grows by about 64 MB "
                     r"per 1,000 wordpieces for a base-size model\)\]"):
    within_limit(tf.constant("Jane saw Elizabeth Jane ."))
