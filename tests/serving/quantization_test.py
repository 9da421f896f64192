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

"""serving/quantization.py: `precision: int8` exports of every task's
signatures (`answer`, `classify`, `extract_entities` / `encode_spans`,
`resolve`, `fill_spans`) keep their signatures, serve within a stated
distance of float32, load without the quantization library, and calibrate
on the run's training data only (1-layer, hidden-32 models of random
weights; the int8 quality of a trained model is in
docs/serving.md#int8-exports-issue-57-item-1)."""

import collections
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.serving import export_precision
from official_spanbert.serving import frozen_layer_norm
from official_spanbert.serving import int8_epilogues
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import quantization
from official_spanbert.serving import registry
from official_spanbert.utils import cpu_features
from conftest import REPO
from conftest import data_path
import export_helpers

pytest.importorskip("neural_compressor.tensorflow")
if not cpu_features.read().native_int8:
  pytest.skip("this CPU has no VNNI / AMX-INT8: int8 exports are refused",
              allow_module_level=True)

SMALL = {"task": {"model": {"encoder": {"bert_v2": {
    "hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
    "num_attention_heads": 2}}}}}
SEQ = 32
TEXTS = ["It is a truth universally acknowledged, that a single man in "
         "possession of a good fortune, must be in want of a wife.",
         "However little known the feelings or views of such a man may be.",
         "A man sleeps.", ""]
QUESTIONS = ["What must a single man be in want of?", "Who is known?",
             "What is acknowledged?", "What?"]
# Measured on these models (random weights, 64 training windows; AMD EPYC,
# avx512_vnni): int8's largest distance to float32 was 6e-5 in classify's
# probabilities (near 0.5: random heads) and 0.0016 in answer's score
# (scores ~0.1); the bounds leave room for other CPUs' int8 kernels.
PROBABILITY_ATOL = 0.002
SCORE_ATOL = 0.02
# The encoder-only exports' outputs (span embeddings, LayerNorm-scaled;
# measured 0.006 on the NER model below).
ENCODER_ATOL = 0.05


def _records(path, rows, seed):
  """`rows` windows of random ids (as the fine-tuning records store them)."""
  rng = np.random.default_rng(seed)
  feature = lambda v: tf.train.Feature(int64_list=tf.train.Int64List(  # pylint: disable=unnecessary-lambda-assignment
      value=[int(x) for x in v]))
  with tf.io.TFRecordWriter(str(path)) as w:
    for _ in range(rows):
      n = int(rng.integers(6, SEQ + 1))
      ids = [101] + list(rng.integers(1000, 1500, n - 2)) + [102]
      pad = SEQ - n
      w.write(tf.train.Example(features=tf.train.Features(feature={
          "input_ids": feature(ids + [0] * pad),
          "input_mask": feature([1] * n + [0] * pad),
          "segment_ids": feature([0] * SEQ)})).SerializeToString())


def _run(d, params):
  """A run dir (params.yaml, checkpoint) with train and eval records."""
  _records(d / "train.tf_record", 64, 0)
  _records(d / "eval.tf_record", 16, 1)
  params.task.train_data.input_path = str(d / "train.tf_record")
  params.task.validation_data.input_path = str(d / "eval.tf_record")
  export_helpers.run_dir(d / "run", params)
  return registry.load_run(str(d / "run"))


def _both(d, run, monkeypatch):
  """{precision: loaded export} of float32 and int8, and the record files
  the int8 export opened."""
  opened = []
  dataset = tf.data.TFRecordDataset

  def spy(files, *args, **kwargs):
    opened.extend(files if isinstance(files, list) else [files])
    return dataset(files, *args, **kwargs)

  out = {}
  for precision in ("float32", "int8"):
    if precision == "int8":
      monkeypatch.setattr(tf.data, "TFRecordDataset", spy)
    paths = registry.export(run, {"precision": precision},
                            str(d / precision))
    out[precision] = tf.saved_model.load(paths["model"])
    out[precision + "_dir"] = paths["model"]
  monkeypatch.setattr(tf.data, "TFRecordDataset", dataset)
  out["opened"] = [str(f) for f in opened]
  return out


def _saved_graph(export_dir):
  from tensorflow.core.protobuf import saved_model_pb2  # pylint: disable=g-import-not-at-top
  sm = saved_model_pb2.SavedModel()
  with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
    sm.ParseFromString(f.read())
  return sm.meta_graphs[0].graph_def


def _saved_ops(export_dir):
  return quantization.op_counts(_saved_graph(export_dir))


def _matmuls_by_place(graph_def):
  """{(inside a transformer block?, "int8" or "float"): MatMuls} of a
  GraphDef and its function library."""
  nodes = list(graph_def.node)
  for fn in graph_def.library.function:
    nodes.extend(fn.node_def)
  out = collections.Counter()
  for n in nodes:
    kind = ("int8" if n.op in int8_epilogues.INT8_MATMULS else
            "float" if n.op in ("MatMul", "_MklMatMul") else None)
    if kind:
      out[(bool(re.search(r"transformer/layer_[0-9]+/", n.name)), kind)] += 1
  return out


def _check_int8_graph(exports):
  ops = _saved_ops(exports["int8_dir"])
  # The layer's six projections: int8; the projections' biases and the
  # GELU inside the int8 MatMuls (int8_epilogues), none left as an op: the
  # query's, key's, value's and both feed-forward projections' (the
  # attention output's bias, zero at initialization, is gone before:
  # TensorFlow's optimizer drops x + 0).
  assert int8_epilogues.int8_matmuls(ops) >= 6, ops
  assert ops.get(int8_epilogues.FUSED_OP, 0) >= 5, ops
  assert not {"Erf", "Erfc"} & set(ops), ops
  # No float projection left in the block; outside it (the type
  # embeddings' one-hot MatMul, the pooler, the heads), no int8
  # (quantization.OUTSIDE_BLOCKS).
  places = _matmuls_by_place(_saved_graph(exports["int8_dir"]))
  assert places[(True, "int8")] >= 6 and not places[(True, "float")], places
  assert not places[(False, "int8")] and places[(False, "float")], places
  # No projection left as Einsum (the attention's two products may stay).
  assert ops.get("Einsum", 0) <= 2, ops
  assert not int8_epilogues.int8_matmuls(_saved_ops(exports["float32_dir"]))


def test_int8_classify(tmp_path, small_vocab, monkeypatch):
  d = tmp_path
  os.makedirs(d / "records")
  labels = ["0", "1"]
  params = exp_factory.get_exp_config("spanbert/classification")
  params.override(SMALL, is_strict=True)
  params.task.model.num_classes = 2
  params.task.train_data.seq_length = SEQ
  run = _run(d, params)
  meta = {"task": "sst2", "labels": labels, "num_labels": 2,
          "vocab_file": small_vocab, "lower_case": False,
          "max_seq_length": SEQ}
  (d / cls_data.META_FILE).write_text(json.dumps(meta))
  exports = _both(d, run, monkeypatch)
  assert set(exports["opened"]) == {str(d / "train.tf_record")}
  _check_int8_graph(exports)
  f32 = exports["float32"].signatures["classify"](text=tf.constant(TEXTS))
  i8 = exports["int8"].signatures["classify"](text=tf.constant(TEXTS))
  assert set(exports["int8"].signatures) == set(exports["float32"].signatures)
  assert {k: v.dtype for k, v in i8.items()} == {
      k: v.dtype for k, v in f32.items()}
  np.testing.assert_allclose(i8["probabilities"].numpy(),
                             f32["probabilities"].numpy(),
                             atol=PROBABILITY_ATOL, rtol=0)
  # A fresh process without the quantization library serves it.
  code = ("import sys, tensorflow as tf, tensorflow_text; "
          f"m = tf.saved_model.load({exports['int8_dir']!r}); "
          "out = m.signatures['classify'](text=tf.constant(['A man.'])); "
          "assert 'neural_compressor' not in sys.modules; "
          "print(out['probabilities'].shape)")
  done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                        text=True, timeout=120, check=False,
                        env=dict(os.environ, PYTHONPATH=REPO))
  assert done.returncode == 0, done.stderr[-2000:]
  assert "(1, 2)" in done.stdout


def test_int8_answer(tmp_path, small_vocab, monkeypatch):
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  params.override(SMALL, is_strict=True)
  for data in (params.task.train_data, params.task.validation_data):
    data.vocab_file, data.seq_length = small_vocab, SEQ
    data.doc_stride, data.query_length = 8, 8
  run = _run(tmp_path, params)
  exports = _both(tmp_path, run, monkeypatch)
  assert set(exports["opened"]) == {str(tmp_path / "train.tf_record")}
  _check_int8_graph(exports)
  inputs = dict(question=tf.constant(QUESTIONS), context=tf.constant(TEXTS))
  f32 = exports["float32"].signatures["answer"](**inputs)
  i8 = exports["int8"].signatures["answer"](**inputs)
  assert {k: v.dtype for k, v in i8.items()} == {
      k: v.dtype for k, v in f32.items()}
  np.testing.assert_allclose(i8["score"].numpy(), f32["score"].numpy(),
                             atol=SCORE_ATOL, rtol=0)


def test_unsupported_modules_and_cpus_are_refused_in_one_line(monkeypatch):
  from official_spanbert.serving import tfhub_export  # pylint: disable=g-import-not-at-top
  with pytest.raises(quantization.QuantizationError,
                     match=r"not supported for TFHubExport \(encoder, "
                     r"preprocessor\): export it with --precision=float32"):
    quantization.check_supported(tfhub_export.TFHubExport)
  for module_cls in registry.SERVING_MODULES.values():
    quantization.check_supported(module_cls)  # every task's module takes it
  avx2 = cpu_features.CpuFeatures(name="AVX2 CPU",
                                  flags=frozenset({"avx2", "fma"}))
  with pytest.raises(export_precision.PrecisionError,
                     match="no AVX512-VNNI, AVX-VNNI or AMX-INT8"):
    export_precision.check("int8", avx2)
  capped = cpu_features.CpuFeatures(
      name="VNNI CPU", flags=frozenset({"avx512f", "avx512_vnni"}),
      isa_cap="AVX2")
  assert not capped.native_int8
  monkeypatch.setitem(sys.modules, "neural_compressor", None)
  with pytest.raises(quantization.QuantizationError,
                     match=r"pip install 'official_spanbert\[int8\]'"):
    quantization.check_supported(registry.SERVING_MODULES[
        type(exp_factory.get_exp_config("spanbert/squad_v1").task)])


class _SequenceOutput(tf.Module):

  def __init__(self, encoder):
    super().__init__()
    self.encoder = encoder

  def __call__(self, inputs, training=False):
    return self.encoder(inputs, training=training)["sequence_output"]


def test_an_unbuilt_model_gets_its_projections_quantized():
  """Keras creates the attention's projections when the model first runs
  (a restored relation classifier had not: 2 int8 MatMuls, 48 Einsums)."""
  from official.nlp.modeling import networks  # pylint: disable=g-import-not-at-top
  encoder = networks.BertEncoderV2(vocab_size=100, hidden_size=32,
                                   num_layers=1, num_attention_heads=2,
                                   inner_dim=64, max_sequence_length=32)
  rng = np.random.default_rng(0)
  batches = [{"input_word_ids": rng.integers(1, 100, (4, 12), np.int32),
              "input_mask": np.ones((4, 12), np.int32),
              "input_type_ids": np.zeros((4, 12), np.int32)}]
  out = quantization.quantize_model(_SequenceOutput(encoder), batches,
                                    config={})  # every projection
  # The layer's 6 projections: int8; only the attention's two
  # activation-by-activation einsums stay.
  assert int8_epilogues.int8_matmuls(out["ops_after"]) >= 6
  assert out["ops_before"].get("Einsum", 0) <= 2, out["ops_before"]


def test_a_feed_forward_outlier_channel_is_computed_apart():
  """A channel of one block's feed-forward activation far above the others
  (planted: a bias of 30 on it, as trained encoders grow on their own) is
  split off its int8 output projection (modeling/ffn_outliers.py); every
  projection stays int8 with its epilogues fused, and the int8 output is
  closer to float32's than with that projection made int8 whole."""
  from official.nlp.modeling import networks  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  batches = [{"input_word_ids": rng.integers(1, 100, (4, 12), np.int32),
              "input_mask": np.ones((4, 12), np.int32),
              "input_type_ids": np.zeros((4, 12), np.int32)}
             for _ in range(2)]

  def planted():
    tf_keras.utils.set_random_seed(3)
    encoder = networks.BertEncoderV2(vocab_size=100, hidden_size=32,
                                     num_layers=2, num_attention_heads=2,
                                     inner_dim=64, max_sequence_length=32)
    encoder({k: tf.constant(v) for k, v in batches[0].items()})
    dense = encoder.transformer_layers[1]._intermediate_dense  # pylint: disable=protected-access
    bias = dense.bias.numpy()
    bias[5] = 30.0
    dense.bias.assign(bias)
    return encoder

  inputs = {k: tf.constant(v) for k, v in batches[1].items()}
  want = planted()(inputs)["sequence_output"].numpy()
  split = quantization.quantize_model(_SequenceOutput(planted()), batches)
  whole = quantization.quantize_model(_SequenceOutput(planted()), batches,
                                      split_outliers=False)
  assert split["ffn_outliers"] == {"transformer/layer_1": [5]}, split
  assert not whole["ffn_outliers"]
  ops = split["ops_after"]
  # 2 layers x 6 projections (the type embeddings' one-hot MatMul stays
  # float32: OUTSIDE_BLOCKS); all with their bias fused but the attention
  # outputs' (zero at initialization: dropped before, nothing to fuse).
  assert int8_epilogues.int8_matmuls(ops) == 12, ops
  assert ops.get(int8_epilogues.FUSED_OP, 0) == 10, ops
  assert ops.get("Einsum", 0) == 1, ops  # the channel's own product
  # Its clip served calibration; the quantizer saturates there anyway.
  assert split["epilogues"]["clip"] == 1 and "Minimum" not in ops, ops
  err = {name: float(np.abs(out["model"](inputs) - want).max())
         for name, out in (("split", split), ("whole", whole))}
  assert err["split"] < 0.5 * err["whole"], err

def test_outside_blocks_matches_every_op_but_the_blocks():
  outside = lambda name: bool(re.match(quantization.OUTSIDE_BLOCKS, name))  # pylint: disable=unnecessary-lambda-assignment
  assert outside("StatefulPartitionedCall/m/bert_encoder_v2_1/type_embeddings/MatMul")
  assert outside("m/sentence_prediction/pooler_dense/MatMul")
  assert outside("m/span_labeling/predictions/transform/logits/Tensordot/MatMul")
  assert not outside("StatefulPartitionedCall/m/bert_encoder_v2_1/transformer/"
                     "layer_11/intermediate/MatMul")
  assert not outside("e/transformer/layer_0/self_attention/query/MatMul")
  # A block's name without its number is not a block.
  assert outside("e/transformer/layer_norm/MatMul")


def test_the_quantized_graph_without_int8_computes_what_keras_does():
  """Every projection left float32: the graph Intel Neural Compressor
  freezes and rewrites is the Keras model's, to float32 rounding. (Its
  13-1e-12-epsilon LayerNorms had been fused by TensorFlow's remapper with
  epsilon 0.001 instead: frozen_layer_norm.)"""
  from official.nlp.modeling import networks  # pylint: disable=g-import-not-at-top
  tf_keras.utils.set_random_seed(4)
  encoder = networks.BertEncoderV2(vocab_size=100, hidden_size=32,
                                   num_layers=2, num_attention_heads=2,
                                   inner_dim=64, max_sequence_length=32)
  rng = np.random.default_rng(0)
  batches = [{"input_word_ids": rng.integers(1, 100, (4, 12), np.int32),
              "input_mask": (np.arange(12) < rng.integers(3, 13, (4, 1))
                             ).astype(np.int32),
              "input_type_ids": rng.integers(0, 2, (4, 12), np.int32)}
             for _ in range(2)]
  model = _SequenceOutput(encoder)
  inputs = {k: tf.constant(v) for k, v in batches[1].items()}
  want = model(inputs).numpy()
  out = quantization.quantize_model(
      model, batches, config={"float_ops": [r".*transformer/.*MatMul"]},
      dtype=tf.float32, split_outliers=False)
  assert not int8_epilogues.int8_matmuls(out["ops_after"]), out["ops_after"]
  # The embeddings' LayerNorm and two a layer, with the model's epsilon
  # (fused here, or by the remapper INC runs, then given the epsilon).
  assert sum(out["layer_norms"].values()) == 5, out["layer_norms"]
  assert out["ops_after"].get(frozen_layer_norm.FUSED_OP) == 5
  got = out["model"](inputs).numpy()
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# The encoder-only int8 exports: extract_entities / encode_spans, resolve
# and fill_spans quantize the bare encoder and calibrate on what the task's
# own loader makes of the training data (LitBank documents, masked blocks).
# Measured on these models (random weights; AMD EPYC Zen 4, avx512_vnni):
# see each test; the bounds leave room for other CPUs' int8 kernels.
TEXT = ("“Mr. Bennet,” said his lady to him one day, “have you heard that "
        "Netherfield Park is let at last?” Zoë met Dvořák in Zürich—İstanbul’s "
        "ﬂeet had sailed.")


def _litbank_split(tmp, layer: str, docs: int = 2) -> str:
  """A train split of fold 0's first `docs` training documents of LitBank's
  `layer` ("ner" tsv or "coref" conll), laid out as the readers expect."""
  root = data_path(layer, "litbank")
  kind, ext = ("tsv", ".tsv") if layer == "ner" else ("conll", ".conll")
  names = open(os.path.join(root, "splits", "0", "train.txt"),
               encoding="utf-8").read().split()[:docs]
  os.makedirs(os.path.join(tmp, kind))
  os.makedirs(os.path.join(tmp, "splits", "0"))
  for name in names:
    os.symlink(os.path.join(root, kind, name + ext),
               os.path.join(tmp, kind, name + ext))
  split = os.path.join(tmp, "splits", "0", "train.txt")
  with open(split, "w", encoding="utf-8") as f:
    f.write("\n".join(names) + "\n")
  return split


def _tiny_encoder(params, vocab):
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size = 32, 64
  enc.num_layers, enc.num_attention_heads = 1, 2
  enc.vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
  return params


def _int8_module(make, params, tmp):
  """(float32 module, int8 module, its loaded export, quantize_module's
  info): two modules of one model, the float32 one traced first (its
  graphs keep the float32 encoder that the int8 one then replaces)."""
  from official_spanbert.serving import serving_module  # pylint: disable=g-import-not-at-top
  f32 = make()
  f32.signatures()
  i8 = make()
  info = quantization.quantize_module(i8, serving_module.Run(params))
  export_dir = i8.write(str(tmp / "int8"))["model"]
  # 1 layer: the 4 attention projections and both feed-forward projections
  # in int8, the pooler float32 (a random encoder has no outlier channel to
  # split apart: ffn_outliers); the attention's core computes in the float
  # parts' dtype: bfloat16 where this CPU has it natively (int8_layout).
  assert int8_epilogues.int8_matmuls(info["ops_after"]) == 6, info
  assert info["ffn_outliers"] == {}, info
  # The embeddings' LayerNorm and the layer's two, with the model's epsilon.
  assert sum(info["layer_norms"].values()) == 3, info["layer_norms"]
  assert info["float_dtype"] == quantization.float_dtype().name
  # The projections' biases (but the attention output's: zero at
  # initialization, dropped before) and the GELU fused into the int8 MatMuls.
  assert info["epilogues"]["BiasAdd"] >= 5, info["epilogues"]
  gelus = info["epilogues"]
  assert gelus.get("GeluExact", 0) + gelus.get("GeluApproximate", 0) == 1, gelus
  # (No GELU's erf, erfc or x^3 left; the pooler's Tanh stays.)
  assert not {"Erf", "Erfc", "Pow"} & set(info["ops_after"]), info["ops_after"]
  if info["float_dtype"] == "bfloat16":
    # The query, key and value come out of their MatMuls in bfloat16 (the
    # attention core's input): no Cast to bfloat16.
    assert info["epilogues"]["bfloat16"] == 3, info["epilogues"]
  assert info["calibration_windows"] > 0
  assert int8_epilogues.int8_matmuls(_saved_ops(export_dir))
  return f32, i8, tf.saved_model.load(export_dir), info


def test_int8_extract_entities_and_encode_spans(tmp_path, cased_vocab):
  from official_spanbert.serving import ner_module  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import span_ner  # pylint: disable=g-import-not-at-top
  params = _tiny_encoder(exp_factory.get_exp_config("spanbert/span_ner"),
                         cased_vocab)
  params.task.model.max_span_width, params.task.model.ffnn_size = 8, 32
  params.task.model.dropout_rate = 0.0
  split = _litbank_split(str(tmp_path / "data"), "ner")
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file, data.seq_length = split, cased_vocab, SEQ
  # Calibration reads the training documents only.
  params.task.validation_data.input_path = str(tmp_path / "no_dev_read")
  tf.keras.utils.set_random_seed(3)
  model = span_ner.SpanNerTask(params.task).build_model()
  f32, _, export, info = _int8_module(
      lambda: ner_module.SpanNerServingModule(model, cased_vocab, False, SEQ),
      params, tmp_path)
  texts = tf.constant([TEXT, ""])
  spans = dict(span_starts=tf.constant([[0, 5], [-1, -1]]),
               span_ends=tf.constant([[11, 11], [-1, -1]]))
  want = f32.extract_entities(texts)
  got = export.signatures["extract_entities"](text=texts)
  assert {k: v.dtype for k, v in got.items()} == {
      k: v.dtype for k, v in want.items()}
  want_g = f32.encode_spans(texts, **spans)["span_embeddings"].numpy()
  got_g = export.signatures["encode_spans"](
      text=texts, **spans)["span_embeddings"].numpy()
  print("encode_spans max |int8 - float32|", np.abs(got_g - want_g).max(),
        "calibration windows", info["calibration_windows"])
  np.testing.assert_allclose(got_g, want_g, atol=ENCODER_ATOL, rtol=0)
  assert not got_g[1].any()  # the empty text's padding spans


def test_int8_fill_spans_and_encode_ids(tmp_path, prose_records, small_vocab):
  from conftest import tiny_params  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  params = tiny_params(prose_records(), small_vocab)
  params = _tiny_encoder(params, small_vocab)
  tf.keras.utils.set_random_seed(5)
  model = task_factory.get_task(params.task).build_model()
  f32, _, export, _ = _int8_module(
      lambda: pretraining_module.SpanBertServingModule(
          model, small_vocab, seq_length=SEQ, top_k=3, max_masks=4),
      params, tmp_path)
  texts = tf.constant(["It is a truth [MASK] [MASK] acknowledged, that a "
                       "single man must be in want of a [MASK].", ""])
  want = f32.fill_spans(texts)
  got = export.signatures["fill_spans"](text=texts)
  assert {k: v.dtype for k, v in got.items()} == {
      k: v.dtype for k, v in want.items()}
  np.testing.assert_array_equal(got["masked_positions"],
                                want["masked_positions"])
  ids = f32.preprocessor(texts)
  want_x = f32.serve_ids(**ids)["sequence_output"].numpy()
  got_x = export.signatures["encode_ids"](**ids)["sequence_output"].numpy()
  print("encode_ids max |int8 - float32|", np.abs(got_x - want_x).max())
  np.testing.assert_allclose(got_x, want_x, atol=ENCODER_ATOL, rtol=0)


def test_int8_resolve(tmp_path, cased_vocab):
  from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
  from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
  params = _tiny_encoder(exp_factory.get_exp_config("spanbert/coref"),
                         cased_vocab)
  m = params.task.model
  m.ffnn_size, m.max_span_width, m.dropout_rate = 32, 10, 0.0
  split = _litbank_split(str(tmp_path / "data"), "coref")
  params.task.train_data.input_path = split
  params.task.train_data.vocab_file = cased_vocab
  params.task.validation_data.input_path = str(tmp_path / "no_dev_read")
  tf.keras.utils.set_random_seed(7)
  model = coreference.build_model(m)
  f32, _, export, _ = _int8_module(
      lambda: coref_module.CorefServingModule(
          model, cased_vocab, False, max_segment_len=SEQ,
          predict_singletons=True), params, tmp_path)
  text = tf.constant(TEXT)
  want = f32.resolve(text)
  got = export.signatures["resolve"](text=text)
  assert {k: v.dtype for k, v in got.items()} == {
      k: v.dtype for k, v in want.items()}
  scores = dict(text=text, genre=tf.constant(""),
                line_speakers=tf.constant([""]))
  want_s = f32.resolve_scores(**scores)["top_span_mention_scores"].numpy()
  got_s = export.resolve_scores(**scores)["top_span_mention_scores"].numpy()
  print("resolve mention scores max |int8 - float32|",
        np.abs(got_s - want_s).max())
  np.testing.assert_allclose(got_s, want_s, atol=ENCODER_ATOL, rtol=0)


def test_int8_answer_of_a_run_trained_from_squad_json(tmp_path, small_vocab):
  """A SQuAD run trains from the JSON (its task converts it on the fly):
  int8 calibrates on the windows its loader makes of that file, not on the
  JSON read as TFRecords (a DataLossError before)."""
  from official_spanbert.serving import serving_module  # pylint: disable=g-import-not-at-top
  source = json.load(open(data_path("squad", "new_wiki_v1.0.json"),
                          encoding="utf-8"))
  source["data"] = source["data"][:2]
  train = tmp_path / "train.json"
  train.write_text(json.dumps(source), encoding="utf-8")
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  params.override(SMALL, is_strict=True)
  for data in (params.task.train_data, params.task.validation_data):
    data.vocab_file, data.seq_length = small_vocab, SEQ
    data.doc_stride, data.query_length = 8, 8
  params.task.train_data.input_path = str(train)
  run = serving_module.Run(params)
  with pytest.raises(tf.errors.DataLossError):  # not TFRecords
    quantization.calibration_batches([str(train)], SEQ, 8)
  batches = quantization.records_windows(run, 32)
  assert sum(len(b["input_word_ids"]) for b in batches) == 32
  assert all(b["input_mask"][:, 0].all() for b in batches)
