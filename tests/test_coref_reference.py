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

"""The `reference` variant and its TF1 converter against a tf.compat.v1
transcription of mandarjoshi90/coref's independent.py (integration tier).

A TF1 checkpoint is written with the reference's variable names and shapes
(small sizes, random weights; `bert/` from a tiny encoder by Google BERT's
names); the converter assigns it to a fresh model, and on the openings of
two LitBank documents the model's top spans, antecedents, scores and
clusters are compared with the transcription's, fed the same encoder output
(extract_spans, the reference's C++ kernel, is transcribed in Python).
"""

import json
import math
import os

import numpy as np
import pytest

from conftest import data_path
import official_spanbert  # noqa: F401
import tensorflow as tf

from official.nlp.configs import encoders
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import coref as coref_data
from official_spanbert.interop import coref_tf1_to_tf
from official_spanbert.interop import weight_map
from official_spanbert.data.finetuning import conll2012
from official_spanbert.modeling import coref_model
from official_spanbert.modeling import coref_reference

H, F, FFNN, W, C, SEG, GENRE, WORDS = 32, 8, 24, 10, 8, 64, 3, 150
CFG = {"max_span_width": W, "feature_size": F, "ffnn_size": FFNN,
       "max_top_antecedents": C, "top_span_ratio": 0.4, "genres": 7,
       "max_training_sentences": 3, "coref_depth": 2}


def _extract_spans(scores, starts, ends, k, _):
  """coref_kernels.cc ExtractSpans (sort_spans=True) for one sentence."""
  order = sorted(range(len(scores)), key=lambda i: -scores[i])
  latest_end, earliest_start, kept = {}, {}, []
  for i in order:
    if len(kept) == k:
      break
    s, e = int(starts[i]), int(ends[i])
    crossing = any(
        (j > s and latest_end.get(j, -1) > e) or
        (j < e and earliest_start.get(j, 1 << 30) < s)
        for j in range(s, e + 1))
    if not crossing:
      kept.append(i)
      latest_end[s] = max(latest_end.get(s, -1), e)
      earliest_start[e] = min(earliest_start.get(e, 1 << 30), s)
  kept.sort(key=lambda i: (starts[i], ends[i], i))
  return np.array(kept + [kept[0]] * (k - len(kept)), np.int32)


def _transcription(doc, mask, speaker_ids, genre, sentence_map):
  """independent.py get_predictions_and_loss after BERT, tf.compat.v1."""
  v1 = tf.compat.v1
  init = v1.random_normal_initializer(stddev=0.3)
  shape = lambda x, i: x.get_shape()[i] or tf.shape(x)[i]  # noqa: E731

  def ffnn(x, out, scope, hidden=True):
    with v1.variable_scope(scope):
      rank3 = len(x.get_shape()) == 3
      if rank3:
        b, s = tf.shape(x)[0], tf.shape(x)[1]
        x = tf.reshape(x, [b * s, x.get_shape()[2]])
      if hidden:
        w = v1.get_variable("hidden_weights_0", [x.get_shape()[1], FFNN],
                            initializer=init)
        x = tf.nn.relu(v1.nn.xw_plus_b(
            x, w, v1.get_variable("hidden_bias_0", [FFNN],
                                  initializer=init)))
      y = v1.nn.xw_plus_b(
          x, v1.get_variable("output_weights", [x.get_shape()[1], out],
                             initializer=init),
          v1.get_variable("output_bias", [out], initializer=init))
      return tf.reshape(y, [b, s, out]) if rank3 else y

  def projection(x, out, scope=""):
    if scope:
      return ffnn(x, out, scope, hidden=False)
    return ffnn(x, out, v1.get_variable_scope(), hidden=False)

  def bucket(d):
    log = tf.cast(tf.floor(tf.math.log(tf.cast(d, tf.float32)) /
                           math.log(2)), tf.int32) + 3
    ident = tf.cast(d <= 4, tf.int32)
    return tf.clip_by_value(ident * d + (1 - ident) * log, 0, 9)

  flat = lambda e: tf.boolean_mask(  # noqa: E731
      tf.reshape(e, [-1] + e.get_shape().as_list()[2:]),
      tf.reshape(mask, [-1]) > 0)
  x = flat(doc)
  n = tf.shape(x)[0]
  starts = tf.tile(tf.range(n)[:, None], [1, W])
  ends = starts + tf.range(W)[None, :]
  sent_s = tf.gather(sentence_map, starts)
  sent_e = tf.gather(sentence_map, tf.minimum(ends, n - 1))
  keep = tf.reshape((ends < n) & tf.equal(sent_s, sent_e), [-1])
  starts = tf.boolean_mask(tf.reshape(starts, [-1]), keep)
  ends = tf.boolean_mask(tf.reshape(ends, [-1]), keep)
  width_emb = tf.gather(v1.get_variable("span_width_embeddings", [W, F],
                                        initializer=init), ends - starts)
  doc_range = tf.tile(tf.range(n)[None, :], [tf.size(starts), 1])
  span_mask = (doc_range >= starts[:, None]) & (doc_range <= ends[:, None])
  word_attn = tf.squeeze(projection(x, 1, "mention_word_attn"), 1)
  attn = tf.nn.softmax(tf.math.log(tf.cast(span_mask, tf.float32)) +
                       word_attn[None, :])
  g = tf.concat([tf.gather(x, starts), tf.gather(x, ends), width_emb,
                 tf.matmul(attn, x)], 1)
  scores = ffnn(g, 1, "mention_scores")
  prior_emb = v1.get_variable("span_width_prior_embeddings", [W, F],
                              initializer=init)
  width_scores = ffnn(prior_emb, 1, "width_scores")
  scores = tf.squeeze(scores + tf.gather(width_scores, ends - starts), 1)
  k = tf.minimum(3900, tf.cast(tf.floor(tf.cast(n, tf.float32) * 0.4),
                               tf.int32))
  c = tf.minimum(C, k)
  top = tf.numpy_function(_extract_spans, [scores, starts, ends, k, n], tf.int32)
  top.set_shape([None])
  top_starts, top_ends = tf.gather(starts, top), tf.gather(ends, top)
  emb = tf.gather(g, top)
  top_scores = tf.gather(scores, top)
  genre_emb = tf.gather(v1.get_variable("genre_embeddings", [7, F],
                                        initializer=init), genre)
  speakers = tf.gather(flat(speaker_ids), top_starts)
  # coarse_to_fine_pruning with use_prior
  r = tf.range(k)
  offsets = r[:, None] - r[None, :]
  ante_mask = offsets >= 1
  fast = top_scores[:, None] + top_scores[None, :]
  fast += tf.math.log(tf.cast(ante_mask, tf.float32))
  with v1.variable_scope("src_projection"):
    src = projection(emb, shape(emb, 1))
  fast += tf.matmul(src, emb, transpose_b=True)
  dist = projection(v1.get_variable("antecedent_distance_emb", [10, F],
                                    initializer=init), 1)
  fast += tf.gather(tf.squeeze(dist, 1), bucket(offsets))
  _, ante = tf.nn.top_k(fast, c, sorted=False)
  ante_mask = tf.gather(ante_mask, ante, batch_dims=1)
  fast_top = tf.gather(fast, ante, batch_dims=1)
  ante_offsets = tf.gather(offsets, ante, batch_dims=1)
  segs = tf.tile(tf.range(tf.shape(mask)[0])[:, None], [1, tf.shape(mask)[1]])
  flat_segs = tf.boolean_mask(tf.reshape(segs, [-1]),
                              tf.reshape(mask, [-1]) > 0)
  seg_dist = tf.clip_by_value(
      tf.gather(flat_segs, top_starts)[:, None] -
      tf.gather(flat_segs, tf.gather(top_starts, ante)), 0, 2)
  for i in range(2):
    with v1.variable_scope("coref_layer", reuse=(i > 0)):
      ante_emb = tf.gather(emb, ante)
      same = tf.cast(tf.equal(speakers[:, None], tf.gather(speakers, ante)),
                     tf.int32)
      feats = [tf.gather(v1.get_variable("same_speaker_emb", [2, F],
                                         initializer=init), same),
               tf.tile(genre_emb[None, None, :], [k, c, 1]),
               tf.gather(v1.get_variable("antecedent_distance_emb", [10, F],
                                         initializer=init),
                         bucket(ante_offsets))]
      with v1.variable_scope("segment_distance", reuse=v1.AUTO_REUSE):
        feats.append(tf.gather(v1.get_variable(
            "segment_distance_embeddings", [3, F], initializer=init),
                               seg_dist))
      target = tf.tile(emb[:, None, :], [1, c, 1])
      pair = tf.concat([target, ante_emb, ante_emb * emb[:, None, :]] + [
          tf.concat(feats, 2)], 2)
      slow = tf.squeeze(ffnn(pair, 1, "slow_antecedent_scores"), 2)
      ante_scores = fast_top + slow
      weights = tf.nn.softmax(tf.concat([tf.zeros([k, 1]), ante_scores], 1))
      both = tf.concat([emb[:, None, :], ante_emb], 1)
      attended = tf.reduce_sum(weights[:, :, None] * both, 1)
      with v1.variable_scope("f"):
        f = tf.sigmoid(projection(tf.concat([emb, attended], 1),
                                  shape(emb, 1)))
      emb = f * attended + (1 - f) * emb
  ante_scores = tf.concat([tf.zeros([k, 1]), ante_scores], 1)
  return top_starts, top_ends, ante, ante_mask, ante_scores


def _opening(doc, words):
  keep, total = 0, 0
  while keep < len(doc.sentences) and total + len(doc.sentences[keep]) <= words:
    total += len(doc.sentences[keep])
    keep += 1
  return conll2012.ConllDocument(
      key=doc.key, name=doc.name, sentences=doc.sentences[:keep],
      speakers=doc.speakers[:keep], columns=doc.columns[:keep],
      clusters=[[m for m in c if m[1] < total] for c in doc.clusters])


def get_sentence_map(segments, sentence_end):
  """minimize.py get_sentence_map: [CLS]/[SEP] counted."""
  current = 0
  sent_map = []
  sent_end_idx = 0
  assert len(sentence_end) == sum([len(s) - 2 for s in segments])
  for segment in segments:
    sent_map.append(current)
    for _ in range(len(segment) - 2):
      sent_map.append(current)
      current += int(sentence_end[sent_end_idx])
      sent_end_idx += 1
    sent_map.append(current)
  return sent_map


def _minimize_sentence_map(example):
  sm = example.sentence_map
  ends = [i == len(sm) - 1 or sm[i + 1] != sm[i] for i in range(len(sm))]
  return get_sentence_map(example.segments, ends)


def _inputs(example, segment_len=SEG):
  """(the model's features, the reference's speaker ids of every token)."""
  rows = len(example.segments)
  ids = np.zeros([rows, segment_len], np.int32)
  mask = np.zeros_like(ids)
  speakers = np.zeros_like(ids)
  spk = iter(example.speaker_ids)
  for r, seg in enumerate(example.segments):
    ids[r, :len(seg)], mask[r, :len(seg)] = seg, 1
    speakers[r, :len(seg)] = [1] + [next(spk) + 2 for _ in seg[2:]] + [1]
  ours = {"input_word_ids": ids[None], "input_mask": mask[None],
          "genre": np.array([GENRE], np.int32)}
  for name in ("sentence_map", "speaker_ids", "word_start", "word_end"):
    ours[name] = np.array([getattr(example, name)], np.int32)
  return ours, speakers


def _model(**kwargs):
  encoder = encoders.build_encoder(spanbert_configs.bert_encoder(
      num_layers=1, hidden_size=H, num_attention_heads=2,
      intermediate_size=64, vocab_size=28996))
  return coref_reference.ReferenceCorefModel(
      encoder, max_span_width=W, feature_size=F, ffnn_size=FFNN,
      max_top_antecedents=C, dropout_rate=0.0, chunk_size=16, **kwargs)


def litbank_train_files(count=2):
  """The first `count` .conll files of LitBank's fold-0 training split."""
  root = data_path("coref", "litbank")
  with open(os.path.join(root, "splits", "0", "train.txt"),
            encoding="utf-8") as f:
    names = f.read().split()[:count]
  return [os.path.join(root, "conll", f"{n}.conll") for n in names]


@pytest.fixture(scope="module")
def documents():
  tokenizer = tokenization.WordpieceTokenizer(
      data_path("vocab", "bert-base-cased-vocab.txt"))
  return [coref_data.encode_document(_opening(conll2012.read_file(path)[0],
                                              WORDS), tokenizer, SEG)
          for path in litbank_train_files()]


def test_converted_checkpoint_scores_as_the_tf1_reference(documents,
                                                          tmp_path):
  source = _model()
  inputs = [_inputs(e) for e in documents]
  source(inputs[0][0], training=False)  # builds the encoder
  encoded = [source.encoder(dict(
      input_word_ids=i["input_word_ids"][0], input_mask=i["input_mask"][0],
      input_type_ids=np.zeros_like(i["input_mask"][0])))["sequence_output"]
             .numpy() for i, _ in inputs]
  ckpt = str(tmp_path / "model.max.ckpt")
  bert = {}  # Google BERT's names and layouts of the source encoder
  for name, (var, kind, transposed) in coref_tf1_to_tf.encoder_values(
      source.encoder, 1).items():
    hf = weight_map.inverse(kind, var.numpy())
    bert[name] = hf.T if transposed else hf
  expected = []
  graph = tf.Graph()
  with graph.as_default():
    v1 = tf.compat.v1
    for name, value in bert.items():
      v1.get_variable(name, initializer=value)
    doc = v1.placeholder(tf.float32, [None, None, H])
    mask = v1.placeholder(tf.int32, [None, None])
    speakers = v1.placeholder(tf.int32, [None, None])
    sentence_map = v1.placeholder(tf.int32, [None])
    outputs = _transcription(doc, mask, speakers, GENRE, sentence_map)
    v1.get_variable("global_step", initializer=7)  # skipped by the converter
    v1.get_variable("mention_scores/output_weights/adam_m", [FFNN, 1])
    with v1.Session() as session:
      session.run(v1.global_variables_initializer())
      v1.train.Saver().save(session, ckpt)
      for (ours, spk), enc, example in zip(inputs, encoded, documents):
        expected.append(session.run(outputs, {
            doc: enc, mask: ours["input_mask"][0], speakers: spk,
            sentence_map: _minimize_sentence_map(example)}))

  model = _model()
  model(inputs[0][0], training=False)
  read = coref_tf1_to_tf.assign_checkpoint(model, ckpt)
  assert "coref_layer/f/output_weights" in read and "global_step" not in read
  linked = 0
  for (ours, _), (starts, ends, ante, mask, scores) in zip(inputs, expected):
    for chunk in (16, 0):
      model.chunk_size = chunk
      out = {k: v.numpy() for k, v in model(ours, training=False).items()}
      np.testing.assert_array_equal(out["top_span_token_starts"], starts)
      np.testing.assert_array_equal(out["top_span_token_ends"], ends)
      for i in range(len(starts)):  # top_k(sorted=False): compare as sets
        want = {(a, round(float(s), 3)) for a, s, m in
                zip(ante[i], scores[i, 1:], mask[i]) if m}
        got = {(a, round(float(s), 3)) for a, s, m in
               zip(out["top_antecedents"][i], out["antecedent_scores"][i, 1:],
                   out["top_antecedents_mask"][i]) if m}
        assert {a for a, _ in got} == {a for a, _ in want}, i
        for a, s in zip(out["top_antecedents"][i],
                        out["antecedent_scores"][i, 1:]):
          j = list(ante[i]).index(a)
          if mask[i, j]:
            assert abs(s - scores[i, j + 1]) < 1e-4 * max(1, abs(s)), (i, a)
      clusters = coref_model.predict_clusters(
          starts, ends, ante, np.where(np.isinf(scores), -1e9, scores))
      assert coref_model.predict_clusters(
          out["top_span_token_starts"], out["top_span_token_ends"],
          out["top_antecedents"], out["antecedent_scores"]) == clusters
      linked += sum(map(len, clusters))
  assert linked > 20  # links to compare, not all dummy


def test_variant_switch_builds_the_reference_model():
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  params = coreference.CorefModelConfig(variant="reference", coref_depth=1)
  model = coreference.build_model(params)
  assert isinstance(model, coref_reference.ReferenceCorefModel)
  assert (model.coref_depth, model.max_top_spans) == (1, 3900)
  assert type(coreference.build_model(coreference.CorefModelConfig())) is (
      coref_model.CorefModel)
  with pytest.raises(ValueError, match="task.model.variant must be"):
    coreference.build_model(coreference.CorefModelConfig(variant="ref"))


def _write_release(tmp_path, bert_config):
  """A released-size task (ffnn 3000, features 20, width 30) on the given
  tiny BERT, written as the reference's TF1 checkpoint (model.max.ckpt, with
  an Adam slot and a step counter) + bert_config.json; returns (checkpoint,
  config file, features, the source model's outputs)."""
  import json  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import coref_model  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  config_file = tmp_path / "bert_config.json"
  config_file.write_text(json.dumps(bert_config))
  params = coref_tf1_to_tf.coref_params(bert_config, "spanbert_base", "")
  source = coreference.build_model(params.task.model)
  features = coref_model.dummy_features()
  expected = source(features, training=False)
  values = {}
  for name, (var, kind, transposed) in coref_tf1_to_tf.encoder_values(
      source.encoder, 1).items():
    hf = weight_map.inverse(kind, var.numpy())
    values[name] = hf.T if transposed else hf
  ours = {"/".join(v.name.split(":")[0].split("/")[-n:]): v.numpy()
          for v in source.variables for n in (2, 3)}
  for name, path in coref_tf1_to_tf.task_variables().items():
    values[name] = ours[path]
  with tf.Graph().as_default():
    v1 = tf.compat.v1
    for name, value in values.items():
      v1.get_variable(name, initializer=value)
      v1.get_variable(name + "/adam_m", initializer=np.zeros_like(value))
    v1.get_variable("global_step", initializer=np.int64(9))
    with v1.Session() as session:
      session.run(v1.global_variables_initializer())
      v1.train.Saver().save(session, str(tmp_path / "release" /
                                         "model.max.ckpt"))
  return (str(tmp_path / "release" / "model.max.ckpt"), str(config_file),
          features, expected)


def test_converter_writes_a_run_dir_that_export_loads(tmp_path):
  """The release comes back through convert() as params.yaml + checkpoint
  that the export loader restores, scoring as the source."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import serving_module  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  bert_config = {"vocab_size": 200, "hidden_size": H, "num_hidden_layers": 1,
                 "num_attention_heads": 2, "intermediate_size": 64,
                 "max_position_embeddings": 64, "type_vocab_size": 2}
  checkpoint, config_file, features, expected = _write_release(tmp_path,
                                                               bert_config)
  out = tmp_path / "converted"
  coref_tf1_to_tf.convert(checkpoint, config_file, str(out))
  loaded = params_dict.override_params_dict(
      exp_factory.get_exp_config("spanbert/coref"), str(out / "params.yaml"),
      is_strict=False)
  assert loaded.task.model.variant == "reference"
  assert loaded.task.validation_data.max_segment_len == 384
  model = serving_module.Run(loaded, checkpoint_path=str(out)).restore(
      coreference.build_model(loaded.task.model))
  got = model(features, training=False)
  for key in ("top_span_token_starts", "top_antecedents"):
    np.testing.assert_array_equal(got[key], expected[key])
  np.testing.assert_allclose(got["antecedent_scores"],
                             expected["antecedent_scores"], atol=1e-5)
  np.testing.assert_allclose(got["candidate_mention_scores"],
                             expected["candidate_mention_scores"], atol=1e-5)
  # Issue 48 item 11: a config of another hidden size failed in a reshape,
  # `cannot reshape array of size 32 into shape (64,)`, naming no file.
  wrong = tmp_path / "wrong" / "bert_config.json"
  wrong.parent.mkdir()
  wrong.write_text(json.dumps({**bert_config, "hidden_size": 2 * H}))
  with pytest.raises(ValueError) as e:
    coref_tf1_to_tf.convert(checkpoint, str(wrong), str(tmp_path / "w"))
  assert str(e.value).startswith(
      f"{checkpoint}: bert/embeddings/LayerNorm/beta has shape [{H}], but "
      f"{wrong} (hidden_size {2 * H}) gives [{2 * H}]; pass the "
      "bert_config.json that came with this checkpoint")
  assert not os.path.exists(tmp_path / "w")


def test_converted_run_dir_evaluates_and_fine_tunes(tmp_path):
  """What issue 38 item 2 asks of the converted run dir beyond the export:
  `--mode=eval` scores a real LitBank document with it, and training
  continues from its checkpoint (the weights start from the release, not
  from a fresh initialisation)."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert.training import train_lib  # pylint: disable=g-import-not-at-top
  from conftest import FIXTURES  # pylint: disable=g-import-not-at-top
  vocab = os.path.join(FIXTURES, "vocab_excerpt.txt")
  bert_config = {"vocab_size": tokenization.load_vocab(vocab).size,
                 "hidden_size": H, "num_hidden_layers": 1,
                 "num_attention_heads": 2, "intermediate_size": 64,
                 "max_position_embeddings": 64, "type_vocab_size": 2}
  checkpoint, config_file, _, _ = _write_release(tmp_path, bert_config)
  out = str(tmp_path / "converted")
  coref_tf1_to_tf.convert(checkpoint, config_file, out, vocab_file=vocab)
  params = params_dict.override_params_dict(
      exp_factory.get_exp_config("spanbert/coref"),
      os.path.join(out, "params.yaml"), is_strict=False)
  # The opening of a real LitBank document (the whole one costs minutes).
  document = str(tmp_path / "opening.conll")
  conll2012.write_file(document, [_opening(
      conll2012.read_file(litbank_train_files(1)[0])[0], WORDS)])
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.max_segment_len = document, SEG
  params.task.predictions_dir = str(tmp_path / "predictions")
  params.task.train_data.max_training_segments = 2
  params.runtime.distribution_strategy = "one_device"
  trainer = params.trainer
  trainer.train_steps = trainer.checkpoint_interval = 2
  trainer.steps_per_loop = trainer.summary_interval = 2
  trainer.validation_interval = 2
  train_lib.run(params, out, mode="eval")
  from official_spanbert.metrics import coref_evaluate  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  scores = coref_evaluate.evaluate_files(document, os.path.join(
      params.task.predictions_dir, coreference.PREDICTIONS_FILE))
  assert 0 <= scores["conll_f1"] <= 100
  suffix = "_embedding_layer/embeddings/.ATTRIBUTES/VARIABLE_VALUE"
  def embeddings(path):
    key = next(k for k, _ in tf.train.list_variables(path)
               if k.endswith(suffix))
    return tf.train.load_variable(path, key)
  released = embeddings(tf.train.latest_checkpoint(out))
  train_lib.run(params, out, mode="train")
  latest = tf.train.latest_checkpoint(out)
  assert latest.endswith("-2"), latest
  trained = embeddings(latest)
  change = np.abs(trained - released).max()
  # Two small steps from the release: changed, but nowhere near a fresh
  # initialisation (whose entries differ from the release's by ~0.03).
  assert 0 < change < 5e-3, change
