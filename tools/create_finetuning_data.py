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

r"""Creates fine-tuning TFRecords (GLUE classification, TACRED) from raw data.

Writes `train.tf_record` / `eval.tf_record` (Model Garden's sentence
prediction layout) and `meta_data.json` (labels, num_labels, sizes) to
--output_dir. Input is validated first: a bad line or record stops with one
error naming the file and line (or record id) and nothing is written.

  spanbert-create-finetuning-data --task=rte \
    --train_file=glue/RTE/train.tsv --eval_file=glue/RTE/dev.tsv \
    --vocab_file=vocab.txt --output_dir=/tmp/rte --max_seq_length=128

Tasks: cola (raw CoLA tsv), rte, sst2 (GLUE tsv), tacred (TACRED JSON, such
as SemEval-2010 Task 8's; entity markers of --entity_mode from [unusedN]),
squad_v1 / squad_v2 (SQuAD JSON: training
records with answer positions for Model Garden's QA loader, from
--train_file only; evaluation reads the JSON itself), coref (CoNLL-2012
files, globs or LitBank split lists: one record per document in independent
segments of --max_segment_len wordpieces).
"""

import json
import os
import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console
from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import classification_records
from official_spanbert.data.finetuning import coref
from official_spanbert.data.finetuning import squad
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import conll2012

FLAGS = flags.FLAGS

SQUAD_TASKS = ("squad_v1", "squad_v2")
COREF_TASK = "coref"

flags.DEFINE_enum("task", None,
                  list(classification.TASKS) + list(SQUAD_TASKS) +
                  [COREF_TASK],
                  "Which data to read and how to encode it.")
flags.DEFINE_string("train_file", None, "Training input file.")
flags.DEFINE_string("eval_file", None, "Evaluation input file.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab file.")
flags.DEFINE_string("output_dir", None, "Where the records and meta go.")
flags.DEFINE_bool("do_lower_case", False, "Uncased tokenization.")
flags.DEFINE_integer("max_seq_length", 128,
                     "Sequence length incl. [CLS]/[SEP].")
flags.DEFINE_integer("max_train_examples", None,
                     "Keep only the first N training examples.")
flags.DEFINE_integer("max_eval_examples", None,
                     "Keep only the first N evaluation examples.")

flags.DEFINE_enum("entity_mode", "mask", ["mask", "marker", "typed_marker"],
                  "tacred: mask (SpanBERT's: each entity's words replaced by "
                  "[SUBJ-type] / [OBJ-type]), marker (words kept between "
                  "[E1] [/E1], [E2] [/E2]) or typed_marker (words kept "
                  "between [SUBJ-type] [/SUBJ-type], [OBJ-type] [/OBJ-type]).")
flags.DEFINE_integer("doc_stride", 128, "SQuAD: passage window offset.")
flags.DEFINE_integer("max_query_length", 64,
                     "SQuAD: question tokens kept (longer ones truncated).")

flags.DEFINE_integer("max_segment_len", 384,
                     "coref: wordpieces per segment incl. [CLS]/[SEP].")
flags.DEFINE_integer("max_num_speakers", 0,
                     "coref: 0: every speaker its own id; > 0: the "
                     "reference's speaker ids capped at this many (20).")

flags.mark_flags_as_required(["task", "vocab_file", "output_dir"])


def create_classification_data() -> str:
  """GLUE / TACRED records; returns a summary line."""
  meta = classification_records.create_finetuning_data(
      FLAGS.task, FLAGS.vocab_file, FLAGS.output_dir,
      train_file=FLAGS.train_file, eval_file=FLAGS.eval_file,
      lower_case=FLAGS.do_lower_case, max_seq_length=FLAGS.max_seq_length,
      max_train_examples=FLAGS.max_train_examples,
      max_eval_examples=FLAGS.max_eval_examples,
      entity_mode=FLAGS.entity_mode)
  sizes = ", ".join(f"{meta[f'{s}_data_size']} {s} "
                    f"({meta[f'{s}_truncated']} truncated)"
                    for s in ("train", "eval") if f"{s}_data_size" in meta)
  return (f"wrote {sizes} examples of {FLAGS.task} to {FLAGS.output_dir}; "
          f"num_labels {meta['num_labels']}, metric {meta['metric_type']}")


def create_squad_data() -> str:
  """SQuAD training records; returns a summary line."""
  if not FLAGS.train_file:
    raise classification.DataError(
        "--train_file is required for SQuAD (evaluation reads the JSON "
        "directly: task.validation_data.input_path)")
  tokenizer = tokenization.WordpieceTokenizer(FLAGS.vocab_file,
                                              lower_case=FLAGS.do_lower_case)
  output = os.path.join(FLAGS.output_dir, "train.tf_record")
  examples, features = squad.prepare(
      FLAGS.train_file, tokenizer, output, is_training=True,
      version_2_with_negative=FLAGS.task == "squad_v2",
      max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
      max_query_length=FLAGS.max_query_length,
      max_examples=FLAGS.max_train_examples)
  stats = squad.feature_stats(examples, features)
  stats.update(task=FLAGS.task, train_file=FLAGS.train_file,
               max_seq_length=FLAGS.max_seq_length,
               doc_stride=FLAGS.doc_stride,
               max_query_length=FLAGS.max_query_length,
               do_lower_case=FLAGS.do_lower_case)
  with open(os.path.join(FLAGS.output_dir, "meta_data.json"), "w",
            encoding="utf-8") as f:
    json.dump(stats, f, indent=2)
  return (f"wrote {stats['features']} training features of "
          f"{stats['examples']} questions to {output}")


def create_coref_data() -> str:
  """Coreference records; returns a summary line."""
  meta = coref.create_finetuning_data(
      FLAGS.vocab_file, FLAGS.output_dir, train_file=FLAGS.train_file,
      eval_file=FLAGS.eval_file, lower_case=FLAGS.do_lower_case,
      max_segment_len=FLAGS.max_segment_len,
      max_num_speakers=FLAGS.max_num_speakers)
  sizes = ", ".join(f"{meta[s]['documents']} {s} documents "
                    f"({meta[s]['segments']} segments, "
                    f"{meta[s]['mentions']} mentions)"
                    for s in ("train", "eval") if s in meta)
  return f"wrote {sizes} to {FLAGS.output_dir}"


# --task value -> the function that handles it.
TASK_FUNCTIONS = {task: create_classification_data
                  for task in classification.TASKS}
TASK_FUNCTIONS.update({task: create_squad_data for task in SQUAD_TASKS})
TASK_FUNCTIONS[COREF_TASK] = create_coref_data


def main(argv):
  if console.unexpected_arguments("create_finetuning_data", argv):
    return 2
  try:
    summary = TASK_FUNCTIONS[FLAGS.task]()
  except (classification.DataError, squad.SquadFormatError,
          conll2012.ConllError, tokenization.VocabError) as e:
    sys.stderr.write(f"create_finetuning_data: error: {e}\n")
    return 1
  print(summary)
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
