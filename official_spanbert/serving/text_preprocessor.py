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

"""Text -> encoder inputs inside the graph (for SavedModels and TF Serving)."""

from typing import Dict, Optional

import tensorflow as tf
import tensorflow_text as tf_text

from official_spanbert.data import tokenization

MASK_MARKER = "[MASK]"

# The packed length of the pretraining and TF Hub exports' preprocessing
# (longer text is truncated).
SEQ_LENGTH = 128


class TextPreprocessor(tf.Module):
  """Tokenizes, truncates and packs text like BERT's preprocessing model.

  Invalid UTF-8 bytes become U+FFFD, empty or whitespace-only text becomes
  `[CLS] [SEP]`, and text longer than seq_length is truncated, never an
  error. The literal marker `[MASK]` in the text becomes the [MASK] token.

  Args:
    vocab_file: WordPiece vocab.
    lower_case: uncased tokenization.
    seq_length: packed length, [CLS]/[SEP] included.

  Example:
    preprocessor = TextPreprocessor(vocab_file, seq_length=16)
    features = preprocessor(tf.constant(["The cat sat on the [MASK]."]))
    assert features["input_word_ids"].shape == (1, 16)
    preprocessor.detokenize(features["input_word_ids"], features["input_mask"])
  """

  def __init__(self, vocab_file: str, lower_case: bool = False,
               seq_length: int = SEQ_LENGTH):
    super().__init__(name="text_preprocessor")
    self.tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
    self.vocab = self.tokenizer.vocab
    self.seq_length = seq_length
    self.vocab_tokens = tf.constant(self.vocab.tokens)

  # One graph for every signature that tokenizes: a SavedModel with 4
  # signatures (2 of them tokenize two texts) traced it 14 times, about half
  # of an export's time.
  @tf.function(autograph=False,
               input_signature=[tf.TensorSpec(None, tf.string)])
  def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """[batch] strings -> [batch, (tokens)] int64 ids, [MASK] markers kept."""
    text = tf.strings.unicode_transcode(
        tf.reshape(text, [-1]), "UTF-8", "UTF-8", errors="replace",
        replacement_char=0xFFFD)
    pieces = tf.strings.split(text, sep=MASK_MARKER)  # [batch, (k + 1)]
    ids, _ = self.tokenizer.tokenize(pieces.flat_values)  # [pieces, (toks)]
    # Every piece but the last of its text is followed by one [MASK].
    index_in_row = (tf.range(tf.size(pieces.flat_values, tf.int64)) -
                    tf.gather(pieces.row_starts(), pieces.value_rowids()))
    followed = index_in_row < tf.gather(pieces.row_lengths() - 1,
                                        pieces.value_rowids())
    masks = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(tf.cast(followed, tf.int64))],
                tf.constant(self.vocab.mask_id, tf.int64)),
        tf.cast(followed, tf.int64))
    ids = tf.concat([ids, masks], axis=1)
    return tf.RaggedTensor.from_row_splits(ids, pieces.row_splits).merge_dims(
        1, 2)

  # One graph per number of segments.
  @tf.function(autograph=False, reduce_retracing=True)
  def pack(self, first: tf.RaggedTensor,
           second: Optional[tf.RaggedTensor] = None) -> Dict[str, tf.Tensor]:
    """[CLS] A [SEP] (B [SEP]) padded to seq_length; int32 features.

    Raises InvalidArgumentError (in the graph: for that request only) when
    `first` and `second` have different batch sizes.
    """
    segments = [first]
    if second is not None:
      # The trimmer and combine_segments read out of bounds (or abort the
      # process) on batches of different sizes: fail the request first.
      check = tf.debugging.assert_equal(
          first.nrows(), second.nrows(),
          message="text and text_pair must have the same batch size")
      with tf.control_dependencies([check]):
        segments = tf.nest.map_structure(tf.identity, [first, second],
                                         expand_composites=True)
    budget = self.seq_length - 1 - len(segments)
    segments = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
    ids, type_ids = tf_text.combine_segments(
        segments, start_of_sequence_id=self.vocab.cls_id,
        end_of_segment_id=self.vocab.sep_id)
    word_ids, mask = tf_text.pad_model_inputs(ids, self.seq_length,
                                              pad_value=self.vocab.pad_id)
    type_ids, _ = tf_text.pad_model_inputs(type_ids, self.seq_length)
    return {"input_word_ids": tf.cast(word_ids, tf.int32),
            "input_mask": tf.cast(mask, tf.int32),
            "input_type_ids": tf.cast(type_ids, tf.int32)}

  def __call__(self, text: tf.Tensor,
               text_pair: Optional[tf.Tensor] = None) -> Dict[str, tf.Tensor]:
    first = self.tokenize(text)
    second = None if text_pair is None else self.tokenize(text_pair)
    return self.pack(first, second)

  def detokenize(self, ids: tf.Tensor, input_mask: tf.Tensor) -> tf.Tensor:
    """Joins wordpieces back into text, dropping [CLS]/[SEP]/[PAD]."""
    keep = ((tf.cast(input_mask, tf.bool)) &
            (ids != self.vocab.cls_id) & (ids != self.vocab.sep_id))
    tokens = tf.ragged.boolean_mask(tf.gather(self.vocab_tokens, ids), keep)
    text = tf.strings.reduce_join(tokens, axis=1, separator=" ")
    return tf.strings.regex_replace(text, " ##", "")
