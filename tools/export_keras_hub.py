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

r"""Exports a SpanBERT encoder as a keras-hub preset (Keras 3 users).

From a trainer model_dir (or any checkpoint with an `encoder` item and its
params.yaml, e.g. one spanbert-convert-checkpoint wrote):

  spanbert-export-keras-hub --input=/tmp/spanbert_run \
    --output=/tmp/spanbert_keras_hub

then, in a Keras 3 program (any backend):

  backbone = keras_hub.models.BertBackbone.from_preset("/tmp/spanbert_keras_hub")
  classifier = keras_hub.models.BertTextClassifier.from_preset(
      "/tmp/spanbert_keras_hub", num_classes=2)

Needs keras-hub: pip install 'official-spanbert[keras3]'. See docs/keras3.md.
Progress goes to stderr; the last line on stdout says what was written where.
The export is official_spanbert.interop.keras_hub_preset.
"""

import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console

FLAGS = flags.FLAGS

flags.DEFINE_string("input", None,
                    "Our checkpoint prefix or directory (its latest "
                    "checkpoint), e.g. a trainer model_dir.")
flags.DEFINE_string("output", None, "The preset directory to write.")
flags.DEFINE_string("params_file", None,
                    "Params YAML with task.model.encoder (default: "
                    "params.yaml beside the checkpoint).")
flags.DEFINE_string("vocab_file", None,
                    "Vocab (default: vocab.txt beside the checkpoint, else "
                    "the params' task.train_data.vocab_file).")
flags.DEFINE_enum("lower_case", None, ["true", "false"],
                  "The vocab's tokenization (default: conversion.json beside "
                  "the checkpoint, else cased).")
flags.DEFINE_integer("sequence_length", None,
                     "Packed length of the preset's text-classifier "
                     "preprocessor (default: max_position_embeddings, at "
                     "most 512).")
flags.DEFINE_bool("overwrite", False, "Replace an earlier export.")

flags.mark_flags_as_required(["input", "output"])


def main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization
  from official_spanbert.interop import hf_files
  from official_spanbert.interop import keras_hub_preset
  from official_spanbert.interop import conversion_report
  # pylint: enable=g-import-not-at-top
  if console.unexpected_arguments("export_keras_hub", argv):
    return 2
  lower = None if FLAGS.lower_case is None else FLAGS.lower_case == "true"
  report = conversion_report.ConversionProgress("tf_to_keras_hub",
                                                summary=False)
  try:
    result = keras_hub_preset.export_keras_hub_preset(
        FLAGS.input, FLAGS.output, params_file=FLAGS.params_file,
        vocab_file=FLAGS.vocab_file, lower_case=lower,
        sequence_length=FLAGS.sequence_length, overwrite=FLAGS.overwrite,
        progress=report)
  except (hf_files.ConversionError, tokenization.VocabError,
          OSError) as e:
    sys.stderr.write(f"export_keras_hub: error: {e}\n")
    return 1
  if result.dropped:
    print(f"left out: {', '.join(result.dropped)}")
  print(result.summary())
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
