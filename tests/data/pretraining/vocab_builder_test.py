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

"""Tests for the WordPiece vocab builder (official_spanbert.data.pretraining.vocab_builder
and tools/build_vocab.py)."""

import os
import subprocess
import sys

import pytest

import official_spanbert  # noqa: F401  (before tensorflow)
from official_spanbert.data.pretraining import corpus
from official_spanbert.data import tokenization
from official_spanbert.data.pretraining import vocab_builder
from conftest import TOOLS, data_path

TRAIN_LINES = 5000
VOCAB_SIZE = 2000
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _corpus():
  """python-doc.txt of the shared data (skips the test when absent)."""
  return data_path("corpus", "python-doc.txt")


def _cli(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run(
      [sys.executable, os.path.join(TOOLS, "build_vocab.py"),
       "--noprogress", *args],
      capture_output=True, text=True, env=env, timeout=300, check=False)


def _error_lines(stderr):
  return [l for l in stderr.splitlines() if l.startswith("build_vocab: error:")]


@pytest.fixture(scope="module")
def real_vocab(tmp_path_factory):
  """A 2000-token cased vocab learned from 5000 real lines (~30 s)."""
  path = str(tmp_path_factory.mktemp("vocab") / "sub" / "vocab.txt")
  stats = vocab_builder.build_vocab([_corpus()], path, vocab_size=VOCAB_SIZE,
                                    max_lines=TRAIN_LINES, progress=False)
  assert stats.truncated and stats.lines == TRAIN_LINES
  assert stats.vocab_size == len(open(path, encoding="utf-8").readlines())
  assert not os.path.exists(path + ".incomplete")
  return path


def _held_out_lines(n=400):
  """Real lines the vocab was not learned from (after the first 5000)."""
  lines = []
  for doc in corpus.read_documents([_corpus()]):
    lines.extend(doc.lines)
    if len(lines) >= TRAIN_LINES * 3 + n:
      break
  return lines[TRAIN_LINES * 3:TRAIN_LINES * 3 + n]


def test_reserved_tokens_first(real_vocab):
  vocab = tokenization.load_vocab(real_vocab)
  assert list(vocab.tokens[:5]) == SPECIALS
  assert (vocab.pad_id, vocab.unk_id, vocab.cls_id, vocab.sep_id,
          vocab.mask_id) == (0, 1, 2, 3, 4)
  unused = [f"[unused{i}]" for i in range(vocab_builder.DEFAULT_NUM_UNUSED)]
  assert list(vocab.tokens[5:105]) == unused
  # No other bracketed token: random replacement draws from the rest.
  assert len(vocab.ordinary_ids()) == vocab.size - 105


def test_size_and_case(real_vocab):
  vocab = tokenization.load_vocab(real_vocab)
  # bert_vocab_from_dataset accepts up to 5% below the target, never above.
  assert 0.9 * VOCAB_SIZE <= vocab.size <= VOCAB_SIZE, vocab.size
  tokens = set(vocab.tokens)
  assert {"the", "The", "Python", "##s", "."} <= tokens
  multi_char_cased = [t for t in tokens if len(t.lstrip("#")) > 1 and
                      not t.startswith("[") and t != t.lower()]
  assert len(multi_char_cased) > 50, multi_char_cased


def test_few_unknowns_on_held_out_text(real_vocab):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tokenizer = tokenization.WordpieceTokenizer(real_vocab)
  lines = _held_out_lines()
  assert len(lines) == 400
  ids, _ = tokenizer.tokenize(tf.constant(lines))
  flat = ids.flat_values.numpy()
  unk_rate = float((flat == tokenizer.vocab.unk_id).mean())
  assert len(flat) > 10000
  assert unk_rate < 0.005, unk_rate
  # Words really are split into learned pieces, not just characters.
  pieces_per_word = len(flat) / sum(len(l.split()) for l in lines)
  assert pieces_per_word < 2.5, pieces_per_word


def test_cli_lower_case_and_num_unused(tmp_path):
  text = ("The Quick Brown Fox jumps over the lazy dog near the River Bank.\n"
          "Another Sentence about Foxes, Dogs and Rivers follows here.\n\n")
  src = tmp_path / "c.txt"
  src.write_text(text * 40, encoding="utf-8")
  out = str(tmp_path / "out" / "v.txt")
  result = _cli(f"--input_file={src}", f"--output_vocab={out}",
                "--vocab_size=300", "--do_lower_case", "--num_unused=3")
  assert result.returncode == 0, result.stderr[-3000:]
  assert "from 80 lines, 40 documents" in result.stdout, result.stdout
  vocab = tokenization.load_vocab(out)
  assert list(vocab.tokens[:8]) == SPECIALS + ["[unused0]", "[unused1]",
                                                "[unused2]"]
  assert vocab.size <= 300
  assert f"wrote {vocab.size} tokens" in result.stdout
  learned = vocab.tokens[8:]
  assert all(t == t.lower() for t in learned), learned
  assert "fox" in learned and "the" in learned


def test_cli_missing_glob(tmp_path):
  out = tmp_path / "v.txt"
  result = _cli(f"--input_file={tmp_path}/nope/*.txt", f"--output_vocab={out}")
  assert result.returncode != 0
  errors = _error_lines(result.stderr)
  assert len(errors) == 1, result.stderr
  assert "matches no file" in errors[0]
  assert "Traceback" not in result.stderr
  assert not out.exists() and list(tmp_path.iterdir()) == []


def test_empty_file_and_bad_utf8(tmp_path):
  empty = tmp_path / "empty.txt"
  empty.write_text("\n\n", encoding="utf-8")
  out = tmp_path / "v.txt"
  with pytest.raises(corpus.CorpusError, match="empty"):
    vocab_builder.build_vocab([str(empty)], str(out), vocab_size=500,
                              progress=False)
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"good line\nbad \xff line\n")
  with pytest.raises(corpus.CorpusError, match=r"bad.txt:2: invalid UTF-8"):
    vocab_builder.build_vocab([str(bad)], str(out), vocab_size=500,
                              progress=False)
  assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt",
                                                        "empty.txt"]
  # --on_decode_error=replace learns anyway.
  bad.write_bytes((b"good line here\n" * 30) + b"bad \xff line\n")
  stats = vocab_builder.build_vocab([str(bad)], str(out), vocab_size=500,
                                    on_decode_error="replace", progress=False)
  assert stats.replaced_lines == 1 and out.exists()


def test_bad_arguments(tmp_path):
  src = tmp_path / "c.txt"
  src.write_text("some text\n", encoding="utf-8")
  with pytest.raises(ValueError, match="leaves no room"):
    vocab_builder.build_vocab([str(src)], str(tmp_path / "v.txt"),
                              vocab_size=105, progress=False)
  with pytest.raises(ValueError, match="max_lines"):
    vocab_builder.build_vocab([str(src)], str(tmp_path / "v.txt"),
                              max_lines=0, progress=False)


def test_trim_keeps_characters():
  vocab = ["[PAD]", "[UNK]", "a", "b", "the", "##e", "ab", "##a", "##ab", "ba"]
  # Rarest multi-character pieces (at the end) go first; characters stay.
  assert vocab_builder._trim(vocab, 2, 8) == [  # pylint: disable=protected-access
      "[PAD]", "[UNK]", "a", "b", "the", "##e", "ab", "##a"]
  assert vocab_builder._trim(vocab, 2, 6) == [  # pylint: disable=protected-access
      "[PAD]", "[UNK]", "a", "b", "##e", "##a"]
  with pytest.raises(ValueError, match="too small"):
    vocab_builder._trim(vocab, 2, 5)  # pylint: disable=protected-access
