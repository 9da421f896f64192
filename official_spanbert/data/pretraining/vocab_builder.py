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

"""Learns a WordPiece vocabulary from text corpora with tf.text.

Words are split as `tokenization.WordpieceTokenizer` splits them, then
tf.text's `bert_vocab_from_dataset` learns the wordpieces; the vocab starts
with the reserved and [unusedN] tokens. Layout, size and speed:
docs/pretraining.md, "Vocabulary".
"""

import contextlib
import dataclasses
import functools
import os
import time
from typing import List, Optional, Sequence

from absl import logging
import numpy as np
import tensorflow as tf
from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset as bvfd
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner_lib

from official_spanbert.data.pretraining import corpus as corpus_lib
from official_spanbert.data import tokenization
from official_spanbert.utils import atomic_io
from official_spanbert.utils import progress as progress_lib

# The order the reserved tokens take at the start of the vocab.
SPECIAL_TOKENS = tokenization.REQUIRED_SPECIAL_TOKENS  # [PAD] [UNK] ... [MASK]
DEFAULT_VOCAB_SIZE = 28996  # bert-base-cased, the vocab SpanBERT uses
DEFAULT_NUM_UNUSED = 100
DEFAULT_MIN_TOKEN_COUNT = 10  # tf.text's default lower_thresh
_BATCH_LINES = 1024


def reserved_tokens(num_unused: int = DEFAULT_NUM_UNUSED) -> List[str]:
  """[PAD], [UNK], [CLS], [SEP], [MASK], then [unused0] .. [unusedN-1]."""
  if num_unused < 0:
    raise ValueError(f"num_unused must be >= 0, got {num_unused}")
  return list(SPECIAL_TOKENS) + [f"[unused{i}]" for i in range(num_unused)]


@dataclasses.dataclass
class VocabStats:
  """What build_vocab did.

  Attributes:
    output_vocab: the vocab file written.
    vocab_size: tokens in it, reserved ones included.
    requested_vocab_size: the target size.
    reserved: reserved tokens at its start.
    dropped_tokens: learned tokens left out because a vocab file line cannot
      hold them (empty, or containing whitespace).
    files, bytes, lines, documents, replaced_lines: what reading saw.
    truncated: reading stopped at max_lines.
    seconds: wall time.
  """
  output_vocab: str = ""
  vocab_size: int = 0
  requested_vocab_size: int = 0
  reserved: int = 0
  dropped_tokens: int = 0
  files: int = 0
  bytes: int = 0
  lines: int = 0
  documents: int = 0
  replaced_lines: int = 0
  truncated: bool = False
  seconds: float = 0.0


def _writable_token(token: str) -> bool:
  # tf.text's cased basic tokenizer keeps e.g. U+00A0 inside words; a vocab
  # line with whitespace would not survive readers that strip lines (BERT's).
  return bool(token) and not any(c.isspace() for c in token)


def _is_char_token(token: str) -> bool:
  return len(token) == 1 or (len(token) == 3 and token.startswith("##"))


def _trim(vocab: List[str], num_reserved: int, vocab_size: int) -> List[str]:
  """Cuts a vocab to vocab_size, dropping the rarest multi-character pieces.

  The learner's binary search can end above its target (when it runs out of
  thresholds to try). Its learned tokens are sorted by count, so the rarest
  come last; single characters and their ## forms are kept so every word can
  still be spelled.
  """
  excess = len(vocab) - vocab_size
  drop = set()
  for i in range(len(vocab) - 1, num_reserved - 1, -1):
    if excess == len(drop):
      break
    if not _is_char_token(vocab[i]):
      drop.add(i)
  if len(drop) < excess:
    raise ValueError(
        f"vocab_size={vocab_size} is too small: the reserved tokens and the "
        f"corpus's characters alone need {len(vocab) - len(drop)}")
  logging.info("trimmed the %d rarest learned wordpieces to stay within "
               "vocab_size=%d", excess, vocab_size)
  return [t for i, t in enumerate(vocab) if i not in drop]


@contextlib.contextmanager
def _log_learning_steps(vocab_size: int):
  """Logs each frequency threshold tf.text's learner tries (its slow part).

  bert_vocab_from_dataset has no progress hook; this wraps the learner's
  per-threshold function for the duration of the call, and does nothing if
  the library no longer has it.
  """
  original = getattr(learner_lib, "learn_with_thresh", None)
  if original is None:
    yield
    return
  step = [0]

  def logged(word_counts, thresh, params):
    step[0] += 1
    t = time.time()
    vocab = original(word_counts, thresh, params)
    logging.info("learning step %d: %d distinct words, min count %d -> %d "
                 "tokens (target %d) in %.1f s", step[0], len(word_counts),
                 thresh, len(vocab), vocab_size, time.time() - t)
    return vocab

  learner_lib.learn_with_thresh = logged
  try:
    yield
  finally:
    learner_lib.learn_with_thresh = original


def build_vocab(input_patterns: Sequence[str], output_vocab: str, *,
                vocab_size: int = DEFAULT_VOCAB_SIZE,
                lower_case: bool = False,
                num_unused: int = DEFAULT_NUM_UNUSED,
                max_lines: Optional[int] = None,
                on_decode_error: str = "strict",
                progress: bool = True,
                min_token_count: int = DEFAULT_MIN_TOKEN_COUNT,
                learn_params: Optional[dict] = None) -> VocabStats:
  """Learns a WordPiece vocab from corpus files and writes it.

  Args:
    input_patterns: globs (each may be comma-separated) of corpus files.
    output_vocab: the vocab file to write; written under a temporary name and
      renamed only on success, so a failure leaves no (partial) file.
    vocab_size: target and maximum size, reserved tokens included (the result
      can be smaller, see the module docstring).
    lower_case: learn an uncased vocab (lower-cased, accents stripped); the
      default, False, learns a cased one like SpanBERT's. Tokenize with the
      same setting.
    num_unused: number of [unusedN] tokens after the special tokens.
    max_lines: read at most this many non-blank lines (None: all).
    on_decode_error: "strict" or "replace" (see corpus.read_documents).
    progress: report the reading's progress on stderr (utils/progress.py).
    min_token_count: the lowest frequency threshold the learner may try
      (tf.text's lower_thresh): a wordpiece seen fewer times is not learned.
      On a small corpus this, not vocab_size, limits the vocab; lower it to
      get closer to vocab_size there.
    learn_params: extra keyword arguments of tf.text's
      wordpiece_tokenizer_learner_lib.learn.

  Returns:
    VocabStats.

  Raises:
    corpus.CorpusError: bad input (missing glob, empty file, invalid UTF-8,
      no words).
    ValueError: bad arguments.
    OSError: the output cannot be written.
  """
  start = time.time()
  reserved = reserved_tokens(num_unused)
  _check_arguments(output_vocab, vocab_size, len(reserved), min_token_count,
                   max_lines)
  files = corpus_lib.expand_inputs(input_patterns)
  # Before the (long) learning, so that an unwritable path fails at once.
  os.makedirs(os.path.dirname(os.path.abspath(output_vocab)), exist_ok=True)
  total_bytes = sum(os.path.getsize(f) for f in files)
  logging.info("reading %d file(s), %.1f MB%s", len(files), total_bytes / 1e6,
               f", at most {max_lines} lines" if max_lines else "")

  counters = corpus_lib.CorpusCounters()
  stats = VocabStats(output_vocab=output_vocab,
                     requested_vocab_size=vocab_size, reserved=len(reserved))
  failure = []
  report = progress_lib.Progress("count words", enabled=progress,
                                 summary=False)
  report.start(progress_lib.megabytes(total_bytes), "MB read")
  dataset = tf.data.Dataset.from_generator(
      functools.partial(_line_batches, files, on_decode_error, max_lines,
                        counters, stats, report, failure),
      output_signature=tf.TensorSpec([None], tf.string))
  learn_params = dict(learn_params or {})
  learn_params.setdefault("lower_thresh", min_token_count)
  vocab = _learn(dataset, files, failure, report, vocab_size=vocab_size,
                 reserved=reserved, lower_case=lower_case,
                 learn_params=learn_params)

  stats.files = counters.files
  stats.bytes = counters.bytes
  stats.documents = counters.documents
  stats.replaced_lines = counters.replaced_lines
  logging.info("learned %d tokens from %d lines (%.1f MB) in %.1f s",
               len(vocab), stats.lines, stats.bytes / 1e6,
               time.time() - start)
  kept = _keep_tokens(vocab, reserved, vocab_size, stats,
                      learn_params["lower_thresh"])
  _write_vocab(output_vocab, kept)
  stats.seconds = round(time.time() - start, 3)
  return stats


def _check_arguments(output_vocab, vocab_size, num_reserved, min_token_count,
                     max_lines):
  """Raises ValueError on arguments build_vocab cannot work with."""
  if vocab_size <= num_reserved:
    raise ValueError(f"vocab_size={vocab_size} leaves no room for wordpieces "
                     f"after the {num_reserved} reserved tokens; raise "
                     "vocab_size or lower num_unused")
  if min_token_count < 1:
    raise ValueError(f"min_token_count must be >= 1, got {min_token_count}")
  if max_lines is not None and max_lines < 1:
    raise ValueError(f"max_lines must be >= 1, got {max_lines}")
  if not output_vocab:
    raise ValueError("no output vocab path given")
  if os.path.isdir(output_vocab):
    raise ValueError(f"output vocab {output_vocab} is a directory")


def _line_batches(files, on_decode_error, max_lines, counters, stats, report,
                  failure):
  """Yields the corpus lines in batches; records a read error in `failure`."""
  batch, read = [], 0
  try:
    for doc in corpus_lib.read_documents(files, on_decode_error, counters):
      for line in doc.lines:
        if max_lines is not None and read >= max_lines:
          stats.truncated = True
          break
        batch.append(line)
        read += 1
        if len(batch) >= _BATCH_LINES:
          yield np.array(batch, dtype=object)
          batch = []
          report.advance_to(counters.bytes // progress_lib.MB)
      if stats.truncated:
        break
  except Exception as e:  # pylint: disable=broad-except
    failure.append(e)  # re-raised by _learn, outside tf.data
    raise
  if batch:
    yield np.array(batch, dtype=object)
  stats.lines = read
  # All of it, or the MB read up to max_lines.
  report.advance_to(progress_lib.megabytes(counters.bytes)
                    if stats.truncated else report.total)
  report.close_line()
  logging.info("counted the words of %d lines (%.1f MB); learning "
               "wordpieces (pure Python, one pass per frequency threshold "
               "tried)", read, counters.bytes / 1e6)


def _learn(dataset, files, failure, report, *, vocab_size, reserved, lower_case,
           learn_params):
  """Runs tf.text's learner; re-raises a read error, names an empty corpus."""
  try:
    try:
      with _log_learning_steps(vocab_size):
        return bvfd.bert_vocab_from_dataset(
            dataset, vocab_size=vocab_size, reserved_tokens=reserved,
            bert_tokenizer_params={"lower_case": lower_case},
            learn_params=learn_params)
    except (tf.errors.OpError, StopIteration, ValueError) as e:
      if failure:
        raise failure[0] from None
      if isinstance(e, StopIteration) or "empty sequence" in str(e):
        # count_words/learn found no word at all.
        raise corpus_lib.CorpusError(
            f"inputs {', '.join(files)} contain no words to learn a vocab "
            "from") from None
      raise
  finally:
    report.close_line()


def _keep_tokens(vocab, reserved, vocab_size, stats, lower_thresh):
  """The learned tokens that can be written, at most vocab_size of them."""
  if list(vocab[:len(reserved)]) != reserved:
    raise AssertionError("bert_vocab_from_dataset did not put the reserved "
                         "tokens first")
  kept = [t for t in vocab if _writable_token(t)]
  stats.dropped_tokens = len(vocab) - len(kept)
  if stats.dropped_tokens:
    logging.warning("dropped %d learned token(s) containing whitespace",
                    stats.dropped_tokens)
  if len(kept) > vocab_size:
    kept = _trim(kept, len(reserved), vocab_size)
  stats.vocab_size = len(kept)
  if stats.vocab_size < 0.95 * vocab_size:
    logging.warning(
        "the vocab has %d tokens, fewer than the %d requested: the corpus "
        "has too few wordpieces seen at least %d times (read more text, or "
        "lower min_token_count)", stats.vocab_size, vocab_size, lower_thresh)
  return kept


def _write_vocab(output_vocab, tokens):
  """Writes the vocab file atomically and checks that it loads."""
  with atomic_io.writing(output_vocab) as tmp:
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
      for token in tokens:
        f.write(token + "\n")
    tokenization.load_vocab(tmp)  # the contract: it must load
