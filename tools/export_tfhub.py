r"""Exports a SpanBERT checkpoint as TF Hub SavedModels for Keras users.

  spanbert-export-tfhub --model_dir=/tmp/spanbert --export_dir=/models/hub

reads <model_dir>/params.yaml and its latest checkpoint (or give --experiment,
--config_file, --params_override and --checkpoint_path) and writes
<export_dir>/encoder (the Hub text encoder, with the MLM and SBO heads as its
`mlm` and `sbo` sub-objects) and <export_dir>/preprocessor (the Hub BERT
preprocessing API: tokenize, bert_pack_inputs, and text -> inputs at
--seq_length). See official_spanbert/serving/hub_export.py.
"""

import os
import sys
import time

from absl import app
from absl import flags

import official_spanbert  # noqa: F401
from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert.configs import experiments  # noqa: F401
from official_spanbert.serving import export as export_lib
from official_spanbert.serving import hub_export

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
flags.DEFINE_string("vocab_file", None,
                    "Vocab (default: task.train_data.vocab_file).")
flags.DEFINE_bool("do_lower_case", False, "Uncased tokenization.")
flags.DEFINE_integer("seq_length", 128,
                     "Default sequence length of the preprocessor.")
flags.mark_flag_as_required("export_dir")


def _params():
  """The experiment config: --experiment, then params.yaml, then overrides."""
  params = exp_factory.get_exp_config(FLAGS.experiment)
  yaml = FLAGS.model_dir and os.path.join(FLAGS.model_dir, "params.yaml")
  overrides = [(yaml, False)] if yaml and os.path.exists(yaml) else []
  overrides += [(f, True) for f in FLAGS.config_file]
  overrides += [(FLAGS.params_override, True)] if FLAGS.params_override else []
  for override, strict in overrides:
    params = params_dict.override_params_dict(params, override,
                                              is_strict=strict)
  return params


def main(argv):
  del argv
  start = time.time()
  try:
    hub_export.output_dirs(FLAGS.export_dir)  # before the slow part
    params = _params()
    checkpoint = FLAGS.checkpoint_path or FLAGS.model_dir
    if not checkpoint:
      raise ValueError("give --model_dir or --checkpoint_path")
    vocab = FLAGS.vocab_file or params.task.train_data.vocab_file
    if not vocab:
      raise ValueError("give --vocab_file (params have no vocab_file)")
    model = export_lib.build_model(params, checkpoint)
    dirs = hub_export.export(model, vocab, FLAGS.export_dir,
                             lower_case=FLAGS.do_lower_case,
                             seq_length=FLAGS.seq_length)
  except (ValueError, OSError) as e:
    sys.stderr.write(f"export_tfhub: error: {e}\n")
    return 1
  print(f"exported the TF Hub encoder to {dirs['encoder']} and the "
        f"preprocessor to {dirs['preprocessor']} in {time.time() - start:.0f} s")
  return 0


def run():
  app.run(main)


if __name__ == "__main__":
  run()
