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

"""Tests for the built-in demo corpus (official_spanbert.demo.corpus and
tools/build_demo_corpus.py)."""

import os
import subprocess
import sys

import pytest

import official_spanbert  # noqa: F401  (before tensorflow)
from official_spanbert.data.pretraining import corpus
from official_spanbert.demo import corpus as demo_corpus
from conftest import TOOLS

MAX_DOCS = 40


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
  path = str(tmp_path_factory.mktemp("demo") / "corpus.txt")
  stats = demo_corpus.build_demo_corpus(path, max_documents=MAX_DOCS)
  return path, stats


def _documents(text):
  assert text.endswith("\n") and not text.endswith("\n\n")
  return [d.split("\n") for d in text[:-1].split("\n\n")]


def test_bert_corpus_format(small_corpus):
  path, stats = small_corpus
  with open(path, encoding="utf-8") as f:
    text = f.read()
  docs = _documents(text)
  assert len(docs) == stats["documents"] == MAX_DOCS
  assert sum(len(d) for d in docs) == stats["lines"]
  assert os.path.getsize(path) == stats["bytes"]
  for doc in docs:
    assert doc, "empty document"
    for line in doc:
      assert line.strip() == line and line, repr(line)
      assert "  " not in line and "\t" not in line
  # corpus.read_documents agrees.
  read = list(corpus.read_documents([path]))
  assert [d.lines for d in read] == docs
  assert not os.path.exists(path + ".incomplete")


def test_real_prose_no_doctests(small_corpus):
  path, _ = small_corpus
  with open(path, encoding="utf-8") as f:
    lines = [l for l in f.read().splitlines() if l]
  text = "\n".join(lines)
  # Module docstrings of __future__.py and _collections_abc.py, which sort
  # first in the standard library.
  assert "Record of phased-in incompatible language changes." in lines
  assert "Abstract Base Classes (ABCs) for collections" in text
  assert not any(">>>" in l for l in lines)
  assert not any(l.startswith(("def ", "class ", "import ")) for l in lines)
  # English sentences: most lines contain a common function word.
  common = (" the ", " a ", " of ", " is ", " to ", " and ", " if ", " in ")
  with_words = sum(any(w in f" {l} " for w in common) for l in lines)
  assert with_words / len(lines) > 0.7
  assert min(len(l) for l in lines) >= demo_corpus.MIN_PARAGRAPH_CHARS


def test_deterministic_and_limits(small_corpus, tmp_path):
  path, stats = small_corpus
  again = tmp_path / "again.txt"
  stats2 = demo_corpus.build_demo_corpus(str(again), max_documents=MAX_DOCS)
  with open(path, "rb") as f:
    assert again.read_bytes() == f.read()
  assert stats2["bytes"] == stats["bytes"]
  # max_bytes: the file stays within it, cut at a line boundary.
  capped = tmp_path / "capped.txt"
  s = demo_corpus.build_demo_corpus(str(capped), max_bytes=20000)
  assert s["bytes"] == capped.stat().st_size <= 20000
  assert s["bytes"] > 15000
  with open(path, "rb") as f:
    # the capped corpus is a prefix of the same documents
    assert f.read().startswith(capped.read_bytes())
  with pytest.raises(ValueError):
    demo_corpus.build_demo_corpus(str(tmp_path / "x.txt"), max_documents=0)
  with pytest.raises(ValueError, match="no document"):
    demo_corpus.build_demo_corpus(str(tmp_path / "x.txt"), max_bytes=5)
  assert not (tmp_path / "x.txt").exists()
  assert not (tmp_path / "x.txt.incomplete").exists()


def test_skips_tests_and_parses_without_importing(tmp_path):
  lib = tmp_path / "lib"
  (lib / "test").mkdir(parents=True)
  (lib / "pkg").mkdir()
  prose = ("This module explains, in plain words, how the example "
           "library is meant to be used by its readers.")
  (lib / "test" / "test_x.py").write_text(f'"""{prose} test"""\n')
  (lib / "pkg" / "mod.py").write_text(
      f'"""{prose}\n\nExample::\n\n    x = compute(1, 2)\n'
      f'    print(x)\n\nAfter the example, the module continues with '
      f'more plain English text.\n\n>>> 1 + 1\n2\n"""\n'
      'raise SystemExit("imported!")\n\n'
      'def f():\n  """Return the answer to the question that was asked '
      'of the function."""\n')
  (lib / "broken.py").write_text("def (:\n")
  out = tmp_path / "c.txt"
  stats = demo_corpus.build_demo_corpus(str(out), stdlib_dir=str(lib))
  # "Example::" is too short once its literal block (and the doctest) is
  # gone; the source was parsed, not imported (it would have exited).
  assert out.read_text(encoding="utf-8").splitlines() == [
      prose,
      "After the example, the module continues with more plain English "
      "text.",
      "Return the answer to the question that was asked of the function.",
  ]
  assert stats["documents"] == 1 and stats["unparsable_files"] == 1
  assert stats["files"] == 2


def test_full_stdlib_corpus_is_substantial(tmp_path):
  out = tmp_path / "full.txt"
  stats = demo_corpus.build_demo_corpus(str(out))
  assert stats["documents"] > 200
  assert stats["lines"] > 5000
  assert stats["bytes"] > 700_000


def test_cli(tmp_path):
  out = tmp_path / "c.txt"
  result = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "build_demo_corpus.py"),
       f"--output={out}", "--max_documents=5"],
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode == 0, result.stderr
  assert result.stdout.startswith("wrote 5 documents")
  assert len(_documents(out.read_text(encoding="utf-8"))) == 5
  bad = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "build_demo_corpus.py"),
       f"--output={tmp_path / 'd.txt'}", "--max_bytes=0"],
      capture_output=True, text=True, timeout=120, check=False)
  assert bad.returncode != 0
  assert bad.stderr.strip().splitlines() == [
      "build_demo_corpus: error: max_bytes must be >= 1, got 0"]


def test_pretraining_records_from_demo_corpus(small_corpus, cased_vocab,
                                             tmp_path):
  """With SpanBERT's own vocab (skipped when the shared data is absent)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import pretraining_records  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import record_format  # pylint: disable=g-import-not-at-top
  path, corpus_stats = small_corpus
  prefix = str(tmp_path / "rec" / "train")
  stats = pretraining_records.create_pretraining_records(
      [path], cased_vocab, prefix, max_seq_length=128, num_shards=2,
      progress=False)
  assert stats.documents == corpus_stats["documents"]
  assert stats.lines == corpus_stats["lines"]
  assert stats.blocks > corpus_stats["documents"]
  assert stats.tokens > corpus_stats["bytes"] / 8
  spec = record_format.feature_spec("single")
  n = 0
  for shard in record_format.shard_paths(prefix, 2):
    for raw in tf.data.TFRecordDataset(shard):
      ex = tf.io.parse_single_example(raw, spec)
      ids = ex["input_ids"].numpy()
      assert 0 < len(ids) <= 126
      assert (ids != 100).mean() > 0.95  # few [UNK]s in real prose
      n += 1
  assert n == stats.blocks


def test_demo_pipeline_without_shared_data(small_corpus, tmp_path):
  """demo corpus -> its own vocab -> pretraining records, nothing external."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import pretraining_records  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import record_format  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import vocab_builder  # pylint: disable=g-import-not-at-top
  path, corpus_stats = small_corpus
  vocab_file = str(tmp_path / "vocab.txt")
  vstats = vocab_builder.build_vocab([path], vocab_file, vocab_size=1000,
                                     min_token_count=5, progress=False)
  assert 500 < vstats.vocab_size <= 1000
  vocab = tokenization.load_vocab(vocab_file)
  prefix = str(tmp_path / "train")
  stats = pretraining_records.create_pretraining_records(
      [path], vocab_file, prefix, max_seq_length=128, progress=False)
  assert stats.documents == corpus_stats["documents"]
  assert stats.blocks > corpus_stats["documents"]
  ids = tf.concat([tf.io.parse_single_example(
      r, record_format.feature_spec())["input_ids"]
                   for r in tf.data.TFRecordDataset(
                       record_format.shard_paths(prefix, 1)[0])], 0)
  ids = ids.numpy()
  assert len(ids) == stats.tokens
  assert ids.max() < vocab.size
  assert (ids == vocab.unk_id).mean() < 0.01
