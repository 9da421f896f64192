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

"""The coreference model of Lee et al. (2018) / SpanBERT on a BERT encoder.

One document per call, as independent segments: candidate spans, span
embeddings, mention scores and top spans, coarse then fine antecedent scores,
and the marginal log-likelihood loss (no higher-order refinement). The steps:
docs/coreference.md.
"""

from typing import Dict, Optional

import tensorflow as tf
import tf_keras

from official_spanbert.modeling import ffnn
from official_spanbert.modeling import span_embedding

NUM_DISTANCE_BUCKETS = 10
_NEG = -1e9


def bucket_distance(distance: tf.Tensor) -> tf.Tensor:
  """Lee et al.'s buckets: 0, 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+."""
  distance = tf.maximum(distance, 0)
  log_bucket = tf.cast(tf.math.floor(tf.math.log(
      tf.cast(tf.maximum(distance, 1), tf.float32)) / tf.math.log(2.0)),
                       tf.int32) + 3
  bucket = tf.where(distance <= 4, distance, log_bucket)
  return tf.clip_by_value(bucket, 0, NUM_DISTANCE_BUCKETS - 1)


def top_spans(scores: tf.Tensor, starts: tf.Tensor, ends: tf.Tensor,
              k: tf.Tensor, num_tokens: tf.Tensor,
              suppress_crossing: bool = True) -> tf.Tensor:
  """Indices of the kept candidates, in candidate (document) order.

  Candidates are taken by score, highest first (ties: the lower index
  first), until k are kept. With `suppress_crossing`, a candidate that
  partially overlaps a kept span (s1 < s2 <= e1 < e2, either way round) is
  skipped, as mandarjoshi90/coref's extract_spans does; nested spans are
  kept. Fewer than k come back when fewer candidates survive. The reference
  pads to k with copies of the first span; here the result is shorter.

  Args:
    scores: [M] candidate scores.
    starts, ends: [M] int32 token spans (inclusive) in [0, num_tokens).
    k: scalar int32, the most spans to keep.
    num_tokens: scalar int32, the document length.
    suppress_crossing: skip crossing candidates (else the plain top k).
  """
  k = tf.minimum(k, tf.size(scores))
  if not suppress_crossing:
    return tf.sort(tf.math.top_k(scores, k).indices)
  order = tf.argsort(tf.stop_gradient(scores), direction="DESCENDING",
                     stable=True)
  m = tf.size(order)
  # As the reference: for each token, the latest end of a kept span starting
  # there and the earliest start of a kept span ending there.
  latest_end = -tf.ones([num_tokens], tf.int32)
  earliest_start = tf.fill([num_tokens], num_tokens)

  def body(i, count, keep, latest_end, earliest_start):
    c = order[i]
    s, e = starts[c], ends[c]
    # A kept [s2, e2] with s < s2 <= e < e2, or with s2 < s <= e2 < e.
    crossing = (tf.reduce_any(latest_end[s + 1:e + 1] > e) |
                tf.reduce_any(earliest_start[s:e] < s))
    kept = tf.logical_not(crossing)
    latest_end = tf.tensor_scatter_nd_max(
        latest_end, [[s]], [tf.where(kept, e, -1)])
    earliest_start = tf.tensor_scatter_nd_min(
        earliest_start, [[e]], [tf.where(kept, s, num_tokens)])
    return (i + 1, count + tf.cast(kept, tf.int32), keep.write(i, kept),
            latest_end, earliest_start)

  i, _, keep, _, _ = tf.while_loop(
      lambda i, count, *_: (i < m) & (count < k), body,
      (tf.constant(0), tf.constant(0),
       tf.TensorArray(tf.bool, size=0, dynamic_size=True,
                      element_shape=[]), latest_end, earliest_start))
  keep = tf.concat([keep.stack(), tf.zeros([m - i], tf.bool)], 0)
  return tf.sort(tf.boolean_mask(order, keep))


def dummy_features() -> Dict[str, tf.Tensor]:
  """A two-sentence, six-wordpiece document that builds every variable.

    model(dummy_features(), training=False)
  """
  ids = tf.constant([[[101, 1, 2, 3, 4, 5, 6, 102]]])
  return {"input_word_ids": ids, "input_mask": tf.ones_like(ids),
          "sentence_map": tf.constant([[0, 0, 0, 1, 1, 1]]),
          "speaker_ids": tf.zeros([1, 6], tf.int32),
          "word_start": tf.ones([1, 6], tf.int32),
          "word_end": tf.ones([1, 6], tf.int32)}


class CorefModel(tf_keras.Model):
  """Span-ranking coreference over a BERT encoder (one document per call).

  Args:
    encoder: a Model Garden BERT encoder (dict inputs, `sequence_output`).
    max_span_width: longest candidate span, in wordpieces.
    feature_size: width, distance and speaker embedding size.
    ffnn_size, ffnn_depth: hidden layers of the mention and pair scorers.
    top_span_ratio: spans kept per content wordpiece.
    max_top_antecedents: antecedents kept per span (C).
    dropout_rate: dropout on span embeddings and in the scorers.
    use_speaker: add the same-speaker feature.
    suppress_crossing_spans: skip candidates that cross a higher-scoring
      kept span when pruning (the reference's default; `top_spans`).
    initializer_range: stddev of the truncated-normal initializer.
    max_top_spans: at most this many spans are kept (the reference keeps
      3900; 0: no cap beyond top_span_ratio).
    chunk_size: at inference, wordpieces per span-embedding window and top
      spans per antecedent-scoring chunk (0: the whole document at once).
  """

  def __init__(self, encoder: tf_keras.Model, max_span_width: int = 30,
               feature_size: int = 20, ffnn_size: int = 3000,
               ffnn_depth: int = 1, top_span_ratio: float = 0.4,
               max_top_antecedents: int = 50, dropout_rate: float = 0.3,
               use_speaker: bool = True,
               suppress_crossing_spans: bool = True,
               initializer_range: float = 0.02, max_top_spans: int = 0,
               chunk_size: int = 128, **kwargs):
    super().__init__(**kwargs)
    self.encoder = encoder
    self.max_span_width = max_span_width
    self.top_span_ratio = top_span_ratio
    self.max_top_antecedents = max_top_antecedents
    self.use_speaker = use_speaker
    self.suppress_crossing_spans = suppress_crossing_spans
    self.max_top_spans = max_top_spans
    self.chunk_size = chunk_size

    def init():
      return tf_keras.initializers.TruncatedNormal(stddev=initializer_range)

    self.span_embedding = span_embedding.SpanEmbedding(
        max_span_width, feature_size, initializer_range, name="span_embedding")
    # Also tracked as the model's own, the paths of checkpoints written
    # before the span embedding was a layer of its own.
    self.width_embedding = self.span_embedding.width_embedding
    self.head_scorer = self.span_embedding.head_scorer
    self.distance_embedding = tf_keras.layers.Embedding(
        NUM_DISTANCE_BUCKETS, feature_size, embeddings_initializer=init(),
        name="antecedent_distance_embedding")
    self.speaker_embedding = tf_keras.layers.Embedding(
        2, feature_size, embeddings_initializer=init(),
        name="same_speaker_embedding")
    self.mention_scorer = ffnn.FFNN(ffnn_size, ffnn_depth, 1, dropout_rate,
                                    init, name="mention_scores")
    self.antecedent_scorer = ffnn.FFNN(ffnn_size, ffnn_depth, 1,
                                       dropout_rate, init,
                                       name="antecedent_scores")
    hidden = encoder.get_config()["hidden_size"]
    self.coarse_projection = tf_keras.layers.Dense(
        3 * hidden + feature_size, use_bias=False, kernel_initializer=init(),
        name="coarse_bilinear")
    self.dropout = tf_keras.layers.Dropout(dropout_rate)

  @property
  def checkpoint_items(self) -> Dict[str, tf.Module]:
    return {"encoder": self.encoder}

  def _content(self, inputs, training):
    ids = inputs["input_word_ids"][0]
    mask = inputs["input_mask"][0]
    encoded = self.encoder(dict(input_word_ids=ids, input_mask=mask,
                                input_type_ids=tf.zeros_like(ids)),
                           training=training)["sequence_output"]
    lengths = tf.reduce_sum(mask, axis=1, keepdims=True)
    positions = tf.range(tf.shape(ids)[1])[None, :]
    content = (positions > 0) & (positions < lengths - 1)
    return tf.boolean_mask(encoded, content)

  def candidates(self, sentence_map, word_start, word_end):
    """(starts, ends) of the candidate spans, in (start, end) order."""
    starts, ends, keep = span_embedding.candidate_spans(
        sentence_map, word_start, word_end, self.max_span_width)
    return tf.boolean_mask(starts, keep), tf.boolean_mask(ends, keep)

  def _embed(self, x, head_scores, starts, ends, training=None):
    """Span embeddings g = [x_start, x_end, head, width] of spans in x."""
    del training  # dropout is applied to the whole g by the caller
    return self.span_embedding(x, starts, ends, head_scores)

  def _windowed(self, x, head_scores, starts, ends, fn, dtype, inner_shape):
    """fn(g) of spans sorted by start, over windows of `chunk_size` starts.

    A window reads chunk_size + max_span_width - 1 tokens, so no tensor
    holds more than one window's spans: memory does not grow with the
    document beyond the [spans] results.
    """
    n = tf.shape(x)[0]
    size = self.chunk_size
    windows = (n + size - 1) // size

    def body(w, out):
      t0 = w * size
      t1 = tf.minimum(t0 + size, n)
      lo = tf.searchsorted(starts, t0[None], side="left")[0]
      hi = tf.searchsorted(starts, t1[None], side="left")[0]
      t_end = tf.minimum(t1 + self.max_span_width - 1, n)
      g = self._embed(x[t0:t_end], head_scores[t0:t_end],
                      starts[lo:hi] - t0, ends[lo:hi] - t0)
      return w + 1, out.write(w, fn(g))

    _, out = tf.while_loop(
        lambda w, _: w < windows, body,
        (tf.constant(0), tf.TensorArray(
            dtype, size=windows, infer_shape=False,
            element_shape=tf.TensorShape([None] + inner_shape))))
    return out.concat()

  def _antecedent_rows(self, a, b, top_g, proj, top_scores, speakers, c,
                       training):
    """Antecedents [b-a, c], their mask and scores [b-a, c + 1] of top spans
    a..b-1 against every top span (coarse top c, then the fine FFNN)."""
    k = tf.shape(top_g)[0]
    rows = tf.range(a, b)
    earlier = tf.range(k)[None, :] < rows[:, None]  # j before i
    coarse = (top_scores[a:b, None] + top_scores[None, :] +
              tf.matmul(proj[a:b], top_g, transpose_b=True))
    coarse = tf.where(earlier, coarse, _NEG)
    coarse_top, antecedents = tf.math.top_k(coarse, c)
    mask = tf.gather(earlier, antecedents, batch_dims=1)

    ante_g = tf.gather(top_g, antecedents)  # [rows, C, D]
    target_g = tf.broadcast_to(top_g[a:b, None, :], tf.shape(ante_g))
    features = [self.distance_embedding(
        bucket_distance(rows[:, None] - antecedents))]
    if self.use_speaker:
      same = tf.cast(tf.equal(speakers[a:b, None],
                              tf.gather(speakers, antecedents)), tf.int32)
      features.append(self.speaker_embedding(same))
    pair = tf.concat([target_g, ante_g, target_g * ante_g] +
                     [self.dropout(f, training=training) for f in features],
                     axis=-1)
    fine = tf.squeeze(self.antecedent_scorer(pair, training=training), -1)
    scores = tf.where(mask, coarse_top + fine, _NEG)
    scores = tf.concat([tf.zeros_like(scores[:, :1]), scores], axis=1)
    return antecedents, mask, scores

  def _map_rows(self, k, fn, specs, chunked):
    """fn(a, b) -> tensors of rows a..b-1 of k rows, for chunk_size rows at
    a time when `chunked` (concatenated), else fn(0, k). `specs`: (dtype,
    rank) of each result."""
    if not chunked:
      return fn(0, k)
    size = self.chunk_size

    def body(i, *arrays):
      a = i * size
      rows = fn(a, tf.minimum(a + size, k))
      return (i + 1,) + tuple(ta.write(i, r) for ta, r in zip(arrays, rows))

    chunks = (k + size - 1) // size
    _, *arrays = tf.while_loop(
        lambda i, *_: i < chunks, body,
        (tf.constant(0),) + tuple(
            tf.TensorArray(d, size=chunks, infer_shape=False,
                           element_shape=tf.TensorShape([None] * rank))
            for d, rank in specs))
    return tuple(ta.concat() for ta in arrays)

  def call(self, inputs, training=None) -> Dict[str, tf.Tensor]:
    """Scores of one document (batch of 1).

    With `chunk_size` > 0 and not training, span embeddings and mention
    scores are computed over windows of chunk_size wordpieces and
    antecedents for chunk_size top spans at a time (the same arithmetic,
    memory linear in the document); training scores its window at once.

    Returns:
      candidate_starts, candidate_ends, candidate_mention_scores [M];
      top_span_starts, top_span_ends, top_span_mention_scores [k] (spans in
      wordpiece indices, in document order); top_antecedents
      [k, C] (indices into the top spans); top_antecedents_mask [k, C];
      antecedent_scores [k, C + 1] (column 0: the dummy antecedent, 0).
    """
    x = self._content(inputs, training)
    sentence_map = inputs["sentence_map"][0]
    starts, ends = self.candidates(sentence_map, inputs["word_start"][0],
                                   inputs["word_end"][0])
    head_scores = self.span_embedding.token_scores(x)
    chunked = self.chunk_size > 0 and not training

    def mention_score(g):
      return tf.squeeze(self.mention_scorer(g, training=training), -1)

    if chunked:
      mention_scores = self._windowed(x, head_scores, starts, ends,
                                      mention_score, x.dtype, [])
    else:
      g = self.dropout(self._embed(x, head_scores, starts, ends),
                       training=training)
      mention_scores = mention_score(g)

    n = tf.shape(x)[0]
    num_spans = tf.shape(starts)[0]
    k = tf.maximum(tf.cast(tf.math.floor(
        tf.cast(n, tf.float32) * self.top_span_ratio), tf.int32), 1)
    if self.max_top_spans:
      k = tf.minimum(k, self.max_top_spans)
    k = tf.minimum(k, num_spans)
    top = top_spans(mention_scores, starts, ends, k, n,
                    self.suppress_crossing_spans)
    k = tf.size(top)
    top_starts, top_ends = tf.gather(starts, top), tf.gather(ends, top)
    if chunked:
      top_g = self._windowed(x, head_scores, top_starts, top_ends,
                             tf.identity, x.dtype,
                             [self.span_embedding.output_size(x.shape[-1])])
    else:
      top_g = tf.gather(g, top)
    top_scores = tf.gather(mention_scores, top)
    speakers = tf.gather(inputs["speaker_ids"][0], top_starts)

    c = tf.minimum(self.max_top_antecedents, k)
    proj = self.coarse_projection(self.dropout(top_g, training=training))
    antecedents, mask, scores = self._map_rows(
        k, lambda a, b: self._antecedent_rows(a, b, top_g, proj, top_scores,
                                              speakers, c, training),
        ((tf.int32, 2), (tf.bool, 2), (top_g.dtype, 2)), chunked)
    return {
        "candidate_starts": starts,
        "candidate_ends": ends,
        "candidate_mention_scores": mention_scores,
        "top_span_starts": top_starts,
        "top_span_ends": top_ends,
        "top_span_mention_scores": top_scores,
        "top_antecedents": antecedents,
        "top_antecedents_mask": mask,
        "antecedent_scores": scores,
    }


def _span_labels(starts, ends, gold_starts, gold_ends, cluster_ids):
  """Cluster id of each span (0 when it is not a gold mention)."""
  match = (tf.equal(starts[:, None], gold_starts[None, :]) &
           tf.equal(ends[:, None], gold_ends[None, :]))
  ids = tf.where(match, cluster_ids[None, :], 0)
  # At least 0: with no gold mentions (a training window can hold none) the
  # reduce_max is over nothing and gives int32 min.
  return tf.maximum(tf.reduce_max(ids, axis=1), 0)


def antecedent_loss(outputs: Dict[str, tf.Tensor], gold_starts: tf.Tensor,
                    gold_ends: tf.Tensor, cluster_ids: tf.Tensor
                    ) -> tf.Tensor:
  """-log sum of P(gold antecedents), summed over the top spans."""
  clusters = _span_labels(outputs["top_span_starts"],
                          outputs["top_span_ends"], gold_starts, gold_ends,
                          cluster_ids)
  ante = tf.gather(clusters, outputs["top_antecedents"])
  same = (tf.equal(ante, clusters[:, None]) & (clusters[:, None] > 0) &
          outputs["top_antecedents_mask"])
  dummy = tf.logical_not(tf.reduce_any(same, axis=1, keepdims=True))
  labels = tf.concat([dummy, same], axis=1)
  scores = outputs["antecedent_scores"]
  gold = tf.where(labels, scores, _NEG)
  return tf.reduce_sum(tf.reduce_logsumexp(scores, 1) -
                       tf.reduce_logsumexp(gold, 1))


def mention_loss(outputs: Dict[str, tf.Tensor], gold_starts: tf.Tensor,
                 gold_ends: tf.Tensor) -> tf.Tensor:
  """Mean sigmoid cross-entropy of the candidates' mention scores."""
  labels = _span_labels(outputs["candidate_starts"],
                        outputs["candidate_ends"], gold_starts, gold_ends,
                        tf.ones_like(gold_starts))
  return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
      labels=tf.cast(labels, tf.float32),
      logits=outputs["candidate_mention_scores"]))


def predict_clusters(top_starts, top_ends, antecedents, scores,
                     mention_scores: Optional = None):
  """Clusters of (start, end) wordpiece spans from one document's outputs.

  Each top span links to its highest-scoring antecedent unless the dummy
  wins; linked spans form clusters. With `mention_scores` (of the top spans),
  a span left alone whose score is > 0 is kept as a singleton.

  Args: NumPy arrays as returned by CorefModel (top spans' fields).

  Returns:
    A list of clusters, each a sorted list of (start, end).
  """
  best = scores.argmax(axis=1) - 1
  cluster_of = {}
  clusters = []
  for i, b in enumerate(best):
    span = (int(top_starts[i]), int(top_ends[i]))
    if b < 0:
      continue
    ante = (int(top_starts[antecedents[i, b]]),
            int(top_ends[antecedents[i, b]]))
    if ante not in cluster_of:
      cluster_of[ante] = len(clusters)
      clusters.append([ante])
    if span not in cluster_of:
      cluster_of[span] = cluster_of[ante]
      clusters[cluster_of[ante]].append(span)
  if mention_scores is not None:
    for i, score in enumerate(mention_scores):
      span = (int(top_starts[i]), int(top_ends[i]))
      if score > 0 and span not in cluster_of:
        cluster_of[span] = len(clusters)
        clusters.append([span])
  return [sorted(c) for c in clusters]
