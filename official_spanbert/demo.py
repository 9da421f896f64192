r"""The end-to-end demo behind `make demo`.

Runs the whole pipeline on an embedded default that needs no network and no
downloaded data: real English prose from the docstrings of the Python standard
library installed with the interpreter (one module per document).

  python -m official_spanbert.demo --output_dir=demo_out

1. build the corpus (official_spanbert/data/demo_corpus.py);
2. learn a cased WordPiece vocab from it (tf.text);
3. write pretraining records (seq 128) and print their stats;
4. pretrain a tiny SpanBERT (span masking + SBO) for a few hundred steps,
   printing MLM/SBO losses; a rerun resumes from the checkpoint;
5. export it for TF Serving and fill a masked span in a sentence through the
   exported SavedModel, printing the top candidates.
"""

import json
import os
import shutil

from absl import app
from absl import flags

import official_spanbert  # noqa: F401
import tensorflow as tf

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import train as train_lib
from official_spanbert.configs import experiments  # noqa: F401
from official_spanbert.data import demo_corpus
from official_spanbert.data import pretraining_records
from official_spanbert.data import tokenization
from official_spanbert.data import vocab_builder
from official_spanbert.serving import export as export_lib

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "demo_out", "Where everything is written.")
flags.DEFINE_integer("train_steps", 300, "Pretraining steps.")
flags.DEFINE_integer("vocab_size", 8000, "Target vocab size.")
DEFAULT_SENTENCE = ("The module provides functions for working with [MASK] "
                    "[MASK] and directories.")
flags.DEFINE_string("sentence", DEFAULT_SENTENCE,
                    "Sentence with a masked span to fill.")

REPO_CONFIGS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "configs")


def _say(msg):
  print(f"\n== {msg}", flush=True)


def _config_path(name):
  path = os.path.join(REPO_CONFIGS, name)
  if not os.path.exists(path):
    raise FileNotFoundError(f"{path} not found: run the demo from a checkout "
                            "of the repository")
  return path


def run_demo(output_dir: str, train_steps: int = 300, vocab_size: int = 8000,
             sentence: str = DEFAULT_SENTENCE) -> dict:
  """Runs the demo; returns what it printed as a dict."""
  os.makedirs(output_dir, exist_ok=True)
  corpus_path = os.path.join(output_dir, "stdlib_docstrings.txt")
  _say("1/5 building the corpus from standard-library docstrings")
  stats = demo_corpus.build_demo_corpus(corpus_path)
  print(f"{stats['documents']} documents, {stats['lines']} lines, "
        f"{stats['bytes'] / 1e6:.2f} MB -> {corpus_path}")

  vocab_path = os.path.join(output_dir, "vocab.txt")
  _say("2/5 learning a cased WordPiece vocab (tf.text)")
  if not os.path.exists(vocab_path):
    vocab_builder.build_vocab([corpus_path], vocab_path,
                              vocab_size=vocab_size, min_token_count=3,
                              progress=False)
  vocab = tokenization.load_vocab(vocab_path)
  print(f"{vocab.size} tokens -> {vocab_path}")

  _say("3/5 creating pretraining records (seq 128, unmasked blocks)")
  prefix = os.path.join(output_dir, "records", "train")
  rec = pretraining_records.create_pretraining_records(
      [corpus_path], vocab_path, prefix, max_seq_length=128, num_shards=2,
      progress=False)
  print(json.dumps({k: getattr(rec, k) for k in (
      "documents", "lines", "blocks", "tokens", "split_lines",
      "padding_ratio", "mb_per_second")}))

  _say(f"4/5 pretraining a tiny SpanBERT for {train_steps} steps (CPU)")
  params = exp_factory.get_exp_config("spanbert/pretraining")
  for name in ("models/tiny.yaml", "experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, _config_path(name),
                                              is_strict=True)
  params.task.model.encoder.bert_v2.vocab_size = vocab.size
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path = prefix + "-*.tfrecord"
    data.vocab_file = vocab_path
  params.trainer.train_steps = train_steps
  params.trainer.optimizer_config.learning_rate.polynomial.decay_steps = (
      train_steps)
  model_dir = os.path.join(output_dir, "model")
  model, eval_logs = train_lib.run(params, model_dir, mode="train",
                                   run_post_eval=True)
  summary = {k: round(float(v), 4) for k, v in (eval_logs or {}).items()
             if k in ("mlm_loss", "sbo_loss", "masked_lm_accuracy",
                      "sbo_accuracy")}
  print("eval after training:", json.dumps(summary))

  _say("5/5 exporting for TF Serving and filling a masked span")
  export_base = os.path.join(output_dir, "export", "spanbert")
  for base in (export_base, export_base + "_preprocessing"):
    shutil.rmtree(base, ignore_errors=True)
  paths = export_lib.export(model, vocab_path, export_base, seq_length=128,
                            top_k=5, max_masks=8, version=1)
  print(f"SavedModel: {paths['model']}  preprocessing: "
        f"{paths['preprocessing']}")
  loaded = tf.saved_model.load(paths["model"])
  out = loaded.signatures["fill_spans"](text=tf.constant([sentence]))
  n = int(out["masked_weights"].numpy()[0].sum())
  print(f"input:  {sentence}")
  print(f"filled: {out['filled_text'].numpy()[0].decode()}")
  candidates = []
  for i in range(n):
    mlm = [t.decode() for t in out["mlm_top_k_tokens"].numpy()[0, i]]
    line = {"mask": i + 1, "mlm_top5": mlm}
    if "sbo_top_k_tokens" in out:
      line["sbo_top5"] = [t.decode()
                          for t in out["sbo_top_k_tokens"].numpy()[0, i]]
    candidates.append(line)
    print(json.dumps(line))
  return {"corpus": stats, "eval": summary, "export": paths,
          "candidates": candidates}


def main(argv):
  del argv
  run_demo(FLAGS.output_dir, FLAGS.train_steps, FLAGS.vocab_size,
           FLAGS.sentence)
  return 0


def console_main():
  app.run(main)


if __name__ == "__main__":
  console_main()
