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
builds from them, must equal the transcription. The exported
reference-variant model's resolve_with_speakers must change its scores with
the speakers and the genre, score as the in-process model fed the same
features, and refuse an unknown genre or a wrong number of speakers.
"""

import os

import numpy as np
import pytest

from conftest import data_path
from test_coref_reference import _inputs
from test_coref_reference import _model
from test_coref_reference import _opening
from test_coref_reference import get_sentence_map
from test_coref_reference import litbank_train_files
import official_spanbert  # noqa: F401
import tensorflow as tf

from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import coref as coref_data
from official_spanbert.data.finetuning import ontonotes
from official_spanbert.data.finetuning import conll2012
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
                                                     tmp_path, monkeypatch):
  lines = litbank[1]
  old = lines[0][len("#begin document ("):lines[0].index(")")]
  docs = [conll2012.parse_lines([l.replace(old, name) for l in lines])[0]
          for name in NAMES]
  # absl's logger level depends on what ran before (caplog missed the line
  # in a full run): the calls are recorded directly.
  logged = []
  monkeypatch.setattr(coref_data.logging, "info",
                      lambda msg, *args: logged.append(msg % args))
  examples = coref_data.encode_documents(docs, tokenizer, 384)
  assert [e.genre for e in examples] == [_genre(n, 0) for n in NAMES] == [
      3, 0, 6, 0, 0]
  notes = [m for m in logged if "genre prefix" in m]
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


# Serving ----------------------------------------------------------------

SEG = 64


@pytest.fixture(scope="module")
def exported(tmp_path_factory, litbank):
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  doc, = conll2012.parse_lines(litbank[0])
  lines = [" ".join(s) for s in doc.sentences[:14]]
  tf.random.set_seed(4)
  model = _model(initializer_range=0.2)
  vocab = data_path("vocab", "bert-base-cased-vocab.txt")
  tokenizer = tokenization.WordpieceTokenizer(vocab)
  # The variables are built on the 14 served sentences: an eager call on
  # the whole document (53 segments) cost 25 CPU-s.
  served = _opening(doc, sum(len(s) for s in doc.sentences[:14]))
  example = coref_data.encode_document(served, tokenizer, SEG)
  model(_inputs(example, SEG)[0], training=False)  # builds the variables
  base = tmp_path_factory.mktemp("coref_speakers")
  out = coref_module.CorefServingModule(
      model, vocab, max_segment_len=SEG,
      max_num_speakers=MAX_NUM_SPEAKERS).write(str(base), version=1)
  # The in-process model as one graph: traced once for the three requests
  # (the same text, so the same shapes), where three eager calls cost
  # ~3x as much CPU.
  call = tf.function(lambda features: model(features, training=False))
  return {"model": model, "call": call,
          "loaded": tf.saved_model.load(out["model"]),
          "dir": out["model"], "lines": lines, "tokenizer": tokenizer}


def _scores(exported, genre, speakers):
  text = "\n".join(exported["lines"])
  out = exported["loaded"].resolve_scores(
      tf.constant(text), tf.constant(genre), tf.constant(speakers, tf.string))
  return {k: v.numpy() for k, v in out.items()}


def _in_process(exported, scores):
  features = {k: scores[k] for k in ("input_word_ids", "input_mask",
                                     "sentence_map", "speaker_ids",
                                     "word_start", "word_end", "genre")}
  out = exported["call"](features)
  return {k: v.numpy() for k, v in out.items()}


def test_speakers_and_genre_change_the_served_scores(exported):
  lines = exported["lines"]
  same = _scores(exported, "", ["A"] * len(lines))
  turns = [f"spk{i % 3}" if i % 4 else "-" for i in range(len(lines))]
  other = _scores(exported, "", turns)
  news = _scores(exported, "nw", turns)
  # Speakers per wordpiece: the line's, as ids of the reference's dict.
  per_line = exported["tokenizer"].tokenize(
      tf.constant(lines))[0].row_lengths().numpy()
  spoken = [turns[i] for i, n in enumerate(per_line) for _ in range(n)]
  assert other["speaker_ids"][0].tolist() == _speaker_ids(spoken)
  assert len(set(same["speaker_ids"][0].tolist())) == 1
  assert (same["genre"], other["genre"], news["genre"]) == ([0], [0], [3])
  # Mention scores and pruning do not read speakers or genre; pair scores do.
  for key in ("top_span_starts", "top_span_ends", "top_antecedents"):
    np.testing.assert_array_equal(same[key], other[key])
    np.testing.assert_array_equal(other[key], news[key])
  valid = same["top_antecedents_mask"]
  ante = lambda o: o["antecedent_scores"][:, 1:][valid]  # noqa: E731
  assert np.abs(ante(same) - ante(other)).max() > 1e-3
  assert np.abs(ante(other) - ante(news)).max() > 1e-3
  assert len(same["input_word_ids"][0]) >= 3  # several segments
  # The served scores are the in-process model's on the same features.
  for served in (same, other, news):
    ours = _in_process(exported, served)
    for key in ("top_span_starts", "top_antecedents"):
      np.testing.assert_array_equal(ours[key], served[key])
    np.testing.assert_allclose(ours["antecedent_scores"],
                               served["antecedent_scores"], atol=1e-5)


def test_resolve_with_speakers_defaults_and_refusals(exported):
  loaded = exported["loaded"]
  text = tf.constant("\n".join(exported["lines"]))
  plain = loaded.signatures["resolve"](text=text)
  for genre in ("", "bc"):
    none = loaded.signatures["resolve_with_speakers"](
        text=text, genre=tf.constant(genre),
        line_speakers=tf.constant([], tf.string))
    for key in plain:
      np.testing.assert_array_equal(none[key], plain[key], err_msg=key)
  refusals = (
      ("news", [], r"\[genre news is not one of bc, bn, mz, nw, pt, tc, wb: "
       r"pass one of them, or an empty genre for bc \(the reference "
       r"default\)\]"),
      ("", ["A", "B"], r"\[line_speakers has 2 strings but the text has 14 "
       r"lines: give one speaker per line \(the text split at line "
       r"breaks\), or none\]"),
      (["bc", "nw"], [], r"genre takes one string \(a scalar, one of bc, bn, "
       r"mz, nw, pt, tc, wb or empty\), not a batch of shape \[2\]"),
      (b"\xffbc", [], "genre \ufffdbc is not one of"))
  for genre, speakers, message in refusals:
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
      loaded.signatures["resolve_with_speakers"](
          text=text, genre=tf.constant(genre),
          line_speakers=tf.constant(speakers, tf.string))
  warmup = os.path.join(exported["dir"], "assets.extra",
                        "tf_serving_warmup_requests")
  assert sum(1 for _ in tf.data.TFRecordDataset(warmup)) == 3
