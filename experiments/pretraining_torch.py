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


"""The PyTorch side of the pretraining parity: HF BertForMaskedLM with the
reference's SBO head, AdamW and schedule as the package's.

  side = TorchSide(model, params, "span_sbo")   # the package model's weights
  loss, grad_norm = side.step(torch_batch(batch))
"""

import math

from experiments.pretraining_common import DEMO_SHAPE


def hf_config(vocab_size: int, hidden_act: str = "gelu", encoder=None):
  """A BertConfig of the demo's shape, or of `encoder` (an EncoderConfig,
  whose activation it maps as the converter does: Model Garden's tanh "gelu"
  is HF's "gelu_new")."""
  import transformers  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  if encoder is None:
    return transformers.BertConfig(vocab_size=vocab_size,
                                   hidden_act=hidden_act, **DEMO_SHAPE)
  config = hf_files.hf_config_dict(encoder, ["BertForMaskedLM"])
  config.update(vocab_size=vocab_size)
  return transformers.BertConfig(**config)


def reference_sbo_head(hidden: int, max_targets: int, position_size: int,
                       act):
  """PyTorch transcription of the reference's SBO head (fairseq SpanBERT).

  `BertPairTargetPredictionHead`: per target, [h_{s-1}; h_{e+1}; p_{i-s}]
  through `MLPWithLayerNorm` (linear1, act, LayerNorm, linear2, act,
  LayerNorm; eps 1e-12), logits against the tied embedding table + own bias.
  The reference evaluates all max_targets positions per pair and ignores the
  padded targets in the loss; this evaluates the targets the batch names
  (the package's sbo_* features), which is the same per target.
  """
  import torch  # pylint: disable=g-import-not-at-top

  class ReferenceSBOHead(torch.nn.Module):
    """BertPairTargetPredictionHead with the decoder tied by the caller."""

    def __init__(self):
      super().__init__()
      self.position_embeddings = torch.nn.Embedding(max_targets, position_size)
      self.linear1 = torch.nn.Linear(2 * hidden + position_size, hidden)
      self.layer_norm1 = torch.nn.LayerNorm(hidden, eps=1e-12)
      self.linear2 = torch.nn.Linear(hidden, hidden)
      self.layer_norm2 = torch.nn.LayerNorm(hidden, eps=1e-12)
      self.bias = torch.nn.Parameter(torch.zeros(0))

    def forward(self, sequence, left, right, relative, table):
      batch = torch.arange(sequence.shape[0])[:, None]
      h = torch.cat([sequence[batch, left], sequence[batch, right],
                     self.position_embeddings(relative)], -1)
      h = self.layer_norm1(act(self.linear1(h)))
      h = self.layer_norm2(act(self.linear2(h)))
      return h @ table.t() + self.bias

  return ReferenceSBOHead()


def copy_sbo_weights(span_boundary, head):
  """The package's SpanBoundaryHead variables into ReferenceSBOHead."""
  import torch  # pylint: disable=g-import-not-at-top
  t = lambda v: torch.tensor(v.numpy())  # noqa: E731
  with torch.no_grad():
    head.position_embeddings.weight.copy_(t(span_boundary.position_embeddings))
    for dense, ln, lin, tln in (
        (span_boundary.dense1, span_boundary.layer_norm1, head.linear1,
         head.layer_norm1),
        (span_boundary.dense2, span_boundary.layer_norm2, head.linear2,
         head.layer_norm2)):
      lin.weight.copy_(t(dense.kernel).t())
      lin.bias.copy_(t(dense.bias))
      tln.weight.copy_(t(ln.gamma))
      tln.bias.copy_(t(ln.beta))
    head.bias = torch.nn.Parameter(t(span_boundary.bias))


def weighted_ce(logits, labels, weights):
  import torch  # pylint: disable=g-import-not-at-top
  ce = torch.nn.functional.cross_entropy(
      logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
      reduction="none")
  w = weights.reshape(-1)
  return (ce * w).sum() / w.sum()


def torch_batch(batch):
  import torch  # pylint: disable=g-import-not-at-top
  out = {}
  for k, v in batch.items():
    v = v.numpy()
    out[k] = torch.tensor(v, dtype=torch.float32 if v.dtype.kind == "f"
                          else torch.long)
  return out


def hf_losses(hf, sbo_head, b):
  """MLM (+ SBO) weighted mean losses of a package batch on the HF side."""
  sequence = hf.bert(input_ids=b["input_word_ids"],
                     attention_mask=b["input_mask"],
                     token_type_ids=b["input_type_ids"]).last_hidden_state
  rows = torch_arange(sequence.shape[0])
  mlm_logits = hf.cls(sequence[rows, b["masked_lm_positions"]])
  losses = {"mlm_loss": weighted_ce(mlm_logits, b["masked_lm_ids"],
                                    b["masked_lm_weights"])}
  if sbo_head is not None:
    sbo_logits = sbo_head(sequence, b["sbo_left_positions"],
                          b["sbo_right_positions"],
                          b["sbo_relative_positions"],
                          hf.bert.embeddings.word_embeddings.weight)
    losses["sbo_loss"] = weighted_ce(sbo_logits, b["masked_lm_ids"],
                                     b["sbo_weights"])
  return losses


def torch_arange(n):
  import torch  # pylint: disable=g-import-not-at-top
  return torch.arange(n)[:, None]


def clip_by_global_norm(parameters, clip_norm: float) -> float:
  """tf.clip_by_global_norm on torch gradients; returns the norm before.

  The norm is summed in float64: torch.nn.utils.clip_grad_norm_'s float32
  norm is 3e-4 low on this model's first gradient (2.55630 against 2.55708,
  which TensorFlow's global_norm matches), which alone drifts the lockstep.
  """
  import torch  # pylint: disable=g-import-not-at-top
  grads = [p.grad for p in parameters if p.grad is not None]
  norm = float(sum(torch.sum(g.double() ** 2) for g in grads)) ** 0.5
  if clip_norm > 0 and norm > clip_norm:
    for g in grads:
      g.mul_(clip_norm / norm)
  return norm


def decay_split(named, excluded):
  """Names of parameters with / without weight decay (Model Garden's rule:
  a regex of exclude_from_weight_decay found in the name excludes it)."""
  import re  # pylint: disable=g-import-not-at-top
  decay, no_decay = [], []
  for name, _ in named:
    (no_decay if any(re.search(r, name) for r in excluded)
     else decay).append(name)
  return decay, no_decay


class TorchSide:
  """The PyTorch side of the lockstep: BertForMaskedLM (+ reference SBO head)
  with the package model's weights, AdamW and schedule as the package's.

  `epsilon_hat` (default): Adam's eps in Keras' place, which is also the
  reference's (fairseq's Adam adds eps to sqrt(v) before bias correction);
  False: torch.optim.AdamW's own placement (eps after bias correction,
  effectively 1/sqrt(1 - beta_2^t) times smaller: 32x at step 1, 3.2x at 100).

  `perturbation` > 0 multiplies every initial weight by (1 + perturbation *
  N(0, 1)): a second copy with 1e-7 is the float32 noise floor (how far two
  runs of the same math drift apart from rounding-sized differences).
  """

  def __init__(self, model, params, objective, perturbation=0.0,
               epsilon_hat=True):
    import torch  # pylint: disable=g-import-not-at-top
    import transformers  # pylint: disable=g-import-not-at-top
    from experiments import parity_harness  # pylint: disable=g-import-not-at-top
    from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
    from official_spanbert.interop import weight_map  # pylint: disable=g-import-not-at-top
    enc = params.task.model.encoder.bert_v2
    self.hf = transformers.BertForMaskedLM(
        hf_config(enc.vocab_size, encoder=params.task.model.encoder))
    state = weight_map.export_hf_state(model, ["encoder", "masked_lm"])
    missing, unexpected = self.hf.load_state_dict(
        {k: torch.tensor(v) for k, v in state.items()
         if not k.startswith("bert.pooler.")}, strict=False)
    missing = [k for k in missing if not k.startswith("cls.predictions.decoder")]
    if missing or unexpected:
      raise RuntimeError(f"weights not transferred: {missing} {unexpected}")
    self.hf.tie_weights()
    self.sbo_head = None
    named = list(self.hf.named_parameters())
    if objective == "span_sbo":
      sb = model.span_boundary
      self.sbo_head = reference_sbo_head(
          enc.hidden_size, sb.max_targets, sb.position_embeddings.shape[-1],
          transformers.activations.ACT2FN[hf_files.TF_TO_HF_ACTIVATION[
              params.task.model.sbo_activation]])
      copy_sbo_weights(sb, self.sbo_head)
      named += [("cls/span_boundary/" + n, p)
                for n, p in self.sbo_head.named_parameters()]
    if perturbation:
      gen = torch.Generator().manual_seed(7)
      with torch.no_grad():
        for _, p in named:
          p.mul_(1 + perturbation * torch.randn(p.shape, generator=gen))
    adamw = params.trainer.optimizer_config.optimizer.adamw
    decay, _ = decay_split(named, list(adamw.exclude_from_weight_decay))
    self.decay_elements = sum(p.numel() for n, p in named if n in decay)
    self.params = [p for _, p in named]
    self.clip = adamw.gradient_clip_norm
    self.optimizer = torch.optim.AdamW(
        [{"params": [p for n, p in named if n in decay],
          "weight_decay": adamw.weight_decay_rate},
         {"params": [p for n, p in named if n not in decay],
          "weight_decay": 0.0}],
        lr=params.trainer.optimizer_config.learning_rate.polynomial.
        initial_learning_rate, betas=(adamw.beta_1, adamw.beta_2),
        eps=adamw.epsilon)
    self.epsilon, self.beta_2 = adamw.epsilon, adamw.beta_2
    self.epsilon_hat, self.t = epsilon_hat, 0
    warmup = params.trainer.optimizer_config.warmup.polynomial.warmup_steps
    steps = params.trainer.train_steps
    self.scheduler = torch.optim.lr_scheduler.LambdaLR(
        self.optimizer,
        lambda s: parity_harness.lr_factor(s, warmup, steps))

  def step(self, batch, autocast_dtype=None, phase=None):
    """One update on a package batch; (loss, gradient norm before clip).

    autocast_dtype (e.g. torch.bfloat16): the forward pass and loss under
    torch.autocast on the CPU (weights and the update stay float32).
    phase: a context manager factory called with "forward", "backward" and
    "optimizer" around those parts, and "clip" around the gradient clipping
    inside "optimizer" (e.g. torch.profiler.record_function).
    """
    import contextlib  # pylint: disable=g-import-not-at-top
    import torch  # pylint: disable=g-import-not-at-top
    phase = phase or (lambda name: contextlib.nullcontext())
    with phase("forward"), torch.autocast(
        "cpu", dtype=autocast_dtype, enabled=autocast_dtype is not None):
      loss = sum(hf_losses(self.hf, self.sbo_head, batch).values())
    with phase("backward"):
      loss.backward()
    with phase("optimizer"):
      with phase("clip"):
        norm = clip_by_global_norm(self.params, self.clip)
      return self._update(loss, norm)

  def step_labels(self, batch, autocast_dtype=None):
    """One update as HF users run BertForMaskedLM; (loss, norm before clip).

    batch: a data collator's output (input_ids, attention_mask,
    token_type_ids, labels with -100 outside the masked positions), plus the
    package's sbo_* features and masked_lm_ids when the side has the SBO
    head. The MLM loss is the model's own (logits at every position, the
    mean cross-entropy over the labelled ones, as the package's weighted
    mean over its masked slots).
    """
    import torch  # pylint: disable=g-import-not-at-top
    with torch.autocast("cpu", dtype=autocast_dtype,
                        enabled=autocast_dtype is not None):
      out = self.hf(input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    token_type_ids=batch["token_type_ids"],
                    labels=batch["labels"],
                    output_hidden_states=self.sbo_head is not None)
      loss = out.loss
      if self.sbo_head is not None:
        sbo_logits = self.sbo_head(
            out.hidden_states[-1], batch["sbo_left_positions"],
            batch["sbo_right_positions"], batch["sbo_relative_positions"],
            self.hf.bert.embeddings.word_embeddings.weight)
        loss = loss + weighted_ce(sbo_logits, batch["masked_lm_ids"],
                                  batch["sbo_weights"])
    loss.backward()
    return self._update(loss, clip_by_global_norm(self.params, self.clip))

  def _update(self, loss, norm):
    """AdamW and the schedule's step; (loss, norm before clip)."""
    self.t += 1
    if self.epsilon_hat:
      # Keras' (and fairseq's) Adam adds eps to sqrt(v) before the bias
      # correction; torch adds it after: eps / sqrt(1 - beta_2^t) in torch's
      # form is the same update.
      for group in self.optimizer.param_groups:
        group["eps"] = self.epsilon / math.sqrt(1 - self.beta_2 ** self.t)
    self.optimizer.step()
    self.scheduler.step()
    self.optimizer.zero_grad()
    return float(loss.item()), norm
