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

"""Tests of the TF Serving export (tools/export_savedmodel.py)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import text_preprocessor as tp
from conftest import REPO, TOOLS
import export_helpers
from export_helpers import SEQ
import serving_client

TEXTS = [
    "The cat sat on the [MASK] [MASK] near the door.",
    "",
    "   \t ",
    "word " * 10_000,
    b"bad \xff\xfe bytes and a [MASK] here",
    "[MASK]",
    "Ünïcödé naïve café [MASK] 日本",
]
TEXTS = [t if isinstance(t, bytes) else t.encode() for t in TEXTS]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, cased_vocab):
  d = tmp_path_factory.mktemp("export")
  params = export_helpers.params()
  model = task_factory.get_task(params.task).build_model()
  ckpt = tf.train.Checkpoint(model=model).save(str(d / "ckpt" / "ckpt"))
  # Through the command-line tool, from a training-style checkpoint.
  proc = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "export_savedmodel.py")] +
      export_helpers.tool_flags(ckpt, cased_vocab, str(d / "spanbert")) +
      ["--version=7"],
      capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr[-3000:]
  return {"dir": str(d), "model": str(d / "spanbert" / "7"),
          "pre": str(d / "spanbert_preprocessing" / "7"), "keras": model,
          "vocab": cased_vocab}


# One fresh process (each pays the import of TensorFlow): the audit of the
# exports' op lists (TF's ops before tf.text's import), then
# serving_client.py's requests, which import TF and tf.text alone.
FRESH = """
import json, sys
from tensorflow.python.framework import op_def_registry
import tensorflow as tf
tests_dir, lists_path, audit_path = sys.argv[1:4]
with open(lists_path) as f:
  lists = json.load(f)
core = [[o for o in ops if op_def_registry.get(o) is not None]
        for ops in lists]
import tensorflow_text
out = []
for ops, core_ops in zip(lists, core):
  text = [o for o in ops
          if o not in core_ops and op_def_registry.get(o) is not None]
  out.append({"core": core_ops, "text": text,
              "unknown": [o for o in ops if o not in core_ops + text]})
with open(audit_path, "w") as f:
  json.dump(out, f)
sys.path.insert(0, tests_dir)
import serving_client
sys.exit(serving_client.main(*sys.argv[4:]))
"""


@pytest.fixture(scope="module")
def fresh_process(exported, tmp_path_factory):
  """The op lists of the two exports, the audit's results and the
  requests' outputs (`<signature>:<name>`) of one fresh interpreter."""
  d = tmp_path_factory.mktemp("fresh")
  op_lists = [sorted(export_helpers.saved_ops(export_dir))
              for export_dir in (exported["model"], exported["pre"])]
  (d / "ops.json").write_text(json.dumps(op_lists))
  requests = _requests()
  np.savez(d / "req.npz", **requests)
  proc = subprocess.run(
      [sys.executable, "-c", FRESH, os.path.join(REPO, "tests"),
       str(d / "ops.json"), str(d / "audit.json"), exported["model"],
       str(d / "req.npz"), str(d / "out.npz")],
      capture_output=True, text=True, timeout=600,
      # The real interpreter (not a child of fork_server.py's, which has
      # imported TensorFlow and the package), without the repo on its path.
      env={**os.environ, "PYTHONPATH": "", "SPANBERT_FRESH_PYTHON": "1"})
  assert proc.returncode == 0, proc.stderr[-3000:]
  return {"op_lists": op_lists, "requests": requests,
          "audit": json.loads((d / "audit.json").read_text()),
          "out": np.load(d / "out.npz")}


def test_op_audit_core_and_tf_text_only(fresh_process):
  op_lists, results = fresh_process["op_lists"], fresh_process["audit"]
  assert len(results) == len(op_lists)
  for ops, result in zip(op_lists, results):
    assert result["unknown"] == []
    assert not {"PyFunc", "EagerPyFunc", "PyFuncStateless"} & set(ops)
    # Tokenization really happens in the graph, with tf.text ops.
    assert any("Wordpiece" in o for o in result["text"]), result["text"]


def _requests():
  texts = np.array(TEXTS, dtype=object).astype(bytes)
  pair = texts[::-1].copy()
  return {"serving_default:text": texts, "fill_spans:text": texts,
          "encode_pair:text": texts, "encode_pair:text_pair": pair}


def test_fresh_process_outputs_match_keras(exported, fresh_process):
  requests, out = fresh_process["requests"], fresh_process["out"]

  model = exported["keras"]
  pre = tp.TextPreprocessor(exported["vocab"], seq_length=SEQ)
  inputs = pre(tf.constant(requests["serving_default:text"]))
  enc = model.encoder_network(inputs, training=False)
  np.testing.assert_allclose(out["serving_default:sequence_output"],
                             enc["sequence_output"].numpy(), atol=1e-5)
  np.testing.assert_allclose(out["serving_default:pooled_output"],
                             enc["pooled_output"].numpy(), atol=1e-5)
  np.testing.assert_array_equal(out["serving_default:input_word_ids"],
                                inputs["input_word_ids"].numpy())
  # Every request, even the odd ones, gives [CLS] ... [SEP] of fixed length.
  ids = out["serving_default:input_word_ids"]
  assert ids.shape == (len(TEXTS), SEQ) and np.all(ids[:, 0] == 101)
  assert list(ids[1, :2]) == [101, 102] and list(ids[2, :2]) == [101, 102]
  assert ids[3, SEQ - 1] == 102  # 10,000 words truncated, not an error

  # fill_spans: MLM top-k equals the Keras MLM head on the same positions.
  pos = out["fill_spans:masked_positions"]
  np.testing.assert_array_equal(pos[0, :2], [6, 7])
  assert list(out["fill_spans:masked_weights"][0]) == [1, 1, 0]
  assert out["fill_spans:masked_weights"][1].sum() == 0  # no [MASK]
  logits = model.masked_lm(enc["sequence_output"], tf.constant(pos))
  log_probs = tf.nn.log_softmax(logits).numpy()
  top = np.argsort(-log_probs, axis=-1)[..., :4]
  real = out["fill_spans:masked_weights"] > 0
  np.testing.assert_array_equal(out["fill_spans:mlm_top_k_ids"][real],
                                top[real])
  np.testing.assert_allclose(
      out["fill_spans:mlm_top_k_scores"][real],
      np.take_along_axis(log_probs, top, -1)[real], atol=1e-5)
  # Slots without a [MASK] are computed by no head: -1, "", 0.
  assert np.all(out["fill_spans:mlm_top_k_ids"][~real] == -1)
  assert np.all(out["fill_spans:mlm_top_k_tokens"][~real] == b"")
  assert np.all(out["fill_spans:mlm_top_k_scores"][~real] == 0.0)
  # SBO: the span [6, 7] is predicted from boundaries 5 and 8.
  sbo = model.span_boundary(enc["sequence_output"][:1], tf.constant([[5, 5, 0]]),
                            tf.constant([[8, 8, 0]]),
                            tf.constant([[0, 1, 0]]))
  sbo_top = np.argsort(-tf.nn.log_softmax(sbo).numpy()[0, :2], axis=-1)
  np.testing.assert_array_equal(out["fill_spans:sbo_top_k_ids"][0, :2],
                                sbo_top[:, :4])
  tokens = out["fill_spans:mlm_top_k_tokens"]
  vocab = pre.vocab.tokens
  assert tokens[0, 0, 0].decode() == vocab[top[0, 0, 0]]
  filled = [t.decode() for t in out["fill_spans:filled_text"]]
  assert "[MASK]" not in filled[0] and filled[0].startswith("The cat sat")
  assert filled[1] == "" and filled[2] == ""

  pair_types = out["encode_pair:input_type_ids"]
  assert pair_types.shape == (len(TEXTS), SEQ)
  np.testing.assert_allclose(
      out["encode_pair:sequence_output"],
      model.encoder_network(pre(tf.constant(requests["encode_pair:text"]),
                                tf.constant(requests["encode_pair:text_pair"])),
                            training=False)["sequence_output"].numpy(),
      atol=1e-5)


def test_saved_model_cli_lists_signatures(exported):
  cli = shutil.which("saved_model_cli", path=os.path.dirname(sys.executable))
  assert cli, "saved_model_cli is installed with tensorflow"
  # The script's entry point, run as a module: a child of the fork server
  # (fork_server.py) instead of a fresh import of TensorFlow (~7 s of CPU).
  proc = subprocess.run(
      [sys.executable, "-m", "tensorflow.python.tools.saved_model_cli",
       "show", "--dir", exported["model"], "--all"],
      capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr[-2000:]
  for name in ("serving_default", "encode_pair", "encode_ids", "fill_spans",
               "encode_spans"):
    assert f"signature_def['{name}']" in proc.stdout
  assert "tensorflow/serving/predict" in proc.stdout


def test_predict_request_round_trip_and_warmup(exported):
  from tensorflow_serving.apis import predict_pb2  # pylint: disable=g-import-not-at-top
  loaded = tf.saved_model.load(exported["model"])
  request = predict_pb2.PredictRequest()
  request.model_spec.name = "spanbert"
  request.model_spec.signature_name = "fill_spans"
  request.inputs["text"].CopyFrom(tf.make_tensor_proto(
      [b"Paris is the [MASK] of France."]))
  back = predict_pb2.PredictResponse.FromString(
      serving_client.predict(loaded, request.SerializeToString()))
  assert tf.make_ndarray(back.outputs["mlm_top_k_ids"]).shape == (1, 3, 4)
  assert tf.make_ndarray(back.outputs["masked_weights"]).tolist() == [[1, 0, 0]]

  seen = serving_client.replay_warmup(loaded, exported["model"])
  assert seen == {"serving_default", "encode_pair", "encode_ids",
                  "fill_spans", "encode_spans"}


def test_preprocessing_model(exported):
  loaded = tf.saved_model.load(exported["pre"])
  out = loaded.signatures["serving_default"](
      text=tf.constant([b"Hello world", b""]))
  assert out["input_word_ids"].shape == (2, SEQ)
  assert out["input_word_ids"].numpy()[1, :3].tolist() == [101, 102, 0]
  assert os.path.exists(os.path.join(exported["pre"], "assets.extra",
                                     "tf_serving_warmup_requests"))


def test_existing_version_is_refused(exported):
  with pytest.raises(ValueError, match="already exists"):
    pretraining_module.SpanBertServingModule(
        exported["keras"], exported["vocab"], seq_length=SEQ).write(
            os.path.join(exported["dir"], "spanbert"), version=7)
