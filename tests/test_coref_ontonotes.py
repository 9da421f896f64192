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

"""OntoNotes-style input (issue 38 item 4) against mandarjoshi90/coref.

minimize.py (get_document, split_into_segments, get_sentence_map and the
speakers of finalize) and independent.py (get_speaker_dict, the genre of
doc_key) are transcribed below in plain Python from the reference, not from
the package, and run on whole LitBank documents whose column 10 is rewritten
to 23 speakers (more than the reference's cap of 20 ids) and whose names are
OntoNotes-like or not. The records, and the tokens the `reference` variant
builds from them, must equal the transcription.
"""

import logging
import os

import numpy as np
import pytest

from conftest import data_path
from test_coref_reference import _inputs
from test_coref_reference import _model
from test_coref_reference import get_sentence_map
from test_coref_reference import litbank_train_files
import official_spanbert  # noqa: F401
import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import coref as coref_data
from official_spanbert.data.finetuning import ontonotes
from official_spanbert.metrics import conll2012
from official_spanbert.modeling import coref_reference

# experiments.conf
REFERENCE_GENRES = ["bc", "bn", "mz", "nw", "pt", "tc", "wb"]
MAX_NUM_SPEAKERS = 20  # experiments.conf
NAMES = ("nw/wsj/00/wsj_0001", "bc/cctv/00/cctv_0000", "wb/eng/00/eng_0009",
         "1023_bleak_house_brat", "n")


# The reference, transcribed --------------------------------------------------


def _minimize(lines, pieces_of, segment_len):
  """minimize.py get_document (English), split_into_segments with
  constraints sentence_end then token_end, finalize's speakers and subtoken
  map, get_sentence_map (test_coref_reference's transcription). `lines` are a document's lines between #begin and
  #end; `pieces_of(word)` is tokenizer.tokenize."""
  subtokens, info, sentence_end, token_end, subtoken_map = [], [], [], [], []
  word_idx = -1
  for line in lines:
    row = line.split()
    if len(row) == 0:
      sentence_end[-1] = True
      continue
    assert len(row) >= 12
    word_idx += 1
    word = row[3][1:] if row[3] in ("/.", "/?") else row[3]  # normalize_word
    subs = pieces_of(word)
    token_end += ([False] * (len(subs) - 1)) + [True]
    for sidx, sub in enumerate(subs):
      subtokens.append(sub)
      info.append(None if sidx != 0 else (row + [len(subs)]))
      sentence_end.append(False)
      subtoken_map.append(word_idx)
  segments, segment_subtoken_map, segment_info = [], [], []
  current, previous_token = 0, 0
  while current < len(subtokens):
    end = min(current + segment_len - 1 - 2, len(subtokens) - 1)
    while end >= current and not sentence_end[end]:
      end -= 1
    if end < current:
      end = min(current + segment_len - 1 - 2, len(subtokens) - 1)
      while end >= current and not token_end[end]:
        end -= 1
      if end < current:
        raise Exception("Can't find valid segment")
    segments.append(["[CLS]"] + subtokens[current:end + 1] + ["[SEP]"])
    sub_map = subtoken_map[current:end + 1]
    segment_subtoken_map.append([previous_token] + sub_map + [sub_map[-1]])
    segment_info.append([None] + info[current:end + 1] + [None])
    current = end + 1
    previous_token = sub_map[-1]
  speakers = []
  for segment in segment_info:
    seg_speakers = []
    for i, tok_info in enumerate(segment):
      if tok_info is None and (i == 0 or i == len(segment) - 1):
        seg_speakers.append("[SPL]")
      elif tok_info is None:
        seg_speakers.append(seg_speakers[-1])
      else:
        seg_speakers.append(tok_info[9])
    speakers.append(seg_speakers)
  return {"sentences": segments, "speakers": speakers,
          "sentence_map": get_sentence_map(segments, sentence_end),
          "subtoken_map": [t for s in segment_subtoken_map for t in s],
          "sentence_end": sentence_end, "token_end": token_end}


def _speaker_ids(speakers, max_num_speakers=MAX_NUM_SPEAKERS):
  """independent.py get_speaker_dict and `speaker_dict.get(s, 3)`."""
  speaker_dict = {"UNK": 0, "[SPL]": 1}
  for s in speakers:
    if s not in speaker_dict and len(speaker_dict) < max_num_speakers:
      speaker_dict[s] = len(speaker_dict)
  return [speaker_dict.get(s, 3) for s in speakers]


def _genre(name, part):
  """independent.py: genres.get(doc_key[:2], 0), conll.get_doc_key."""
  doc_key = "{}_{}".format(name, int(part))
  return {g: i for i, g in enumerate(REFERENCE_GENRES)}.get(doc_key[:2], 0)


# Inputs ------------------------------------------------------------------


def _speaker_of(sentence):
  return "-" if sentence % 7 == 3 else f"spk{sentence % 23}"


def _ontonotes_lines(path, name):
  """A LitBank file's lines renamed to `name`, column 10 one speaker per
  sentence (23 of them and `-`)."""
  with open(path, encoding="utf-8") as f:
    lines = f.read().splitlines()
  old = lines[0][len("#begin document ("):lines[0].index(")")]
  out, sentence = [], 0
  for line in lines:
    if line.startswith("#"):
      out.append(line.replace(f"({old})", f"({name})"))
      continue
    cols = line.split("\t")
    if len(cols) < 12:
      sentence += 1
      out.append(line)
      continue
    cols[0], cols[9] = name, _speaker_of(sentence)
    out.append("\t".join(cols))
  return out


@pytest.fixture(scope="module")
def tokenizer():
  return tokenization.WordpieceTokenizer(
      data_path("vocab", "bert-base-cased-vocab.txt"))


@pytest.fixture(scope="module")
def litbank():
  """Two LitBank documents, the first renamed as an OntoNotes `nw` one."""
  first, second = litbank_train_files()
  return [_ontonotes_lines(first, "nw/wsj/00/wsj_0001"),
          _ontonotes_lines(second, os.path.basename(second)[:-len(".conll")])]


def _pieces(tokenizer, lines):
  words = sorted({l.split()[3] for l in lines
                  if l.strip() and not l.startswith("#")} | {".", "?"})
  return dict(zip(words, coref_data.word_pieces(tokenizer, words)))


# Data -------------------------------------------------------------------


@pytest.mark.parametrize("segment_len", [64, 384, 512])
def test_segments_speakers_and_maps_equal_minimize_py(tokenizer, litbank,
                                                      segment_len):
  cut_inside_sentence = 0
  for lines in litbank:
    pieces = _pieces(tokenizer, lines)
    ref = _minimize(lines[1:-1], lambda w: pieces[w], segment_len)  # pylint: disable=cell-var-from-loop
    doc, = conll2012.parse_lines(lines)
    ex = coref_data.encode_document(doc, tokenizer, segment_len,
                                    max_num_speakers=MAX_NUM_SPEAKERS)
    cls, sep = tokenizer.vocab.cls_id, tokenizer.vocab.sep_id
    assert ex.segments == [[cls] + s[1:-1] + [sep] for s in ref["sentences"]]
    assert len(ex.segments) >= 2_000 // segment_len
    content = [s for seg in ref["speakers"] for s in seg[1:-1]]
    assert ex.speaker_ids == [
        i for i, s in zip(_speaker_ids([s for seg in ref["speakers"]
                                        for s in seg]),
                          [s for seg in ref["speakers"] for s in seg])
        if s != "[SPL]"]
    # 24 speaker strings, ids 2..19 (20 with 'UNK' and '[SPL]'): the
    # speakers past the cap share id 3 with the second one.
    assert len(set(content)) == 24 and set(ex.speaker_ids) == set(
        range(2, MAX_NUM_SPEAKERS))
    ends = np.cumsum([len(s) - 2 for s in ref["sentences"]]) - 1
    cut_inside_sentence += sum(not ref["sentence_end"][e] for e in ends)
    assert ex.genre == _genre(doc.name, 0)
  if segment_len == 64:  # a sentence longer than a segment: cut at a word
    assert cut_inside_sentence > 0


def test_reference_tokens_take_minimize_py_sentences_and_speakers(tokenizer,
                                                                  litbank):
  """[CLS]/[SEP] get the reference's sentence map, subtoken map and [SPL]
  (one id of their own) in the tokens the reference variant builds."""
  lines = litbank[0]
  pieces = _pieces(tokenizer, lines)
  ref = _minimize(lines[1:-1], lambda w: pieces[w], 384)
  doc, = conll2012.parse_lines(lines)
  ex = coref_data.encode_document(doc, tokenizer, 384,
                                  max_num_speakers=MAX_NUM_SPEAKERS)
  model = _model()
  inputs, _ = _inputs(ex, 384)
  _, sentence, speaker, _, content_index = model._tokens(inputs, False)  # pylint: disable=protected-access
  assert sentence.numpy().tolist() == ref["sentence_map"]
  flat = [s for seg in ref["speakers"] for s in seg]
  want = [coref_reference.SPEAKER_OF_MARKERS if s == "[SPL]" else i
          for s, i in zip(flat, _speaker_ids(flat))]
  assert speaker.numpy().tolist() == want
  assert [ex.subtoken_map[i] for i in content_index.numpy()] == (
      ref["subtoken_map"])


def test_genre_comes_from_doc_key_and_is_logged_once(tokenizer, litbank,
                                                     tmp_path, caplog):
  lines = litbank[1]
  old = lines[0][len("#begin document ("):lines[0].index(")")]
  docs = [conll2012.parse_lines([l.replace(old, name) for l in lines])[0]
          for name in NAMES]
  with caplog.at_level(logging.INFO):
    examples = coref_data.encode_documents(docs, tokenizer, 384)
  assert [e.genre for e in examples] == [_genre(n, 0) for n in NAMES] == [
      3, 0, 6, 0, 0]
  notes = [r.getMessage() for r in caplog.records
           if "genre prefix" in r.getMessage()]
  assert notes == [
      "coref data: 2 of 5 documents have no OntoNotes genre prefix (bc, bn, "
      "mz, nw, pt, tc, wb) in their names (e.g. '1023_bleak_house_brat'); "
      "they get genre 0 (bc), as the reference"]
  path = str(tmp_path / "r.tf_record")
  coref_data.write_examples(examples, path, 384)
  read = [int(b["genre"][0]) for b in coref_data.load(path, 384, False)]
  assert read == [3, 0, 6, 0, 0]


def test_speaker_ids_in_python_and_graph_follow_the_reference():
  rng = np.random.default_rng(0)
  pool = [f"s{i}" for i in range(30)] + ["-", "_", "", "UNK", "[SPL]"]
  for _ in range(20):
    speakers = list(rng.choice(pool, size=60))
    ours = ontonotes.speaker_ids(speakers, MAX_NUM_SPEAKERS)
    assert ours == _speaker_ids(speakers)
    graph = ontonotes.speaker_ids_graph(tf.constant(speakers),
                                        MAX_NUM_SPEAKERS)
    assert graph.numpy().tolist() == ours
    default = ontonotes.speaker_ids(speakers)
    assert ontonotes.speaker_ids_graph(
        tf.constant(speakers)).numpy().tolist() == default
    none = [s in ("-", "_", "") for s in speakers]
    assert all((a == 0) == n for a, n in zip(default, none))
  assert ontonotes.normalize_word("/.") == "." and (
      ontonotes.normalize_word("/?") == "?")
