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

"""Coreference data: CoNLL-2012 -> wordpieces, segments, records (unit tier).

A small document written here is tokenized with the committed vocab excerpt;
the tests check the maps back to words and sentences, the segment limits and
cut points, the records' round trip and the training window.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import TOOLS
from official_spanbert.data.finetuning import coref
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import conll2012

SENTENCES = [
    "Elizabeth walked to the house of her sister .",
    "She found Jane reading in the garden .",
    "Jane looked up and smiled at her .",
    "The garden was quiet .",
]
# (sentence, first word, last word) of each mention, by cluster.
CLUSTERS = [
    [(0, 0, 0), (0, 6, 6), (1, 0, 0), (2, 6, 6)],        # Elizabeth
    [(0, 4, 7), (1, 2, 2), (2, 0, 0)],                   # her sister, Jane
    [(1, 5, 6), (3, 0, 1)],                              # the garden
    [(0, 3, 7)],                                         # singleton
]


def _conll(name="d", sentences=SENTENCES, clusters=CLUSTERS):
  marks = {}
  for cid, cluster in enumerate(clusters):
    for s, a, b in cluster:
      if a == b:
        marks.setdefault((s, a), []).append(f"({cid})")
      else:
        marks.setdefault((s, a), []).append(f"({cid}")
        marks.setdefault((s, b), []).insert(0, f"{cid})")
  lines = [f"#begin document ({name}); part 0"]
  for s, sent in enumerate(sentences):
    for w, word in enumerate(sent.split()):
      col = "|".join(marks.get((s, w), [])) or "-"
      lines.append(f"{name}\t0\t{w}\t{word}\t-\t-\t-\t-\t-\tSp{s % 2}\t-\t{col}")
    lines.append("")
  lines.append("#end document")
  return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def tokenizer(small_vocab):
  return tokenization.WordpieceTokenizer(small_vocab)


@pytest.fixture(scope="module")
def document():
  doc, = conll2012.parse_lines(_conll().splitlines())
  return doc


def test_maps_point_back_to_words_and_sentences(tokenizer, document):
  ex = coref.encode_document(document, tokenizer, max_segment_len=16)
  words = document.words
  content = [t for seg in ex.segments for t in seg[1:-1]]
  assert len(content) == ex.num_subtokens
  # The wordpieces of each word, in order, are its tokenization.
  for w, word in enumerate(words):
    ids = [content[i] for i in range(ex.num_subtokens)
           if ex.subtoken_map[i] == w]
    assert ids == coref.word_pieces(tokenizer, [word])[0]
  sentence_of_word = [s for s, sent in enumerate(document.sentences)
                      for _ in sent]
  assert ex.sentence_map == [sentence_of_word[w] for w in ex.subtoken_map]
  assert np.all(np.diff(ex.subtoken_map) >= 0)
  # Every gold mention maps back to the words of its CoNLL span.
  gold = {(s, e, c + 1) for c, cl in enumerate(document.clusters)
          for s, e in cl}
  mapped = {(ex.subtoken_map[s], ex.subtoken_map[e], c)
            for s, e, c in zip(ex.gold_starts, ex.gold_ends, ex.cluster_ids)}
  assert mapped == gold
  assert all(ex.word_start[s] and ex.word_end[e]
             for s, e in zip(ex.gold_starts, ex.gold_ends))
  # Speakers Sp0 / Sp1 alternate by sentence: ids 1, 2.
  assert ex.speaker_ids == [1 + s % 2 for s in ex.sentence_map]


@pytest.mark.parametrize("max_segment_len", [8, 12, 16, 384])
def test_segments_fit_and_cut_at_sentence_ends(tokenizer, document,
                                               max_segment_len):
  ex = coref.encode_document(document, tokenizer, max_segment_len)
  assert all(len(seg) <= max_segment_len for seg in ex.segments)
  cls, sep = tokenizer.vocab.cls_id, tokenizer.vocab.sep_id
  assert all(seg[0] == cls and seg[-1] == sep for seg in ex.segments)
  lengths = [len(seg) - 2 for seg in ex.segments]
  ends = np.cumsum(lengths)[:-1]
  sentence_ends = {i + 1 for i in range(ex.num_subtokens - 1)
                   if ex.sentence_map[i] != ex.sentence_map[i + 1]}
  longest_sentence = max(np.bincount(ex.sentence_map))
  longest_word = max(np.bincount(ex.subtoken_map))  # "Elizabeth": 8 pieces
  for end in ends:
    if longest_sentence <= max_segment_len - 2:
      assert end in sentence_ends  # every sentence fits: cut between them
    if longest_word <= max_segment_len - 2:
      assert ex.word_end[end - 1] == 1  # every word fits: cut between them
  if max_segment_len == 384:
    assert len(ex.segments) == 1


def test_split_segments_falls_back_to_word_then_any_cut():
  # No sentence end in reach: the last word end; no word end: hard cut.
  assert coref.split_segments(6, [False] * 5 + [True],
                              [0, 1, 0, 1, 0, 1], 3) == [2, 4, 6]
  assert coref.split_segments(5, [False] * 4 + [True], [0] * 4 + [1],
                              2) == [2, 4, 5]


def test_records_round_trip_and_training_window(tokenizer, document, tmp_path):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  doc2, = conll2012.parse_lines(_conll("e", SENTENCES[::-1],
                                       []).splitlines())
  examples = coref.encode_documents([document, doc2], tokenizer, 12)
  path = str(tmp_path / "r.tf_record")
  counts = coref.write_examples(examples, path, 12)
  assert counts["documents"] == 2 and counts["mentions"] == 10
  batches = list(coref.load(path, 12, is_training=False))
  assert len(batches) == 2
  first = {k: v[0].numpy() for k, v in batches[0].items()}
  ex = examples[0]
  assert first["input_word_ids"].shape == (len(ex.segments), 12)
  for i, seg in enumerate(ex.segments):
    assert first["input_word_ids"][i, :len(seg)].tolist() == seg
    assert first["input_mask"][i].sum() == len(seg)
  for name in coref.TOKEN_FEATURES + coref.MENTION_FEATURES:
    assert first[name].tolist() == getattr(ex, name), name
  assert batches[1]["gold_starts"].shape == (1, 0)
  # A window of 2 segments: its wordpieces and the mentions inside it,
  # re-indexed from the window's start.
  features = {k: tf.constant(v) for k, v in first.items()}
  window = coref.truncate(features, 2, seed=3)
  lengths = first["input_mask"].sum(1) - 2
  start = next(i for i in range(len(lengths))
               if np.array_equal(window["input_word_ids"].numpy(),
                                 first["input_word_ids"][i:i + 2]))
  lo = lengths[:start].sum()
  hi = lo + lengths[start:start + 2].sum()
  assert window["subtoken_map"].numpy().tolist() == ex.subtoken_map[lo:hi]
  inside = [(s - lo, e - lo, c) for s, e, c in
            zip(ex.gold_starts, ex.gold_ends, ex.cluster_ids)
            if s >= lo and e < hi]
  got = list(zip(*(window[n].numpy().tolist()
                   for n in coref.MENTION_FEATURES)))
  assert got == inside


def test_create_finetuning_data_writes_records_and_meta(tmp_path, small_vocab):
  conll = tmp_path / "in.conll"
  conll.write_text(_conll(), encoding="utf-8")
  meta = coref.create_finetuning_data(
      small_vocab, str(tmp_path / "out"), train_file=str(conll),
      eval_file=str(conll), max_segment_len=16)
  assert meta["train"]["documents"] == meta["eval"]["documents"] == 1
  assert meta["train"]["mentions"] == 10
  for name in ("train.tf_record", "eval.tf_record", coref.META_FILE):
    assert (tmp_path / "out" / name).exists()


def test_tool_reports_bad_conll_with_file_and_line(tmp_path, small_vocab):
  good = tmp_path / "good.conll"
  good.write_text(_conll(), encoding="utf-8")
  bad = tmp_path / "bad.conll"
  bad.write_text(_conll().replace("\t(0)\n", "\t0)\n", 1), encoding="utf-8")
  # The training file is fine, the evaluation file is not: nothing written.
  failed = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "create_finetuning_data.py"),
       "--task=coref", f"--vocab_file={small_vocab}", "--max_segment_len=16",
       f"--train_file={good}", f"--eval_file={bad}",
       f"--output_dir={tmp_path / 'out'}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  assert failed.returncode == 1, failed.stderr[-2000:]
  errors = [l for l in failed.stderr.splitlines()
            if l.startswith("create_finetuning_data: error:")]
  assert len(errors) == 1 and f"{bad}:2: cluster 0 closed" in errors[0]
  assert "Traceback" not in failed.stderr
  assert not (tmp_path / "out").exists()
