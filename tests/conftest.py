"""Shared pytest helpers: where the real data lives."""

import os

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_dir() -> str:
  """The shared real-data folder ($SPANBERT_DATA_DIR or ../shared/data)."""
  return os.environ.get("SPANBERT_DATA_DIR",
                        os.path.join(REPO, os.pardir, "shared", "data"))


def data_path(*parts: str) -> str:
  """Path of a file under the data folder; skips the test when missing."""
  path = os.path.join(data_dir(), *parts)
  if not os.path.exists(path):
    pytest.skip(f"real data {path} is absent (set SPANBERT_DATA_DIR or place "
                "the shared data at ../shared/data)")
  return path


@pytest.fixture(scope="session")
def cased_vocab() -> str:
  return data_path("vocab", "bert-base-cased-vocab.txt")


def first_lines(path: str, max_bytes: int, out_path: str) -> str:
  """Copies whole documents of a corpus file up to about max_bytes."""
  with open(path, "rb") as f, open(out_path, "wb") as out:
    size = 0
    for line in f:
      out.write(line)
      size += len(line)
      if size >= max_bytes and not line.strip():
        break
  return out_path


# Sequence length and masked positions of the tiny pretraining runs.
TINY_SEQ, TINY_PRED = 64, 10


@pytest.fixture(scope="session")
def pretraining_records(tmp_path_factory, cased_vocab) -> str:
  """Glob of tiny pretraining records (seq length 64) from two real corpora."""
  from official_spanbert.data.pretraining import pretraining_records as pr
  d = tmp_path_factory.mktemp("rec")
  files = [first_lines(data_path("corpus", n), 120_000, str(d / n))
           for n in ("austen.txt", "linux-doc.txt")]
  pr.create_pretraining_records(files, cased_vocab, str(d / "r"),
                                max_seq_length=TINY_SEQ, progress=False)
  return str(d / "r-*.tfrecord")


def tiny_params(records, vocab, experiment="spanbert/pretraining", steps=8,
                **trainer):
  """A 1-layer, hidden-64 pretraining experiment on `records`; `trainer`
  may set steps_per_loop and checkpoint_interval (default 4)."""
  from official.core import exp_factory
  from official.modeling.hyperparams import params_dict
  from official_spanbert.configs import experiments  # noqa: F401
  params = exp_factory.get_exp_config(experiment)
  for f in ("configs/models/tiny.yaml", "configs/experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, os.path.join(REPO, f),
                                              is_strict=True)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = 64, 128, 1
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file = records, vocab
    data.seq_length, data.max_predictions_per_seq = TINY_SEQ, TINY_PRED
    data.global_batch_size = 8
  params.trainer.train_steps = steps
  params.trainer.steps_per_loop = trainer.pop("steps_per_loop", 4)
  params.trainer.checkpoint_interval = trainer.pop("checkpoint_interval", 4)
  params.trainer.summary_interval = params.trainer.steps_per_loop
  params.trainer.validation_steps = 2
  params.trainer.optimizer_config.learning_rate.polynomial.decay_steps = 200
  params.trainer.optimizer_config.warmup.polynomial.warmup_steps = 5
  return params
