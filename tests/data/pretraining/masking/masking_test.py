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

"""Fidelity tests of graph-mode masking on real pretraining blocks.

The blocks come from ../shared/data/corpus through the records tool; each is
masked by the tf.data loader, and the same blocks by the NumPy oracle
(official_spanbert/testing/span_masking_oracle.py, a transcription of the
reference implementation).
"""

import dataclasses
import glob
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from official.nlp.data import data_loader_factory
from official_spanbert.data.pretraining.masking import masking
from official_spanbert.data.pretraining.masking import masking_config
from official_spanbert.data.pretraining.masking import span_sampler
from official_spanbert.data.pretraining import pretrain_dataloader as pdl
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.data import tokenization
from conftest import data_path, first_lines
from official_spanbert.testing import span_masking_oracle as oracle

SEQ = 512
P_K = np.array([.2 * .8 ** k for k in range(10)])
P_K /= P_K.sum()


@pytest.fixture(scope="module")
def records(tmp_path_factory, cased_vocab):
  """~1,300 real blocks of up to 510 wordpieces."""
  d = tmp_path_factory.mktemp("blocks")
  files = [first_lines(data_path("corpus", name), 700_000, str(d / name))
           for name in ("linux-doc.txt", "austen.txt", "python-doc.txt")]
  pr.create_pretraining_records(files, cased_vocab, str(d / "rec"),
                                max_seq_length=SEQ, num_shards=2,
                                progress=False)
  return sorted(glob.glob(str(d / "rec") + "-*.tfrecord"))


def _config(records, vocab, **kw):
  kw.setdefault("global_batch_size", 256)
  return pdl.SpanBertPretrainDataConfig(
      input_path=",".join(records), vocab_file=vocab, seq_length=SEQ,
      is_training=False, drop_remainder=False, seed=kw.pop("seed", 7), **kw)


def _run(records, vocab, epochs=2, **kw):
  """All batches of `epochs` passes, in file order, as one dict of arrays."""
  loader = pdl.SpanBertPretrainDataLoader(_config(records, vocab, **kw))
  ds = tf.data.TFRecordDataset(records).repeat(epochs)
  batches = list(loader.transform_and_batch(ds, diagnostics=True)
                 .as_numpy_iterator())
  out = {}
  for key in batches[0]:
    if np.ndim(batches[0][key]) >= 1:
      out[key] = np.concatenate([b[key] for b in batches])
    else:
      out[key] = np.array([b[key] for b in batches])
  return out


@pytest.fixture(scope="module")
def span_out(records, cased_vocab):
  return _run(records, cased_vocab)


def _runs(masked_row):
  """Maximal runs [s, e] (inclusive) of True."""
  padded = np.concatenate([[False], masked_row, [False]]).astype(np.int8)
  d = np.diff(padded)
  return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1))


def _masked_matrix(out):
  m = np.zeros(out["input_word_ids"].shape, bool)
  for b in range(m.shape[0]):
    k = int(out["masked_lm_weights"][b].sum())
    m[b, out["masked_lm_positions"][b, :k]] = True
  return m


def _word_starts(out, vocab):
  tokens = np.array(vocab.tokens)
  return np.array([[not t.startswith("##") for t in tokens[row]]
                   for row in out["original_word_ids"]])


def test_budget_is_exact_and_specials_are_never_masked(span_out):
  n = span_out["maskable"].sum(1)
  assert len(n) > 2000  # thousands of real blocks (two epochs)
  counts = span_out["masked_lm_weights"].sum(1)
  np.testing.assert_array_equal(counts, np.ceil(0.15 * n - 1e-9))
  m = _masked_matrix(span_out)
  assert not np.any(m & (span_out["maskable"] == 0))
  # [CLS] at 0 and [SEP] after the block are untouched.
  assert np.all(span_out["input_word_ids"][:, 0] == 101)
  rows = np.arange(len(n))
  assert np.all(span_out["input_word_ids"][rows, n + 1] == 102)


def test_spans_start_at_word_starts(span_out, cased_vocab):
  vocab = tokenization.load_vocab(cased_vocab)
  starts = _word_starts(span_out, vocab)
  m = _masked_matrix(span_out)
  bad = sum(not starts[b, s] for b in range(len(m)) for s, _ in _runs(m[b]))
  assert bad == 0


def test_span_length_histogram_matches_truncated_geometric(span_out):
  hist = span_out["span_length_histogram"].sum(0)[1:].astype(float)
  assert hist.sum() > 15000
  share = hist / hist.sum()
  assert np.max(np.abs(share - P_K)) < 0.01, np.round(share, 3)
  mean = (np.arange(1, 11) * hist).sum() / hist.sum()
  assert abs(mean - 3.80) < 0.05
  np.testing.assert_allclose(
      masking_config.MaskingParams().span_length_probs(),
      [.224, .179, .143, .115, .092, .073, .059, .047, .038, .030], atol=6e-4)


def test_replacement_is_decided_per_span(span_out):
  m = _masked_matrix(span_out)
  kinds = np.zeros(3)
  for b in range(len(m)):
    orig, new = span_out["original_word_ids"][b], span_out["input_word_ids"][b]
    for s, e in _runs(m[b]):
      span_new, span_orig = new[s:e + 1], orig[s:e + 1]
      if np.all(span_new == 103):
        kinds[0] += 1
      elif np.all(span_new == span_orig):
        kinds[2] += 1
      else:
        kinds[1] += 1
        # A random span has no [MASK] tokens: the decision is per span.
        assert not np.any(span_new == 103)
  share = kinds / kinds.sum()
  assert kinds.sum() > 15000
  np.testing.assert_allclose(share, [0.8, 0.1, 0.1], atol=0.015)
  # The loader's own per-span decision counts agree.
  d = span_out["unit_decisions"].sum(0)
  np.testing.assert_allclose(d / d.sum(), share, atol=0.002)


def test_sbo_targets_use_outer_boundaries(span_out):
  m = _masked_matrix(span_out)
  for b in range(0, len(m), 7):
    k = int(span_out["masked_lm_weights"][b].sum())
    pos = span_out["masked_lm_positions"][b, :k]
    expect = {}
    maskable = span_out["maskable"][b]
    for s, e in _runs(m[b]):
      ok = maskable[s - 1] and maskable[e + 1]
      for i in range(s, e + 1):
        expect[i] = (s - 1, e + 1, i - s, float(ok and i - s < 15))
    for j, i in enumerate(pos):
      left, right, rel, weight = expect[i]
      assert span_out["sbo_weights"][b, j] == weight
      if weight:
        assert span_out["sbo_left_positions"][b, j] == left
        assert span_out["sbo_right_positions"][b, j] == right
        assert span_out["sbo_relative_positions"][b, j] == rel
    # Spans touching [CLS]/[SEP] get MLM loss only.
    assert np.all(span_out["sbo_weights"][b, k:] == 0)


def test_same_seed_same_masks_new_epoch_new_masks(records, cased_vocab,
                                                  span_out):
  again = _run(records[:1], cased_vocab, epochs=1)
  n = len(again["input_word_ids"])
  np.testing.assert_array_equal(again["input_word_ids"],
                                span_out["input_word_ids"][:n])
  # Blocks of the second epoch are the same text with different masks.
  half = len(span_out["input_word_ids"]) // 2
  np.testing.assert_array_equal(span_out["original_word_ids"][:half],
                                span_out["original_word_ids"][half:])
  same = np.all(span_out["masked_lm_positions"][:half] ==
                span_out["masked_lm_positions"][half:], axis=1)
  assert same.mean() < 0.01
  # Another loader of the same masking settings (another seed) reuses the
  # loop compiled for the first: no new trace, so no new XLA compilation.
  sample = span_sampler.compiled_sampler(span_sampler.loop_params(
      pdl.SpanBertPretrainDataLoader(_config(records, cased_vocab)).masking))
  traces = sample.experimental_get_tracing_count()
  assert traces >= 1
  other = _run(records[:1], cased_vocab, epochs=1, seed=8)
  assert sample.experimental_get_tracing_count() == traces
  assert not np.array_equal(other["masked_lm_positions"],
                            again["masked_lm_positions"])


def test_loop_params_keep_only_what_the_loop_reads():
  """Settings the sampling loop does not read share its compiled function;
  each one it reads gets its own."""
  base = masking_config.MaskingParams()
  same = dataclasses.replace(base, masking_rate=0.2, mask_id=7,
                             mask_token_prob=0.0, random_token_prob=1.0,
                             max_predictions_per_seq=100, max_sbo_targets=3,
                             masking_scheme="named_entity")
  assert span_sampler.loop_params(same) == span_sampler.loop_params(base)
  assert (span_sampler.compiled_sampler(span_sampler.loop_params(same)) is
          span_sampler.compiled_sampler(span_sampler.loop_params(base)))
  for name, value in (("seq_length", 128), ("span_lower", 2),
                      ("span_upper", 5), ("geometric_p", 0.3),
                      ("tagged_span_prob", 0.25)):
    other = dataclasses.replace(base, **{name: value})
    assert span_sampler.loop_params(other) != span_sampler.loop_params(base)
    assert getattr(span_sampler.loop_params(other), name) == value


def test_graph_agrees_with_numpy_oracle(span_out, cased_vocab):
  vocab = tokenization.load_vocab(cased_vocab)
  starts = _word_starts(span_out, vocab)
  rng = np.random.default_rng(0)
  half = len(span_out["maskable"]) // 2
  o_lens, o_spans, o_len, o_sbo, o_dec = [], [], [], [], np.zeros(3)
  for b in range(half):
    n = int(span_out["maskable"][b].sum())
    res = oracle.mask_block(span_out["original_word_ids"][b, 1:n + 1],
                            starts[b, 1:n + 1], rng)
    assert len(res["mask"]) == np.ceil(0.15 * n - 1e-9)
    o_lens += res["drawn_lengths"]
    o_spans.append(len(res["spans"]))
    o_len += [e - s + 1 for s, e in res["spans"]]
    o_sbo.append(sum(min(len(t[2]), 15) for t in res["pair_targets"]) /
                 len(res["mask"]))
    for d in res["decisions"]:
      o_dec[d] += 1
  m = _masked_matrix(span_out)[:half]
  g_runs = [_runs(row) for row in m]
  g_spans = [len(r) for r in g_runs]
  g_len = [e - s + 1 for r in g_runs for s, e in r]
  g_sbo = (span_out["sbo_weights"][:half].sum(1) /
           span_out["masked_lm_weights"][:half].sum(1))
  hist = span_out["span_length_histogram"][:half].sum(0)[1:]
  g_mean_len = (np.arange(1, 11) * hist).sum() / hist.sum()
  o_hist = np.bincount(o_lens, minlength=11)[1:] / len(o_lens)
  assert np.max(np.abs(o_hist - hist / hist.sum())) < 0.015
  assert abs(np.mean(o_lens) - g_mean_len) < 0.08
  assert abs(np.mean(o_spans) / np.mean(g_spans) - 1) < 0.03
  assert abs(np.mean(o_len) / np.mean(g_len) - 1) < 0.03
  assert abs(np.mean(o_sbo) - np.mean(g_sbo)) < 0.01
  np.testing.assert_allclose(o_dec / o_dec.sum(), [0.8, 0.1, 0.1], atol=0.02)


def test_xla_and_plain_loops_agree(records, cased_vocab, span_out):
  plain = _run(records, cased_vocab, epochs=1, use_xla_masking=False)
  # The loop draws integers, which XLA and plain TF generate alike, and does
  # integer arithmetic only: the masks are the same, not just alike.
  half = len(plain["input_word_ids"])
  for key in ("input_word_ids", "masked_lm_positions", "sbo_weights",
              "span_length_histogram"):
    np.testing.assert_array_equal(plain[key], span_out[key][:half])
  n = plain["maskable"].sum(1)
  np.testing.assert_array_equal(plain["masked_lm_weights"].sum(1),
                                np.ceil(0.15 * n - 1e-9))
  h = plain["span_length_histogram"].sum(0)[1:]
  assert np.max(np.abs(h / h.sum() - P_K)) < 0.015


def test_token_masking_baseline(records, cased_vocab):
  out = _run(records[:1], cased_vocab, epochs=1, masking_scheme="token")
  n = out["maskable"].sum(1)
  np.testing.assert_array_equal(out["masked_lm_weights"].sum(1),
                                np.ceil(0.15 * n - 1e-9))
  m = _masked_matrix(out)
  new, orig = out["input_word_ids"][m], out["original_word_ids"][m]
  mask_share = np.mean(new == 103)
  keep_share = np.mean(new == orig)
  assert abs(mask_share - 0.8) < 0.015 and abs(keep_share - 0.1) < 0.015
  assert not np.any(m & (out["maskable"] == 0))
  assert "span_length_histogram" not in out


def test_whole_word_masking_baseline(records, cased_vocab):
  """The reference's whole-word route: spans of one word, exact budget.

  Before (words taken in random order while they fit) the budget was often
  under-filled: 14% of 231 linux-doc blocks at seq 512 got fewer than
  ceil(15%) masked tokens (mean fill 99.3%).
  """
  vocab = tokenization.load_vocab(cased_vocab)
  out = _run(records[:1], cased_vocab, epochs=1, masking_scheme="whole_word")
  n = out["maskable"].sum(1)
  np.testing.assert_array_equal(out["masked_lm_weights"].sum(1),
                                np.ceil(0.15 * n - 1e-9))
  starts = _word_starts(out, vocab) | (out["maskable"] == 0)
  m = _masked_matrix(out)
  cut = 0
  for b in range(len(m)):
    word = np.cumsum(starts[b]) - 1
    partial = [w for w in np.unique(word[m[b]]) if not np.all(m[b][word == w])]
    # Whole words, but for the one word the budget ran out in, which is
    # masked from its start.
    assert len(partial) <= 1
    for w in partial:
      first = np.flatnonzero(word == w)[0]
      assert m[b][first]
    cut += len(partial)
  assert cut < len(m)  # the cut word is the exception, not the rule
  d = out["unit_decisions"].sum(0)
  np.testing.assert_allclose(d / d.sum(), [0.8, 0.1, 0.1], atol=0.02)
  assert "span_length_histogram" not in out


def test_random_span_bounds_variant(records, cased_vocab):
  out = _run(records[:1], cased_vocab, epochs=1, span_lower=2, span_upper=4,
             geometric_p=1.0)
  hist = out["span_length_histogram"].sum(0)
  assert hist[2] == hist.sum()  # p = 1: always the lower bound


def test_nsp_records_feed_token_masking(cased_vocab, tmp_path):
  part = first_lines(data_path("corpus", "austen.txt"), 60_000,
                     str(tmp_path / "a.txt"))
  pr.create_pretraining_records([part], cased_vocab, str(tmp_path / "n"),
                                max_seq_length=128, mode="nsp",
                                progress=False)
  cfg = pdl.SpanBertPretrainDataConfig(
      input_path=str(tmp_path / "n-*.tfrecord"), vocab_file=cased_vocab,
      seq_length=128, max_predictions_per_seq=20, masking_scheme="token",
      use_next_sentence_label=True, global_batch_size=8, seed=1)
  batch = next(iter(data_loader_factory.get_data_loader(cfg).load()))
  ids = batch["input_word_ids"].numpy()
  types = batch["input_type_ids"].numpy()
  assert set(batch["next_sentence_labels"].numpy()) <= {0, 1}
  for b in range(len(ids)):
    length = int(batch["input_mask"][b].numpy().sum())
    seps = np.flatnonzero(ids[b, :length] == 102)
    assert ids[b, 0] == 101 and len(seps) == 2 and seps[1] == length - 1
    assert np.all(types[b, :seps[0] + 1] == 0)
    assert np.all(types[b, seps[0] + 1:length] == 1)
    k = int(batch["masked_lm_weights"][b].numpy().sum())
    n_a, n_b = seps[0] - 1, length - seps[0] - 2
    assert k == np.ceil(0.15 * n_a - 1e-9) + np.ceil(0.15 * n_b - 1e-9)
    pos = batch["masked_lm_positions"][b].numpy()[:k]
    assert not set(pos) & {0, *seps}


def test_nsp_pairs_mask_each_segment_with_its_own_budget(cased_vocab,
                                                         tmp_path):
  """As the reference (span_bert_dataset.py) masks the two blocks of a pair.

  Before, one budget ceil(0.15 * (n_A + n_B)) covered the pair.
  """
  part = first_lines(data_path("corpus", "austen.txt"), 200_000,
                     str(tmp_path / "a.txt"))
  pr.create_pretraining_records([part], cased_vocab, str(tmp_path / "n"),
                                max_seq_length=128, mode="nsp",
                                progress=False)
  files = sorted(glob.glob(str(tmp_path / "n-*.tfrecord")))
  cfg = pdl.SpanBertPretrainDataConfig(
      input_path=",".join(files), vocab_file=cased_vocab, seq_length=128,
      max_predictions_per_seq=21, use_next_sentence_label=True,
      global_batch_size=64, is_training=False, seed=1)
  loader = pdl.SpanBertPretrainDataLoader(cfg)
  differ = 0
  for batch in loader.transform_and_batch(
      tf.data.TFRecordDataset(files), diagnostics=True).as_numpy_iterator():
    for b in range(len(batch["input_word_ids"])):
      types, maskable = batch["input_type_ids"][b], batch["maskable"][b] > 0
      n_a = np.sum(maskable & (types == 0))
      n_b = np.sum(maskable & (types == 1))
      k = int(batch["masked_lm_weights"][b].sum())
      pos = batch["masked_lm_positions"][b, :k]
      budget_a, budget_b = (np.ceil(0.15 * n - 1e-9) for n in (n_a, n_b))
      assert np.sum(types[pos] == 0) == budget_a
      assert np.sum(types[pos] == 1) == budget_b
      differ += budget_a + budget_b != np.ceil(0.15 * (n_a + n_b) - 1e-9)
      assert maskable[pos].all()
  assert differ > 50  # pairs where one budget would mask one token less


def test_nsp_max_predictions_cover_both_budgets(cased_vocab):
  """At seq_length 128 two budgets need up to 20 predictions, not 19."""
  cfg = pdl.SpanBertPretrainDataConfig(
      input_path="unused", vocab_file=cased_vocab, seq_length=128,
      max_predictions_per_seq=19, use_next_sentence_label=True)
  with pytest.raises(masking_config.MaskingConfigError,
                     match=r"n_A \+ n_B = 125, at most = 20"):
    pdl.SpanBertPretrainDataLoader(cfg)


def test_random_replacements_follow_corpus_unigram(records, cased_vocab):
  """The reference draws random tokens with choice(corpus tokens).

  Every masked token is made random here; ~180k draws are compared with the
  records' wordpiece counts. Before (uniform over the vocab's ordinary
  tokens) the total-variation distance was ~0.8.
  """
  vocab = tokenization.load_vocab(cased_vocab)
  out = _run(records, cased_vocab, mask_token_prob=0.0, random_token_prob=1.0)
  m = _masked_matrix(out)
  drawn = out["input_word_ids"][m]
  assert len(drawn) > 20_000
  prefix = record_format.shard_prefix(records[0])
  counts = np.asarray(
      record_format.read_stats(prefix, record_format.COUNTS_SUFFIX)["counts"],
      float)
  assert counts.sum() == out["maskable"].sum() / 2  # two epochs of the corpus
  specials = [vocab.pad_id, vocab.cls_id, vocab.sep_id, vocab.mask_id]
  counts[specials] = 0
  expect = counts / counts.sum()
  seen = np.bincount(drawn, minlength=vocab.size) / len(drawn)
  assert not np.any(seen[specials])
  assert np.all(seen[expect == 0] == 0)  # only tokens of the corpus
  tv = 0.5 * np.abs(seen - expect).sum()
  # Pure sampling noise of the same number of draws from the counts.
  rng = np.random.default_rng(0)
  noise = [0.5 * np.abs(rng.multinomial(len(drawn), expect) / len(drawn)
                        - expect).sum() for _ in range(5)]
  assert tv < max(noise) + 0.01, (tv, noise)
  # The same on 20 bins of about equal expected mass (noise ~0.003).
  order = np.argsort(-expect)
  bins = np.minimum((np.cumsum(expect[order]) * 20).astype(int), 19)
  tv_bins = 0.5 * np.abs(np.bincount(bins, seen[order], 20) -
                         np.bincount(bins, expect[order], 20)).sum()
  assert tv_bins < 0.01, tv_bins
  uniform = np.zeros(vocab.size)
  uniform[vocab.ordinary_ids()] = 1 / len(vocab.ordinary_ids())
  assert 0.5 * np.abs(uniform - expect).sum() > 0.5


def test_unigram_without_counts_fails_with_one_line(records, cased_vocab,
                                                    tmp_path):
  for path in records:  # the shards alone, as records written before counts
    shutil.copy(path, tmp_path / os.path.basename(path))
  copied = sorted(glob.glob(str(tmp_path / "rec-*.tfrecord")))
  with pytest.raises(pdl.RecordsMismatchError) as e:
    pdl.SpanBertPretrainDataLoader(_config(copied, cased_vocab))
  message = str(e.value)
  assert "\n" not in message
  assert "random_token_distribution='unigram' needs the wordpiece counts" \
      in message
  assert "rewrite the records with spanbert-create-pretraining-data or set " \
         "random_token_distribution='uniform'" in message
  pdl.SpanBertPretrainDataLoader(
      _config(copied, cased_vocab, random_token_distribution="uniform"))


@pytest.mark.parametrize("override,match", [
    (dict(masking_rate=0.0), "masking_rate must be in"),
    (dict(masking_rate=1.0), "masking_rate must be in"),
    (dict(geometric_p=0.0), "geometric_p must be in"),
    (dict(geometric_p=1.5), "geometric_p must be in"),
    (dict(max_predictions_per_seq=60), "max_predictions_per_seq=60 is smaller"
     r" than the masking budget ceil\(0.15 \* 510\) = 77"),
    (dict(masking_scheme="ngram"), "masking_scheme must be one of"),
    (dict(span_lower=3, span_upper=2), "span_lower"),
    (dict(random_token_distribution="zipf"),
     "random_token_distribution must be one of"),
    (dict(tagged_span_prob=1.0), r"tagged_span_prob must be in \[0, 1\)"),
    (dict(masking_scheme="named_entity", use_next_sentence_label=True),
     "masks single-segment blocks"),
])
def test_bad_configs_fail_at_construction(cased_vocab, override, match):
  cfg = pdl.SpanBertPretrainDataConfig(input_path="unused",
                                       vocab_file=cased_vocab, **override)
  with pytest.raises(masking_config.MaskingConfigError, match=match):
    pdl.SpanBertPretrainDataLoader(cfg)


def test_vocab_without_mask_fails_at_construction(tmp_path):
  vocab = tmp_path / "v.txt"
  vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
  cfg = pdl.SpanBertPretrainDataConfig(input_path="x", vocab_file=str(vocab))
  with pytest.raises(tokenization.VocabError, match=r"\[MASK\]"):
    pdl.SpanBertPretrainDataLoader(cfg)
  with pytest.raises(masking_config.MaskingConfigError, match="vocab_file"):
    pdl.SpanBertPretrainDataLoader(pdl.SpanBertPretrainDataConfig())


def _capitalized_runs(out, vocab, rows):
  """Stand-in tagged spans: maximal runs of capitalized words, [B, K, 2]."""
  tokens = np.array(vocab.tokens)
  starts = _word_starts(out, vocab) & (out["maskable"] > 0)
  tags = np.zeros([len(rows), SEQ - 2, 2], np.int32)
  for r, b in enumerate(rows):
    n = int(out["maskable"][b].sum())
    word_pos = np.append(np.flatnonzero(starts[b, 1:n + 1]) + 1, n + 1)
    capital = [tokens[out["original_word_ids"][b, p]][:1].isupper()
               for p in word_pos[:-1]]
    k, w = 0, 0
    while w < len(capital):
      if capital[w]:
        e = w
        while e < len(capital) and capital[e]:
          e += 1
        tags[r, k] = word_pos[w], word_pos[e]
        k, w = k + 1, e
      else:
        w += 1
  return tags


def test_tagged_span_scheme_agrees_with_numpy_oracle(span_out, cased_vocab):
  """The named_entity/noun_phrase loop against the reference's NER scheme.

  Tagged spans here are runs of capitalized words of real blocks (the
  spaCy-tagged ones are tested in data/pretraining/span_tagging_test.py); graph and oracle
  draw with the same tagged_span_prob 0.5.
  """
  vocab = tokenization.load_vocab(cased_vocab)
  rows = np.arange(256)
  tags = _capitalized_runs(span_out, vocab, rows)
  params = masking_config.MaskingParams(
      masking_scheme="named_entity").validate()
  args = (span_out["original_word_ids"][rows], span_out["maskable"][rows] > 0,
          _word_starts(span_out, vocab)[rows], tf.constant([3, 4]))
  out = masking.mask_batch(*args, params, vocab.ordinary_ids(),
                           diagnostics=True, tagged_spans=tags)
  n = span_out["maskable"][rows].sum(1)
  np.testing.assert_array_equal(out["masked_lm_weights"].numpy().sum(1),
                                np.ceil(0.15 * n - 1e-9))
  plain = masking.mask_batch(
      *args, dataclasses.replace(params, use_xla_masking=False),
      vocab.ordinary_ids(), tagged_spans=tags)
  np.testing.assert_array_equal(plain["input_word_ids"],
                                out["input_word_ids"])
  in_tag = np.zeros(args[0].shape, bool)
  for r in rows:
    for s, e in tags[r]:
      in_tag[r, s:e] = True
  m = np.zeros(args[0].shape, bool)
  for r in rows:
    k = int(out["masked_lm_weights"][r].numpy().sum())
    m[r, out["masked_lm_positions"][r, :k].numpy()] = True
  starts = _word_starts(span_out, vocab)[rows]
  assert all(starts[r, s] for r in rows for s, _ in _runs(m[r]))
  g_share = (m & in_tag).sum() / m.sum()
  g_runs = np.mean([len(_runs(row)) for row in m])
  rng = np.random.default_rng(0)
  o_in, o_all, o_runs = 0, 0, []
  for r in rows:
    b_tags = [(s - 1, e - 1) for s, e in tags[r] if e > s]
    res = oracle.mask_block(args[0][r, 1:n[r] + 1], starts[r, 1:n[r] + 1],
                            rng, tagged_spans=b_tags)
    o_in += in_tag[r, np.array(res["mask"]) + 1].sum()
    o_all += len(res["mask"])
    o_runs.append(len(res["spans"]))
  coverage = in_tag.sum() / n.sum()
  # Tagged draws lift the share of masked tokens in tagged spans well above
  # their share of the text, as much as the oracle's.
  assert g_share > coverage + 0.1, (g_share, coverage)
  assert abs(g_share - o_in / o_all) < 0.02, (g_share, o_in / o_all)
  assert abs(g_runs / np.mean(o_runs) - 1) < 0.04, (g_runs, np.mean(o_runs))
  # Geometric draws keep their length distribution (within 4 sigma).
  hist = out["span_length_histogram"].numpy().sum(0)[1:]
  sigma = np.sqrt(P_K * (1 - P_K) / hist.sum())
  assert np.all(np.abs(hist / hist.sum() - P_K) < 4 * sigma)


def test_two_segment_budgets_fit_max_predictions(cased_vocab):
  """NSP pairs get ceil(r * n_A) + ceil(r * n_B), one more than one budget.

  At seq_length 512 (509 block tokens) segments of 7 and 502 tokens need
  2 + 76 = 78 predictions, where ceil(0.15 * 509) = 77.
  """
  params = masking_config.MaskingParams(max_predictions_per_seq=77)
  with pytest.raises(masking_config.MaskingConfigError,
                     match=r"n_A \+ n_B = 509, at most = 78"):
    params.validate(509, segments=2)
  params.validate(509)  # one budget: 77 fit
  params = dataclasses.replace(params, max_predictions_per_seq=78).validate(
      509, segments=2)
  vocab = tokenization.load_vocab(cased_vocab)
  ids = np.full([1, SEQ], 2000, np.int32)
  maskable = np.ones([1, SEQ], bool)
  maskable[0, [0, 8, 511]] = False  # [CLS] A(7) [SEP] B(502) [SEP]
  segments = np.zeros([1, SEQ], np.int32)
  segments[0, 9:] = 1
  out = masking.mask_batch(ids, maskable, np.ones([1, SEQ], bool),
                           tf.constant([1, 2]), params, vocab.ordinary_ids(),
                           segment_ids=segments)
  pos = out["masked_lm_positions"][0].numpy()
  assert out["masked_lm_weights"].numpy().sum() == 78
  assert np.sum(pos[:78] < 8) == 2 and np.sum(pos[:78] > 8) == 76
