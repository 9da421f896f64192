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

"""Tests of corpus -> pretraining records (tools/create_pretraining_data.py)."""

import glob
import json
import logging
import os
import re
import resource
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.data.pretraining import corpus
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_blocks
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data import tokenization
from conftest import data_path, first_lines
from records_helpers import corpus_slice  # noqa: F401  (fixture)
from records_helpers import errors, tool_args


def _read_records(prefix, mode="single"):
  spec = record_format.feature_spec(mode)
  out = []
  for path in sorted(glob.glob(prefix + "-*.tfrecord")):
    for raw in tf.data.TFRecordDataset(path).as_numpy_iterator():
      ex = tf.io.parse_single_example(raw, spec)
      out.append({k: v.numpy() for k, v in ex.items()})
  return out


def test_every_token_in_exactly_one_block_and_no_block_crosses_documents(
    corpus_slice, cased_vocab, tmp_path):
  max_seq_length = 128
  stats = pr.create_pretraining_records(
      corpus_slice, cased_vocab, str(tmp_path / "rec"),
      max_seq_length=max_seq_length, num_shards=1, progress=False)
  blocks = _read_records(str(tmp_path / "rec"))
  assert len(blocks) == stats.blocks > 100

  # Recount independently: tokenize every document's lines one by one.
  tok = tokenization.WordpieceTokenizer(cased_vocab)
  doc_ids, doc_starts = [], []
  for doc in corpus.read_documents(corpus_slice):
    ids, starts = tok.tokenize(tf.constant(doc.lines))
    doc_ids.append(ids.flat_values.numpy())
    doc_starts.append(starts.flat_values.numpy())
  n_tokens = sum(len(x) for x in doc_ids)
  assert stats.tokens == n_tokens
  assert stats.documents == len(doc_ids)

  # With one shard blocks are in corpus order: walk documents and blocks.
  d, offset = 0, 0
  for b in blocks:
    ids = b["input_ids"]
    assert 0 < len(ids) <= max_seq_length - 2
    while offset == len(doc_ids[d]):
      d, offset = d + 1, 0
    # The block lies inside document d (never crosses into d + 1).
    np.testing.assert_array_equal(ids, doc_ids[d][offset:offset + len(ids)])
    np.testing.assert_array_equal(b["word_starts"],
                                  doc_starts[d][offset:offset + len(ids)])
    assert b["word_starts"][0] == 1  # blocks start at a word start
    offset += len(ids)
  assert d == len(doc_ids) - 1 and offset == len(doc_ids[-1])


def test_long_lines_are_split_not_dropped(cased_vocab, tmp_path):
  path = data_path("corpus", "kjv.txt")  # one chapter per line: long lines
  part = first_lines(path, 30_000, str(tmp_path / "kjv.txt"))
  stats = pr.create_pretraining_records([part], cased_vocab,
                                        str(tmp_path / "k"), max_seq_length=64,
                                        progress=False)
  assert stats.split_lines > 0
  blocks = _read_records(str(tmp_path / "k"))
  assert sum(len(b["input_ids"]) for b in blocks) == stats.tokens
  assert all(b["word_starts"][0] == 1 for b in blocks)


def test_shards_are_deterministic_for_a_seed(corpus_slice, cased_vocab,
                                             tmp_path):
  def run(name, seed):
    pr.create_pretraining_records(corpus_slice[:1], cased_vocab,
                                  str(tmp_path / name), max_seq_length=128,
                                  num_shards=3, seed=seed, progress=False)
    return [open(p, "rb").read() for p in
            sorted(glob.glob(str(tmp_path / name) + "-*.tfrecord"))]
  a, b, c = run("a", 1), run("b", 1), run("c", 2)
  assert len(a) == 3 and a == b and a != c
  stats = json.load(open(str(tmp_path / "a") + ".stats.json"))
  for key in ("documents", "lines", "blocks", "tokens", "split_lines",
              "padding_ratio"):
    assert key in stats
  assert 0 < stats["padding_ratio"] < 1


def test_runs_of_a_process_share_the_tokenizer_of_a_vocab(small_vocab,
                                                          tmp_path):
  """Each records run used to build its tokenizer and trace its tf.function
  again (~0.6 CPU-s); a vocab rewritten with other tokens gets a new one."""
  tokenizer = record_blocks.wordpiece_tokenizer(small_vocab)
  assert record_blocks.wordpiece_tokenizer(small_vocab) is tokenizer
  assert record_blocks.wordpiece_tokenizer(small_vocab, True) is not tokenizer
  vocab = tmp_path / "vocab.txt"
  tokens = open(small_vocab, encoding="utf-8").read().splitlines()
  vocab.write_text("\n".join(tokens), encoding="utf-8")
  first = record_blocks.wordpiece_tokenizer(str(vocab))
  assert record_blocks.wordpiece_tokenizer(str(vocab)) is first
  vocab.write_text("\n".join(tokens[:-2] + ["qqzebra", "##qqzz"]),
                   encoding="utf-8")
  second = record_blocks.wordpiece_tokenizer(str(vocab))
  assert second is not first
  assert list(second.vocab.tokens[-2:]) == ["qqzebra", "##qqzz"]


def test_nsp_mode(corpus_slice, cased_vocab, tmp_path):
  stats = pr.create_pretraining_records(
      corpus_slice, cased_vocab, str(tmp_path / "nsp"), max_seq_length=128,
      mode="nsp", progress=False)
  recs = _read_records(str(tmp_path / "nsp"), "nsp")
  assert len(recs) == stats.blocks > 50
  labels = np.array([r["next_sentence_labels"][0] for r in recs])
  assert 0.3 < labels.mean() < 0.7
  for r in recs:
    segs = r["segment_ids"]
    assert len(segs) == len(r["input_ids"]) <= 125
    assert segs[0] == 0 and segs[-1] == 1
    assert np.all(np.diff(segs) >= 0)  # A then B
    a_len = int((segs == 0).sum())
    assert r["word_starts"][0] == 1 and r["word_starts"][a_len] == 1


def _numbered_docs(n, lines=4, length=6):
  """n documents whose ids are 1000 * document index + position."""
  return [record_blocks.TokenizedDocument(
      ids=(np.arange(lines * length) + 1000 * i).astype(np.int32),
      word_starts=np.ones(lines * length, np.int8),
      line_lengths=np.full(lines, length)) for i in range(n)]


def test_nsp_stream_holds_the_buffer_only_and_draws_from_it():
  """Each document once, in order, cut against a window of at most `size`
  consecutive documents; random B segments come from the window's others."""
  size, rng, seen, labels = 3, np.random.default_rng(0), [], set()
  for window, d in record_blocks.nsp_windows(iter(_numbered_docs(9)), size):
    assert len(window) <= size
    doc = int(window[d].ids[0]) // 1000
    others = {int(w.ids[0]) // 1000 for w in window} - {doc}
    assert len(others) == size - 1
    assert all(abs(o - doc) < size for o in others), (doc, others)
    seen.append(doc)
    for ids, _, segs, label in record_blocks.nsp_instances(window, d, 12, rng):
      source = {int(x) // 1000 for x in ids[segs == 1]}
      assert source <= (others if label else {doc}), (doc, label, source)
      labels.add(label)
  assert seen == list(range(9)) and labels == {0, 1}


def test_nsp_stream_covering_the_corpus_is_the_whole_corpus_draw():
  """A buffer of at least the corpus gives exactly the instances of holding
  every document (BERT's draw over the whole corpus)."""
  docs = _numbered_docs(5)

  def instances(pairs):
    rng = np.random.default_rng(7)
    return [tuple(map(tuple, x[:3])) + (x[3],) for w, d in pairs
            for x in record_blocks.nsp_instances(w, d, 12, rng)]

  whole = instances((docs, d) for d in range(len(docs)))
  assert instances(record_blocks.nsp_windows(iter(docs), 5)) == whole
  assert instances(record_blocks.nsp_windows(iter(docs), 50)) == whole
  assert instances(record_blocks.nsp_windows(iter(docs), 2)) != whole
  with pytest.raises(ValueError, match="nsp_buffer_documents"):
    list(record_blocks.nsp_windows(iter(docs), 1))


def _no_outputs(prefix):
  return not glob.glob(prefix + "*")


def test_invalid_utf8_strict_names_file_and_line(cased_vocab, tmp_path):
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"Good line one.\nAnother good line.\n\nBad \xff byte.\n")
  prefix = str(tmp_path / "out" / "r")
  with pytest.raises(corpus.CorpusError, match=r"bad.txt:4: invalid UTF-8"):
    pr.create_pretraining_records([str(bad)], cased_vocab, prefix,
                                  progress=False)
  assert _no_outputs(prefix)
  stats = pr.create_pretraining_records([str(bad)], cased_vocab, prefix,
                                        on_decode_error="replace",
                                        progress=False)
  assert stats.replaced_lines == 1 and stats.documents == 2


def test_empty_file_missing_glob_and_bad_vocab(cased_vocab, tmp_path):
  empty = tmp_path / "empty.txt"
  empty.write_text("\n\n")
  prefix = str(tmp_path / "r")
  with pytest.raises(corpus.CorpusError, match="empty.txt: file is empty"):
    pr.create_pretraining_records([str(empty)], cased_vocab, prefix,
                                  progress=False)
  with pytest.raises(corpus.CorpusError, match="matches no file"):
    pr.create_pretraining_records([str(tmp_path / "none*.txt")], cased_vocab,
                                  prefix, progress=False)
  vocab = tmp_path / "v.txt"
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
  good = tmp_path / "good.txt"
  good.write_text("hello\n")
  with pytest.raises(tokenization.VocabError, match=r"lacks .*\[MASK\]"):
    pr.create_pretraining_records([str(good)], str(vocab), prefix,
                                  progress=False)
  assert _no_outputs(prefix)


def test_empty_documents_are_skipped(cased_vocab, tmp_path):
  f = tmp_path / "c.txt"
  f.write_text("First document.\n\n\n\nSecond document.\nMore.\n\n")
  stats = pr.create_pretraining_records([str(f)], cased_vocab,
                                        str(tmp_path / "r"), progress=False)
  assert stats.documents == 2 and stats.blocks == 2 and stats.lines == 3


def test_progress_is_whole_lines_of_the_mb_read(small_vocab, tmp_path,
                                                capsys):
  """utils/progress.py, as every reporter of the package (not tqdm)."""
  f = tmp_path / "c.txt"
  f.write_text("The cat sat on the mat.\n\nIt was happy.\n")
  pr.create_pretraining_records([str(f)], small_vocab, str(tmp_path / "r"),
                                max_seq_length=32)
  err = capsys.readouterr().err
  assert "\r" not in err
  assert re.fullmatch(r"tokenize\+pack \[\d+\.\d s\] 1/1 MB read \(100%\), "
                      r"ETA \d+\.\d s\n", err), err


def test_cli_error_is_one_line_and_nonzero(cased_vocab, tmp_path):
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"ok\n\xc3\x28 broken\n")
  proc = subprocess.run(tool_args(bad, cased_vocab, tmp_path / "o"),
                        capture_output=True, text=True, timeout=300)
  assert proc.returncode == 1
  assert errors(proc.stderr) == [
      f"create_pretraining_data: error: {bad}:2: invalid UTF-8 (byte 0xc3 at "
      "column 1); fix the file or pass --on_decode_error=replace"]
  assert _no_outputs(str(tmp_path / "o"))


def _nothing_written(out_dir):
  return not os.path.exists(out_dir), sorted(glob.glob(f"{out_dir}/**"))


def test_rerun_with_fewer_shards_removes_the_earlier_shards(
    corpus_slice, cased_vocab, tmp_path, caplog):
  prefix = str(tmp_path / "r")
  other = tmp_path / "r-valid-00000-of-00001.tfrecord"  # another prefix's
  other.write_bytes(b"")
  pr.create_pretraining_records(corpus_slice[:1], cased_vocab, prefix,
                                max_seq_length=128, num_shards=3,
                                progress=False)
  with caplog.at_level(logging.WARNING):
    stats = pr.create_pretraining_records(corpus_slice[:1], cased_vocab,
                                          prefix, max_seq_length=128,
                                          num_shards=2, progress=False)
  assert sorted(glob.glob(prefix + "-?????-of-?????.tfrecord*")) == (
      record_format.shard_paths(prefix, 2))
  assert other.exists()
  # The documented glob reads this run's blocks once, none of the earlier's.
  assert len(_read_records(prefix)) == stats.blocks
  assert any(m.startswith("removing 3 shard(s) of an earlier run with "
                          "another num_shards: ") for m in caplog.messages)


def test_partial_shards_of_an_interrupted_run_are_removed_on_start(
    cased_vocab, tmp_path):
  text = tmp_path / "c.txt"
  text.write_text("First document.\n\nSecond document.\n")
  stale = tmp_path / "r-00003-of-00008.tfrecord.incomplete"
  stale.write_bytes(b"partial")
  other = tmp_path / "r2-00000-of-00001.tfrecord.incomplete"
  other.write_bytes(b"another prefix")
  pr.create_pretraining_records([str(text)], cased_vocab, str(tmp_path / "r"),
                                progress=False)
  assert not stale.exists() and other.exists()
  assert not glob.glob(str(tmp_path / "r-*.incomplete"))


def test_failed_run_removes_the_output_dir_it_created(cased_vocab, tmp_path):
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"ok\n\xc3\x28 broken\n")
  with pytest.raises(corpus.CorpusError):
    pr.create_pretraining_records([str(bad)], cased_vocab,
                                  str(tmp_path / "new" / "deeper" / "r"),
                                  progress=False)
  assert _nothing_written(str(tmp_path / "new")) == (True, [])


def test_unwritable_output_path_is_one_line(cased_vocab, tmp_path):
  text = tmp_path / "c.txt"
  text.write_text("One document.\n")
  blocker = tmp_path / "file"
  blocker.write_text("a file, not a directory")
  proc = subprocess.run(
      tool_args(text, cased_vocab, blocker / "out" / "r"),
      capture_output=True, text=True, timeout=300)
  assert proc.returncode == 1
  assert errors(proc.stderr) == [
      f"create_pretraining_data: error: cannot create output directory "
      f"{blocker / 'out'}: Not a directory; choose a writable output_prefix"]
  # A shard path taken by a directory: the shard cannot be opened.
  (tmp_path / "r-00000-of-00001.tfrecord.incomplete").mkdir()
  with pytest.raises(pr.RecordsOutputError,
                     match=r"cannot write .*r-00000-of-00001.tfrecord."
                     "incomplete: .*; choose a writable output_prefix"):
    pr.create_pretraining_records([str(text)], cased_vocab,
                                  str(tmp_path / "r"), progress=False)


def test_disk_full_leaves_no_partial_shards(corpus_slice, cased_vocab,
                                            tmp_path):
  def small_disk():  # writes past 50 kB fail with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

  out = tmp_path / "out"
  proc = subprocess.run(
      tool_args(",".join(corpus_slice), cased_vocab, out / "r",
                 "--num_shards=2"),
      capture_output=True, text=True, timeout=300, preexec_fn=small_disk)
  assert proc.returncode == 1
  [error] = errors(proc.stderr)
  assert error.startswith(f"create_pretraining_data: error: cannot write "
                          f"{out / 'r'}-0000")
  assert error.endswith(".tfrecord.incomplete: File too large; choose a "
                        "writable output_prefix with free space (no shard "
                        "was left behind)")
  assert _nothing_written(str(out)) == (True, [])


def test_sigterm_while_writing_leaves_no_partial_shards(cased_vocab,
                                                        tmp_path):
  out = tmp_path / "out"
  proc = subprocess.Popen(
      tool_args(data_path("corpus", "linux-doc.txt"), cased_vocab, out / "r",
                 "--num_shards=4"),
      stderr=subprocess.PIPE, text=True)
  deadline = time.time() + 240
  while not glob.glob(str(out / "r-*.incomplete")):
    assert proc.poll() is None, proc.stderr.read()
    assert time.time() < deadline
    time.sleep(0.05)
  time.sleep(0.5)  # well inside the 10 MB file
  proc.send_signal(signal.SIGTERM)
  _, stderr = proc.communicate(timeout=120)
  assert proc.returncode == 128 + signal.SIGTERM
  assert errors(stderr) == [
      "create_pretraining_data: error: terminated by SIGTERM while writing "
      f"{out / 'r'}-*; partial shards removed, rerun to write them"]
  assert _nothing_written(str(out)) == (True, [])
