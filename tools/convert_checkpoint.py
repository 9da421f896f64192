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

r"""Converts BERT and SpanBERT checkpoints into and out of our TF format.

Hugging Face (BertModel / BertForMaskedLM / BertForPreTraining directory with
config.json, model.safetensors or pytorch_model.bin, vocab.txt) -> our
checkpoint (encoder + MLM head + NSP head when present), params.yaml and
vocab.txt, usable as task.init_checkpoint:

  spanbert-convert-checkpoint --direction=hf_to_tf \
    --input=/path/to/hf_bert --output=/tmp/bert_tf
  spanbert-train --experiment=spanbert/pretraining \
    --config_file=/tmp/bert_tf/params.yaml \
    --params_override='task.init_checkpoint=/tmp/bert_tf,...'

and back (our converted, pretraining or trainer checkpoint + its params.yaml
-> a directory transformers loads; the SBO head is left out):

  spanbert-convert-checkpoint --direction=tf_to_hf \
    --input=/tmp/spanbert_run --output=/tmp/spanbert_hf

The reference's fairseq SpanBERT with its trained MLM and SBO heads
(model.pt of spanbert_large_with_head) and Google's TF1 BERT checkpoints
(bert_model.ckpt + bert_config.json, MLM and NSP heads kept):

  spanbert-convert-checkpoint --direction=fairseq_to_tf \
    --input=spanbert_large_with_head/model.pt \
    --vocab_file=bert-base-cased-vocab.txt --output=/tmp/spanbert_large
  spanbert-convert-checkpoint --direction=tf1_to_tf \
    --input=cased_L-12_H-768_A-12/bert_model.ckpt \
    --bert_config=cased_L-12_H-768_A-12/bert_config.json --output=/tmp/bert

Params with the exact GELU of Hugging Face's "gelu" name the activation
`spanbert>gelu_exact`, registered by official_spanbert.modeling.activations.

mandarjoshi90/coref's released coreference models (TF1 `model.max.ckpt` +
`bert_config.json`; --experiment names their experiments.conf entry) -> a
spanbert/coref run dir (variant: reference) that --mode=eval and
spanbert-export-savedmodel accept:

  spanbert-convert-checkpoint --direction=coref_tf1_to_tf \
    --input=spanbert_base/model.max.ckpt \
    --bert_config=spanbert_base/bert_config.json \
    --vocab_file=cased_config_vocab/vocab.txt --output=/tmp/coref_base

Progress goes to stderr (a line about every 10% of the tensors, with an
ETA); the last line on stdout says what was written where (directory,
tensors, MB, seconds). The conversion is official_spanbert.interop.
"""

import signal
import sys

from absl import flags

import official_spanbert  # noqa: F401
from official_spanbert.utils import console

FLAGS = flags.FLAGS

DIRECTIONS = ["hf_to_tf", "tf_to_hf", "fairseq_to_tf", "tf1_to_tf",
              "coref_tf1_to_tf"]
flags.DEFINE_enum("direction", None, DIRECTIONS,
                  "hf_to_tf: Hugging Face directory -> our checkpoint; "
                  "tf_to_hf: our checkpoint -> Hugging Face directory (the "
                  "SBO head beside it); fairseq_to_tf: the reference's "
                  "SpanBERT model.pt -> ours (MLM and SBO heads); tf1_to_tf: "
                  "Google's TF1 bert_model.ckpt -> ours (MLM and NSP heads); "
                  "coref_tf1_to_tf: mandarjoshi90/coref's model.max.ckpt -> "
                  "a spanbert/coref run dir (variant reference).")
flags.DEFINE_string("input", None,
                    "hf_to_tf: the Hugging Face directory. tf_to_hf: our "
                    "checkpoint prefix or directory (latest checkpoint). "
                    "fairseq_to_tf: model.pt. tf1_to_tf: the bert_model.ckpt "
                    "prefix or its directory.")
flags.DEFINE_string("output", None, "Output directory.")
flags.DEFINE_string("params_file", None,
                    "tf_to_hf: params YAML with task.model.encoder (default: "
                    "params.yaml beside the checkpoint).")
flags.DEFINE_string("vocab_file", None,
                    "Vocab to use when none is beside the input (tf_to_hf "
                    "also looks at the params' task.train_data.vocab_file; "
                    "fairseq_to_tf needs it: the release's is BERT's cased "
                    "vocab).")
flags.DEFINE_string("bert_config", None,
                    "tf1_to_tf: Google's bert_config.json (required). "
                    "coref_tf1_to_tf: the release's bert_config.json "
                    "(required). fairseq_to_tf: optional sizes (default: from "
                    "the tensors and the reference's architectures).")
flags.DEFINE_bool("allow_vocab_mismatch", False,
                  "Imports: convert although the vocab has fewer tokens than "
                  "the word embeddings (warns, naming the ids without one).")
flags.DEFINE_bool("clamp_attention", True,
                  "fairseq_to_tf: write task.model.clamp_attention, the "
                  "reference's --clamp-attention (+-1e4 attention scores; "
                  "matters in float16/bfloat16).")
flags.DEFINE_enum("lower_case", None, ["true", "false"],
                  "The vocab's tokenization (default: from the input's "
                  "tokenizer_config.json / conversion.json; tf_to_hf falls "
                  "back to cased).")
flags.DEFINE_bool("approximate_gelu", False,
                  "hf_to_tf: map hidden_act 'gelu' to Model Garden's tanh "
                  "'gelu' (outputs differ slightly from PyTorch's).")
flags.DEFINE_bool("allow_layer_norm_eps_mismatch", False,
                  "hf_to_tf: convert even if layer_norm_eps is not 1e-12.")
flags.DEFINE_multi_string("ignore_prefix", [],
                          "hf_to_tf: drop source keys with this prefix (e.g. "
                          "qa_outputs.); repeatable.")
flags.DEFINE_bool("drop_next_sentence", False,
                  "tf_to_hf: leave out the NSP head.")
flags.DEFINE_bool("overwrite", False, "Replace an earlier conversion.")
# One name for the file in every direction; coref_tf1_to_tf's old spelling
# still works.
flags.DEFINE_alias("bert_config_file", "bert_config")
flags.DEFINE_string("coref_experiment", "spanbert_base",
                    "coref_tf1_to_tf: the experiments.conf entry "
                    "(spanbert_base, spanbert_large, bert_base, bert_large).")

flags.mark_flags_as_required(["direction", "input", "output"])


class _Stopped(Exception):
  """SIGTERM or SIGINT during a conversion (it unwinds: nothing is left)."""

  def __init__(self, signum: int):
    super().__init__(signal.Signals(signum).name)
    self.code = 128 + signum


def _stop(signum, frame):
  del frame
  for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, signal.SIG_IGN)  # not during the unwinding
  raise _Stopped(signum)


def main(argv):
  """Runs the conversion with SIGTERM / Ctrl-C unwinding it (the output is
  left as it was, its lock and temporary dir removed)."""
  previous = {s: signal.signal(s, _stop)
              for s in (signal.SIGTERM, signal.SIGINT)}
  try:
    return _main(argv)
  except _Stopped as e:
    sys.stderr.write(f"convert_checkpoint: stopped by {e}; {FLAGS.output} is "
                     "as it was (nothing was written there)\n")
    return e.code
  finally:
    for s, handler in previous.items():
      signal.signal(s, handler)


def _main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization
  from official_spanbert import interop
  from official_spanbert.interop import hf_files
  from official_spanbert.interop import conversion_report
  # pylint: enable=g-import-not-at-top
  if console.unexpected_arguments("convert_checkpoint", argv):
    return 2
  lower = None if FLAGS.lower_case is None else FLAGS.lower_case == "true"
  # Progress lines on stderr; the summary is printed below, last.
  options = interop.ConversionOptions(
      vocab_file=FLAGS.vocab_file, lower_case=lower,
      allow_vocab_mismatch=FLAGS.allow_vocab_mismatch,
      overwrite=FLAGS.overwrite,
      progress=conversion_report.ConversionProgress(FLAGS.direction,
                                                    summary=False))
  if FLAGS.direction == "coref_tf1_to_tf":
    return _coref_tf1_to_tf()
  try:
    if FLAGS.direction == "hf_to_tf":
      result = interop.hf_to_tf(
          FLAGS.input, FLAGS.output, options,
          approximate_gelu=FLAGS.approximate_gelu,
          allow_layer_norm_eps_mismatch=FLAGS.allow_layer_norm_eps_mismatch,
          ignore_prefixes=FLAGS.ignore_prefix)
    elif FLAGS.direction == "fairseq_to_tf":
      if not FLAGS.vocab_file:
        raise hf_files.ConversionError(
            "fairseq_to_tf needs --vocab_file: model.pt has no vocab (the "
            "release was trained with BERT's cased vocab, 28,996 tokens)")
      result = interop.fairseq_to_tf(
          FLAGS.input, FLAGS.output, options, bert_config=FLAGS.bert_config,
          clamp_attention=FLAGS.clamp_attention)
    elif FLAGS.direction == "tf1_to_tf":
      if not FLAGS.bert_config:
        raise hf_files.ConversionError(
            "tf1_to_tf needs --bert_config: the bert_config.json that comes "
            "with the checkpoint")
      result = interop.tf1_to_tf(FLAGS.input, FLAGS.output, options,
                                 bert_config=FLAGS.bert_config)
    else:
      result = interop.tf_to_hf(
          FLAGS.input, FLAGS.output, options, params_file=FLAGS.params_file,
          drop_next_sentence=FLAGS.drop_next_sentence)
  except (hf_files.ConversionError, tokenization.VocabError,
          OSError) as e:
    sys.stderr.write(f"convert_checkpoint: error: {e}\n")
    return 1
  for warning in result.warnings:
    sys.stderr.write(f"convert_checkpoint: warning: {warning}\n")
  if result.initialized:
    print(f"not in the source, initialised: {', '.join(result.initialized)}")
  if result.dropped:
    print(f"left out: {', '.join(result.dropped)}")
  if FLAGS.direction != "tf_to_hf":
    case = {True: "uncased: create records with --do_lower_case",
            False: "cased: create records without --do_lower_case",
            None: "unknown: check the source's tokenizer settings"}
    print(f"checkpoint {result.checkpoint}; params {result.output}/"
          f"{hf_files.PARAMS_FILE}; vocab {result.output}/"
          f"{hf_files.VOCAB_FILE} ({case[result.lower_case]})")
  print(result.summary())
  return 0


def _coref_tf1_to_tf():
  """The coref_tf1_to_tf direction (interop/coref_tf1_to_tf.py)."""
  # pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert import registry_imports  # noqa: F401  (spanbert/coref)
  from official_spanbert.interop import coref_tf1_to_tf
  # pylint: enable=g-import-not-at-top,unused-import
  if not FLAGS.bert_config:
    sys.stderr.write("convert_checkpoint: error: coref_tf1_to_tf needs "
                     "--bert_config (the release's bert_config.json)\n")
    return 1
  try:
    path = coref_tf1_to_tf.convert(
        FLAGS.input, FLAGS.bert_config, FLAGS.output,
        experiment=FLAGS.coref_experiment, vocab_file=FLAGS.vocab_file or "",
        overwrite=FLAGS.overwrite)
  except (ValueError, OSError, KeyError) as e:
    sys.stderr.write(f"convert_checkpoint: error: {e}\n")
    return 1
  print(f"checkpoint {path}; params {FLAGS.output}/params.yaml "
        "(spanbert/coref, variant reference)")
  return 0


def run():
  console.run(main)


if __name__ == "__main__":
  run()
