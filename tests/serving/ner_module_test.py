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

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from conftest import data_path
from official.core import exp_factory
from official.core import train_utils
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.metrics import litbank_tsv
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
  texts = ["\n".join(" ".join(s) for s in d.sentences)
           for d in task._eval_docs]  # pylint: disable=protected-access
  out = {"task": task, "model": model, "offline": offline, "texts": texts,
         "docs": task._eval_docs, "windows": len(task._eval_windows)}  # pylint: disable=protected-access
  if export:
    run = str(tmp / "run")
    os.makedirs(run)
    train_utils.serialize_config(params, run)
    tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
        os.path.join(run, "ckpt"))
    loaded_params, experiment = registry.load_run(run)
    paths = registry.export(loaded_params, experiment, registry.ExportOptions(
        export_base=str(tmp / "export"), model_dir=run))
    loaded = tf.saved_model.load(paths["model"])
    out.update(experiment=experiment, dir=paths["model"], loaded=loaded,
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


def _word_offsets(doc):
  """{char start: word}, {char end: word} of a document sent as text."""
  starts, ends, at = {}, {}, 0
  for i, word in enumerate(doc.words):
    starts[at], ends[at + len(word)] = i, i
    at += len(word) + 1
  return starts, ends


def _served(setup):
  """Per document the served entities as (first word, last word, type),
  after checking each one's characters are its words."""
  out = setup["extract"](text=tf.constant(setup["texts"]))
  found = []
  for i, doc in enumerate(setup["docs"]):
    starts, ends = _word_offsets(doc)
    text, entities = setup["texts"][i], []
    for s, e, kind in zip(*(out[k][i].numpy() for k in (
        "entity_start", "entity_end", "entity_type"))):
      if s < 0:
        assert e == -1 and kind == b""
        continue
      first, last = starts[s], ends[e]
      assert text[s:e] == " ".join(doc.words[first:last + 1])
      entities.append(litbank_tsv.Entity(first, last, kind.decode()))
    found.append(entities)
  return found


def _check_served_equals_offline(setup):
  served = _served(setup)
  total = 0
  for doc, got, want in zip(setup["docs"], served, setup["offline"]):
    assert [e.key for e in got] == [e.key for e in want], doc.name
    total += len(want)
  nested = sum(1 for d in setup["offline"] for a in d for b in d
               if a != b and a.start <= b.start and b.end <= a.end)
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
  starts, ends = _word_offsets(doc)
  char_start = {w: c for c, w in starts.items()}
  char_end = {w: c for c, w in ends.items()}
  last = len(window.input_word_ids) - 2
  spans = [(p, q) for p in range(1, last) for q in range(p, min(
      p + WIDTH, last + 1)) if window.word_start[p] and window.word_end[q]]
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
