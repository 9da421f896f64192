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

"""Training input that does not fit its records fails when it is built.

Issue 11, fault 6: records carry their vocab's fingerprint, layout and longest
block in `<prefix>.stats.json`; the loader refuses another vocab, the other
layout or a seq_length that would cut the blocks, and the pretraining task
refuses a seq_length beyond the encoder's position embeddings.
"""

import errno
import glob
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_format
from conftest import REPO, data_path, dead_holder, first_lines
from records_helpers import corpus_slice  # noqa: F401  (fixture)
from records_helpers import errors, tool_args

SEQ = 128
# Stats keys added with the vocab fingerprint; records written before lack them.
NEW_STATS_KEYS = ("max_block_tokens", "vocab_file", "vocab_fingerprint",
                  "vocab_size", "lower_case")


@pytest.fixture(scope="module")
def records(corpus_slice, cased_vocab, tmp_path_factory):
  """Prefix of two shards of real blocks at max_seq_length=SEQ."""
  prefix = str(tmp_path_factory.mktemp("rec") / "r")
  pr.create_pretraining_records(corpus_slice[1:2], cased_vocab, prefix,
                                max_seq_length=SEQ, num_shards=2,
                                progress=False)
  return prefix


def _config(prefixes, vocab, **kw):
  kw.setdefault("seq_length", SEQ)
  return pdl.SpanBertPretrainDataConfig(
      input_path=",".join(p + "-*.tfrecord" for p in prefixes.split(",")),
      vocab_file=vocab, max_predictions_per_seq=20, global_batch_size=4,
      seed=1, **kw)


def _copy(prefix, new_prefix, stats):
  """Copies the shards; stats: "new" (as written), "old" (pre-fingerprint
  keys) or None (none)."""
  for path in glob.glob(prefix + "-*.tfrecord"):
    shutil.copy(path, new_prefix + path[len(prefix):])
  if stats == "new":
    shutil.copy(prefix + ".stats.json", new_prefix + ".stats.json")
  if stats == "old":
    with open(prefix + ".stats.json") as f:
      old = {k: v for k, v in json.load(f).items() if k not in NEW_STATS_KEYS}
    with open(new_prefix + ".stats.json", "w") as f:
      json.dump(old, f)
  return new_prefix


def test_loader_refuses_records_of_another_vocab(records, cased_vocab,
                                                 tmp_path):
  with open(cased_vocab, encoding="utf-8") as f:
    tokens = f.read().split("\n")
  # [CLS] [SEP] [MASK] (101..103) moved: the ids the loader frames with differ.
  tokens[101:104] = [tokens[103], tokens[101], tokens[102]]
  other = tmp_path / "other_vocab.txt"
  other.write_text("\n".join(tokens), encoding="utf-8")
  with pytest.raises(pdl.RecordsMismatchError) as e:
    pdl.SpanBertPretrainDataLoader(_config(records, str(other)))
  message = str(e.value)
  assert "\n" not in message
  assert f"records {records}-*.tfrecord were written with vocab " \
         f"{os.path.abspath(cased_vocab)} (fingerprint " in message
  assert f"not with vocab_file={other} (fingerprint " in message
  assert "set vocab_file to the records' vocab" in message
  pdl.SpanBertPretrainDataLoader(_config(records, cased_vocab))


def test_records_without_fingerprint_load_with_one_warning(
    records, cased_vocab, tmp_path, caplog):
  old = _copy(records, str(tmp_path / "old"), stats="old")
  bare = _copy(records, str(tmp_path / "bare"), stats=None)
  # Copied shards have no counts file: draw replacements uniformly.
  config = _config(f"{old},{bare}", cased_vocab,
                   random_token_distribution="uniform")
  with caplog.at_level(logging.WARNING):
    for _ in range(2):
      pdl.SpanBertPretrainDataLoader(config)
  warnings = [r.getMessage() for r in caplog.records
              if "no vocab fingerprint" in r.getMessage()]
  assert len(warnings) == 1, warnings
  assert f"{old}-*.tfrecord" in warnings[0]
  assert f"{bare}-*.tfrecord" in warnings[0]


def test_seq_length_shorter_than_the_blocks_is_refused(records, cased_vocab,
                                                       tmp_path):
  """Issue 11; issue 39 probe (d): with stats the line gave no counts (how
  many blocks would be cut, how much of them), as it did without."""
  shards = sorted(glob.glob(records + "-*.tfrecord"))
  first = [len(tf.train.Example.FromString(raw).features.feature["input_ids"]
               .int64_list.value)
           for raw in tf.data.TFRecordDataset(shards[0]).take(256)
           .as_numpy_iterator()]
  longest = max(
      len(tf.train.Example.FromString(raw).features.feature["input_ids"]
          .int64_list.value)
      for raw in tf.data.TFRecordDataset(shards).as_numpy_iterator())
  assert longest > 62
  cut = sum(n > 62 for n in first)
  dropped = sum(max(n - 62, 0) for n in first) / sum(first)
  counts = (rf"keeps 62 \(it would cut {cut} of the first {len(first)} "
            rf"blocks, dropping {dropped:.1%} of their tokens\)")
  with pytest.raises(
      pdl.RecordsMismatchError,
      match=rf"^records {records}-\*.tfrecord hold blocks of up to {longest} "
      rf"wordpieces but seq_length=64 {counts}; raise seq_length or rewrite "
      r"the records with --max_seq_length=64$"):
    pdl.SpanBertPretrainDataLoader(_config(records, cased_vocab,
                                           seq_length=64))
  # Without a stats file the first records are read instead.
  bare = _copy(records, str(tmp_path / "bare"), stats=None)
  with pytest.raises(pdl.RecordsMismatchError, match=counts):
    pdl.SpanBertPretrainDataLoader(_config(bare, cased_vocab, seq_length=64))


def test_loader_refuses_records_of_the_other_layout(records, cased_vocab,
                                                    tmp_path):
  part = first_lines(data_path("corpus", "austen.txt"), 20_000,
                     str(tmp_path / "a.txt"))
  nsp = str(tmp_path / "nsp")
  pr.create_pretraining_records([part], cased_vocab, nsp, max_seq_length=SEQ,
                                mode="nsp", progress=False)
  with pytest.raises(pdl.RecordsMismatchError,
                     match="are 'nsp' records but use_next_sentence_label="
                     "False reads 'single' ones"):
    pdl.SpanBertPretrainDataLoader(_config(nsp, cased_vocab))
  with pytest.raises(pdl.RecordsMismatchError,
                     match="are 'single' records but use_next_sentence_label="
                     "True reads 'nsp' ones"):
    pdl.SpanBertPretrainDataLoader(
        _config(records, cased_vocab, use_next_sentence_label=True))


@pytest.mark.parametrize("field", ["train_data", "validation_data"])
def test_seq_length_beyond_position_embeddings_fails_at_task_build(
    records, cased_vocab, field):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(REPO, "configs/models/tiny.yaml"), is_strict=True)
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path = records + "-*.tfrecord"
    data.vocab_file = cased_vocab
    data.seq_length = SEQ
  getattr(params.task, field).seq_length = 1024
  with pytest.raises(ValueError) as e:
    task_factory.get_task(params.task)
  assert str(e.value) == (
      f"task.{field}.seq_length=1024 is larger than the encoder's "
      f"max_position_embeddings=512; lower task.{field}.seq_length or raise "
      "task.model.encoder.bert_v2.max_position_embeddings")


@pytest.mark.usefixtures("fresh_python")  # the lock names Popen.pid
def test_second_records_run_on_a_prefix_refuses_and_spares_the_first(
    cased_vocab, tmp_path):
  """Issue 26, fault 2: two real create_pretraining_data processes."""
  prefix = tmp_path / "r"
  first = subprocess.Popen(
      tool_args(data_path("corpus", "kjv.txt"), cased_vocab, prefix,
                 "--num_shards=2"),
      stderr=subprocess.PIPE, text=True)
  try:
    deadline = time.time() + 240
    while len(glob.glob(f"{prefix}-*.incomplete")) < 2:
      assert first.poll() is None, first.stderr.read()
      assert time.time() < deadline
      time.sleep(0.02)
    first.send_signal(signal.SIGSTOP)  # still running, mid-write
    partial = sorted(glob.glob(f"{prefix}-*.incomplete"))
    second = subprocess.run(
        tool_args(data_path("corpus", "austen.txt"), cased_vocab, prefix),
        capture_output=True, text=True, timeout=240)
    assert second.returncode == 1, second.stderr[-3000:]
    [error] = errors(second.stderr)
    assert error.startswith(
        f"create_pretraining_data: error: {prefix} is in use by another "
        f"records run: pid {first.pid} on {socket.gethostname()}, started ")
    assert error.endswith(f"(lock file {prefix}.lock; delete it if that run "
                          "is no longer running)")
    assert sorted(glob.glob(f"{prefix}-*.incomplete")) == partial
    first.send_signal(signal.SIGCONT)
    _, stderr = first.communicate(timeout=240)
    assert first.returncode == 0, stderr[-3000:]
  finally:
    if first.poll() is None:
      first.kill()
  # The first run's shards hold its own corpus, whole; its lock is gone.
  with open(f"{prefix}.stats.json") as f:
    stats = json.load(f)
  assert stats["bytes"] == os.path.getsize(data_path("corpus", "kjv.txt"))
  blocks = sum(1 for _ in tf.data.TFRecordDataset(
      record_format.shard_paths(str(prefix), 2)))
  assert blocks == stats["blocks"] > 0
  assert not os.path.exists(f"{prefix}.lock")


def test_records_lock_of_a_dead_run_is_taken_over(cased_vocab, tmp_path,
                                                  caplog):
  prefix = str(tmp_path / "r")
  dead = dead_holder(prefix + ".lock")
  partial = tmp_path / "r-00000-of-00001.tfrecord.incomplete"
  partial.write_bytes(b"partial")
  text = tmp_path / "c.txt"
  text.write_text("First document.\n\nSecond document.\n")
  with caplog.at_level(logging.WARNING):
    pr.create_pretraining_records([str(text)], cased_vocab, prefix,
                                  progress=False)
  assert f"pid {dead} on {socket.gethostname()}" in caplog.text
  assert not partial.exists() and not os.path.exists(prefix + ".lock")
  assert os.path.exists(prefix + "-00000-of-00001.tfrecord")


def test_records_of_a_larger_vocab_than_the_encoder_fail_at_task_build(
    prose_slice, small_vocab, tmp_path):
  """Issue 26, fault 8: ids the embedding table does not have."""
  prefix = str(tmp_path / "r")
  stats = pr.create_pretraining_records([prose_slice], small_vocab, prefix,
                                        max_seq_length=SEQ, progress=False)
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params.task.train_data = _config(prefix, small_vocab)
  params.task.model.encoder.bert_v2.vocab_size = 1000
  with pytest.raises(ValueError, match=(
      f"^records {prefix}-\\*.tfrecord were written with a vocab of "
      f"{stats.vocab_size} tokens, more than task.model.encoder.bert_v2."
      f"vocab_size=1000; set vocab_size to {stats.vocab_size} or rewrite the "
      "records with the encoder's vocab$")):
    task_factory.get_task(params.task)
  params.task.model.encoder.bert_v2.vocab_size = stats.vocab_size
  task_factory.get_task(params.task)


def test_one_class_on_classification_labels_is_refused():
  """Issue 26, fault 9: num_classes=1 is a regression on int labels."""
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  params = exp_factory.get_exp_config("spanbert/classification")
  params.task.model.num_classes = 1
  params.task.train_data.input_path = "/records/train.tf_record"
  with pytest.raises(ValueError, match=(
      r"^task.model.num_classes=1 trains a regression, but task.train_data."
      r"label_type is 'int' \(class labels\); set task.model.num_classes to "
      r"the labels' count \(num_labels in the records' meta_data.json\), or "
      r"task.train_data.label_type=float for a regression$")):
    task_factory.get_task(params.task)
  params.task.train_data.label_type = "float"  # a regression, asked for
  task_factory.get_task(params.task)


def _tacred_records(tmp_path, vocab):
  """TACRED records of 3 relations (meta_data.json: num_labels 3)."""
  from official_spanbert.data.finetuning import classification_records  # pylint: disable=g-import-not-at-top
  from test_classification import _records  # pylint: disable=g-import-not-at-top
  path = tmp_path / "tacred.json"
  path.write_text(json.dumps(_records(6)), encoding="utf-8")
  out = tmp_path / "records"
  meta = classification_records.create_finetuning_data(
      "tacred", vocab, str(out), train_file=str(path), eval_file=str(path),
      max_seq_length=32)
  assert meta["num_labels"] == 3
  return out


@pytest.mark.parametrize("num_classes,consequence", [
    (2, "label ids up to 2 would be out of range"),
    (5, "2 classes would never be trained")])
def test_num_classes_must_be_the_records_number_of_labels(
    cased_vocab, tmp_path, num_classes, consequence):
  """Issue 48 item 5: too few classes failed with a 95-line traceback at
  step 1, too many trained silently."""
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  out = _tacred_records(tmp_path, cased_vocab)
  params = exp_factory.get_exp_config("spanbert/tacred")
  params.task.model.num_classes = num_classes
  for name, data in (("train_data", params.task.train_data),
                     ("validation_data", params.task.validation_data)):
    data.input_path = str(out / ("train.tf_record" if name == "train_data"
                                 else "eval.tf_record"))
    data.seq_length = 32
  message = (
      rf"^task.model.num_classes={num_classes}, but the records "
      rf"{re.escape(str(out))}/train.tf_record have 3 labels \(num_labels in "
      rf"{re.escape(str(out))}/meta_data.json\): {consequence}; set "
      r"task.model.num_classes=3 \(or 0: from the records\)$")
  with pytest.raises(ValueError, match=message):
    task_factory.get_task(params.task)
  model_dir = tmp_path / "run"
  with pytest.raises(ValueError, match=message):  # before anything is built
    train_lib.run(params, str(model_dir))
  assert not model_dir.exists()
  params.task.model.num_classes = 3
  task_factory.get_task(params.task)


def test_records_to_a_read_only_directory_say_it_is_not_writable(
    small_vocab, tmp_path, monkeypatch):
  """Issue 39, fault 6: the advice was to free space."""
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("The cat sat on the mat.\nIt was happy.\n",
                    encoding="utf-8")

  real_open = os.open

  def read_only(path, flags, *args, **kwargs):
    if path.endswith(".lock") and flags & os.O_CREAT:
      raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
    return real_open(path, flags, *args, **kwargs)

  monkeypatch.setattr(os, "open", read_only)
  out = tmp_path / "out"
  with pytest.raises(pr.RecordsOutputError) as e:
    pr.create_pretraining_records([str(corpus)], small_vocab, str(out / "r"),
                                  max_seq_length=32, progress=False)
  assert str(e.value) == (
      f"cannot write the lock file {out}/r.lock: Read-only file system; "
      f"{out} is not writable: choose a writable directory")
  assert not out.exists()


KILLED_RERUN = """
import os, signal, sys
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.utils import atomic_io
corpus, vocab, prefix = sys.argv[1:]
move = atomic_io.move_into_place
def killed_after_the_first_shard(tmp, path, **kwargs):
  move(tmp, path, **kwargs)
  os.kill(os.getpid(), signal.SIGKILL)  # as kill -9 between two renames
atomic_io.move_into_place = killed_after_the_first_shard
pr.create_pretraining_records([corpus], vocab, prefix, max_seq_length=%d,
                              num_shards=2, progress=False)
"""


def test_shards_of_a_killed_rerun_beside_the_old_stats_are_refused(
    records, cased_vocab, corpus_slice, tmp_path):
  """Issue 39, fault 1: a rerun at a longer max_seq_length killed while it
  replaced the shards; the loader trusted the old stats and cut blocks."""
  prefix = _copy(records, str(tmp_path / "r"), stats="new")
  shutil.copy(records + ".counts.json", prefix + ".counts.json")
  pdl.SpanBertPretrainDataLoader(_config(prefix, cased_vocab))  # intact
  proc = subprocess.run(
      [sys.executable, "-c", KILLED_RERUN % (2 * SEQ), corpus_slice[1],
       cased_vocab, prefix], capture_output=True, text=True, timeout=600,
      check=False)
  assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
  # One new shard in place, the old stats removed before it, the lock left.
  assert not os.path.exists(prefix + ".stats.json")
  with pytest.raises(pdl.RecordsMismatchError, match=(
      rf"^records {prefix}-\*.tfrecord are incomplete: a records run is "
      r"writing them or was killed before it finished \(its lock file "
      rf"{prefix}.lock is there\); wait for that run, or rerun "
      rf"spanbert-create-pretraining-data with --output_prefix={prefix}$")):
    pdl.SpanBertPretrainDataLoader(_config(prefix, cased_vocab))


def test_shards_that_are_not_the_ones_their_stats_describe_are_refused(
    records, cased_vocab, tmp_path):
  """Issue 39, fault 1: new shards beside old stats (no lock left)."""
  prefix = _copy(records, str(tmp_path / "r"), stats="new")
  first, second = record_format.shard_paths(prefix, 2)
  assert os.path.getsize(first) != os.path.getsize(second)
  shutil.copy(second, first)  # another run's shard under this name
  with pytest.raises(pdl.RecordsMismatchError, match=(
      rf"^records {prefix}-\*.tfrecord are not the ones {prefix}.stats.json "
      rf"describes \({first} has {os.path.getsize(second)} bytes, the stats "
      rf"say {os.path.getsize(records + '-00000-of-00002.tfrecord')}\): shards"
      " and stats are of different runs")):
    pdl.SpanBertPretrainDataLoader(_config(prefix, cased_vocab,
                                           random_token_distribution=
                                           "uniform"))
  with open(prefix + ".stats.json") as f:
    stats = json.load(f)
  assert sum(stats["shard_records"].values()) == stats["blocks"]
