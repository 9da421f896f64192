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

"""The `independent` model of mandarjoshi90/coref (`variant: reference`).

Runs the released SpanBERT coreference checkpoints: tokens include [CLS] and
[SEP], a width prior, genre and segment-distance features and gated
refinement. What differs from CorefModel: docs/coreference.md, "Running the
published SpanBERT coreference models".

Example:
  model = ReferenceCorefModel(encoder, ffnn_size=3000)
  outputs = model(features, training=False)  # features as for CorefModel
"""

from typing import Dict, Sequence

import tensorflow as tf
import tf_keras

from official_spanbert.data.finetuning import ontonotes
from official_spanbert.modeling import coref_model
from official_spanbert.modeling import ffnn

GENRES = ontonotes.GENRES  # the data's genre ids index these
SPEAKER_OF_MARKERS = -1  # [CLS]/[SEP] ('[SPL]' in the reference)


class ReferenceCorefModel(coref_model.CorefModel):
  """The reference's model (see the module docstring).

  Args:
    encoder: a Model Garden BERT encoder.
    genres: genre names; `inputs["genre"]` indexes them (0 when absent).
    max_segment_distance: segment-distance buckets (the reference's
      max_training_sentences: 3 for SpanBERT base and large).
    coref_depth: refinement rounds (2).
    **kwargs: CorefModel's.
  """

  def __init__(self, encoder: tf_keras.Model, genres: Sequence[str] = GENRES,
               max_segment_distance: int = 3, coref_depth: int = 2,
               max_top_spans: int = 3900, **kwargs):
    super().__init__(encoder, max_top_spans=max_top_spans, **kwargs)
    self.genres = tuple(genres)
    self.max_segment_distance = max_segment_distance
    self.coref_depth = coref_depth
    feature = self.width_embedding.output_dim
    hidden = encoder.get_config()["hidden_size"]
    span_size = 3 * hidden + feature
    rate = self.dropout.rate

    def init():
      return tf_keras.initializers.TruncatedNormal(stddev=0.02)

    def embedding(rows, name):
      return tf_keras.layers.Embedding(rows, feature,
                                       embeddings_initializer=init(),
                                       name=name)

    size = self.mention_scorer.hidden_layers[0].units
    depth = len(self.mention_scorer.hidden_layers)
    self.width_prior_embedding = embedding(self.max_span_width,
                                           "span_width_prior_embeddings")
    self.width_scorer = ffnn.FFNN(size, depth, 1, rate, init,
                                  name="width_scores")
    self.coarse_distance_embedding = embedding(
        coref_model.NUM_DISTANCE_BUCKETS, "coarse_distance_embedding")
    self.coarse_distance_scorer = tf_keras.layers.Dense(
        1, kernel_initializer=init(), name="coarse_distance_scores")
    self.src_projection = tf_keras.layers.Dense(
        span_size, kernel_initializer=init(), name="src_projection")
    self.genre_embedding = embedding(len(self.genres), "genre_embeddings")
    self.segment_distance_embedding = embedding(
        max_segment_distance, "segment_distance_embeddings")
    self.gate = tf_keras.layers.Dense(span_size, kernel_initializer=init(),
                                      name="refinement_gate")

  def _tokens(self, inputs, training):
    """x [T, H] over every token and each token's sentence, speaker,
    segment and content index."""
    ids = inputs["input_word_ids"][0]
    mask = inputs["input_mask"][0]
    encoded = self.encoder(dict(input_word_ids=ids, input_mask=mask,
                                input_type_ids=tf.zeros_like(ids)),
                           training=training)["sequence_output"]
    keep = mask > 0
    length = tf.reduce_sum(mask, axis=1, keepdims=True)
    positions = tf.range(tf.shape(ids)[1])[None, :]
    content = tf.boolean_mask((positions > 0) & (positions < length - 1),
                              keep)
    segment = tf.boolean_mask(
        tf.broadcast_to(tf.range(tf.shape(ids)[0])[:, None], tf.shape(ids)),
        keep)
    before = tf.cumsum(tf.cast(content, tf.int32)) - 1  # last content <= t
    sentence_map = inputs["sentence_map"][0]
    extended = tf.concat([sentence_map, sentence_map[-1:] + 1], 0)
    this = tf.gather(extended, tf.maximum(before, 0))
    after = tf.gather(extended, before + 1)
    # [CLS] and [SEP] both take the sentence of the next content wordpiece.
    sentence = tf.where(content, this, after)
    speaker = tf.where(
        content, tf.gather(inputs["speaker_ids"][0], tf.maximum(before, 0)),
        SPEAKER_OF_MARKERS)
    return (tf.boolean_mask(encoded, keep), sentence, speaker, segment,
            tf.maximum(before, 0))

  def _embed(self, x, head_scores, starts, ends, training=None):
    start, end, head, width = self.span_embedding.parts(x, starts, ends,
                                                        head_scores)
    return tf.concat([start, end, self.dropout(width, training=training),
                      head], axis=-1)

  def _coarse_rows(self, a, b, g, proj, scores, prior, c):
    """Top c antecedents of spans a..b-1 by the coarse score."""
    k = tf.shape(g)[0]
    rows = tf.range(a, b)
    offsets = rows[:, None] - tf.range(k)[None, :]
    earlier = offsets >= 1
    coarse = (scores[a:b, None] + scores[None, :] +
              tf.matmul(proj[a:b], g, transpose_b=True) +
              tf.gather(prior, coref_model.bucket_distance(offsets)))
    coarse = tf.where(earlier, coarse, coref_model._NEG)  # pylint: disable=protected-access
    top, antecedents = tf.math.top_k(coarse, c)
    return antecedents, tf.gather(earlier, antecedents, batch_dims=1), top

  def _fine_rows(self, a, b, g, antecedents, coarse, mask, speakers,
                 segments, genre, refine, training):
    """Scores [b-a, c] of spans a..b-1 and, with `refine`, their refined
    embeddings."""
    rows = tf.range(a, b)
    ante = antecedents[a:b]
    ante_g = tf.gather(g, ante)
    target = tf.broadcast_to(g[a:b, None, :], tf.shape(ante_g))
    same = tf.cast(tf.equal(speakers[a:b, None], tf.gather(speakers, ante)),
                   tf.int32)
    segment_distance = tf.clip_by_value(
        segments[a:b, None] - tf.gather(segments, ante), 0,
        self.max_segment_distance - 1)
    features = tf.concat([
        self.speaker_embedding(same),
        tf.zeros_like(self.speaker_embedding(same)) +
        self.genre_embedding(genre)[None, None, :],
        self.distance_embedding(
            coref_model.bucket_distance(rows[:, None] - ante)),
        self.segment_distance_embedding(segment_distance)], axis=-1)
    pair = tf.concat([target, ante_g, target * ante_g,
                      self.dropout(features, training=training)], axis=-1)
    fine = tf.squeeze(self.antecedent_scorer(pair, training=training), -1)
    scores = tf.where(mask[a:b], coarse[a:b] + fine, coref_model._NEG)  # pylint: disable=protected-access
    if not refine:
      return (scores,)
    weights = tf.nn.softmax(tf.concat([tf.zeros_like(scores[:, :1]), scores],
                                      1))
    attended = tf.reduce_sum(weights[:, :, None] * tf.concat(
        [g[a:b, None, :], ante_g], 1), 1)
    f = tf.sigmoid(self.gate(tf.concat([g[a:b], attended], 1)))
    return scores, f * attended + (1 - f) * g[a:b]

  def call(self, inputs, training=None) -> Dict[str, tf.Tensor]:
    """Scores of one document (batch of 1): CorefModel's outputs (spans over
    content wordpieces) plus top_span_token_starts/ends (over tokens)."""
    x, sentence, speaker, segment, content_index = self._tokens(inputs,
                                                                training)
    ones = tf.ones_like(sentence)
    starts, ends = self.candidates(sentence, ones, ones)
    head_scores = self.span_embedding.token_scores(x)
    chunked = self.chunk_size > 0 and not training
    width_scores = tf.squeeze(self.width_scorer(
        self.width_prior_embedding(tf.range(self.max_span_width)), training=training), -1)

    def mention_score(g):
      return tf.squeeze(self.mention_scorer(g, training=training), -1)

    span_size = self.span_embedding.output_size(x.shape[-1])
    if chunked:
      mention_scores = self._windowed(x, head_scores, starts, ends,
                                      mention_score, x.dtype, [])
    else:
      g = self._embed(x, head_scores, starts, ends, training=training)
      mention_scores = mention_score(g)
    mention_scores += tf.gather(width_scores, ends - starts)
    n = tf.shape(x)[0]
    k = tf.maximum(tf.cast(tf.math.floor(
        tf.cast(n, tf.float32) * self.top_span_ratio), tf.int32), 1)
    k = tf.minimum(tf.minimum(k, self.max_top_spans), tf.size(starts))
    top = coref_model.top_spans(mention_scores, starts, ends, k, n,
                                self.suppress_crossing_spans)
    k = tf.size(top)
    top_starts, top_ends = tf.gather(starts, top), tf.gather(ends, top)
    if chunked:
      top_g = self._windowed(x, head_scores, top_starts, top_ends,
                             tf.identity, x.dtype, [span_size])
    else:
      top_g = tf.gather(g, top)
    top_scores = tf.gather(mention_scores, top)
    c = tf.minimum(self.max_top_antecedents, k)
    prior = tf.squeeze(self.coarse_distance_scorer(self.dropout(
        self.coarse_distance_embedding(
            tf.range(coref_model.NUM_DISTANCE_BUCKETS)), training=training)), -1)
    proj = self.dropout(self.src_projection(top_g), training=training)
    target = self.dropout(top_g, training=training)
    antecedents, mask, coarse = self._map_rows(
        k, lambda a, b: self._coarse_rows(a, b, target, proj, top_scores,
                                          prior, c),
        ((tf.int32, 2), (tf.bool, 2), (top_g.dtype, 2)), chunked)
    speakers = tf.gather(speaker, top_starts)
    segments = tf.gather(segment, top_starts)
    genre = tf.reshape(inputs.get("genre", tf.zeros([1], tf.int32)), [-1])[0]
    g = top_g
    for depth in range(self.coref_depth):
      refine = depth < self.coref_depth - 1
      out = self._map_rows(
          k, lambda a, b, g=g, refine=refine: self._fine_rows(
              a, b, g, antecedents, coarse, mask, speakers, segments, genre,
              refine, training),
          ((top_g.dtype, 2),) + (((top_g.dtype, 2),) if refine else ()),
          chunked)
      scores = out[0]
      if refine:
        g = tf.ensure_shape(out[1], [None, span_size])
    scores = tf.concat([tf.zeros_like(scores[:, :1]), scores], axis=1)
    return {
        "candidate_starts": tf.gather(content_index, starts),
        "candidate_ends": tf.gather(content_index, ends),
        "candidate_mention_scores": mention_scores,
        "top_span_starts": tf.gather(content_index, top_starts),
        "top_span_ends": tf.gather(content_index, top_ends),
        "top_span_token_starts": top_starts,
        "top_span_token_ends": top_ends,
        "top_span_mention_scores": top_scores,
        "top_antecedents": antecedents,
        "top_antecedents_mask": mask,
        "antecedent_scores": scores,
    }
