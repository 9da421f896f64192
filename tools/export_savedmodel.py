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

r"""Exports a SpanBERT run as SavedModels for TF Serving.

  spanbert-export-savedmodel --model_dir=/tmp/run --export_base=/models/run

reads <model_dir>/params.yaml, finds the run's experiment and exports its
latest checkpoint (--checkpoint_path: another one, e.g. <run>/best_ckpt, or a
converted checkpoint with --experiment, --config_file and --params_override)
with the serving module of its task (serving/registry.py SERVING_MODULES):

  * pretraining (spanbert/pretraining, no_sbo, bert/*): <export_base>/<version>/
    with serving_default, encode_pair, encode_ids, fill_spans and
    encode_spans, and the preprocessing model at
    <export_base>_preprocessing/<version>/;
  * spanbert/coref: `resolve` (raw text -> mentions and clusters);
  * spanbert/squad_v1, spanbert/squad_v2: `answer` (question + context ->
    answer text and character offsets; has_answer for 2.0);
  * spanbert/classification, spanbert/tacred: `classify` or
    `classify_relation`;
  * spanbert/span_ner (span head): `extract_entities` and `encode_spans`.

The module's options are --serving_params, as YAML/JSON or key=value pairs
(`--serving_params=max_context_wordpieces=8192,precision=bfloat16`): the
fields of its `Params` (docs/serving.md lists them). The older flags below
are aliases of those fields. Every export has warmup requests in
assets.extra/. Without --version the next free version is taken; a
--version that exists or that another export is writing is a one-line error,
as is a checkpoint of another experiment.
"""

import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.serving import serving_flags
from official_spanbert.utils import console

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None,
                    "Training dir (params.yaml + checkpoints).")
flags.DEFINE_string("experiment", None,
                    "Experiment (default: the one of <model_dir>/params.yaml, "
                    "else spanbert/pretraining).")
flags.DEFINE_multi_string("config_file", [], "YAML config overrides.")
flags.DEFINE_string("params_override", "", "Params overrides.")
flags.DEFINE_string("checkpoint_path", None,
                    "Checkpoint (default: latest in --model_dir).")
flags.DEFINE_string("export_base", None, "TF Serving model base path.")
flags.DEFINE_integer("version", None,
                     "Version of the model(s) (default: the next free one).")
serving_flags.define_serving_params()

# Aliases of serving params: flag -> (field, the signature whose export the
# flag is for, or None for any export that has the field, its type, help).
_ALIASES = (
    ("vocab_file", "vocab_file", None, flags.DEFINE_string,
     "The run's data configs' otherwise."),
    ("precision", "precision", None, flags.DEFINE_string,
     "float32, bfloat16 or int8."),
    ("do_lower_case", "lower_case", None, flags.DEFINE_bool,
     "Pretraining: uncased tokenization."),
    ("seq_length", "seq_length", None, flags.DEFINE_integer,
     "Pretraining: the packed length."),
    ("preprocessing_export_base", "preprocessing_export_base", None,
     flags.DEFINE_string, "Pretraining: base path of the preprocessing model."),
    ("top_k", "top_k", None, flags.DEFINE_integer,
     "fill_spans: candidates per [MASK]."),
    ("max_masks", "max_masks", None, flags.DEFINE_integer,
     "fill_spans: [MASK] tokens predicted per text."),
    ("null_score_diff_threshold", "null_score_diff_threshold", None,
     flags.DEFINE_float, "SQuAD 2.0: no answer when null - best score exceeds "
     "it (default: the evaluation's null_threshold.json)."),
    ("coref_max_wordpieces", "max_wordpieces", "resolve",
     flags.DEFINE_integer, "resolve refuses longer texts (0: no limit)."),
    ("qa_max_context_wordpieces", "max_context_wordpieces", "answer",
     flags.DEFINE_integer, "answer refuses longer contexts (0: no limit)."),
    ("ner_max_wordpieces", "max_wordpieces", "extract_entities",
     flags.DEFINE_integer,
     "extract_entities and encode_spans refuse longer texts (0: no limit)."),
)
ALIASES = {flag: (field, signature)
           for flag, field, signature, _, _ in _ALIASES}
for _flag, _field, _, _define, _help in _ALIASES:
  _define(_flag, None, f"Alias of --serving_params={_field}=... (default: "
          f"the export's). {_help}")
flags.mark_flag_as_required("export_base")


def main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401
  from official_spanbert.serving import export_lib
  from official_spanbert.serving import registry
  # pylint: enable=g-import-not-at-top
  del argv
  try:
    for base in (FLAGS.export_base, FLAGS.preprocessing_export_base):
      if base:  # before the slow part
        export_lib.check_export_base(base)
        export_lib.check_version_free(base, FLAGS.version)
    to_export = registry.load_run(FLAGS.model_dir, FLAGS.experiment,
                            FLAGS.config_file, FLAGS.params_override,
                            FLAGS.checkpoint_path)
    module_cls = registry.module_for(to_export.params.task)
    aliases = {name: FLAGS[name].value for name in ALIASES
               if FLAGS[name].present}
    values = serving_flags.serving_params(
        FLAGS.serving_params, aliases, ALIASES,
        module_cls.SIGNATURES if module_cls else ())
    paths = registry.export(to_export, values, FLAGS.export_base,
                            version=FLAGS.version)
  except (ValueError, OSError) as e:
    sys.stderr.write(f"export_savedmodel: error: {e}\n")
    return 1
  if "preprocessing" in paths:
    print(f"exported model to {paths['model']} and preprocessing to "
          f"{paths['preprocessing']}")
  else:
    print(f"exported the {to_export.experiment} model to {paths['model']}")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
