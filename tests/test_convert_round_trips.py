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

"""Checkpoint conversion ours -> Hugging Face -> ours, exact both ways.

A random SpanBERT (with and without the SBO head), a trainer's model_dir and
an encoder-only checkpoint go to Hugging Face's layout and back unchanged;
the converted MiniLM comes back from TF exactly. Needs the `interop` extra,
as test_convert_checkpoint.py (whose fixtures it shares).
"""

import json
import os

import numpy as np
import pytest

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

import tensorflow as tf  # noqa: E402

from official.core import exp_factory  # noqa: E402
from official.core import train_utils  # noqa: E402
from official.modeling.hyperparams import params_dict  # noqa: E402
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.modeling import checkpoints  # noqa: E402
from official_spanbert import interop as hc  # noqa: E402
from test_convert_checkpoint import TOL  # noqa: E402
from test_convert_checkpoint import _compare_pretraining  # noqa: E402
from test_convert_checkpoint import _random_tf_checkpoint  # noqa: E402
from test_convert_checkpoint import minilm_dir  # noqa: E402,F401  pylint: disable=unused-import
from test_convert_checkpoint import minilm_tf  # noqa: E402,F401  pylint: disable=unused-import
from test_convert_checkpoint import tiny_hf  # noqa: E402,F401  pylint: disable=unused-import


def test_round_trip_tf_hf_tf_is_exact(tmp_path, cased_vocab):
  prefix, model = _random_tf_checkpoint(str(tmp_path / "tf"), cased_vocab)
  exported = hc.tf_to_hf(prefix, str(tmp_path / "hf"))
  assert exported.items == ["encoder", "masked_lm", "next_sentence",
                            "span_boundary"]  # the SBO head beside the HF files
  assert exported.dropped == []
  with open(tmp_path / "hf" / "config.json") as f:
    config = json.load(f)
  assert config["architectures"] == ["BertForPreTraining"]
  assert config["hidden_act"] == "gelu_new"

  hf_model, info = transformers.BertForPreTraining.from_pretrained(
      str(tmp_path / "hf"), local_files_only=True, output_loading_info=True)
  assert not any(info.values()), info  # no missing/unexpected keys
  hf_model.eval()
  diffs = _compare_pretraining(model, hf_model)
  assert max(diffs.values()) <= TOL, diffs
  _, info = transformers.BertModel.from_pretrained(
      str(tmp_path / "hf"), local_files_only=True, output_loading_info=True)
  assert not info["missing_keys"], info
  tokenizer = transformers.BertTokenizer.from_pretrained(
      str(tmp_path / "hf"), local_files_only=True)
  assert tokenizer.tokenize("Hello World") == ["Hello", "World"]  # cased

  back = hc.hf_to_tf(str(tmp_path / "hf"), str(tmp_path / "tf2"))
  assert back.items == exported.items
  reread = hc.build_model(*hc.read_params(str(tmp_path / "tf2" /
                                              hc.PARAMS_FILE)),
                          use_next_sentence=True, use_sbo=True)
  assert checkpoints.restore(reread, str(tmp_path / "tf2")) == sorted(
      back.items)
  for item in back.items:
    a = hc.item_variables(model, item)
    b = hc.item_variables(reread, item)
    assert sorted(a) == sorted(b)
    for name in a:
      assert np.array_equal(a[name].numpy(), b[name].numpy()), (item, name)


def test_trainer_model_dir_exports(tmp_path, cased_vocab):
  """A model_dir as the trainer leaves it: full params.yaml, ckpt-N."""
  _, model = _random_tf_checkpoint(str(tmp_path / "src"), cased_vocab)
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, str(tmp_path / "src" / hc.PARAMS_FILE), is_strict=True)
  params.task.model.use_next_sentence = True
  params.task.train_data.vocab_file = cased_vocab
  model_dir = str(tmp_path / "run")
  train_utils.serialize_config(params, model_dir)
  checkpoint = tf.train.Checkpoint(
      global_step=tf.Variable(3, dtype=tf.int64), model=model,
      **model.checkpoint_items)
  tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=1).save(3)
  result = hc.tf_to_hf(model_dir, str(tmp_path / "hf"))
  assert result.checkpoint.endswith("ckpt-3")
  assert result.items == ["encoder", "masked_lm", "next_sentence",
                          "span_boundary"]
  assert result.lower_case is False  # cased unless told otherwise
  hf_model = transformers.BertForPreTraining.from_pretrained(
      str(tmp_path / "hf"), local_files_only=True).eval()
  diffs = _compare_pretraining(model, hf_model)
  assert max(diffs.values()) <= TOL, diffs


def test_hf_tf_hf_round_trip_is_exact(tiny_hf, tmp_path):
  hf_dir, _ = tiny_hf
  hc.hf_to_tf(hf_dir, str(tmp_path / "tf"))
  hc.tf_to_hf(str(tmp_path / "tf"), str(tmp_path / "hf"))
  a = safetensors_numpy.load_file(os.path.join(hf_dir, "model.safetensors"))
  b = safetensors_numpy.load_file(str(tmp_path / "hf" / "model.safetensors"))
  a = {k: v for k, v in a.items() if not k.endswith("position_ids")}
  assert sorted(a) == sorted(b)
  for k in a:
    assert np.array_equal(a[k], b[k]), k


def test_nsp_head_with_its_own_pooler_is_refused_or_dropped(tmp_path,
                                                            cased_vocab):
  prefix, model = _random_tf_checkpoint(str(tmp_path / "tf"), cased_vocab,
                                        use_sbo=False)
  model.next_sentence.dense.bias.assign(
      model.next_sentence.dense.bias + 1.0)
  tf.train.Checkpoint(**model.checkpoint_items).write(prefix)
  with pytest.raises(hc.ConversionError, match="one pooler"):
    hc.tf_to_hf(prefix, str(tmp_path / "hf"))
  result = hc.tf_to_hf(prefix, str(tmp_path / "hf2"), drop_next_sentence=True)
  assert result.items == ["encoder", "masked_lm"]
  assert result.dropped == ["next_sentence"]
  _, info = transformers.BertForMaskedLM.from_pretrained(
      str(tmp_path / "hf2"), local_files_only=True, output_loading_info=True)
  assert not info["missing_keys"], info


def test_encoder_only_checkpoint_exports_bert_model(minilm_dir, minilm_tf,
                                                    tmp_path):
  hc.tf_to_hf(minilm_tf, str(tmp_path))
  with open(tmp_path / "config.json") as f:
    config = json.load(f)
  assert config["architectures"] == ["BertModel"]
  assert config["hidden_act"] == "gelu"
  a = safetensors_numpy.load_file(os.path.join(minilm_dir,
                                               "model.safetensors"))
  b = safetensors_numpy.load_file(str(tmp_path / "model.safetensors"))
  a.pop("embeddings.position_ids")
  assert sorted(a) == sorted(b)
  assert all(np.array_equal(a[k], b[k]) for k in a)
  tokenizer = transformers.BertTokenizer.from_pretrained(
      str(tmp_path), local_files_only=True)
  assert tokenizer.tokenize("Hello World") == ["hello", "world"]
