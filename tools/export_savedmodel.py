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
with the serving module registered for its task (serving/registry.py):

  * pretraining (spanbert/pretraining, no_sbo, bert/*): <export_base>/<version>/
    with serving_default, encode_pair, encode_ids and fill_spans, and the
    preprocessing model at <export_base>_preprocessing/<version>/;
  * spanbert/coref: `resolve` (raw text -> mentions and clusters);
  * spanbert/squad_v1, spanbert/squad_v2: `answer` (question + context ->
    answer text and character offsets; has_answer for 2.0 with the
    evaluation's null-score threshold, or --null_score_diff_threshold);
  * spanbert/span_ner (span head): `extract_entities` (raw text -> nested
    entities as character offsets) and `encode_spans` (text + character
    spans -> span embeddings).

Every export has warmup requests in assets.extra/. Without --version the
next free version is taken; a --version that exists or that another export
is writing is a one-line error, as is a checkpoint of another experiment.
"""

import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console
from official_spanbert.serving import limits

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
flags.DEFINE_string("preprocessing_export_base", None,
                    "Base path of the preprocessing model.")
flags.DEFINE_string("vocab_file", None,
                    "Vocab (default: task.train_data.vocab_file).")
flags.DEFINE_bool("do_lower_case", False, "Uncased tokenization.")
flags.DEFINE_integer("seq_length", limits.SEQ_LENGTH,
                     "Serving sequence length.")
flags.DEFINE_integer("top_k", limits.FILL_SPANS_TOP_K, "Candidates per [MASK].")
flags.DEFINE_integer("max_masks", limits.FILL_SPANS_MAX_MASKS,
                     "[MASK] tokens predicted per text.")
flags.DEFINE_integer("coref_max_wordpieces", limits.COREF_MAX_WORDPIECES,
                     "Coreference: resolve refuses longer texts (0: no "
                     "limit).")
flags.DEFINE_integer("qa_max_context_wordpieces",
                     limits.QA_MAX_CONTEXT_WORDPIECES,
                     "SQuAD: answer refuses longer contexts (0: no limit); "
                     "memory grows linearly with the context.")
flags.DEFINE_integer("ner_max_wordpieces", limits.NER_MAX_WORDPIECES,
                     "Span NER: extract_entities and encode_spans refuse "
                     "longer texts (0: no limit).")
flags.DEFINE_enum("precision", "float32", ["float32", "bfloat16"],
                  "What the exported graph computes in: bfloat16 needs a CPU "
                  "with AVX512-BF16 or AMX (weights stay float32).")
flags.DEFINE_float("null_score_diff_threshold", None,
                   "SQuAD 2.0: no answer when null - best score exceeds it "
                   "(default: the evaluation's null_threshold.json).")
flags.DEFINE_integer("version", None,
                     "Version of both models (default: the next free one).")
flags.mark_flag_as_required("export_base")


def _options(params):
  """The export options of the run's task, from the flags (a task's own
  flags are read by its export alone)."""
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  entry = registry.entry_for(params)
  own = {
      registry.PretrainingExportOptions: dict(
          top_k=FLAGS.top_k, max_masks=FLAGS.max_masks,
          preprocessing_export_base=FLAGS.preprocessing_export_base),
      registry.CorefExportOptions: dict(
          max_wordpieces=FLAGS.coref_max_wordpieces),
      registry.QAExportOptions: dict(
          null_score_diff_threshold=FLAGS.null_score_diff_threshold,
          max_context_wordpieces=FLAGS.qa_max_context_wordpieces),
      registry.SpanNerExportOptions: dict(
          max_wordpieces=FLAGS.ner_max_wordpieces),
  }.get(entry.options, {})
  return entry.options(
      export_base=FLAGS.export_base, model_dir=FLAGS.model_dir,
      checkpoint_path=FLAGS.checkpoint_path, vocab_file=FLAGS.vocab_file,
      version=FLAGS.version, lower_case=FLAGS.do_lower_case,
      seq_length=FLAGS.seq_length, precision=FLAGS.precision, **own)


def main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401
  from official_spanbert.serving import registry
  from official_spanbert.serving import export_lib
  # pylint: enable=g-import-not-at-top
  del argv
  try:
    for base in (FLAGS.export_base, FLAGS.preprocessing_export_base):
      if base:  # before the slow part
        export_lib.check_export_base(base)
    params, experiment = registry.load_run(
        FLAGS.model_dir, FLAGS.experiment, FLAGS.config_file,
        FLAGS.params_override)
    paths = registry.export(params, experiment, _options(params))
  except (ValueError, OSError) as e:
    sys.stderr.write(f"export_savedmodel: error: {e}\n")
    return 1
  if "preprocessing" in paths:
    print(f"exported model to {paths['model']} and preprocessing to "
          f"{paths['preprocessing']}")
  else:
    print(f"exported the {experiment} model to {paths['model']}")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
