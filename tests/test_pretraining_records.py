"""Tests of corpus -> pretraining records (tools/create_pretraining_data.py)."""

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.data import corpus
from official_spanbert.data import pretraining_records as pr
from official_spanbert.data import tokenization
from conftest import REPO, data_path, first_lines


def _read_records(prefix, mode="single"):
  spec = pr.feature_spec(mode)
  out = []
  for path in sorted(glob.glob(prefix + "-*.tfrecord")):
    for raw in tf.data.TFRecordDataset(path).as_numpy_iterator():
      ex = tf.io.parse_single_example(raw, spec)
      out.append({k: v.numpy() for k, v in ex.items()})
  return out


@pytest.fixture(scope="module")
def corpus_slice(tmp_path_factory):
  """About 300 KB of real prose from three corpus files (whole documents)."""
  d = tmp_path_factory.mktemp("slice")
  return [first_lines(data_path("corpus", name), 100_000, str(d / name))
          for name in ("linux-doc.txt", "austen.txt", "python-doc.txt")]


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


def test_cli_error_is_one_line_and_nonzero(cased_vocab, tmp_path):
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"ok\n\xc3\x28 broken\n")
  proc = subprocess.run(
      [sys.executable, os.path.join(REPO, "tools",
                                    "create_pretraining_data.py"),
       f"--input_file={bad}", f"--vocab_file={cased_vocab}",
       f"--output_prefix={tmp_path / 'o'}", "--noprogress"],
      capture_output=True, text=True, timeout=300)
  assert proc.returncode == 1
  # (TensorFlow's own start-up logging may precede it.)
  errors = [l for l in proc.stderr.splitlines()
            if l.startswith("create_pretraining_data:")]
  assert errors == [f"create_pretraining_data: error: {bad}:2: invalid UTF-8 "
                    "(byte 0xc3 at column 1); fix the file or pass "
                    "--on_decode_error=replace"]
  assert _no_outputs(str(tmp_path / "o"))
