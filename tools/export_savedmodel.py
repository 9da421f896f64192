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

r"""Exports a SpanBERT checkpoint as SavedModels for TF Serving.

  spanbert-export-savedmodel --model_dir=/tmp/spanbert \
    --export_base=/models/spanbert

reads <model_dir>/params.yaml and its latest checkpoint (or give --experiment,
--config_file, --params_override and --checkpoint_path, e.g. for a converted
checkpoint) and writes <export_base>/<version>/ (signatures serving_default,
encode_pair, encode_ids, fill_spans; warmup requests in assets.extra/) and the
preprocessing model at <export_base>_preprocessing/<version>/. Without
--version both get the next version free in both bases; concurrent exports to
one base get different versions, and a --version that exists or that another
export is writing is a one-line error.

With --experiment=spanbert/coref (a coreference model dir) it writes the
coreference model instead: <export_base>/<version>/ with the `resolve`
signature (raw text -> mentions as character offsets and cluster ids) and
warmup requests; tokenizer and segment length come from the params.
"""

import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import coref_export
from official_spanbert.serving import export as export_lib
from official_spanbert.tasks import coreference

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None,
                    "Training dir (params.yaml + checkpoints).")
flags.DEFINE_string("experiment", "spanbert/pretraining",
                    "Experiment, when --model_dir has no params.yaml.")
flags.DEFINE_multi_string("config_file", [], "YAML config overrides.")
flags.DEFINE_string("params_override", "", "Params overrides.")
flags.DEFINE_string("checkpoint_path", None,
                    "Checkpoint (default: latest in --model_dir).")
flags.DEFINE_string("export_base", None, "TF Serving model base path.")
flags.DEFINE_string("preprocessing_export_base", None,
                    "Base path of the preprocessing model.")
flags.DEFINE_string("vocab_file", None,
                    "Vocab (default: task.train_data.vocab_file).")
flags.DEFINE_bool("do_lower_case", False, "Uncased tokenization.")
flags.DEFINE_integer("seq_length", 128, "Serving sequence length.")
flags.DEFINE_integer("top_k", 5, "Candidates per [MASK].")
flags.DEFINE_integer("max_masks", 20, "[MASK] tokens predicted per text.")
flags.DEFINE_integer("coref_max_wordpieces", 32768,
                     "Coreference: resolve refuses longer texts (0: no "
                     "limit).")
flags.DEFINE_integer("version", None,
                     "Version of both models (default: the next free one).")
flags.mark_flag_as_required("export_base")


def main(argv):
  del argv
  try:
    params = export_lib.load_params(FLAGS.experiment, FLAGS.model_dir,
                                    FLAGS.config_file, FLAGS.params_override)
    if isinstance(params.task, coreference.CorefTaskConfig):
      checkpoint = FLAGS.checkpoint_path or FLAGS.model_dir
      if not checkpoint:
        raise ValueError("give --model_dir or --checkpoint_path")
      paths = coref_export.export_from_params(
          params, checkpoint, FLAGS.export_base, FLAGS.vocab_file,
          FLAGS.version, max_wordpieces=FLAGS.coref_max_wordpieces)
      print(f"exported the coreference model to {paths['model']}")
      return 0
    model, vocab = export_lib.load_for_export(
        params, FLAGS.model_dir, FLAGS.checkpoint_path, FLAGS.vocab_file)
    paths = export_lib.export(
        model, vocab, FLAGS.export_base, lower_case=FLAGS.do_lower_case,
        seq_length=FLAGS.seq_length, top_k=FLAGS.top_k,
        max_masks=FLAGS.max_masks, version=FLAGS.version,
        preprocessing_export_base=FLAGS.preprocessing_export_base)
  except (ValueError, OSError) as e:
    sys.stderr.write(f"export_savedmodel: error: {e}\n")
    return 1
  print(f"exported model to {paths['model']} and preprocessing to "
        f"{paths['preprocessing']}")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
