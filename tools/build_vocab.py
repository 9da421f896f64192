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

r"""Learns a WordPiece vocab from text corpora (tf.text's bert_vocab_from_dataset).

Input is BERT corpus format: one sentence or paragraph per line, a blank line
between documents. Output is one token per line: [PAD] [UNK] [CLS] [SEP]
[MASK], then --num_unused [unusedN] tokens, then the learned wordpieces. It
loads with official_spanbert.data.tokenization.load_vocab.

  spanbert-build-vocab \
    --input_file='corpus/*.txt' \
    --output_vocab=vocab.txt \
    --vocab_size=28996

The vocab is cased (like SpanBERT's) unless --do_lower_case; tokenize with
the same setting. The size is approximate (within about 5% below
--vocab_size when the corpus is large enough). Learning is pure Python and
grows with the number of distinct words: use --max_lines for a quick vocab.
"""

import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console
from official_spanbert.data.pretraining import corpus
from official_spanbert.data.pretraining import vocab_builder

FLAGS = flags.FLAGS

flags.DEFINE_multi_string("input_file", None,
                          "Corpus file glob(s); repeat or comma-separate.")
flags.DEFINE_string("output_vocab", None, "Vocab file to write.")
flags.DEFINE_integer("vocab_size", vocab_builder.DEFAULT_VOCAB_SIZE,
                     "Target vocab size, reserved tokens included "
                     "(approximate).")
flags.DEFINE_bool("do_lower_case", False,
                  "Learn an uncased vocab (default: cased, like SpanBERT).")
flags.DEFINE_integer("num_unused", vocab_builder.DEFAULT_NUM_UNUSED,
                     "Number of [unusedN] tokens after the special tokens.")
flags.DEFINE_integer("max_lines", None,
                     "Read at most this many non-blank lines (default: all).")
flags.DEFINE_integer("min_token_count", vocab_builder.DEFAULT_MIN_TOKEN_COUNT,
                     "Lowest frequency a learned wordpiece may have; on a "
                     "small corpus this limits the vocab size, lower it to "
                     "get closer to --vocab_size.")
flags.DEFINE_enum("on_decode_error", "strict", corpus.DECODE_ERROR_MODES,
                  "What to do with invalid UTF-8.")
flags.DEFINE_bool("progress", True, "Report the MB read on stderr (a line each "
                  "10%, one refreshed line on a terminal).")

flags.mark_flags_as_required(["input_file", "output_vocab"])


def main(argv):
  if console.unexpected_arguments("build_vocab", argv, "inputs go in --input_file"):
    return 2
  try:
    stats = vocab_builder.build_vocab(
        FLAGS.input_file, FLAGS.output_vocab, vocab_size=FLAGS.vocab_size,
        lower_case=FLAGS.do_lower_case, num_unused=FLAGS.num_unused,
        max_lines=FLAGS.max_lines, on_decode_error=FLAGS.on_decode_error,
        progress=FLAGS.progress, min_token_count=FLAGS.min_token_count)
  except (corpus.CorpusError, ValueError, OSError) as e:
    sys.stderr.write(f"build_vocab: error: {e}\n")
    return 1
  print(f"wrote {stats.vocab_size} tokens ({stats.reserved} reserved; "
        f"requested {stats.requested_vocab_size}) to {stats.output_vocab} "
        f"from {stats.lines} lines, {stats.documents} documents"
        f"{' (stopped at --max_lines)' if stats.truncated else ''} "
        f"in {stats.seconds:.1f} s")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
