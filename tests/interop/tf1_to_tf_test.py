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

"""Google's TF1 BERT checkpoints -> ours, checked against PyTorch.

A TF1-format checkpoint is written with tf.compat.v1 variables under
Google's names (bert/encoder/layer_0/attention/self/query/kernel, ...,
cls/predictions/output_bias, cls/seq_relationship/output_weights) from a
random transformers BertForPreTraining, with Adam slots and global_step as a
pretraining run leaves them; the import's sequence output, MLM logits and
NSP logits are compared with that model. Unit tier (the vocab excerpt).
"""

import json
import os
import re
import shutil

import numpy as np
import pytest

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tensorflow as tf  # noqa: E402

from official_spanbert import interop as hc  # noqa: E402
from official_spanbert.modeling import checkpoints  # noqa: E402
from official_spanbert.modeling import span_bert_pretrainer  # noqa: E402

from fairseq_to_tf_test import _run_tool  # noqa: E402

TOL = 1e-5
SIZES = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=64, max_position_embeddings=40)


def _google_name(key):
  """A BertForPreTraining key -> (Google's TF1 name, transpose?) or None."""
  special = {"cls.predictions.bias": "cls/predictions/output_bias",
             "cls.seq_relationship.weight":
                 "cls/seq_relationship/output_weights",   # [2, H], as HF
             "cls.seq_relationship.bias": "cls/seq_relationship/output_bias"}
  if key in special:
    return special[key], False
  if key.endswith(("position_ids", "token_type_ids")) or key.startswith(
      "cls.predictions.decoder."):
    return None  # buffers; the decoder is the word embeddings
  name = re.sub(r"layer/(\d+)", r"layer_\1", key.replace(".", "/"))
  name = re.sub(r"LayerNorm/weight$", "LayerNorm/gamma", name)
  name = re.sub(r"LayerNorm/bias$", "LayerNorm/beta", name)
  if "_embeddings/" in name:
    return name[:-len("/weight")], False
  if name.endswith("/weight"):
    return name[:-len("weight")] + "kernel", True
  return name, False


def _write_tf1_checkpoint(model, prefix):
  tensors = {}
  for key, value in model.state_dict().items():
    google = _google_name(key)
    if google:
      name, transpose = google
      value = value.numpy()
      tensors[name] = value.T if transpose else value
  with tf.Graph().as_default():
    variables = [tf.compat.v1.Variable(v, name=n) for n, v in tensors.items()]
    # What a pretraining run leaves besides the weights.
    variables += [tf.compat.v1.Variable(np.full_like(v, 0.5), name=n + slot)
                  for n, v in tensors.items()
                  for slot in ("/adam_m", "/adam_v")]
    variables.append(tf.compat.v1.Variable(np.int64(1000),
                                           name="global_step"))
    saver = tf.compat.v1.train.Saver(variables)
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      saver.save(sess, prefix, write_meta_graph=False)
  return tensors


@pytest.fixture(scope="module")
def google(tmp_path_factory, small_vocab):
  """(dir cased_L-2_H-32_A-4 with bert_model.ckpt, bert_config.json and
  vocab.txt as Google ships them, the same weights in BertForPreTraining)."""
  d = tmp_path_factory.mktemp("google") / "cased_L-2_H-32_A-4"
  d.mkdir()
  shutil.copyfile(small_vocab, d / "vocab.txt")
  with open(small_vocab, encoding="utf-8") as f:
    vocab_size = sum(1 for _ in f)
  # Google's "gelu" is the tanh form: transformers' gelu_new.
  config = transformers.BertConfig(vocab_size=vocab_size,
                                   hidden_act="gelu_new", **SIZES)
  torch.manual_seed(0)
  model = transformers.BertForPreTraining(config).eval()
  with torch.no_grad():
    for p in model.parameters():
      p.add_(0.05 * torch.randn_like(p))
  tensors = _write_tf1_checkpoint(model, str(d / "bert_model.ckpt"))
  assert "bert/encoder/layer_1/attention/self/query/kernel" in tensors
  with open(d / "bert_config.json", "w") as f:
    json.dump({"vocab_size": vocab_size, "hidden_act": "gelu",
               "hidden_dropout_prob": 0.1,
               "attention_probs_dropout_prob": 0.1, "type_vocab_size": 2,
               "initializer_range": 0.02, **SIZES}, f)
  return d, model


def test_tf1_checkpoint_matches_bert_for_pretraining(google, tmp_path,
                                                     capsys):
  d, hf_model = google
  rc, out = _run_tool(capsys, "--direction=tf1_to_tf", f"--input={d}",
                      f"--output={tmp_path}")
  assert rc == 1 and out.err.count("\n") == 1
  assert "tf1_to_tf needs --bert_config" in out.err
  rc, out = _run_tool(capsys, "--direction=tf1_to_tf", f"--input={d}",
                      f"--bert_config={d / 'bert_config.json'}",
                      f"--output={tmp_path}")
  assert rc == 0, out.err
  assert re.fullmatch(
      rf"tf1_to_tf: wrote encoder, masked_lm, next_sentence \(\d+ tensors, "
      rf"[\d.]+ MB\) to {re.escape(str(tmp_path))} in [\d.]+ s",
      out.out.splitlines()[-1]), out.out
  assert "(cased: create records without --do_lower_case)" in out.out
  with open(tmp_path / hc.CONVERSION_FILE) as f:
    meta = json.load(f)
  assert meta["items"] == ["encoder", "masked_lm", "next_sentence"]

  encoder_config, activation = hc.read_params(str(tmp_path / hc.PARAMS_FILE))
  assert activation == encoder_config.bert_v2.hidden_activation == "gelu"
  model = hc.build_model(encoder_config, activation, use_next_sentence=True)
  assert checkpoints.restore(model, str(tmp_path)) == [
      "encoder", "masked_lm", "next_sentence"]

  rng = np.random.default_rng(3)
  ids = rng.integers(999, 1625, size=(3, 24))
  ids[:, 0] = 101
  mask = np.ones_like(ids)
  mask[1, 15:] = 0
  ids *= mask
  types = np.zeros_like(ids)
  types[:, 10:] = 1
  types *= mask
  positions = np.stack([rng.choice(np.arange(1, 12), 4, replace=False)
                        for _ in range(3)])
  with torch.no_grad():
    ref = hf_model(input_ids=torch.tensor(ids),
                   attention_mask=torch.tensor(mask),
                   token_type_ids=torch.tensor(types),
                   output_hidden_states=True)
  inputs = {k: tf.constant(v) for k, v in zip(
      ("input_word_ids", "input_mask", "input_type_ids",
       "masked_lm_positions"), (ids, mask, types, positions))}
  inputs.update({k: v for k, v in span_bert_pretrainer.dummy_inputs(
      3, 24, 4).items() if k.startswith("sbo_")})
  ours = model(inputs, training=False)
  ref_mlm = np.take_along_axis(ref.prediction_logits.numpy(),
                               positions[:, :, None], axis=1)
  diffs = {
      "sequence_output": np.abs(ours["sequence_output"].numpy() -
                                ref.hidden_states[-1].numpy()).max(),
      "mlm_logits": np.abs(ours["mlm_logits"].numpy() - ref_mlm).max(),
      "next_sentence": np.abs(ours["next_sentence"].numpy() -
                              ref.seq_relationship_logits.numpy()).max()}
  print("tf1_to_tf max abs diffs against BertForPreTraining:",
        {k: f"{v:.3g}" for k, v in diffs.items()})
  assert max(diffs.values()) <= TOL, diffs


def test_a_config_or_variable_of_other_sizes_names_both(google, tmp_path):
  """Issue 48 item 11: a config with a larger vocab_size blamed vocab.txt;
  a wrong-shaped variable was "truncated or not a TF1 checkpoint"."""
  d, _ = google
  config = json.loads((d / "bert_config.json").read_text())
  vocab_size = config["vocab_size"]
  config["vocab_size"] += 10
  (tmp_path / "big.json").write_text(json.dumps(config))
  with pytest.raises(hc.ConversionError) as e:
    hc.tf1_to_tf(str(d / "bert_model.ckpt"), str(tmp_path / "a"),
                 hc.ConversionOptions(progress=False),
                 bert_config=str(tmp_path / "big.json"))
  assert str(e.value) == (
      f"{d}/bert_model.ckpt: bert/embeddings/word_embeddings has shape "
      f"[{vocab_size}, 32], but {tmp_path}/big.json (vocab_size "
      f"{vocab_size + 10}, hidden_size 32) gives [{vocab_size + 10}, 32]; "
      "pass the bert_config.json that came with this checkpoint "
      "(--bert_config)")
  # One variable of another shape, the rest as released.
  reader = tf.train.load_checkpoint(str(d / "bert_model.ckpt"))
  name = "bert/encoder/layer_1/attention/self/query/kernel"
  with tf.Graph().as_default():
    variables = [tf.compat.v1.Variable(
        reader.get_tensor(n)[:, :28] if n == name else reader.get_tensor(n),
        name=n) for n in reader.get_variable_to_shape_map()]
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      tf.compat.v1.train.Saver(variables).save(
          sess, str(tmp_path / "odd" / "bert_model.ckpt"),
          write_meta_graph=False)
  with pytest.raises(hc.ConversionError,
                     match=rf"odd/bert_model\.ckpt: {name} has shape "
                     r"\[32, 28\], but .*bert_config\.json \(hidden_size "
                     r"32\) gives \[32, 32\]"):
    hc.tf1_to_tf(str(tmp_path / "odd" / "bert_model.ckpt"),
                 str(tmp_path / "b"),
                 hc.ConversionOptions(vocab_file=str(d / "vocab.txt"),
                                      progress=False),
                 bert_config=str(d / "bert_config.json"))
  assert not os.path.exists(tmp_path / "a")
  assert not os.path.exists(tmp_path / "b")


def test_tf1_errors_name_the_file(google, tmp_path):
  d, _ = google
  config = json.loads((d / "bert_config.json").read_text())
  config["num_hidden_layers"] = 3
  (tmp_path / "three.json").write_text(json.dumps(config))
  with pytest.raises(hc.ConversionError,
                     match=r"missing variable 'transformer/layer_2/.*' of "
                     r"encoder .*bert_config\.json says 3 layers"):
    hc.tf1_to_tf(str(d / "bert_model.ckpt"), str(tmp_path / "a"),
                 hc.ConversionOptions(progress=False),
                 bert_config=str(tmp_path / "three.json"))
  with pytest.raises(hc.ConversionError, match=r"no TF1 checkpoint"):
    hc.tf1_to_tf(str(tmp_path), str(tmp_path / "b"),
                 hc.ConversionOptions(progress=False),
                 bert_config=str(d / "bert_config.json"))
