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

"""extract_entities and encode_spans (spanbert/span_ner) = the offline task.

A 1-layer, hidden-32 span NER model whose label scorer is drawn at random
and saturated, so that it labels thousands of nested and crossing spans a
document, with probabilities at or next to 1.0 (the greedy decoding's order and
tie-breaking have work to do; unsaturated, graph-vs-eager rounding flipped a
near-tied crossing pair in 3 of 12 comparisons), is saved as a run dir,
exported with the registry (`spanbert-export-savedmodel`'s path) and
loaded. Its served entities must equal the task's offline evaluation
(validation_step -> aggregate_logs -> predicted_entities) on the first
DOCS documents of LitBank fold 0's test list, sent one sentence a line,
with the cased vocab (exported) and the uncased one (the module), and the
offsets must land on the original text, also for accented and non-ASCII
words that the uncased vocab folds to other lengths.
"""

import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from conftest import REPO, data_path
from official.core import exp_factory
from official.core import train_utils
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import litbank_text
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.serving import ner_module
from official_spanbert.serving import registry
from official_spanbert.serving import span_encoder_module
from official_spanbert.serving import span_windows
from official_spanbert.tasks import span_ner
import serving_client

# SPANBERT_NER_SERVING_DOCS=10 compares on all of fold 0's test documents
# (docs/serving.md gives that run's counts); CI compares the first two.
SEQ, WIDTH = 64, 8
DOCS = int(os.environ.get("SPANBERT_NER_SERVING_DOCS", "2"))
NON_ASCII = [["Zoë", "Ångström", "met", "Dvořák", "in", "Zürich", "."],
             ["The", "ﬁrst", "Œuvre", "of", "Müller’s", "café", "—",
              "İstanbul", "’s", "ﬂeet", "."]]


def _docs_dir(tmp) -> str:
  """A split list of fold 0's first DOCS test documents and one more tsv
  of non-ASCII words (no entities)."""
  litbank = data_path("ner", "litbank")
  names = open(os.path.join(litbank, "splits", "0", "test.txt"),
               encoding="utf-8").read().split()[:DOCS]
  os.makedirs(os.path.join(tmp, "tsv"))
  os.makedirs(os.path.join(tmp, "splits", "0"))
  for name in names:
    os.symlink(os.path.join(litbank, "tsv", name + ".tsv"),
               os.path.join(tmp, "tsv", name + ".tsv"))
  with open(os.path.join(tmp, "tsv", "non_ascii.tsv"), "w",
            encoding="utf-8") as f:
    f.write("\n".join("\n".join(f"{w}\tO\tO\tO\tO\t" for w in s) + "\n"
                      for s in NON_ASCII))
  split = os.path.join(tmp, "splits", "0", "test.txt")
  with open(split, "w", encoding="utf-8") as f:
    f.write("\n".join(names + ["non_ascii"]) + "\n")
  return split


def _params(vocab: str, lower_case: bool, split: str):
  params = exp_factory.get_exp_config("spanbert/span_ner")
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size = 32, 64
  enc.num_layers, enc.num_attention_heads = 1, 2
  enc.vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
  model = params.task.model
  model.max_span_width, model.ffnn_size, model.dropout_rate = WIDTH, 32, 0.0
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file = split, vocab
    data.do_lower_case, data.seq_length = lower_case, SEQ
    # The offline batches are the served chunks (8 windows).
    data.global_batch_size = span_windows.MODEL_BATCH_WINDOWS
  return params


def _setup(tmp, vocab: str, lower_case: bool, export: bool):
  """{task, model, texts, offline entities, served fn, docs}."""
  params = _params(vocab, lower_case, _docs_dir(str(tmp / "data")))
  task = span_ner.SpanNerTask(params.task)
  batches = list(task.build_inputs(params.task.validation_data))
  tf_keras.utils.set_random_seed(1)
  model = task.build_model()
  model(batches[0][0])
  # A saturated random scorer (the trained-in prior says none): thousands of
  # crossing and nested spans for the decoding, and no near-tied pairs for
  # the float rounding of graph vs eager to flip.
  rng = np.random.default_rng(7)
  for v in model.label_scorer.variables:
    value = rng.normal(0.0, 1.0, v.shape)
    if v.shape == (7,):
      value = np.array([60.0] + [0.0] * 6)
    elif v.shape[-1] == 7:
      value *= 30.0  # logit gaps of hundreds: probabilities at 1.0
    v.assign(value.astype(np.float32))
  state = None
  for batch in batches:
    state = task.aggregate_logs(state, task.validation_step(batch, model))
  offline = task.predicted_entities(state)
  texts = [litbank_text.joined_text(d.sentences)[0]
           for d in task._eval_docs]  # pylint: disable=protected-access
  out = {"task": task, "model": model, "offline": offline, "texts": texts,
         "docs": task._eval_docs, "windows": len(task._eval_windows)}  # pylint: disable=protected-access
  if export:
    run = str(tmp / "run")
    os.makedirs(run)
    train_utils.serialize_config(params, run)
    tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
        os.path.join(run, "ckpt"))
    loaded_run = registry.load_run(run)
    paths = registry.export(loaded_run, {}, str(tmp / "export"))
    loaded = tf.saved_model.load(paths["model"])
    out.update(experiment=loaded_run.experiment, dir=paths["model"], loaded=loaded,
               extract=loaded.signatures["extract_entities"],
               encode=loaded.signatures["encode_spans"])
  else:
    module = ner_module.SpanNerServingModule(model, vocab, lower_case, SEQ)
    out.update(extract=lambda text: module.extract_entities(text),  # pylint: disable=unnecessary-lambda
               module=module)
  return out


@pytest.fixture(scope="module")
def cased(tmp_path_factory, cased_vocab):
  return _setup(tmp_path_factory.mktemp("ner_cased"), cased_vocab, False,
                export=True)


@pytest.fixture(scope="module")
def uncased(tmp_path_factory, uncased_vocab):
  return _setup(tmp_path_factory.mktemp("ner_uncased"), uncased_vocab, True,
                export=False)


def _served(setup, as_text=litbank_text.joined_text):
  """Per document the served entities as (first token, last token, type),
  the documents sent as `as_text` makes them; entities that start or end
  inside a token have no token span (as offline) and are left out."""
  sent = [as_text(d.sentences) for d in setup["docs"]]
  out = setup["extract"](text=tf.constant([text for text, _ in sent]))
  found = []
  for i, (text, spans) in enumerate(sent):
    entities = []
    for s, e, kind in zip(*(out[k][i].numpy() for k in (
        "entity_start", "entity_end", "entity_type"))):
      if s < 0:
        assert e == -1 and kind == b""
        continue
      tokens = litbank_text.token_span(spans, s, e)
      if tokens is not None:
        assert text[s:e] == text[spans[tokens[0]][0]:spans[tokens[1]][1]]
        entities.append(litbank_tsv.Entity(*tokens, kind.decode()))
    found.append(entities)
  return found


def _nested_pairs(entities) -> int:
  """Pairs (a, b) of unequal entities with b inside a (start and end
  inclusive): what `a != b and a.start <= b.start and b.end <= a.end`
  counts over all pairs, computed on arrays (that loop over thousands of
  entities took ~10 s of CPU a call)."""
  if not entities:
    return 0
  kinds = {k: i for i, k in enumerate(sorted({e.type for e in entities}))}
  start, end, kind, layer = (np.array(x) for x in zip(*(
      (e.start, e.end, kinds[e.type], e.layer) for e in entities)))
  inside = (start[:, None] <= start[None, :]) & (end[None, :] <= end[:, None])
  equal = ((start[:, None] == start[None, :]) & (end[:, None] == end[None, :])
           & (kind[:, None] == kind[None, :]) &
           (layer[:, None] == layer[None, :]))
  return int((inside & ~equal).sum())


def _check_served_equals_offline(setup, as_text=litbank_text.joined_text):
  served = _served(setup, as_text)
  total = 0
  for doc, got, want in zip(setup["docs"], served, setup["offline"]):
    assert [e.key for e in got] == [e.key for e in want], doc.name
    total += len(want)
  if "nested" not in setup:  # once a setup: the offline entities are fixed
    setup["nested"] = sum(_nested_pairs(d) for d in setup["offline"])
  nested = setup["nested"]
  # DOCS real documents (~2,000 words each) in ~90 windows of SEQ.
  print(f"served = offline: {len(setup['docs'])} documents, "
        f"{setup['windows']} windows, {total} entities, {nested} nested pairs")
  assert setup["windows"] > 40 and total > 100 and nested > 20, (
      setup["windows"], total, nested)
  return served


def test_exported_entities_equal_the_offline_evaluation_cased(cased):
  assert cased["experiment"] == "spanbert/span_ner"
  served = _check_served_equals_offline(cased)
  # The non-ASCII document has entities too, on its own words.
  assert served[-1]
  # Every signature has a warmup record that runs.
  assert serving_client.replay_warmup(cased["loaded"], cased["dir"]) == set(
      cased["loaded"].signatures)


def test_uncased_entities_equal_offline_and_land_on_the_original_text(
    uncased):
  served = _check_served_equals_offline(uncased)
  words = [w for s in NON_ASCII for w in s]
  texts = {" ".join(words[e.start:e.end + 1]) for e in served[-1]}
  assert texts & {"Zoë", "Ångström", "Dvořák", "Zürich", "ﬁrst", "Œuvre",
                  "Müller’s", "İstanbul", "ﬂeet"}, texts


def test_entities_are_sorted_nested_and_scored(cased):
  out = cased["extract"](text=tf.constant([cased["texts"][-1], "", "  \n "]))
  start, end = out["entity_start"].numpy(), out["entity_end"].numpy()
  score = out["entity_score"].numpy()
  real = start[0] >= 0
  assert real.any() and not (start[1:] >= 0).any()
  assert (np.diff(start[0][real]) >= 0).all()
  assert ((score[0][real] > 1 / 7) & (score[0][real] <= 1)).all()
  assert (score[1:] == -1).all()
  assert (out["entity_type"].numpy()[1:] == b"").all()


def test_eight_threads_get_the_single_thread_entities(cased):
  text = cased["texts"][-1]
  calls = [[text[i:]] * (1 + i % 3) for i in range(12)]
  extract = cased["extract"]

  def one(i):
    out = extract(text=tf.constant(calls[i]))
    return {k: v.numpy().tolist() for k, v in out.items()}

  alone = [one(i) for i in range(12)]
  with concurrent.futures.ThreadPoolExecutor(8) as pool:
    together = list(pool.map(one, list(range(12)) * 3))
  assert all(out == alone[i % 12] for i, out in enumerate(together))


def _window_spans(cased):
  """(window, text, spans as positions, as characters, encoder outputs) of
  a few word-boundary spans of one evaluation window."""
  task, model = cased["task"], cased["model"]
  window = task._eval_windows[1]  # pylint: disable=protected-access
  doc = cased["docs"][window.doc_index]
  tokens = litbank_text.joined_text(doc.sentences)[1]
  char_start = [a for a, _ in tokens]
  char_end = [b for _, b in tokens]
  last = len(window.input_word_ids) - 2
  words = window.words
  # Spans of whole tokens (a window's words are basic words).
  spans = [(p, q) for p in range(1, last) for q in range(p, min(
      p + WIDTH, last + 1)) if words[p - 1] != words[p] and
           words[q] != words[q + 1] and window.word_start[p] and
           window.word_end[q]]
  spans = spans[::max(1, len(spans) // 5)][:5]
  ids = tf.constant([window.input_word_ids])
  x = model.encoder({"input_word_ids": ids, "input_mask": tf.ones_like(ids),
                     "input_type_ids": tf.zeros_like(ids)},
                    training=False)["sequence_output"][0]
  chars = ([[char_start[window.words[p]] for p, _ in spans] + [-1]],
           [[char_end[window.words[q]] for _, q in spans] + [-1]])
  return cased["texts"][window.doc_index], spans, chars, x


def test_encode_spans_are_the_models_span_embeddings(cased):
  """Spans of a document window: their served embeddings are the model's
  SpanEmbedding of the window's encoder outputs."""
  text, spans, (s, e), x = _window_spans(cased)
  assert len(spans) == 5 and max(q - p for p, q in spans) > 0
  want = cased["model"].span_embedding(
      x, tf.constant([p for p, _ in spans]),
      tf.constant([q for _, q in spans])).numpy()
  out = cased["encode"](text=tf.constant([text]), span_starts=tf.constant(s),
                        span_ends=tf.constant(e))
  got = out["span_embeddings"].numpy()
  assert got.shape == (1, len(spans) + 1, want.shape[1])
  np.testing.assert_allclose(got[0, :-1], want, atol=1e-5)
  assert not got[0, -1].any()


def test_encode_spans_of_a_plain_encoder_pool_its_outputs(cased, cased_vocab):
  """Without a span task: [x_start, x_end, mean of the span's x]."""
  text, spans, (s, e), x = _window_spans(cased)
  module = span_encoder_module.SpanEncoderModule(
      cased["model"].encoder, cased_vocab, seq_length=SEQ)
  got = module.encode_spans(tf.constant([text]), tf.constant(s),
                            tf.constant(e))["span_embeddings"].numpy()
  x = x.numpy()
  want = [np.concatenate([x[p], x[q], x[p:q + 1].mean(0)]) for p, q in spans]
  np.testing.assert_allclose(got[0, :-1], want, atol=1e-5)
  assert got.shape[2] == 3 * x.shape[1] and not got[0, -1].any()


@pytest.mark.parametrize("starts, ends, match", [
    ([[0, 5]], [[3, 60]], r"span 1 of text 0 \(characters \[5, 60\)\) is out "
     r"of range: offsets are Unicode characters in \[0, 56\]"),
    ([[-2]], [[3]], "span 0 of text 0 .* is out of range"),
    ([[4]], [[4]], "span 0 of text 0 .* is empty or reversed"),
    ([[9, 3]], [[12, 4]], r"span 0 of text 0 \(characters \[9, 12\)\) covers "
     "no wordpiece"),
    ([[0]], [[56]], "covers .* wordpieces, more than max_span_width 8"),
    ([[0, 1]], [[3]], "span_starts .* and span_ends .* must both be"),
])
def test_bad_spans_are_one_clear_error(cased, starts, ends, match):
  text = "Ann   met Bob in Paris, France, in May of the year 1820."  # 56
  with pytest.raises(tf.errors.InvalidArgumentError, match=match) as e:
    cased["encode"](text=tf.constant([text]), span_starts=tf.constant(starts),
                    span_ends=tf.constant(ends))
  line = e.value.message.split("\n")
  assert any(match.split(" ")[0] in l for l in line)


def test_segment_ends_cut_each_row_as_split_segments():
  """The batched graph cut (row limits) = the offline cut of each text."""
  from official_spanbert.data.finetuning import coref  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(3)
  lengths, max_content = [0, 17, 1, 40, 0, 9, 33], 6
  sentence, word, want, at = [], [], [], 0
  for n in lengths:
    s = list(rng.random(n) < 0.15)
    w = [a or b for a, b in zip(s, rng.random(n) < 0.5)]
    if n:
      s[-1] = w[-1] = True
    want += [at + c for c in coref.split_segments(n, s, w, max_content)]
    sentence, word, at = sentence + s, word + w, at + n
  got = coref_module.segment_ends(tf.constant(sentence), tf.constant(word),
                                  max_content,
                                  tf.constant(np.cumsum(lengths)))
  assert got.numpy().tolist() == want


def test_graph_decoding_is_the_tasks_decode():
  """Random spans with tied scores: the graph's order and greedy rule keep
  what span_ner_model.decode keeps."""
  from official_spanbert.modeling import span_ner_model  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  for _ in range(20):
    n = int(rng.integers(0, 60))
    s = rng.integers(0, 30, n)
    e = s + rng.integers(0, 6, n)
    p = np.where(rng.random(n) < 0.2, 0.5, rng.random(n))
    order = ner_module._stable_order(  # pylint: disable=protected-access
        tf.constant(-p), tf.constant(s), tf.constant(e)).numpy()
    kept = ner_module.greedy_nested(tf.constant(s[order]),
                                    tf.constant(e[order])).numpy()
    got = sorted({(int(s[i]), int(e[i]), 1) for i in order[kept]})
    assert got == span_ner_model.decode(
        [(int(a), int(b), 1, float(c)) for a, b, c in zip(s, e, p)])


def _natural(sentences):
  """The natural text of a document with its clitics apart (`did n't`):
  attaching them changes the words themselves (`didn` `'` `t`), the rest
  of natural punctuation must change nothing."""
  return litbank_text.natural_text(sentences, join_contractions=False)


def test_natural_text_is_served_as_offline_cased(cased):
  """`Mr. Bennet, who lived in London.` (punctuation attached, as people
  write) gets the entities the offline evaluation finds on the tokens."""
  text = _natural(cased["docs"][0].sentences)[0]
  assert ", " in text and " ," not in text and " ." not in text
  _check_served_equals_offline(cased, _natural)


def test_natural_text_is_served_as_offline_uncased(uncased):
  _check_served_equals_offline(uncased, _natural)


THAI = "ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน"[:35]  # 105 bytes
HOSTILE = [
    "Mr. Bennet, who lived in London.",
    f"Mr. Bennet {THAI}, London. (Longbourn)",
    "ACGT" * 30 + " Mr. Darcy; " + "x" * 120 + ".",
    "“Lizzy!” said Mrs. Bennet—“Kitty's coming, isn't she?”",
    "Zoë met Dvořák in Zürich\u200b, near 東京.",
]


def _basic_words(text, lower_case):
  """Character spans of BERT's basic words of `text` (whitespace and
  control characters split, punctuation and CJK characters alone),
  written out in Python after BERT's tokenization.py."""
  import unicodedata  # pylint: disable=g-import-not-at-top

  def punct(c):
    o = ord(c)
    return (33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or
            123 <= o <= 126 or unicodedata.category(c).startswith("P"))

  def cjk(c):
    o = ord(c)
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or
            0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F)

  def gone(c):
    return c.isspace() or unicodedata.category(c) in ("Cc", "Cf")

  def folded_away(c):  # uncased: accents and format characters vanish,
    # and belong to the word before them
    return lower_case and unicodedata.category(c) in ("Mn", "Cf")

  spans, start = [], None
  for i, c in enumerate(text + " "):
    if folded_away(c):
      continue
    if gone(c) or punct(c) or cjk(c):
      if start is not None:
        spans.append((start, i))
        start = None
      if not gone(c):
        spans.append((i, i + 1))
    elif start is None:
      start = i
  return spans


def _check_on_basic_words(setup, lower_case):
  """Every served entity of natural text, unspaced scripts and words over
  100 bytes starts at a basic word's start and ends at one's end: never 5
  characters into a long word's [UNK], never before a comma left out."""
  out = setup["extract"](text=tf.constant(HOSTILE))
  count = 0
  for i, text in enumerate(HOSTILE):
    words = _basic_words(text, lower_case)
    starts, ends = {a for a, _ in words}, {b for _, b in words}
    for s, e in zip(out["entity_start"][i].numpy(),
                    out["entity_end"][i].numpy()):
      if s >= 0:
        assert s in starts and e in ends, (text, text[s:e])
        count += 1
  assert count > 20, count


def test_entities_of_hostile_text_are_on_basic_words_cased(cased):
  _check_on_basic_words(cased, lower_case=False)


def test_entities_of_hostile_text_are_on_basic_words_uncased(uncased):
  _check_on_basic_words(uncased, lower_case=True)


def test_windows_of_natural_and_spaced_text_are_the_same(cased_vocab,
                                                         uncased_vocab):
  """The served words are the basic words: attached punctuation splits as
  if spaced, so a candidate can end at `Bennet` and at `London`."""
  natural = "Mr. Bennet, who lived in London.\n(Longbourn) " + THAI + "!"
  spaced = "Mr . Bennet , who lived in London .\n( Longbourn ) " + THAI + " !"
  for vocab, lower_case in ((cased_vocab, False), (uncased_vocab, True)):
    windows = span_windows.TextWindows(
        tokenization.WordpieceTokenizer(vocab, lower_case), SEQ)
    w = windows(tf.constant([natural]))
    spaced_features = windows(tf.constant([spaced])).features
    for key, value in w.features.items():
      np.testing.assert_array_equal(value.numpy(),
                                    spaced_features[key].numpy(), key)
    flags = w.features["word_end"][0, 1:].numpy()
    ends = {int(e) for e, flag in zip(w.piece_end.numpy(), flags) if flag}
    assert {natural.index(","), natural.index(".\n")} <= ends, ends
    # The Thai run (105 bytes: one [UNK]) is one word, all of it.
    assert natural.index("!") in ends


def test_requests_without_a_wordpiece_return_padding_in_bounded_time(
    cased, tmp_path):
  """[""], ["", ""], whitespace, a zero-width space, NUL: padding rows, no
  hang (each request ran forever, growing memory without bound); a hang
  fails here after the timeout instead of stalling CI."""
  script = tmp_path / "empty.py"
  script.write_text(f"""
import official_spanbert
import numpy as np, tensorflow as tf, tensorflow_text
from official_spanbert.serving import coref_module
# segment_ends ends on any flags and limits (one flag, a zero limit: the
# cause of the hang).
for flags, limits in (([True], [0]), ([], [0]), ([True, False], [1]),
                      ([False] * 5, [0, 2])):
  ends = coref_module.segment_ends(tf.constant(flags, tf.bool),
                                   tf.constant(flags, tf.bool), 62,
                                   tf.constant(limits)).numpy()
  assert len(ends) <= len(flags), (flags, limits, ends)
loaded = tf.saved_model.load({cased["dir"]!r})
extract = loaded.signatures["extract_entities"]
encode = loaded.signatures["encode_spans"]
for texts in ([""], ["", ""], [" \\t\\n "], ["\\u200b"], ["\\x00"],
              ["", "\\u200b\\x00", "\\n"]):
  out = extract(text=tf.constant(texts))
  assert out["entity_start"].shape == (len(texts), 0), out
  assert out["entity_type"].shape == (len(texts), 0)
  pads = tf.fill([len(texts), 2], -1)
  got = encode(text=tf.constant(texts), span_starts=pads, span_ends=pads)
  assert not got["span_embeddings"].numpy().any()
  assert got["span_embeddings"].shape[:2] == (len(texts), 2)
print("ok")
""")
  env = dict(os.environ, TF_NUM_INTRAOP_THREADS="1", PYTHONPATH=REPO)
  try:
    proc = subprocess.run([sys.executable, str(script)], capture_output=True,
                          text=True, timeout=240, env=env)
  except subprocess.TimeoutExpired:
    pytest.fail("extract_entities / encode_spans / segment_ends on a request "
                "without a wordpiece did not return within 240 s")
  assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


def test_decoding_by_window_is_the_request_wide_decoding():
  """Spans of many windows decoded all at once by window = each window
  alone (no span crosses a window cut), in steps of the most one window
  keeps, not of all the request's spans."""
  from official_spanbert.modeling import span_ner_model  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(1)
  for _ in range(10):
    n = int(rng.integers(0, 200))
    g = np.sort(rng.integers(0, 6, n))
    s = g * 100 + rng.integers(0, 30, n)
    e = s + rng.integers(0, 6, n)
    p = np.where(rng.random(n) < 0.2, 0.5, rng.random(n))
    order = ner_module._stable_order(  # pylint: disable=protected-access
        tf.constant(-p), tf.constant(s), tf.constant(e)).numpy()
    kept = ner_module.greedy_nested(tf.constant(s[order]),
                                    tf.constant(e[order]),
                                    tf.constant(g[order])).numpy()
    got = sorted({(int(s[i]), int(e[i]), 1) for i in order[kept]})
    want = [x for w in range(6) for x in span_ner_model.decode(
        [(int(a), int(b), 1, float(c)) for a, b, c, h in zip(s, e, p, g)
         if h == w])]
    assert got == sorted(want)


def test_a_request_of_copies_costs_about_the_copies(cased):
  """Decoding is per window: 4 copies of two documents in one request cost
  about 4 times one copy (request-wide decoding was quadratic: 12.5x on
  c6445a9)."""
  import time  # pylint: disable=g-import-not-at-top
  text = "\n".join(cased["texts"][:2])
  extract = cased["extract"]

  def cost(texts):
    best = float("inf")
    for _ in range(2):
      t0 = time.process_time()
      out = extract(text=tf.constant(texts))
      best = min(best, time.process_time() - t0)
    return best, out

  one, alone = cost([text])
  four, together = cost([text] * 4)
  for k in ("entity_start", "entity_end"):
    np.testing.assert_array_equal(together[k].numpy(),
                                  np.repeat(alone[k].numpy(), 4, 0))
  assert four < 6 * one, (one, four)


def test_a_request_of_no_text_gives_empty_results(cased):
  """text=[] (batch 0): empty outputs, not an internal gather error."""
  out = cased["extract"](text=tf.constant([], tf.string))
  for key in ("entity_start", "entity_end", "entity_type"):
    assert out[key].shape[0] == 0, key
