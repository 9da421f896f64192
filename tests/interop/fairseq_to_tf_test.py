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

"""The reference's fairseq SpanBERT (model.pt) -> ours, checked in PyTorch.

A synthetic model.pt in the release's key layout (random weights, sizes
other than the reference's: hidden 48, 2 layers, 4 heads, SBO T=11, P=24)
is converted; the MLM log-probabilities are compared with transformers'
BertForMaskedLM on the same weights, the SBO's with a PyTorch transcription
of the reference's BertPairTargetPredictionHead / MLPWithLayerNorm, on real
sentences (tests/fixtures/austen_slice.txt) with [MASK] runs, and fill_spans'
top-k with the transcription's. Unit tier: the committed vocab excerpt.
"""

import argparse
import importlib
import json
import math
import os
import sys
import types

import numpy as np
import pytest
import yaml

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import tensorflow as tf  # noqa: E402

from official_spanbert import interop as hc  # noqa: E402
from official_spanbert.interop import sbo_map  # noqa: E402
from official_spanbert.modeling import checkpoints  # noqa: E402
from official_spanbert.serving import export_lib  # noqa: E402
from official_spanbert.serving import serving_module  # noqa: E402
from official_spanbert.serving import pretraining_module  # noqa: E402

tool = importlib.import_module("official_spanbert.tools.convert_checkpoint")

TOL = 1e-5
SIZES = dict(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=96, max_position_embeddings=64)
T, P = 11, 24  # the SBO's relative positions and their embedding width


def _gelu(x):  # the reference's gelu (erf)
  return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class _RefLayerNorm(torch.nn.Module):
  """The reference's BertLayerNorm (gamma/beta, eps in the square root)."""

  def __init__(self, n):
    super().__init__()
    self.gamma = torch.nn.Parameter(torch.ones(n))
    self.beta = torch.nn.Parameter(torch.zeros(n))

  def forward(self, x):
    u = x.mean(-1, keepdim=True)
    s = (x - u).pow(2).mean(-1, keepdim=True)
    return self.gamma * (x - u) / torch.sqrt(s + 1e-12) + self.beta


class _RefMLPWithLayerNorm(torch.nn.Module):

  def __init__(self, hidden, input_size):
    super().__init__()
    self.linear1 = torch.nn.Linear(input_size, hidden)
    self.layer_norm1 = _RefLayerNorm(hidden)
    self.linear2 = torch.nn.Linear(hidden, hidden)
    self.layer_norm2 = _RefLayerNorm(hidden)

  def forward(self, h):
    return self.layer_norm2(_gelu(self.linear2(
        self.layer_norm1(_gelu(self.linear1(h))))))


class _RefPairTargetHead(torch.nn.Module):
  """Transcription of the reference's BertPairTargetPredictionHead."""

  def __init__(self, embeddings, max_targets, position_size):
    super().__init__()
    hidden = embeddings.size(1)
    self.position_embeddings = torch.nn.Embedding(max_targets, position_size)
    self.mlp_layer_norm = _RefMLPWithLayerNorm(hidden,
                                               2 * hidden + position_size)
    self.decoder = torch.nn.Linear(hidden, embeddings.size(0), bias=False)
    self.decoder.weight = embeddings
    self.bias = torch.nn.Parameter(torch.zeros(embeddings.size(0)))
    self.max_targets = max_targets

  def forward(self, hidden_states, pairs):
    bs, num_pairs, _ = pairs.size()
    dim = hidden_states.size(2)
    left, right = pairs[:, :, 0], pairs[:, :, 1]
    def gather(index):
      h = torch.gather(hidden_states, 1, index.unsqueeze(2).repeat(1, 1, dim))
      return h.contiguous().view(bs * num_pairs, dim).unsqueeze(1).repeat(
          1, self.max_targets, 1)
    positions = self.position_embeddings.weight.unsqueeze(0).repeat(
        bs * num_pairs, 1, 1)
    h = self.mlp_layer_norm(torch.cat((gather(left), gather(right),
                                       positions), -1))
    return self.decoder(h) + self.bias  # [bs * pairs, T, vocab]


def _vocab_size(vocab):
  with open(vocab, encoding="utf-8") as f:
    return sum(1 for _ in f)


def _perturbed(module, seed):
  torch.manual_seed(seed)
  with torch.no_grad():  # non-trivial LayerNorms and biases too
    for p in module.parameters():
      p.add_(0.05 * torch.randn_like(p))
  return module.eval()


def _reference_state(mlm, sbo):
  """The release's model.pt layout: `decoder.`, LayerNorm gamma/beta."""
  state = {}
  for k, v in mlm.state_dict().items():
    if k.endswith(("position_ids", "token_type_ids", "decoder.bias")):
      continue  # buffers, and the reference's decoder has no bias
    k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace(
        "LayerNorm.bias", "LayerNorm.beta")
    state["decoder." + k] = v.clone()
  for k, v in sbo.state_dict().items():
    state["decoder." + sbo_map.PREFIX + k] = v.clone()
  assert "decoder.cls.predictions.decoder.weight" in state
  assert "decoder.bert.pooler.dense.weight" not in state  # --no-nsp
  return state


@pytest.fixture(scope="module")
def reference(tmp_path_factory, small_vocab):
  """(directory with model.pt and bert_config.json, HF MLM, SBO head)."""
  d = tmp_path_factory.mktemp("fairseq")
  torch.manual_seed(0)
  config = transformers.BertConfig(vocab_size=_vocab_size(small_vocab),
                                   hidden_act="gelu", **SIZES)
  mlm = _perturbed(transformers.BertForMaskedLM(config), 1)
  sbo = _perturbed(_RefPairTargetHead(
      mlm.bert.embeddings.word_embeddings.weight, T, P), 2)
  torch.save(_reference_state(mlm, sbo), d / "model.pt")
  with open(d / "bert_config.json", "w") as f:  # Google's keys
    json.dump({"vocab_size": config.vocab_size, "hidden_act": "gelu",
               **SIZES}, f)
  return d, mlm, sbo


@pytest.fixture(scope="module")
def converted(reference, small_vocab, tmp_path_factory):
  d, _, _ = reference
  out = str(tmp_path_factory.mktemp("fairseq_tf"))
  result = hc.fairseq_to_tf(str(d / "model.pt"), out,
                            hc.ConversionOptions(vocab_file=small_vocab,
                                                 progress=False),
                            bert_config=str(d / "bert_config.json"))
  return out, result


def _load(out):
  """The model spanbert-export-savedmodel --model_dir=out builds, restored."""
  params = export_lib.load_params("spanbert/pretraining", model_dir=out)
  model = pretraining_module.build_pretrainer(serving_module.Run(params))
  return model, checkpoints.restore(model, out)


@pytest.fixture(scope="module")
def masked_texts(prose_slice):
  """Real sentences with [MASK] runs of 1-3 words."""
  out = []
  with open(prose_slice, encoding="utf-8") as f:
    lines = [l.split() for l in f if len(l.split()) >= 16]
  for i, words in enumerate(lines[:4]):
    words = words[:14]
    start, length = 2 + 3 * i, 1 + i % 3
    words[start:start + length] = ["[MASK]"] * length
    out.append(" ".join(words))
  return out


def test_params_say_what_the_release_is(converted):
  out, result = converted
  assert result.items == ["encoder", "masked_lm", "span_boundary"]
  assert result.initialized == ["encoder/pooler_transform/kernel",
                                "encoder/pooler_transform/bias"]
  assert any("no pooler and no NSP head" in w for w in result.warnings)
  with open(os.path.join(out, hc.PARAMS_FILE)) as f:
    model = yaml.safe_load(f)["task"]["model"]
  assert (model["use_sbo"], model["max_sbo_targets"],
          model["sbo_position_embedding_size"]) == (True, T, P)
  assert model["sbo_activation"] == model["mlm_activation"] == hc.EXACT_GELU
  assert model["clamp_attention"] is True
  assert "use_next_sentence" not in model


def test_mlm_and_sbo_match_the_reference_and_fill_spans_agrees(
    reference, converted, masked_texts, small_vocab):
  _, mlm, sbo = reference
  model, restored = _load(converted[0])
  assert restored == ["encoder", "masked_lm", "span_boundary"]
  module = pretraining_module.SpanBertServingModule(
      model, small_vocab, seq_length=48, top_k=5, max_masks=4)
  inputs = module.preprocessor(tf.constant(masked_texts))
  ids = inputs["input_word_ids"].numpy()
  mask_id = module.preprocessor.vocab.mask_id
  rows, cols = np.nonzero(ids == mask_id)
  assert len(rows) == 1 + 2 + 3 + 1
  first, last = cols.copy(), cols.copy()  # the run of each [MASK]
  for i, r in enumerate(rows):
    while ids[r, first[i] - 1] == mask_id:
      first[i] -= 1
    while ids[r, last[i] + 1] == mask_id:
      last[i] += 1
  with torch.no_grad():
    ref = mlm(input_ids=torch.tensor(ids, dtype=torch.long),
              attention_mask=torch.tensor(inputs["input_mask"].numpy()),
              token_type_ids=torch.tensor(inputs["input_type_ids"].numpy()),
              output_hidden_states=True)
    ref_mlm = torch.log_softmax(ref.logits[rows, cols], -1).numpy()
    hidden = ref.hidden_states[-1]
    rel = np.minimum(cols - first, T - 1)
    scores = torch.stack([  # the reference scores all T targets of a pair
        sbo(hidden[r:r + 1], torch.tensor([[[f - 1, l + 1]]]))[0, x]
        for r, f, l, x in zip(rows, first, last, rel)])
    ref_sbo = torch.log_softmax(scores, -1).numpy()

  sequence = model.encoder_network(inputs, training=False)["sequence_output"]
  ours_mlm = tf.nn.log_softmax(tf.stack([
      model.masked_lm(sequence[r:r + 1], tf.constant([[c]], tf.int32))[0, 0]
      for r, c in zip(rows, cols)])).numpy()
  ours_sbo = tf.nn.log_softmax(tf.stack([
      model.span_boundary(sequence[r:r + 1], tf.constant([[f - 1]], tf.int32),
                          tf.constant([[l + 1]], tf.int32),
                          tf.constant([[x]], tf.int32))[0, 0]
      for r, f, l, x in zip(rows, first, last, rel)])).numpy()
  mlm_diff = float(np.abs(ours_mlm - ref_mlm).max())
  sbo_diff = float(np.abs(ours_sbo - ref_sbo).max())
  print(f"fairseq_to_tf max abs diff of log-probabilities over "
        f"{len(rows)} masked tokens x {ids.shape}: MLM {mlm_diff:.3g}, "
        f"SBO {sbo_diff:.3g}")
  assert mlm_diff <= TOL and sbo_diff <= TOL

  filled = module.fill_spans(tf.constant(masked_texts))
  got_pos = filled["masked_positions"].numpy()
  index = {(r, c): i for i, (r, c) in enumerate(zip(rows, cols))}
  for head, ref_lp in (("mlm", ref_mlm), ("sbo", ref_sbo)):
    top_ids = filled[f"{head}_top_k_ids"].numpy()
    top_scores = filled[f"{head}_top_k_scores"].numpy()
    for r in range(len(masked_texts)):
      for j, c in enumerate(got_pos[r]):
        if filled["masked_weights"].numpy()[r, j] == 0:
          continue
        want = np.argsort(-ref_lp[index[(r, c)]])[:5]
        assert top_ids[r, j].tolist() == want.tolist(), (head, r, c)
        np.testing.assert_allclose(top_scores[r, j],
                                   ref_lp[index[(r, c)]][want], atol=TOL)


def _variables(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {n: reader.get_tensor(n) for n, _ in tf.train.list_variables(prefix)
          if n.endswith("VARIABLE_VALUE")}


def _fake_reference_module(monkeypatch):
  """The reference's pair_bert.BertConfig class, importable for torch.save."""
  module = types.ModuleType("fairseq.models.pair_bert")
  config_cls = type("BertConfig", (), {"__module__": module.__name__})
  module.BertConfig = config_cls
  for name in ("fairseq", "fairseq.models"):
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
  monkeypatch.setitem(sys.modules, module.__name__, module)
  return config_cls


def test_full_fairseq_checkpoint_without_prefix_converts_identically(
    reference, converted, small_vocab, tmp_path, monkeypatch):
  """Weights under "model", no `decoder.`, heads from args.config."""
  d, _, _ = reference
  config = _fake_reference_module(monkeypatch)()
  config.num_attention_heads, config.hidden_size = 4, 48
  state = torch.load(d / "model.pt", weights_only=True)
  torch.save({"model": {k[len("decoder."):]: v for k, v in state.items()},
              "args": argparse.Namespace(arch="bert_pair", config=config,
                                         max_pair_targets=T),
              "optimizer_history": [{"num_updates": 3}],
              "extra_state": {"val_loss": 2.5}}, tmp_path / "checkpoint.pt")
  monkeypatch.delitem(sys.modules, "fairseq.models.pair_bert")  # as users
  result = hc.fairseq_to_tf(str(tmp_path / "checkpoint.pt"),
                            str(tmp_path / "out"),
                            hc.ConversionOptions(vocab_file=small_vocab,
                                                 progress=False))
  assert result.items == converted[1].items
  a, b = _variables(converted[1].checkpoint), _variables(result.checkpoint)
  assert sorted(a) == sorted(b)
  assert all(np.array_equal(a[n], b[n]) for n in a)


def test_heads_come_from_the_reference_architectures_or_bert_config(
    reference, small_vocab, tmp_path):
  d, _, _ = reference
  with pytest.raises(hc.ConversionError,
                     match=r"2 layers, hidden 48, FFN 96 match none of the "
                     r"reference's architectures .* pass --bert_config"):
    hc.fairseq_to_tf(str(d / "model.pt"), str(tmp_path / "out"),
                     hc.ConversionOptions(vocab_file=small_vocab,
                                          progress=False))
  from official_spanbert.interop import fairseq_files  # pylint: disable=g-import-not-at-top
  for layers, hidden, ffn, name, heads in (
      (12, 768, 3072, "cased_bert_pair", 12),
      (24, 1024, 4096, "cased_bert_pair_large", 16)):
    state = {"embeddings.word_embeddings.weight": np.empty((28996, hidden)),
             "embeddings.position_embeddings.weight": np.empty((512, 1)),
             "embeddings.token_type_embeddings.weight": np.empty((2, 1)),
             "encoder.layer.0.intermediate.dense.weight": np.empty(
                 (ffn, 1))}
    state.update({f"encoder.layer.{i}.output.dense.bias": np.empty(1)
                  for i in range(layers)})
    config = fairseq_files.infer_config(state, name)
    assert (config.num_hidden_layers, config.hidden_size,
            config.num_attention_heads, config.intermediate_size,
            config.hidden_act) == (layers, hidden, heads, ffn, "gelu")


def test_sbo_head_survives_tf_hf_tf(reference, converted, tmp_path):
  _, mlm, sbo = reference
  out, _ = converted
  exported = hc.tf_to_hf(out, str(tmp_path / "hf"),
                         hc.ConversionOptions(progress=False))
  assert exported.items == ["encoder", "masked_lm", "span_boundary"]
  assert exported.dropped == []
  import safetensors  # pylint: disable=g-import-not-at-top
  path = str(tmp_path / "hf" / hc.SBO_FILE)
  with safetensors.safe_open(path, framework="pt") as f:
    meta = f.metadata()
    written = {k: f.get_tensor(k) for k in f.keys()}
  assert (meta["max_targets"], meta["position_embedding_size"],
          meta["hidden_act"]) == (str(T), str(P), "gelu")
  # The reference's own head loads it (the decoder is the word embeddings).
  fresh = _RefPairTargetHead(mlm.bert.embeddings.word_embeddings.weight, T, P)
  missing, unexpected = fresh.load_state_dict(written, strict=False)
  assert missing == ["decoder.weight"] and not unexpected
  for k, v in sbo.state_dict().items():
    if k != "decoder.weight":
      assert torch.equal(written[k], v), k
  _, info = transformers.BertForMaskedLM.from_pretrained(
      str(tmp_path / "hf"), local_files_only=True, output_loading_info=True)
  assert not info["missing_keys"], info

  back = hc.hf_to_tf(str(tmp_path / "hf"), str(tmp_path / "tf"),
                     hc.ConversionOptions(progress=False))
  assert back.items == ["encoder", "masked_lm", "span_boundary"]
  a, b = _variables(os.path.join(out, hc.CHECKPOINT_NAME)), _variables(
      back.checkpoint)
  assert sorted(a) == sorted(b)
  assert all(np.array_equal(a[n], b[n]) for n in a)
  with open(tmp_path / "tf" / hc.PARAMS_FILE) as f:
    model = yaml.safe_load(f)["task"]["model"]
  assert (model["max_sbo_targets"], model["sbo_position_embedding_size"],
          model["sbo_activation"]) == (T, P, hc.EXACT_GELU)


def _run_tool(capsys, *args):
  tool.FLAGS.unparse_flags()
  tool.FLAGS(["convert_checkpoint", *args])
  try:
    return tool.main(["convert_checkpoint"]), capsys.readouterr()
  finally:
    tool.FLAGS.unparse_flags()


def test_tf_to_hf_from_a_truncated_checkpoint_is_one_line(converted, tmp_path,
                                                          capsys):
  """Issue 39 probe: IndexError 'Read less bytes than requested' before."""
  src = tmp_path / "truncated"
  src.mkdir()
  for name in os.listdir(converted[0]):
    with open(os.path.join(converted[0], name), "rb") as f:
      data = f.read()
    if ".data-" in name:
      data, data_file = data[:len(data) // 2], str(src / name)
    (src / name).write_bytes(data)
  rc, out = _run_tool(capsys, "--direction=tf_to_hf", f"--input={src}",
                      f"--output={tmp_path / 'hf'}")
  assert rc == 1 and "Traceback" not in out.err
  errors = [l for l in out.err.splitlines() if "error" in l]  # not progress
  assert len(errors) == 1 and errors == out.err.splitlines()[-1:], out.err
  # The one line of modeling/checkpoints.resolve (issue 39 item 2), naming
  # the checkpoint and its data file.
  assert errors[0].startswith(f"convert_checkpoint: error: cannot read "
                              f"checkpoint {src / 'bert_model.ckpt'}: "
                              f"{os.path.basename(data_file)} "), out.err
  assert "truncated or corrupt" in out.err
  assert not (tmp_path / "hf" / "model.safetensors").exists()


def test_vocab_must_match_the_embeddings(reference, small_vocab, tmp_path,
                                         capsys):
  """Issue 39 item 7: hf_to_tf (and fairseq_to_tf) with a shorter vocab
  refuse unless allowed, then warn; a longer one is always refused."""
  d, mlm, _ = reference
  with open(small_vocab, encoding="utf-8") as f:
    tokens = f.read().splitlines()
  hf = tmp_path / "hf"
  mlm.save_pretrained(str(hf))
  capsys.readouterr()  # transformers' progress bar
  (hf / "vocab.txt").write_text("\n".join(tokens[:-25]) + "\n")
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={hf}",
                      f"--output={tmp_path / 'a'}")
  assert rc == 1 and out.err.count("\n") == 1, out.err
  assert (f"vocab {hf}/vocab.txt has 1600 tokens but {hf}/config.json has "
          "1625 word embeddings: ids 1600..1624 (25) have no token; use the "
          "vocab the checkpoint was trained with, or pass "
          "--allow_vocab_mismatch") in out.err
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={hf}",
                      f"--output={tmp_path / 'b'}", "--allow_vocab_mismatch")
  assert rc == 0, out.err
  assert ("convert_checkpoint: warning: vocab " in out.err and
          "ids 1600..1624 (25) have no token\n" in out.err)
  with open(tmp_path / "b" / hc.CONVERSION_FILE) as f:
    assert "ids 1600..1624" in json.load(f)["warnings"][0]

  longer = tmp_path / "longer.txt"
  longer.write_text("\n".join(tokens + ["extra1", "extra2"]) + "\n")
  with pytest.raises(hc.ConversionError,
                     match=r"has 1627 tokens but .*model\.pt has 1625 word "
                     r"embeddings: ids 1625\.\.1626 would index past the "
                     r"table"):
    hc.fairseq_to_tf(str(d / "model.pt"), str(tmp_path / "c"),
                     hc.ConversionOptions(vocab_file=str(longer),
                                          allow_vocab_mismatch=True,
                                          progress=False),
                     bert_config=str(d / "bert_config.json"))


def test_tool_fairseq_to_tf(reference, small_vocab, tmp_path, capsys):
  d, _, _ = reference
  rc, out = _run_tool(capsys, "--direction=fairseq_to_tf",
                      f"--input={d / 'model.pt'}", f"--output={tmp_path}")
  assert rc == 1 and out.err.count("\n") == 1
  assert "fairseq_to_tf needs --vocab_file" in out.err
  rc, out = _run_tool(capsys, "--direction=fairseq_to_tf",
                      f"--input={d / 'model.pt'}", f"--output={tmp_path}",
                      f"--vocab_file={small_vocab}",
                      f"--bert_config={d / 'bert_config.json'}")
  assert rc == 0, out.err
  assert "warning: " in out.err and "no pooler and no NSP head" in out.err
  assert out.out.splitlines()[-1].startswith(
      f"fairseq_to_tf: wrote encoder, masked_lm, span_boundary (")


def test_clamp_attention_clamps_scores_as_the_reference():
  """Scores above 1e4 are clamped before the mask and softmax."""
  from official_spanbert.modeling import attention_clamp  # pylint: disable=g-import-not-at-top
  query = np.array([[[1.0, 0.0]]], np.float32)           # [B, T=1, 2]
  keys = np.array([[[3e4, 0.0], [2e4, 1.0], [-3e4, 0.0], [1.0, 0.0]]],
                  np.float32) * math.sqrt(2.0)          # [B, S=4, 2]
  mask = np.array([[[1, 1, 1, 0]]], bool)               # last key masked
  got = {}
  for name, cls in (("clamped", attention_clamp.ClampedMultiHeadAttention),
                    ("plain", tf.keras.layers.MultiHeadAttention)):
    layer = cls(num_heads=1, key_dim=2)
    layer(query, keys, attention_mask=mask)  # build
    eye = np.eye(2, dtype=np.float32)
    for w in layer.weights:  # identity projections, zero biases
      shape = w.shape.as_list()
      w.assign(eye.reshape(shape) if len(shape) == 3 else np.zeros(shape))
    out, probs = layer(query, keys, attention_mask=mask,
                       return_attention_scores=True)
    got[name] = (out.numpy(), probs.numpy()[0, 0, 0])
  # The reference: scores / sqrt(d), clamp(+-1e4), + mask, softmax.
  q, k = torch.tensor(query), torch.tensor(keys)
  scores = torch.clamp(q @ k.transpose(1, 2) / math.sqrt(2.0), -1e4, 1e4)
  scores = scores + (1.0 - torch.tensor(mask, dtype=torch.float32)) * -1e4
  ref = torch.softmax(scores, -1)[0, 0].numpy()
  np.testing.assert_allclose(got["clamped"][1], ref, atol=1e-6)
  np.testing.assert_allclose(got["clamped"][1], [0.5, 0.5, 0, 0], atol=1e-6)
  np.testing.assert_allclose(got["plain"][1], [1, 0, 0, 0], atol=1e-6)
  np.testing.assert_allclose(got["clamped"][0][0, 0],
                             ref @ keys[0], rtol=1e-6)


def test_clamp_attention_option_reaches_every_layer(converted):
  from official_spanbert.modeling import attention_clamp  # pylint: disable=g-import-not-at-top
  model, _ = _load(converted[0])
  layers = model.encoder_network.transformer_layers
  assert len(layers) == 2 and all(
      type(l._attention_layer) is attention_clamp.ClampedMultiHeadAttention  # pylint: disable=protected-access
      for l in layers)


def test_init_checkpoint_starts_both_heads_trained(converted):
  """task.init_checkpoint=DIR with DIR/params.yaml: MLM and SBO restored."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  out, result = converted
  params = params_dict.override_params_dict(
      exp_factory.get_exp_config("spanbert/pretraining"),
      os.path.join(out, hc.PARAMS_FILE), is_strict=True)
  params.task.init_checkpoint = out
  task = task_factory.get_task(params.task)
  model = task.build_model()
  task.initialize(model)
  converted_model, _ = _load(out)
  for item in ("encoder", "masked_lm", "span_boundary"):
    want = hc.item_variables(converted_model, item)
    got = hc.item_variables(model, item)
    assert sorted(got) == sorted(want)
    for name in want:
      assert np.array_equal(got[name].numpy(), want[name].numpy()), name


def test_the_export_finds_the_vocab_beside_a_converted_checkpoint(converted):
  """spanbert-export-savedmodel --model_dir=DIR needs no --vocab_file: the
  import writes vocab.txt beside the checkpoint, and params.yaml names none."""
  out, _ = converted
  params = export_lib.load_params("spanbert/pretraining", model_dir=out)
  assert not params.task.train_data.vocab_file
  vocab = serving_module.Run(params, model_dir=out).vocab()
  assert vocab == os.path.join(out, "vocab.txt")
  assert os.path.exists(vocab)
