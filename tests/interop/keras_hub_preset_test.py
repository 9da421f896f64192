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

"""The keras-hub preset export (tools/export_keras_hub.py) loaded by Keras 3.

A tiny SpanBERT trained for 8 steps (train_helpers' run) is exported twice:
as the TF Serving SavedModel and as a keras-hub preset. A separate Python
process (Keras 3, KERAS_BACKEND=tensorflow, then torch and jax when
installed; no TF_USE_LEGACY_KERAS) loads the preset with
keras_hub.models.BertBackbone.from_preset and must give the serving export's
sequence and pooled output on real text (1e-4), and keras-hub's tokenizer its
token ids; a BertTextClassifier from the preset fine-tunes for a few steps
there.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.interop import hf_files
from official_spanbert.interop import keras_hub_preset
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from conftest import TOOLS
from conftest import data_path
from conftest import tiny_params
from train_helpers import trained  # noqa: F401  pylint: disable=unused-import

SEQ = 64
TOL = 1e-4

if importlib.util.find_spec("keras_hub") is None:
  pytest.skip("keras-hub is not installed (the keras3 extra)",
              allow_module_level=True)

# Runs in its own process, as a Keras 3 user's program would.
CLIENT = r"""
import json, os, sys
import numpy as np
import keras
import keras_hub

preset, inputs, out_path, fine_tune = sys.argv[1:5]
x = np.load(inputs)
backbone = keras_hub.models.BertBackbone.from_preset(preset)
pre = keras_hub.models.BertTextClassifierPreprocessor.from_preset(preset)
result = {}
for name, texts in (("single", [str(t) for t in x["texts"]]),
                    ("pair", ([str(t) for t in x["firsts"]],
                              [str(t) for t in x["seconds"]]))):
  outputs = backbone.predict({"token_ids": x[name + "_ids"],
                              "segment_ids": x[name + "_types"],
                              "padding_mask": x[name + "_mask"]}, verbose=0)
  packed = pre(texts)
  result.update({
      name + "_sequence_output": np.asarray(outputs["sequence_output"]),
      name + "_pooled_output": np.asarray(outputs["pooled_output"]),
      name + "_token_ids": np.asarray(packed["token_ids"]),
      name + "_segment_ids": np.asarray(packed["segment_ids"]),
      name + "_padding_mask": np.asarray(
          packed["padding_mask"]).astype("int32")})
info = {"backend": keras.backend.backend(),
        "legacy_keras": os.environ.get("TF_USE_LEGACY_KERAS"),
        "sequence_length": pre.sequence_length,
        "lowercase": pre.tokenizer.lowercase}
if fine_tune == "1":
  keras.utils.set_random_seed(0)
  classifier = keras_hub.models.BertTextClassifier.from_preset(
      preset, num_classes=2)
  classifier.compile(optimizer=keras.optimizers.Adam(5e-3),
                     loss=keras.losses.SparseCategoricalCrossentropy(
                         from_logits=True),
                     metrics=["accuracy"])
  texts = [str(t) for t in x["train_texts"]]
  table = classifier.backbone.get_layer("token_embedding").embeddings
  before = keras.ops.convert_to_numpy(table).copy()
  history = classifier.fit(texts, x["train_labels"], batch_size=8,
                           epochs=6, verbose=0)
  info["loss"] = [float(v) for v in history.history["loss"]]
  info["embedding_change"] = float(np.max(np.abs(
      keras.ops.convert_to_numpy(table) - before)))
  info["probabilities"] = keras.ops.convert_to_numpy(keras.ops.softmax(
      classifier.predict(texts[:4], verbose=0))).tolist()
np.savez(out_path, **result)
print(json.dumps(info))
"""


def _tsv(*parts):
  with open(data_path(*parts), encoding="utf-8") as f:
    return [line.rstrip("\n").split("\t") for line in f][1:]


def _real_texts():
  """SST-2 dev sentences (lower-cased, tokenized), Austen's prose (lines
  longer than SEQ tokens) and RTE dev sentence pairs."""
  sst = [(s.strip(), int(y)) for s, y in _tsv("glue", "SST-2", "dev.tsv")]
  austen = []
  with open(data_path("corpus", "austen.txt"), encoding="utf-8") as f:
    for line in f:
      if line.strip():
        austen.append(line.strip())
      if len(austen) == 4:
        break
  rte = [(row[1], row[2]) for row in _tsv("glue", "RTE", "dev.tsv")[:6]]
  return sst, austen, rte


@pytest.fixture(scope="module")
def exported(tmp_path_factory, pretraining_records, cased_vocab, trained):
  d = tmp_path_factory.mktemp("keras_hub")
  # train_helpers' run of the same tiny config (8 steps), which this worker
  # builds once for the test_train_* files too; only read here.
  model_dir = trained
  params = tiny_params(pretraining_records, cased_vocab, steps=8)
  preset = str(d / "preset")
  tool = subprocess.Popen(
      [sys.executable, os.path.join(TOOLS, "export_keras_hub.py"),
       "--input=" + model_dir, "--output=" + preset,
       f"--sequence_length={SEQ}"],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
  # The TF Serving export of the same checkpoint meanwhile.
  model = pretraining_module.build_pretrainer(
      serving_module.Run(params, checkpoint_path=model_dir))
  serving = pretraining_module.SpanBertServingModule(
      model, cased_vocab, seq_length=SEQ).write(str(d / "serving"), version=1)
  out, err = tool.communicate(timeout=900)
  assert tool.returncode == 0, err[-3000:]
  assert "tf_to_keras_hub: wrote encoder" in out.splitlines()[-1], out

  sst, austen, rte = _real_texts()
  texts = [s for s, _ in sst[:6]] + austen
  firsts, seconds = [a for a, _ in rte], [b for _, b in rte]
  signatures = tf.saved_model.load(serving["model"]).signatures
  single = signatures["serving_default"](text=tf.constant(texts))
  pair = signatures["encode_pair"](text=tf.constant(firsts),
                                   text_pair=tf.constant(seconds))
  expected = {"single_" + k: v.numpy() for k, v in single.items()}
  expected["single_input_type_ids"] = np.zeros_like(
      expected["single_input_word_ids"])
  expected.update({"pair_" + k: v.numpy() for k, v in pair.items()})
  inputs = str(d / "inputs.npz")
  np.savez(inputs, texts=np.array(texts), firsts=np.array(firsts),
           seconds=np.array(seconds),
           train_texts=np.array([s for s, _ in sst[:16]]),
           train_labels=np.array([y for _, y in sst[:16]], dtype="int32"),
           **{f"{n}_{k}": expected[f"{n}_input_{f}"]
              for n in ("single", "pair")
              for k, f in (("ids", "word_ids"), ("mask", "mask"),
                           ("types", "type_ids"))})
  return {"dir": d, "preset": preset, "model_dir": model_dir,
          "inputs": inputs, "expected": expected, "texts": texts,
          "tool_out": out}


def _client(exported, backend, fine_tune=False):
  out = str(exported["dir"] / f"keras_hub_{backend}.npz")
  env = keras_hub_preset.writer_env(backend)
  env["TF_NUM_INTRAOP_THREADS"] = env["TF_NUM_INTEROP_THREADS"] = "1"
  proc = subprocess.run(
      [sys.executable, "-c", CLIENT, exported["preset"], exported["inputs"],
       out, "1" if fine_tune else "0"],
      capture_output=True, text=True, timeout=900, env=env)
  assert proc.returncode == 0, proc.stderr[-3000:]
  info = json.loads(proc.stdout.strip().splitlines()[-1])
  return info, dict(np.load(out))


@pytest.fixture(scope="module")
def on_tensorflow(exported):
  return _client(exported, "tensorflow", fine_tune=True)


def _check_outputs(exported, info, got, backend):
  assert info["backend"] == backend
  assert info["legacy_keras"] is None  # a Keras 3 process
  expected = exported["expected"]
  for name in ("single", "pair"):
    for key in ("sequence_output", "pooled_output"):
      want, have = expected[f"{name}_{key}"], got[f"{name}_{key}"]
      assert have.shape == want.shape, (name, key)
      diff = float(np.max(np.abs(have - want)))
      print(f"{backend} {name} {key}: max abs diff {diff:.2e}")
      assert diff <= TOL, (name, key, diff)
    # keras-hub's own preprocessing (the preset's tokenizer, vocab and
    # sequence length) packs the text as the serving export does.
    for key, ours in (("token_ids", "input_word_ids"),
                      ("segment_ids", "input_type_ids"),
                      ("padding_mask", "input_mask")):
      np.testing.assert_array_equal(got[f"{name}_{key}"],
                                    expected[f"{name}_{ours}"],
                                    err_msg=f"{name} {key}")
  assert info["sequence_length"] == SEQ and info["lowercase"] is False
  # Austen's lines were truncated, SST-2's padded: both cases are compared.
  mask = expected["single_input_mask"]
  assert mask[:, -1].any() and not mask[:, -1].all()


def test_preset_matches_tf_serving_export_on_tensorflow(exported,
                                                        on_tensorflow):
  info, got = on_tensorflow
  _check_outputs(exported, info, got, "tensorflow")


# The other backends: torch (the interop extra installs it), and jax where
# it is installed (it passed on 2026-12-04 when the keras3 extra had it; CI's
# venv has no jax, which tensorflow.lite imports on every TF import).
@pytest.mark.parametrize("backend, module", [("torch", "torch"),
                                             ("jax", "jax")])
def test_preset_matches_tf_serving_export_on_other_backends(exported, backend,
                                                            module):
  if importlib.util.find_spec(module) is None:
    pytest.skip(f"{module} is not installed (the interop extra has torch; "
                "jax[cpu] is for JAX users to install, docs/keras3.md)")
  info, got = _client(exported, backend)
  _check_outputs(exported, info, got, backend)


def test_text_classifier_fine_tunes_from_preset(on_tensorflow):
  info, _ = on_tensorflow
  loss = info["loss"]
  assert len(loss) == 6 and all(np.isfinite(loss)), loss
  # 16 SST-2 sentences, 12 steps: it fits them (0.69 -> 0.09 here)...
  assert min(loss) < 0.5 * loss[0], loss
  # ... and fine-tunes the encoder, not only the head.
  assert info["embedding_change"] > 1e-3, info["embedding_change"]
  probabilities = np.array(info["probabilities"])
  assert probabilities.shape == (4, 2)
  np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-5)


def test_preset_files_and_conversion_record(exported):
  preset = exported["preset"]
  for name in ("config.json", "model.weights.h5", "tokenizer.json",
               "preprocessor.json", "metadata.json",
               os.path.join("assets", "tokenizer", "vocabulary.txt"),
               hf_files.CONVERSION_FILE):
    assert os.path.isfile(os.path.join(preset, name)), name
  with open(os.path.join(preset, "config.json"), encoding="utf-8") as f:
    config = json.load(f)
  assert config["registered_name"] == "keras_hub>BertBackbone"
  assert config["config"]["num_layers"] == 1
  assert config["config"]["hidden_dim"] == 64
  assert config["config"]["max_sequence_length"] == 512
  with open(os.path.join(preset, hf_files.CONVERSION_FILE),
            encoding="utf-8") as f:
    record = json.load(f)
  assert record["checkpoint"].endswith("ckpt-8")
  assert record["dropped"] == ["masked_lm", "span_boundary"]
  assert "left out: masked_lm, span_boundary" in exported["tool_out"]


def test_existing_preset_is_refused_unless_overwrite(exported):
  with pytest.raises(keras_hub_preset.ConversionError, match="already holds"):
    keras_hub_preset.export_keras_hub_preset(
        exported["model_dir"], exported["preset"], progress=False)
