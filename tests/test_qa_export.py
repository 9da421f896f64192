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

"""The export registry and the `answer` SavedModel's behaviour (unit tier).

A 1-layer, hidden-32 span labeler with random weights, the committed vocab
excerpt, an exported sequence length of 32: what is checked here is the
graph (windows, offsets, input checks, threads, TF Serving protos), not the
answers' quality; tests/test_qa_serving.py compares answers with the
offline evaluation on real data.
"""

import concurrent.futures
import os
import pathlib

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official.core import train_utils
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import export_lib
from official_spanbert.serving import qa_module
from official_spanbert.serving import registry
from official_spanbert.serving import serving_module
from conftest import built_once
import serving_client

SMALL = {"task": {"model": {"encoder": {"bert_v2": {
    "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
    "num_attention_heads": 2}}}}}
CONTEXT = ("It is a truth universally acknowledged, that a single man in "
           "possession of a good fortune, must be in want of a wife. However "
           "little known the feelings or views of such a man may be on his "
           "first entering a neighbourhood, this truth is so well fixed in "
           "the minds of the surrounding families, that he is considered as "
           "the rightful property of some one or other of their daughters.")


def _qa_params(vocab, experiment="spanbert/squad_v2"):
  params = exp_factory.get_exp_config(experiment)
  params.override(SMALL, is_strict=True)
  for data in (params.task.train_data, params.task.validation_data):
    data.vocab_file, data.seq_length = vocab, 32
    data.doc_stride, data.query_length = 8, 8
  return params


def _run_dir(path, params):
  """A model dir as the trainer leaves it: params.yaml and a checkpoint."""
  os.makedirs(path, exist_ok=True)
  train_utils.serialize_config(params, str(path))
  model = task_factory.get_task(
      params.task.replace(validation_data=None)).build_model()
  tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
      os.path.join(str(path), "ckpt"))
  return model


def shared_qa_export(tmp_path_factory, small_vocab) -> str:
  """A folder of a random squad_v2 run of small_vocab (run/) and its
  registry export (export/1/), written once per pytest run: this file's
  qa_export and serving/qa_module_test.py load the same export."""

  def build(d):
    _run_dir(os.path.join(d, "run"), _qa_params(small_vocab))
    registry.export(registry.load_run(os.path.join(d, "run")), {},
                    os.path.join(d, "export"), version=1)
  return built_once(tmp_path_factory, "qa_export", build)


@pytest.fixture(scope="module")
def qa_export(tmp_path_factory, small_vocab):
  d = pathlib.Path(shared_qa_export(tmp_path_factory, small_vocab))
  run = registry.load_run(str(d / "run"))
  model = str(d / "export" / "1")
  loaded = tf.saved_model.load(model)
  return {"dir": d, "model": model, "experiment": run.experiment,
          "loaded": loaded, "answer": loaded.signatures["answer"]}


def test_registry_serves_every_fine_tuning_experiment():
  served = registry.served_experiments()
  assert {"spanbert/pretraining", "spanbert/coref", "spanbert/squad_v1",
          "spanbert/squad_v2", "spanbert/tacred", "spanbert/span_ner"} <= set(
              served)
  for name, module_cls in served.items():
    assert registry.module_for(
        exp_factory.get_exp_config(name).task) is module_cls
    assert issubclass(module_cls, serving_module.ServingModule)
    assert module_cls.SIGNATURES


def test_each_module_takes_its_own_options(monkeypatch):
  """The served names come from the registrations, the deprecated alias
  left out (its config logs a warning when built); each module's Params
  hold the shared fields and its own, and another's are one line."""
  built = []
  get = exp_factory.get_exp_config
  monkeypatch.setattr(exp_factory, "get_exp_config",
                      lambda name: built.append(name) or get(name))
  registry._task_classes_of.cache_clear()  # pylint: disable=protected-access
  served = registry.served_experiments()
  assert "spanbert/glue" not in built + list(served)
  assert "spanbert/tacred" in built
  qa = served["spanbert/squad_v1"]
  params = registry.make_params(qa, {"max_context_wordpieces": 8})
  assert isinstance(params, serving_module.Params)
  assert params.max_context_wordpieces == 8 and params.precision == "float32"
  assert registry.make_params(qa).max_context_wordpieces == (
      qa_module.QuestionAnsweringModule.Params.max_context_wordpieces)
  with pytest.raises(ValueError) as e:
    registry.make_params(qa, {"top_k": 3})
  message = str(e.value)
  assert "\n" not in message
  assert "top_k" in message and "max_context_wordpieces" in message


def test_run_dir_names_its_experiment_and_exports_answer(qa_export):
  assert qa_export["experiment"].startswith("spanbert/squad_v")
  signatures = qa_export["loaded"].signatures
  assert {"answer", "serving_default"} <= set(signatures)
  out = qa_export["answer"](question=tf.constant(["Who is single?"]),
                            context=tf.constant([CONTEXT]))
  assert set(out) == {"answer_text", "answer_start", "answer_end", "score",
                      "has_answer"}
  start, end = int(out["answer_start"][0]), int(out["answer_end"][0])
  text = out["answer_text"][0].numpy().decode()
  assert (start, end, text) == (-1, -1, "") or CONTEXT[start:end] == text


def test_pretraining_export_of_a_squad_run_is_one_line(qa_export, tmp_path):
  run = str(qa_export["dir"] / "run")
  params = export_lib.load_params("spanbert/pretraining", run)
  with pytest.raises(ValueError) as e:
    registry.export(
        serving_module.Run(params, "spanbert/pretraining", model_dir=run), {},
        str(tmp_path / "wrong"))
  message = str(e.value)
  assert "\n" not in message and len(message) < 400, message
  assert "spanbert/squad_v" in message and "spanbert/pretraining" in message


@pytest.mark.parametrize("question, context", [
    ("", CONTEXT),
    ("Who?", ""),
    ("   ", " \t\n "),
    (b"bad \xff\xfe bytes?", b"caf\xc3\xa9 \xff and more words here"),
    ("why " * 200, CONTEXT),                   # over query_length
    ("Who?", "\u00a0".join(["word"] * 300)),   # many windows, NBSP words
])
def test_odd_inputs_get_a_defined_answer(qa_export, question, context):
  out = qa_export["answer"](question=tf.constant([question, "Who?"]),
                            context=tf.constant([context, CONTEXT]))
  raw = context if isinstance(context, bytes) else context.encode()
  text = raw.decode("utf-8", errors="replace")
  for i, ctx in enumerate((text, CONTEXT)):
    start, end = int(out["answer_start"][i]), int(out["answer_end"][i])
    answer = out["answer_text"][i].numpy().decode("utf-8")
    if start < 0:
      assert (end, answer) == (-1, "")
    else:
      assert ctx[start:end] == answer and answer.strip() == answer


@pytest.mark.parametrize("contexts", [
    [""], ["", "   "], ["\u200b\u200d"], ["\ufeff"], ["\x00"]])
def test_a_request_of_empty_contexts_only_gets_no_answer(qa_export, contexts):
  out = qa_export["answer"](question=tf.constant(["Who?"] * len(contexts)),
                            context=tf.constant(contexts))
  assert out["answer_start"].numpy().tolist() == [-1] * len(contexts)
  assert out["answer_end"].numpy().tolist() == [-1] * len(contexts)
  assert out["answer_text"].numpy().tolist() == [b""] * len(contexts)


def test_nul_bytes_do_not_cut_the_context(qa_export):
  context = "Note\x00 " + CONTEXT + "\x00 The end."
  out = qa_export["answer"](question=tf.constant(["Who is single?"] * 2),
                            context=tf.constant([context, context.replace(
                                "\x00", " ")]))
  for key in ("answer_start", "answer_end"):
    assert out[key][0].numpy() == out[key][1].numpy(), key
  # The same span; its text is each context's own slice, so a span over a
  # NUL (1 in 8 random models) holds it where the other context has " ".
  start, end = int(out["answer_start"][0]), int(out["answer_end"][0])
  texts = [t.decode("utf-8") for t in out["answer_text"].numpy()]
  assert texts[0] == (context[start:end] if start >= 0 else ""), texts
  assert texts[0].replace("\x00", " ") == texts[1], texts


def test_windows_fit_the_call_and_answers_do_not_depend_on_it(qa_export):
  """A short passage alone is padded to its own length; beside a passage of
  many windows to theirs: the same answer and score either way."""
  short = "Elizabeth wrote the letter in Kent."
  alone = qa_export["answer"](question=tf.constant(["Who wrote?"]),
                              context=tf.constant([short]))
  mixed = qa_export["answer"](question=tf.constant(["Who wrote?", "Who?"]),
                              context=tf.constant([short, CONTEXT * 3]))
  for key in ("answer_start", "answer_end", "answer_text"):
    assert alone[key][0].numpy() == mixed[key][0].numpy(), key
  assert float(alone["score"][0]) == pytest.approx(float(mixed["score"][0]),
                                                   abs=1e-5)


def test_windows_beyond_one_encoder_batch_run_in_chunks(small_vocab):
  """A call of 3 long contexts (hundreds of windows) through the chunked
  encoder gives the answers of one unchunked batch."""
  params = _qa_params(small_vocab)
  model = task_factory.get_task(
      params.task.replace(validation_data=None)).build_model()
  data = params.task.validation_data
  modules = [qa_module.QuestionAnsweringModule(
      model, small_vocab, seq_length=data.seq_length,
      doc_stride=data.doc_stride, query_length=data.query_length,
      encoder_batch_windows=size) for size in (16, 100_000)]
  questions = tf.constant(["Who is single?", "What is known?", "Whose?"])
  contexts = tf.constant([CONTEXT * 8, CONTEXT * 3, CONTEXT])
  chunked, whole = (m.answer(questions, contexts) for m in modules)
  for key in ("answer_start", "answer_end", "answer_text"):
    assert chunked[key].numpy().tolist() == whole[key].numpy().tolist(), key
  np.testing.assert_allclose(chunked["score"], whole["score"], atol=1e-5)


THAI = "ภาษาไทยเป็นภาษาที่มีระดับเสียงของคำแน่นอน"[:35]  # 105 bytes


def _squad_v1_model(vocab):
  """A random squad_v1 model of `vocab`'s size, and its windows' config."""
  params = _qa_params(vocab, "spanbert/squad_v1")
  params.task.model.encoder.bert_v2.vocab_size = sum(
      1 for _ in open(vocab, encoding="utf-8"))
  model = task_factory.get_task(
      params.task.replace(validation_data=None)).build_model()
  return model, params.task.validation_data


@pytest.mark.parametrize("lower_case", [False, True])
def test_an_answer_in_a_word_over_100_bytes_is_the_whole_word(
    small_vocab, uncased_vocab, lower_case):
  """A word over 100 bytes is one [UNK]: an answer holding it holds all of
  it (issue 55: a 35-character Thai answer came back as `ภา`, "ACGT"*30 as
  `ACGTA`). Each context is one such word, so SQuAD v1.1's answer is it."""
  vocab = uncased_vocab if lower_case else small_vocab
  model, data = _squad_v1_model(vocab)
  module = qa_module.QuestionAnsweringModule(
      model, vocab, lower_case=lower_case, seq_length=data.seq_length,
      doc_stride=data.doc_stride, query_length=data.query_length)
  contexts = [THAI, "ACGT" * 30, "x" * 120, f"  {THAI}\u00a0"]
  out = module.answer(tf.constant(["What is it?"] * 4),
                      tf.constant(contexts))
  answers = [t.decode() for t in out["answer_text"].numpy()]
  assert answers == [THAI, "ACGT" * 30, "x" * 120, THAI], answers
  assert out["answer_end"].numpy().tolist()[:3] == [35, 120, 120]


def test_contexts_over_the_limit_are_refused_naming_the_context(small_vocab):
  module = qa_module.QuestionAnsweringModule.from_run(
      serving_module.Run(_qa_params(small_vocab)),
      qa_module.QuestionAnsweringModule.Params(max_context_wordpieces=40))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"context 1 of the request has \d+ wordpieces, "
                     r"more than the 40 .*--qa_max_context_wordpieces"):
    module.answer(tf.constant(["Who?", "Who?"]),
                  tf.constant(["Short.", CONTEXT]))
  assert module.answer(tf.constant(["Who?"]), tf.constant(["Short."]))[
      "answer_text"].shape == [1]


def test_batches_of_different_sizes_are_invalid_argument(qa_export):
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="question and context"):
    qa_export["answer"](question=tf.constant(["a", "b"]),
                        context=tf.constant([CONTEXT]))
  out = qa_export["answer"](question=tf.constant(["a"]),
                            context=tf.constant([CONTEXT]))
  assert out["answer_text"].shape == [1]


def test_eight_threads_get_the_single_thread_answers(qa_export):
  questions = [f"Question {i} about the man?" for i in range(16)]
  contexts = [CONTEXT[i * 7:] for i in range(16)]
  answer = qa_export["answer"]
  def one(i):
    out = answer(question=tf.constant([questions[i]]),
                 context=tf.constant([contexts[i]]))
    return {k: v.numpy()[0] for k, v in out.items()}
  alone = [one(i) for i in range(16)]
  with concurrent.futures.ThreadPoolExecutor(8) as pool:
    together = list(pool.map(one, list(range(16)) * 2))
  for i, out in enumerate(together):
    for key, value in alone[i % 16].items():
      if key == "score":
        assert out[key] == pytest.approx(value, abs=1e-5)
      else:
        assert out[key] == value, key


def test_eight_threads_of_mixed_lengths_get_the_single_thread_answers(
    qa_export):
  """Fitted windows under concurrency: calls of 1 to 3 questions whose
  contexts need 1 to ~40 windows, each padded to its own longest window,
  from 8 threads at once, answer as they do one at a time."""
  contexts = [CONTEXT[:40 + 90 * i] * (1 + i % 3) for i in range(12)]
  calls = [(["Who?", "What is it?", "Whose?"][:1 + i % 3],
            [contexts[(i + j) % 12] for j in range(1 + i % 3)])
           for i in range(12)]
  answer = qa_export["answer"]
  def one(i):
    q, c = calls[i]
    out = answer(question=tf.constant(q), context=tf.constant(c))
    return {k: v.numpy().tolist() for k, v in out.items() if k != "score"}
  alone = [one(i) for i in range(12)]
  with concurrent.futures.ThreadPoolExecutor(8) as pool:
    together = list(pool.map(one, list(range(12)) * 3))
  assert all(out == alone[i % 12] for i, out in enumerate(together))


def test_predict_request_round_trip_and_warmup_requests(qa_export):
  """What tensorflow_model_server does with a PredictRequest (and with the
  warmup records at load), done here with the tensorflow-serving-api
  protos: the server binary is not installed here."""
  serving_client.assert_round_trip(
      qa_export["loaded"], qa_export["model"], "answer",
      {"question": ["Who is single?"], "context": [CONTEXT]}, "squad")


def test_bfloat16_export_without_native_bf16_is_one_line():
  from official_spanbert.serving import export_precision  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  avx2 = cpu_features.CpuFeatures(name="AMD EPYC", flags=frozenset(
      {"avx2", "fma"}))
  with pytest.raises(export_precision.PrecisionError) as e:
    export_precision.check("bfloat16", avx2)
  assert "\n" not in str(e.value) and "--precision=float32" in str(e.value)
  with pytest.raises(export_precision.PrecisionError, match="one of"):
    export_precision.check("float16", avx2)
  export_precision.check("float32", avx2)
  native = cpu_features.CpuFeatures(name="AMD EPYC", flags=frozenset(
      {"avx2", "fma", "avx512f", "avx512_bf16"}))
  export_precision.check("bfloat16", native)


def test_a_bfloat16_model_keeps_its_span_head_in_float32(small_vocab):
  """Under mixed bfloat16 the encoder computes in bf16 but the start/end
  logits come out of a float32 head (bf16's 8 bits made near-tied n-best
  entries flip: 980 -> 984 of 1,000 answers equal to float32, RESULTS.md)."""
  import tf_keras  # pylint: disable=g-import-not-at-top
  before = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    module = qa_module.QuestionAnsweringModule.from_run(
        serving_module.Run(_qa_params(small_vocab)),
        qa_module.QuestionAnsweringModule.Params())
  finally:
    tf_keras.mixed_precision.set_global_policy(before)
  model = module.model
  assert model.compute_dtype == "bfloat16"
  assert model.get_layer("span_labeling").compute_dtype == "float32"
  ids = tf.ones([2, 12], tf.int32)
  start, end = model({"input_word_ids": ids, "input_mask": ids,
                      "input_type_ids": tf.zeros_like(ids)}, training=False)
  assert start.dtype == end.dtype == tf.float32
  out = module.answer(tf.constant(["Who is single?"]), tf.constant([CONTEXT]))
  assert out["answer_text"].shape == [1]


def test_doc_stride_is_a_serving_option(qa_export, small_vocab):
  """`doc_stride` (0: the run's) sets the windows' stride of `answer`: a
  larger one answers a long context from fewer windows (issue 57: the
  pipeline's 128 tokens of overlap)."""
  run = registry.load_run(str(qa_export["dir"] / "run"))
  data = run.params.task.validation_data
  module_cls = registry.module_for(run.params.task)
  strides = {}
  for value in (0, 2 * data.doc_stride):
    params = registry.make_params(module_cls, {"doc_stride": value})
    strides[value] = module_cls.from_run(run, params).doc_stride
  assert strides == {0: data.doc_stride, 2 * data.doc_stride:
                     2 * data.doc_stride}
  with pytest.raises(ValueError, match="doc_stride"):
    module_cls.from_run(run, registry.make_params(module_cls,
                                                  {"doc_stride": -1}))


@pytest.mark.parametrize("lower_case", [False, True])
def test_a_larger_doc_stride_answers_from_the_text_itself(
    small_vocab, uncased_vocab, lower_case):
  """At twice the run's doc_stride, answers of a long natural-text context
  (accents, combining marks, emoji, a word over 100 bytes) are still the
  context's own slices at their character offsets."""
  vocab = uncased_vocab if lower_case else small_vocab
  model, data = _squad_v1_model(vocab)
  context = ("“Mr. Bennet,” said his lady—Zoë, of Zürich—“have you heard? "
             "Netherfield Park is let at last!” Cafe\u0301 🎉 " + THAI + " "
             + CONTEXT)
  for stride in (data.doc_stride, 2 * data.doc_stride):
    module = qa_module.QuestionAnsweringModule(
        model, vocab, lower_case=lower_case, seq_length=data.seq_length,
        doc_stride=stride, query_length=data.query_length)
    out = module.answer(tf.constant(["Who is single?", "Where?"]),
                        tf.constant([context, context[:40]]))
    for i, text in enumerate((context, context[:40])):
      start, end = int(out["answer_start"][i]), int(out["answer_end"][i])
      assert 0 <= start < end <= len(text), (stride, start, end)
      assert out["answer_text"][i].numpy().decode("utf-8") == text[start:end]
