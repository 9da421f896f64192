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

"""Coreference serving: raw text -> clusters as character offsets, in graph.

`CorefServingModule.resolve(text)` runs training's tokenization, segmenting
and CorefModel on one document inside the SavedModel, with core TF and
tf.text ops only; `resolve_with_speakers(text, genre, line_speakers)` adds
OntoNotes' genre and speakers, and `resolve_scores` (a function, not a
signature) returns the raw outputs. See docs/coreference.md#serving.

Example:
  module = CorefServingModule(model, "vocab.txt", max_wordpieces=65536)
  module.resolve(tf.constant("Jane saw her sister. She waved."))
  module.resolve_with_speakers(tf.constant("Where is she?\\nIn the garden."),
                               tf.constant("tc"), tf.constant(["A", "B"]))
"""

import dataclasses
from typing import Dict, Optional

import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import ontonotes
from official_spanbert.serving import quantization
from official_spanbert.serving import serving_module
from official_spanbert.tasks import coreference

SENTENCE_END_WORDS = (".", "!", "?")
# What resolve's memory grows by per 1,000 wordpieces, base size (the error
# message says what a larger limit costs).
MB_PER_1000_WORDPIECES_BASE = 64
OUTPUT_KEYS = ("mention_starts", "mention_ends", "cluster_ids",
               "mention_texts", "num_clusters")
# text, genre, line_speakers.
_WITH_SPEAKERS = (tf.TensorSpec(None, tf.string), tf.TensorSpec(None, tf.string),
                  tf.TensorSpec([None], tf.string))
# The model's outputs that resolve_scores returns beside the features.
SCORE_KEYS = ("top_span_starts", "top_span_ends", "top_span_mention_scores",
              "top_antecedents", "top_antecedents_mask", "antecedent_scores")


def _last_flag(flags: tf.Tensor, start: tf.Tensor, limit: tf.Tensor):
  """1 + the last index i in [start, limit) with flags[i], else -1."""
  found = tf.where(flags[start:limit])
  return tf.cond(tf.size(found) > 0,
                 lambda: start + tf.cast(found[-1, 0], tf.int32) + 1,
                 lambda: tf.constant(-1))


def segment_ends(sentence_end: tf.Tensor, word_end: tf.Tensor,
                 max_content: int,
                 row_limits: Optional[tf.Tensor] = None) -> tf.Tensor:
  """Graph version of data/finetuning/coref.split_segments.

  `row_limits` (exclusive ends, ascending) cuts several sequences laid end
  to end at once: no segment runs over a row limit (serving/span_windows.py
  windows a batch of texts so). Every segment holds at least one piece, so
  it ends on any input (flags and limits that disagree included): at most
  len(sentence_end) segments.
  """
  if max_content < 1:
    raise ValueError(f"max_content {max_content}: a segment must hold at "
                     "least one wordpiece")
  n = tf.size(sentence_end)
  if row_limits is None:
    row_limits = tf.reshape(n, [1])
  row_limits = tf.cast(row_limits, tf.int32)

  def body(start, ends):
    row = tf.searchsorted(row_limits, tf.reshape(start, [1]), side="right")
    row_end = tf.gather(row_limits, tf.minimum(row[0],
                                               tf.size(row_limits) - 1))
    limit = tf.minimum(start + max_content, row_end)
    by_sentence = _last_flag(sentence_end, start, limit)
    by_word = _last_flag(word_end, start, limit)
    cut = tf.where(limit >= row_end, limit,
                   tf.where(by_sentence > 0, by_sentence,
                            tf.where(by_word > 0, by_word, limit)))
    # A row limit at or before `start` (limits past the last flag) would cut
    # nothing and loop forever: cut by length alone.
    cut = tf.where(cut > start, cut, tf.minimum(start + max_content, n))
    return cut, ends.write(ends.size(), cut)

  _, ends = tf.while_loop(
      lambda start, _: start < n, body,
      (tf.constant(0), tf.TensorArray(tf.int32, size=0, dynamic_size=True)))
  return ends.stack()


def link_clusters(best: tf.Tensor, antecedents: tf.Tensor,
                  singleton: tf.Tensor) -> tf.Tensor:
  """Cluster id of each top span (-1: none), in the order spans are seen.

  Args:
    best: [k] index into each span's antecedents, or -1 for the dummy.
    antecedents: [k, C] antecedent indices.
    singleton: [k] whether an unlinked span is kept on its own.
  """
  k = tf.size(best)

  def body(i, clusters, next_id):
    b = best[i]

    def link():
      a = antecedents[i, b]
      new = clusters[a] < 0
      cid = tf.where(new, next_id, clusters[a])
      updated = tf.tensor_scatter_nd_update(clusters, [[a], [i]], [cid, cid])
      return updated, next_id + tf.cast(new, tf.int32)

    def alone():
      keep = singleton[i] & (clusters[i] < 0)
      updated = tf.tensor_scatter_nd_update(
          clusters, [[i]], [tf.where(keep, next_id, clusters[i])])
      return updated, next_id + tf.cast(keep, tf.int32)

    clusters, next_id = tf.cond(b >= 0, link, alone)
    return i + 1, clusters, next_id

  _, clusters, _ = tf.while_loop(
      lambda i, *_: i < k, body,
      (tf.constant(0), -tf.ones([k], tf.int32), tf.constant(0)))
  return clusters


class _Untracked:
  """Holds an object outside the SavedModel's object graph."""

  def __init__(self, value):
    self.value = value


class CorefServingModule(serving_module.ServingModule):
  """The `resolve` signature around a trained CorefModel.

  The SavedModel holds the model's variables, not the Keras object: saving
  a tf_keras model also traces and writes every layer's call functions,
  which nobody serves, and that was most of the export and load time.

  Args:
    model: a CorefModel with weights.
    vocab_file, lower_case: its tokenizer.
    max_segment_len: segment length, as in training.
    predict_singletons: output unlinked spans with mention score > 0.
    max_wordpieces: see Params.
    max_num_speakers: speaker ids as the training data's
      (ontonotes.speaker_ids).
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The `resolve` export's options.

    Attributes:
      max_wordpieces: longer texts are refused (0: no limit); memory and
        time grow linearly with the length (the model scores in chunks): a
        base-size model took +2,104 MB at 32,768
        (benchmarks/bench_coref_memory.py, 2026-12-04); 24,000 words of
        technical prose are ~36,000 wordpieces.
    """
    max_wordpieces: int = 65536

  SIGNATURES = ("resolve", "resolve_with_speakers")
  WHAT = "coreference model"
  WARMUP_TEXTS = (
      "Elizabeth walked to the house of her sister. She found Jane reading.",
      "",
  )

  @classmethod
  def from_run(cls, run: serving_module.Run,
               params: Params) -> "CorefServingModule":
    """The module of a spanbert/coref run, with the tokenizer, segment
    length and speaker ids of its task config."""
    data = run.params.task.validation_data
    model = run.restore(coreference.build_model(run.params.task.model))
    return cls(model, run.vocab(params.vocab_file),
               lower_case=data.do_lower_case,
               max_segment_len=data.max_segment_len,
               predict_singletons=run.params.task.predict_singletons,
               max_wordpieces=params.max_wordpieces,
               max_num_speakers=data.max_num_speakers)

  def encoder_part(self, run: serving_module.Run) -> quantization.EncoderPart:
    """int8: the encoder (the mention and antecedent scorers stay float32),
    calibrated on the segments of the run's training documents."""

    def install(encoder):
      self.model.encoder = encoder

    return quantization.EncoderPart(
        quantization.EncoderOutputs(self.model.encoder), install,
        quantization.loader_windows)

  def warmup_inputs(self):
    return {
        "resolve": {"text": self.WARMUP_TEXTS[0]},
        "resolve_with_speakers": {"text": self.WARMUP_TEXTS[0],
                                  "genre": "bc",
                                  "line_speakers": ["Elizabeth"]},
        "serving_default": {"text": self.WARMUP_TEXTS[1]},
    }

  def __init__(self, model, vocab_file: str, lower_case: bool = False,
               max_segment_len: int = 384, predict_singletons: bool = False,
               max_wordpieces: int = Params.max_wordpieces,
               max_num_speakers: int = 0):
    super().__init__(name="coref_serving")
    self._model = _Untracked(model)
    self.tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
    self.vocab = self.tokenizer.vocab
    self.max_segment_len = max_segment_len
    self.max_wordpieces = max_wordpieces
    self.max_num_speakers = max_num_speakers
    self.predict_singletons = predict_singletons

  def _speakers(self, text: tf.Tensor, word_bytes: tf.Tensor,
                line_speakers: Optional[tf.Tensor]) -> tf.Tensor:
    """Speaker id of each word: its line's speaker (all 0 without any)."""
    if line_speakers is None:
      return tf.zeros_like(word_bytes[:, 0], tf.int32)
    newlines = tf.cast(tf.where(tf.equal(tf.strings.bytes_split(text),
                                         "\n"))[:, 0], word_bytes.dtype)
    line_of_word = tf.searchsorted(newlines, word_bytes[:, 0])
    return tf.cond(
        tf.size(line_speakers) > 0,
        lambda: ontonotes.speaker_ids_graph(
            tf.gather(line_speakers, line_of_word), self.max_num_speakers),
        lambda: tf.zeros_like(line_of_word, tf.int32))

  def _features(self, text: tf.Tensor, genre: tf.Tensor,
                line_speakers: Optional[tf.Tensor]):
    """Model inputs of one text, plus each wordpiece's word byte span."""
    # Byte offsets into `text` itself, exact for uncased vocabs and for the
    # characters the tokenizer drops.
    pieces, starts, ends = self.tokenizer.tokenize_words_with_offsets(
        text[None], unit="BYTE")
    pieces, starts, ends = pieces[0], starts[0], ends[0]  # [words, (pieces)]
    ids = tf.cast(pieces.flat_values, tf.int32)
    word_of_piece = tf.cast(pieces.value_rowids(), tf.int32)
    index = tf.cast(tf.ragged.range(pieces.row_lengths()).flat_values,
                    tf.int32)
    length = tf.cast(tf.gather(pieces.row_lengths(), word_of_piece), tf.int32)
    word_start, word_end = index == 0, index == length - 1
    word_bytes = tf.stack([tf.gather(starts.flat_values, pieces.row_starts()),
                           tf.gather(ends.flat_values,
                                     pieces.row_limits() - 1)], 1)
    words = tf.strings.substr(text, word_bytes[:, 0],
                              word_bytes[:, 1] - word_bytes[:, 0])
    is_end = tf.reduce_any(tf.equal(words[:, None],
                                    tf.constant(SENTENCE_END_WORDS)), 1)
    gaps = tf.strings.substr(text, word_bytes[:-1, 1],
                             word_bytes[1:, 0] - word_bytes[:-1, 1])
    newline = tf.strings.regex_full_match(gaps, "(?s).*\n.*")
    starts_sentence = tf.concat([[False], is_end[:-1] | newline], 0)
    sentence_of_word = tf.cumsum(tf.cast(starts_sentence, tf.int32))
    sentence_map = tf.gather(sentence_of_word, word_of_piece)
    n = tf.size(ids)
    sentence_end = tf.concat([sentence_map[1:] != sentence_map[:-1],
                              [True]], 0)[:n]
    cuts = segment_ends(sentence_end, word_end, self.max_segment_len - 2)
    content = tf.RaggedTensor.from_row_limits(ids, cuts)
    rows = content.nrows()
    segments = tf.concat([
        tf.fill([rows, 1], self.vocab.cls_id),
        content, tf.fill([rows, 1], self.vocab.sep_id)], axis=1)
    features = {
        "input_word_ids": segments.to_tensor(
            0, shape=[None, self.max_segment_len])[None],
        "input_mask": tf.ones_like(segments).to_tensor(
            0, shape=[None, self.max_segment_len])[None],
        "sentence_map": sentence_map[None],
        "word_start": tf.cast(word_start, tf.int32)[None],
        "word_end": tf.cast(word_end, tf.int32)[None],
        "speaker_ids": tf.gather(self._speakers(text, word_bytes,
                                                line_speakers),
                                 word_of_piece)[None],
        "genre": tf.reshape(genre, [1]),
    }
    return features, tf.gather(word_bytes, word_of_piece)

  def _resolve(self, text: tf.Tensor, genre: tf.Tensor,
               line_speakers: Optional[tf.Tensor]) -> Dict[str, tf.Tensor]:
    features, piece_bytes = self._features(text, genre, line_speakers)
    out = self.model(features, training=False)
    best = tf.cast(tf.argmax(out["antecedent_scores"], axis=1), tf.int32) - 1
    singleton = out["top_span_mention_scores"] > 0
    if not self.predict_singletons:
      singleton = tf.zeros_like(singleton)
    clusters = link_clusters(best, out["top_antecedents"], singleton)
    keep = tf.where(clusters >= 0)[:, 0]
    byte_start = tf.gather(piece_bytes[:, 0],
                           tf.gather(out["top_span_starts"], keep))
    byte_end = tf.gather(piece_bytes[:, 1],
                         tf.gather(out["top_span_ends"], keep))
    _, char_bytes = tf.strings.unicode_decode_with_offsets(text, "UTF-8")
    char_bytes = tf.cast(char_bytes, byte_start.dtype)
    return {
        "mention_starts": tf.cast(tf.searchsorted(char_bytes, byte_start),
                                  tf.int32),
        "mention_ends": tf.cast(tf.searchsorted(char_bytes, byte_end),
                                tf.int32),
        "cluster_ids": tf.gather(clusters, keep),
        "mention_texts": tf.strings.substr(text, byte_start,
                                           byte_end - byte_start),
        "num_clusters": tf.reduce_max(tf.concat([clusters, [-1]], 0)) + 1,
    }

  def _checked(self, text: tf.Tensor) -> tf.Tensor:
    """The scalar text, after refusing a batch with a clear error."""
    one = tf.debugging.Assert(tf.equal(tf.rank(text), 0), [
        tf.strings.format("resolve takes one text (a scalar string), not a "
                          "batch of shape {}: send one request per text",
                          tf.shape(text))])
    with tf.control_dependencies([one]):
      return tf.reshape(text, [])

  def _within_limit(self, text: tf.Tensor) -> tf.Tensor:
    """The number of wordpieces, after refusing more than max_wordpieces."""
    n = tf.size(self.tokenizer.tokenize(text[None])[0].flat_values)
    if not self.max_wordpieces:
      return n
    fits = tf.debugging.Assert(n <= self.max_wordpieces, [
        tf.strings.format(
            "the text has {} wordpieces, more than the {} this model was "
            "exported for (max_wordpieces): split the text or re-export with "
            "a larger --coref_max_wordpieces (memory grows by about "
            f"{MB_PER_1000_WORDPIECES_BASE} MB per 1,000 "
            "wordpieces for a base-size model)", (n, self.max_wordpieces))])
    with tf.control_dependencies([fits]):
      return tf.identity(n)

  def _genre_id(self, genre: tf.Tensor) -> tf.Tensor:
    """The index of `genre` in ontonotes.GENRES ('' -> 0), after refusing
    any other string."""
    names = ", ".join(ontonotes.GENRES)
    one = tf.debugging.Assert(tf.equal(tf.rank(genre), 0), [
        tf.strings.format(f"genre takes one string (a scalar, one of {names} "
                          "or empty), not a batch of shape {}",
                          tf.shape(genre))])
    with tf.control_dependencies([one]):
      genre = tf.reshape(genre, [])
    known = tf.equal(genre, tf.constant(ontonotes.GENRES))
    # Echoed as valid UTF-8: clients decode the error message.
    shown = tf.strings.unicode_transcode(genre, "UTF-8", "UTF-8",
                                         errors="replace",
                                         replacement_char=0xFFFD)
    valid = tf.debugging.Assert(
        tf.reduce_any(known) | tf.equal(genre, ""), [tf.strings.join([
            "genre ", shown, f" is not one of {names}: pass one of them, or "
            f"an empty genre for {ontonotes.GENRES[0]} (the reference "
            "default)"])])
    with tf.control_dependencies([valid]):
      return tf.cast(tf.argmax(tf.cast(known, tf.int32)), tf.int32)

  def _one_per_line(self, text: tf.Tensor,
                    line_speakers: tf.Tensor) -> tf.Tensor:
    """line_speakers, after refusing a count other than 0 or the lines'."""
    lines = tf.size(tf.strings.split(text, "\n"))
    count = tf.size(line_speakers)
    fits = tf.debugging.Assert((count == 0) | (count == lines), [
        tf.strings.format(
            "line_speakers has {} strings but the text has {} lines: give "
            "one speaker per line (the text split at line breaks), or none",
            (count, lines))])
    with tf.control_dependencies([fits]):
      return tf.identity(line_speakers)

  def _utf8(self, text: tf.Tensor) -> tf.Tensor:
    return tf.strings.unicode_transcode(self._checked(text), "UTF-8", "UTF-8",
                                        errors="replace",
                                        replacement_char=0xFFFD)

  def _run(self, text: tf.Tensor, genre: tf.Tensor,
           line_speakers: Optional[tf.Tensor]) -> Dict[str, tf.Tensor]:
    empty = {"mention_starts": tf.zeros([0], tf.int32),
             "mention_ends": tf.zeros([0], tf.int32),
             "cluster_ids": tf.zeros([0], tf.int32),
             "mention_texts": tf.zeros([0], tf.string),
             "num_clusters": tf.constant(0)}
    has_words = self._within_limit(text) > 0
    return tf.cond(has_words,
                   lambda: self._resolve(text, genre, line_speakers),
                   lambda: empty)

  @tf.function(autograph=False,
               input_signature=[tf.TensorSpec(None, tf.string)])
  def resolve(self, text):
    """Mentions (character offsets, end exclusive) and their cluster ids."""
    return self._run(self._utf8(text), tf.constant(0), None)

  @tf.function(autograph=False, input_signature=_WITH_SPEAKERS)
  def resolve_with_speakers(self, text, genre, line_speakers):
    """resolve with a genre ('' for the default) and one speaker per line
    (or none)."""
    text = self._utf8(text)
    return self._run(text, self._genre_id(genre),
                     self._one_per_line(text, line_speakers))

  @tf.function(autograph=False, input_signature=_WITH_SPEAKERS)
  def resolve_scores(self, text, genre, line_speakers):
    """The features and raw model outputs (SCORE_KEYS) resolve_with_speakers
    computes for a text with at least one word."""
    text = self._utf8(text)
    features, _ = self._features(text, self._genre_id(genre),
                                 self._one_per_line(text, line_speakers))
    out = self.model(features, training=False)
    return dict(features, **{k: out[k] for k in SCORE_KEYS})

  @property
  def model(self):
    return self._model.value

  def signatures(self):
    """The signatures to save (call before tf.saved_model.save): tracing
    builds the model, whose variables the module then tracks."""
    resolve = self.resolve.get_concrete_function()
    with_speakers = self.resolve_with_speakers.get_concrete_function()
    self.resolve_scores.get_concrete_function()
    self.model_variables = list(self.model.variables)
    return {"resolve": resolve, "resolve_with_speakers": with_speakers,
            "serving_default": resolve}
