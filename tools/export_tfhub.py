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

r"""Exports a SpanBERT checkpoint as TF Hub SavedModels for Keras users.

  spanbert-export-tfhub --model_dir=/tmp/spanbert --export_dir=/models/hub

reads <model_dir>/params.yaml and its latest checkpoint (or give --experiment,
--config_file, --params_override and --checkpoint_path) and writes
<export_dir>/encoder (the Hub text encoder, with the MLM and SBO heads as its
`mlm` and `sbo` sub-objects) and <export_dir>/preprocessor (the Hub BERT
preprocessing API: tokenize, bert_pack_inputs, and text -> inputs at
--seq_length). Its options are --serving_params (the fields of
tfhub_export.TFHubExport.Params), or the alias flags below. See
official_spanbert/serving/tfhub_export.py.
"""

import sys
import time

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.serving import serving_flags
from official_spanbert.utils import console

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None,
                    "Training dir (params.yaml + checkpoints).")
flags.DEFINE_string("experiment", "spanbert/pretraining",
                    "Experiment, when --model_dir has no params.yaml.")
flags.DEFINE_multi_string("config_file", [], "YAML config overrides.")
flags.DEFINE_string("params_override", "", "Params overrides.")
flags.DEFINE_string("checkpoint_path", None,
                    "Checkpoint (default: latest in --model_dir).")
flags.DEFINE_string("export_dir", None,
                    "Output dir; gets encoder/ and preprocessor/.")
serving_flags.define_serving_params()
# Aliases of serving params: flag -> (field, None: any export).
ALIASES = {"vocab_file": ("vocab_file", None),
           "do_lower_case": ("lower_case", None),
           "seq_length": ("seq_length", None)}
flags.DEFINE_string("vocab_file", None,
                    "Alias of --serving_params=vocab_file=... (default: "
                    "task.train_data.vocab_file).")
flags.DEFINE_bool("do_lower_case", None, "Alias of --serving_params="
                  "lower_case=...: uncased tokenization.")
flags.DEFINE_integer("seq_length", None, "Alias of --serving_params="
                     "seq_length=...: the preprocessor's default sequence "
                     "length (default: the export's).")
flags.mark_flag_as_required("export_dir")


def main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401
  from official_spanbert.serving import registry
  from official_spanbert.serving import tfhub_export
  # pylint: enable=g-import-not-at-top
  del argv
  start = time.time()
  try:
    tfhub_export.output_dirs(FLAGS.export_dir)  # before the slow part
    to_export = registry.load_run(
        FLAGS.model_dir, FLAGS.experiment, FLAGS.config_file,
        FLAGS.params_override, FLAGS.checkpoint_path)
    values = serving_flags.serving_params(
        FLAGS.serving_params,
        {name: FLAGS[name].value for name in ALIASES if FLAGS[name].present},
        ALIASES, tfhub_export.TFHubExport.SIGNATURES)
    dirs = registry.export(to_export, values, FLAGS.export_dir,
                           module_cls=tfhub_export.TFHubExport)
  except (ValueError, OSError) as e:
    sys.stderr.write(f"export_tfhub: error: {e}\n")
    return 1
  print(f"exported the TF Hub encoder to {dirs['encoder']} and the "
        f"preprocessor to {dirs['preprocessor']} in {time.time() - start:.0f} s")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
