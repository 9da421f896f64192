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
from official_spanbert.serving import export  # noqa: E402
from official_spanbert.serving import serving_modules  # noqa: E402
from official_spanbert.serving import text_preprocessor as tp  # noqa: E402

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
  result = hc.fairseq_to_tf(str(d / "model.pt"), out, vocab_file=small_vocab,
                            bert_config=str(d / "bert_config.json"),
                            progress=False)
  return out, result


def _load(out):
  """The model spanbert-export-savedmodel --model_dir=out builds, restored."""
  params = export.load_params("spanbert/pretraining", model_dir=out)
  model = export.build_model(params)
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
  assert (model["use_sbo"], model["sbo_max_targets"],
          model["sbo_position_embedding_size"]) == (True, T, P)
  assert model["sbo_activation"] == model["mlm_activation"] == hc.EXACT_GELU
  assert model["clamp_attention"] is True
  assert "use_next_sentence" not in model


def test_mlm_and_sbo_match_the_reference_and_fill_spans_agrees(
    reference, converted, masked_texts, small_vocab):
  _, mlm, sbo = reference
  model, restored = _load(converted[0])
  assert restored == ["encoder", "masked_lm", "span_boundary"]
  module = serving_modules.SpanBertServingModule(
      model, tp.TextPreprocessor(small_vocab, seq_length=48), top_k=5,
      max_masks=4)
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
