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

r"""Creates SpanBERT (or BERT-baseline) pretraining TFRecords from text.

Input is BERT corpus format: one sentence or paragraph per line, a blank line
between documents. Output is `<output_prefix>-NNNNN-of-NNNNN.tfrecord` shards
of unmasked blocks plus `<output_prefix>.stats.json` and
`<output_prefix>.counts.json` (wordpiece counts, for random replacement
tokens). --tag_spans=entities,noun_phrases also tags named entities and noun
phrases with spaCy (pip install 'official-spanbert[linguistic]'), for the
named_entity / noun_phrase masking schemes. Shards of an earlier
run at the same prefix with another --num_shards are removed once the new ones
are in place; a failed or terminated (SIGTERM) run leaves no shard behind.

  spanbert-create-pretraining-data \
    --input_file='corpus/*.txt' \
    --vocab_file=vocab.txt \
    --output_prefix=/tmp/records/train \
    --max_seq_length=512 --num_shards=8 \
    --tag_spans=entities,noun_phrases

With --runner (e.g. --runner=DirectRunner --direct_num_workers=2) the
single-segment records are written by an Apache Beam pipeline instead
(official_spanbert/data/pretraining/records/beam_records.py; pip install
'official-spanbert[beam]'); any other Beam pipeline option (--project,
--region, --temp_location, --flink_master, ...) is passed through, so
--runner=DataflowRunner, FlinkRunner or SparkRunner work as usual, given
corpus, vocab and output paths that every worker sees as local files (the
corpus reader opens local paths).
"""

import signal
import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console
from official_spanbert.utils import cpu_features
from official_spanbert.data.pretraining.records import beam_records
from official_spanbert.data.pretraining import corpus
from official_spanbert.data.pretraining.records import pretraining_records
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data import tokenization

FLAGS = flags.FLAGS

flags.DEFINE_multi_string("input_file", None,
                          "Corpus file glob(s); repeat or comma-separate.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab file.")
flags.DEFINE_string("output_prefix", None, "Prefix of the output shards.")
flags.DEFINE_bool("do_lower_case", False, "Uncased tokenization.")
flags.DEFINE_integer("max_seq_length", 512,
                     "Sequence length incl. [CLS]/[SEP].")
flags.DEFINE_integer("num_shards", 1, "Number of output shards.")
flags.DEFINE_enum("mode", "single", record_format.MODES,
                  "single: SpanBERT blocks; nsp: BERT segment pairs + label.")
flags.DEFINE_integer("seed", 12345, "Random seed (shards, NSP sampling).")
flags.DEFINE_enum("on_decode_error", "strict", corpus.DECODE_ERROR_MODES,
                  "What to do with invalid UTF-8.")
flags.DEFINE_string("stats_file", None,
                    "Stats JSON (default <output_prefix>.stats.json).")
flags.DEFINE_bool("progress", True, "Report the MB read on stderr (a line each "
                  "10%, one refreshed line on a terminal).")
flags.DEFINE_list("tag_spans", [],
                  "Span kinds to tag with spaCy and store per block: "
                  "entities, noun_phrases (single mode; needs the "
                  "'linguistic' extra).")
flags.DEFINE_integer("tag_processes", 2,
                     "spaCy worker processes for --tag_spans.")

flags.DEFINE_integer(
    "nsp_buffer_documents", pretraining_records.NSP_BUFFER_DOCUMENTS,
    "--mode=nsp: documents held in memory, from which the random next "
    "segments are drawn; the tool holds these, not the whole corpus.")
flags.DEFINE_string("runner", None,
                    "Apache Beam runner (DirectRunner, DataflowRunner, ...) "
                    "for --mode=single; unset: one process, no Beam. Other "
                    "Beam pipeline options are passed through.")
flags.DEFINE_integer("direct_num_workers", cpu_features.usable_cores(),
                     "DirectRunner: parallel workers (default: the cores this "
                     "process may use, after taskset and a CPU quota).")
flags.DEFINE_enum("direct_running_mode", "multi_processing",
                  ["in_memory", "multi_threading", "multi_processing"],
                  "DirectRunner: how its workers run.")

flags.mark_flags_as_required(["input_file", "vocab_file", "output_prefix"])


def _create(pipeline_args):
  """Runs the single-process tool, or the Beam pipeline with --runner."""
  if FLAGS.runner is None:
    if pipeline_args:
      raise ValueError(f"unknown flag(s) {' '.join(pipeline_args)} (Beam "
                       "pipeline options need --runner)")
    return pretraining_records.create_pretraining_records(
        FLAGS.input_file, FLAGS.vocab_file, FLAGS.output_prefix,
        lower_case=FLAGS.do_lower_case, max_seq_length=FLAGS.max_seq_length,
        num_shards=FLAGS.num_shards, mode=FLAGS.mode, seed=FLAGS.seed,
        on_decode_error=FLAGS.on_decode_error, progress=FLAGS.progress,
        stats_file=FLAGS.stats_file, tag_spans=FLAGS.tag_spans,
        tag_processes=FLAGS.tag_processes,
        nsp_buffer_documents=FLAGS.nsp_buffer_documents)
  if FLAGS.mode != "single" or FLAGS.tag_spans:
    raise ValueError("--runner writes --mode=single records without "
                     "--tag_spans; run NSP records and span tagging without "
                     "--runner")
  pipeline_args = [f"--runner={FLAGS.runner}"] + list(pipeline_args)
  if FLAGS.runner in ("DirectRunner", "direct"):
    pipeline_args += [f"--direct_num_workers={FLAGS.direct_num_workers}",
                      f"--direct_running_mode={FLAGS.direct_running_mode}"]
  return beam_records.create_pretraining_records(
      FLAGS.input_file, FLAGS.vocab_file, FLAGS.output_prefix,
      pipeline_args=pipeline_args, lower_case=FLAGS.do_lower_case,
      max_seq_length=FLAGS.max_seq_length, num_shards=FLAGS.num_shards,
      on_decode_error=FLAGS.on_decode_error, stats_file=FLAGS.stats_file)


def main(argv):
  try:
    stats = _create(argv[1:])
  except (corpus.CorpusError, tokenization.VocabError, ValueError) as e:
    sys.stderr.write(f"create_pretraining_data: error: {e}\n")
    return 1
  except pretraining_records.TerminatedError as e:
    sys.stderr.write(f"create_pretraining_data: error: {e}\n")
    return 128 + signal.SIGTERM
  print(f"wrote {stats.blocks} blocks ({stats.tokens} tokens) from "
        f"{stats.documents} documents to {stats.shards} shard(s) at "
        f"{FLAGS.output_prefix}-*; {stats.mb_per_second} MB/s, "
        f"{stats.tokens_per_second:.0f} tokens/s, padding ratio "
        f"{stats.padding_ratio}")
  if stats.tag_spans:
    cut = stats.tagged_spans_cut_by_block_ends
    spans = ", ".join(f"{stats.tagged_spans[k]} {k} ({cut[k]} cut by block "
                      "ends, dropped)" for k in stats.tag_spans)
    print(f"tagged {spans} in {stats.tagged_words} words: "
          f"{stats.words_per_second:.0f} words/s")
  return 0


def run():
  # Flags this tool does not know are left for Beam's pipeline options.
  console.run(main, flags_parser=lambda argv: FLAGS(argv, known_only=True))


if __name__ == "__main__":
  run()
