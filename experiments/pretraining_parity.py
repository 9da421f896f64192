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

r"""Pretraining parity with Hugging Face: lockstep steps and learning curves.

`--mode=lockstep`: the package's `task.train_step` and a PyTorch step run on
the same masked batches (the package's loader output) from the same weights
(the package's initial weights, converted with `interop.weight_map`), dropout
0, the same AdamW (betas, eps, weight decay groups), clip-norm and schedule
(Model Garden's warmup + linear decay). Two objectives:

* `token`: `bert/token_single` against `transformers.BertForMaskedLM`;
* `span_sbo`: `spanbert/pretraining` against BertForMaskedLM plus
  `ReferenceSBOHead`, a PyTorch transcription of the reference's SBO head
  (fairseq `BertPairTargetPredictionHead` + `MLPWithLayerNorm`, tied decoder,
  own bias), loss MLM + SBO as in `spanbert_loss.py`.

It writes {"max_rel_loss_diff", "max_rel_grad_norm_diff", "steps", ...} per
objective to --output_json.

`--mode=curves`: one independent run, as a user would run each side: own
initialisation, own masking of the same records, own data order. The package
side is `task.train_step` on `task.build_inputs` (what spanbert-train runs);
the HF side is BertForMaskedLM with transformers' own init, its
DataCollatorForLanguageModeling and a shuffled epoch sampler, torch AdamW and
get_linear_schedule_with_warmup, as HF's run_mlm.py does. Both are scored at
--eval_steps on the same held-out blocks, masked once (package token masking,
seed 2, four passes over the 149 held-out blocks). One JSON per run goes to
experiments/pretraining_parity_results/<config>/<side>-seed<N>.json (skipped
when it exists, so seeds can be added later). `--config` names what differs
from the defaults: see CONFIGS. `--mode=report` prints the table of a folder.

Data: the demo's corpus, vocab (8k) and records at seq 128
(`demo.pipeline.prepare_data`), built once in <work_dir>/data.

  .venv/bin/python -m experiments.pretraining_parity --mode=lockstep \
      --work_dir /work/runs/pp --steps 300 --output_json /tmp/lockstep.json
  .venv/bin/python -m experiments.pretraining_parity --mode=curves \
      --work_dir /work/runs/pp --side package --seed 1 --config baseline
  .venv/bin/python -m experiments.pretraining_parity --mode=report
"""

import argparse
import glob
import json
import math
import os
import platform
import statistics
import subprocess
import time

import numpy as np

from experiments.common import REPO

RESULTS = os.path.join(REPO, "experiments", "pretraining_parity_results")
# The demo's encoder (configs/models/demo.yaml) as a transformers config.
DEMO_SHAPE = dict(hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=1024, max_position_embeddings=512,
                  type_vocab_size=2, layer_norm_eps=1e-12,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
SEQ_LENGTH = 128
MAX_PREDICTIONS = 20
EXPERIMENTS = {"token": "bert/token_single", "span_sbo": "spanbert/pretraining"}

# Curves configs: what each changes from the package's / HF's defaults.
CONFIGS = {
    "baseline": "the package's defaults against HF's (run_mlm.py's recipe)",
    # Every package-side config below differs from the defaults of its run's
    # commit in one setting; until the shuffle buffer's default became 10,000
    # those defaults had Model Garden's 100 (see shuffle_100).
    "normal_init": "package: rank>=2 weights redrawn from normal(0, 0.02), "
                   "as HF, instead of Model Garden's truncated normal",
    "hf_schedule": "package: the decay starts after the warmup (offset = "
                   "warmup steps), as HF's linear schedule",
    "full_shuffle": "package: shuffle_buffer_size 20000 (all blocks) instead "
                    "of Model Garden's 100",
    "shuffle_100": "package: shuffle_buffer_size 100 (Model Garden's, the "
                   "loader's default until the parity runs showed the cost)",
    "bfloat16": "package: mixed bfloat16 (runtime.mixed_precision_dtype: "
                "bfloat16; float32 variables and losses)",
    "torch_epsilon": "package: Adam's eps added after the bias correction, "
                     "as torch.optim.AdamW (Keras and the reference add it "
                     "before)",
}
EVAL_STEPS = (300, 600, 1200)
HELDOUT_SEEDS = (2, 3, 4, 5)


def prepare(work_dir: str):
  """The demo's data (corpus, 8k vocab, seq-128 records) in work_dir/data.

  Built once (under a lock, so concurrent runs share it) and then reused:
  prepare_data rewrites the records on every call.
  """
  import fcntl  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  out = os.path.join(work_dir, "data")
  os.makedirs(out, exist_ok=True)
  ready = os.path.join(out, "ready.json")
  with open(os.path.join(out, ".lock"), "w", encoding="utf-8") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not os.path.exists(ready):
      data = pipeline.prepare_data(out, 8000, SEQ_LENGTH, log=lambda *_: None)
      with open(ready, "w", encoding="utf-8") as f:
        json.dump(dict(vocab_path=data.vocab_path,
                       train_prefix=data.train_prefix,
                       heldout_prefix=data.heldout_prefix,
                       records=data.records), f)
  with open(ready, encoding="utf-8") as f:
    d = json.load(f)
  return types.SimpleNamespace(vocab=tokenization.load_vocab(d["vocab_path"]),
                               **d)


def package_params(data, objective: str, steps: int, seed: int = 1,
                   learning_rate: float = 1e-3, batch_size: int = 16):
  """The demo's params (models/demo.yaml, experiments/demo_tiny.yaml)."""
  from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
  params = pipeline.build_params(data.train_prefix, data.heldout_prefix,
                                 data.vocab_path, data.vocab.size, steps,
                                 experiment=EXPERIMENTS[objective])
  params.trainer.optimizer_config.learning_rate.polynomial.\
      initial_learning_rate = learning_rate
  params.task.train_data.global_batch_size = batch_size
  params.task.train_data.seed = seed
  return params


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

  def step(self, batch):
    """One update on a package batch; (loss, gradient norm before clip)."""
    loss = sum(hf_losses(self.hf, self.sbo_head, batch).values())
    loss.backward()
    norm = clip_by_global_norm(self.params, self.clip)
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


def lockstep_run(params, objective: str, steps: int, noise_floor: bool = False,
                 epsilon_hat: bool = True, variants=None) -> dict:
  """One objective in lockstep for `steps` steps of params' train data.

  Returns per-step rows (every side's loss and gradient norm), the package's
  loss on the first batch before and after the run, and the largest
  relative differences: max_rel_loss_diff / max_rel_grad_norm_diff (package
  vs torch); with noise_floor, ..._hf_perturbed (torch vs a copy perturbed by
  1e-7); for each of `variants` ({name: TorchSide keyword arguments}, e.g.
  {"torch_eps": {"epsilon_hat": False}}), ..._<name> (package vs it).
  """
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  rel = lambda a, b: abs(a - b) / max(abs(b), 1e-12)  # noqa: E731
  tf_keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  optimizer = task.create_optimizer(params.trainer.optimizer_config,
                                    params.runtime)
  batches = list(task.build_inputs(params.task.train_data).take(steps))
  # The package's loss on the first batch (no dropout, no update) before and
  # after the run: a drop says the steps were real updates. (The losses of
  # steps 1 and N are on other batches, and on tiny runs the later one may be
  # higher.)
  def first_loss():
    return float(task.validation_step(batches[0], model)[task.loss])
  first_batch_loss_before = first_loss()
  sides = {"hf": TorchSide(model, params, objective, epsilon_hat=epsilon_hat)}
  if noise_floor:
    sides["hf_perturbed"] = TorchSide(model, params, objective,
                                      perturbation=1e-7,
                                      epsilon_hat=epsilon_hat)
  for name, kwargs in (variants or {}).items():
    sides[name] = TorchSide(model, params, objective, **kwargs)
  # The same weight-decay split on both sides, as element counts.
  tf_decay = sum(int(np.prod(v.shape)) for v in model.trainable_variables
                 if optimizer._do_use_weight_decay(v.name)  # pylint: disable=protected-access
                 and "pooler" not in v.name)
  if tf_decay != sides["hf"].decay_elements:
    raise RuntimeError(f"weight-decay groups differ: package {tf_decay} "
                       f"elements, torch {sides['hf'].decay_elements}")
  metrics = task.build_metrics(training=True)
  grad_norm = [m for m in metrics if m.name == "gradient_norm"][0]
  step_fn = tf.function(lambda b: task.train_step(b, model, optimizer,
                                                  metrics=metrics))
  rows = []
  start = time.time()
  for step, batch in enumerate(batches, 1):
    for m in metrics:
      m.reset_state()
    row = dict(step=step, package_loss=float(step_fn(batch)[task.loss]),
               package_grad_norm=float(grad_norm.result()))
    tb = torch_batch(batch)
    for name, side in sides.items():
      row[f"{name}_loss"], row[f"{name}_grad_norm"] = side.step(tb)
    rows.append(row)
    if step % 50 == 0 or step == 1:
      print(f"{objective} step {step}: loss {row['package_loss']:.5f} / "
            f"{row['hf_loss']:.5f}, grad norm "
            f"{row['package_grad_norm']:.4f} / {row['hf_grad_norm']:.4f} "
            f"({time.time() - start:.0f} s)", flush=True)
  out = dict(objective=objective, steps=steps, rows=rows,
             learning_rate=params.trainer.optimizer_config.learning_rate.
             polynomial.initial_learning_rate, epsilon_hat=epsilon_hat,
             first_batch_loss={"before": first_batch_loss_before,
                               "after": first_loss()})
  for name in sides:
    ref = "hf" if name == "hf_perturbed" else "package"
    suffix = "" if name == "hf" else "_" + name
    for what in ("loss", "grad_norm"):
      out[f"max_rel_{what}_diff{suffix}"] = max(
          rel(r[f"{ref}_{what}"], r[f"{name}_{what}"]) for r in rows)
  return out


def lockstep(args):
  """Both objectives in lockstep on the demo's data; {objective: summary}."""
  data = prepare(args.work_dir)
  out = {}
  for objective in args.objectives:
    params = package_params(data, objective, args.steps,
                            learning_rate=args.learning_rate)
    if args.adam_epsilon is not None:
      params.trainer.optimizer_config.optimizer.adamw.epsilon = (
          args.adam_epsilon)
    out[objective] = lockstep_run(params, objective, args.steps,
                                  noise_floor=args.noise_floor,
                                  epsilon_hat=not args.torch_epsilon)
    out[objective]["experiment"] = EXPERIMENTS[objective]
    print(f"{objective}: " + ", ".join(
        f"{k} {v:.2e}" for k, v in out[objective].items()
        if k.startswith("max_rel")), flush=True)
  return out


def heldout_batches(data, work_dir: str):
  """The fixed masked held-out blocks (numpy), made once in work_dir.

  The package's token masking of the held-out records, one pass per seed of
  HELDOUT_SEEDS (each pass masks every block once), saved as
  <work_dir>/heldout_token.npz, so every run of every side scores the same
  masked positions.
  """
  path = os.path.join(work_dir, "heldout_token.npz")
  keys = ("input_word_ids", "input_mask", "input_type_ids",
          "masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
  if not os.path.exists(path):
    from official_spanbert.data.pretraining import pretrain_dataloader  # pylint: disable=g-import-not-at-top
    params = package_params(data, "token", 1).task.validation_data
    parts = {k: [] for k in keys}
    for seed in HELDOUT_SEEDS:
      cfg = params.replace(seed=seed, global_batch_size=16,
                           drop_remainder=False, masking_scheme="token")
      for batch in pretrain_dataloader.SpanBertPretrainDataLoader(
          cfg).load():
        for k in keys:
          parts[k].append(batch[k].numpy())
    np.savez(path, **{k: np.concatenate(v) for k, v in parts.items()})
  arrays = dict(np.load(path))
  n = len(arrays["input_word_ids"])
  return [{k: v[i:i + 64] for k, v in arrays.items()}
          for i in range(0, n, 64)]


def mlm_scores(logits_fn, batches):
  """(held-out MLM loss, accuracy) over the masked positions of batches."""
  loss_sum = correct = total = 0.0
  for b in batches:
    logits = logits_fn(b).astype(np.float64)  # [B, P, V]
    ids, w = b["masked_lm_ids"], b["masked_lm_weights"]
    logz = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + (
        logits.max(-1))
    picked = np.take_along_axis(logits, ids[..., None], -1)[..., 0]
    loss_sum += float(((logz - picked) * w).sum())
    correct += float(((logits.argmax(-1) == ids) * w).sum())
    total += float(w.sum())
  return loss_sum / total, correct / total


def apply_package_config(params, config: str, steps: int):
  """The package-side change of a CONFIGS entry, on params."""
  if config == "hf_schedule":
    warmup = params.trainer.optimizer_config.warmup.polynomial.warmup_steps
    poly = params.trainer.optimizer_config.learning_rate.polynomial
    poly.offset, poly.decay_steps = warmup, steps - warmup
  elif config == "full_shuffle":
    params.task.train_data.shuffle_buffer_size = 20000
  elif config == "shuffle_100":
    params.task.train_data.shuffle_buffer_size = 100


def run_package(args, data, heldout):
  """One package run: task.train_step on the task's own input pipeline."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  params = package_params(data, "token", args.steps, seed=args.seed,
                          learning_rate=args.learning_rate)
  apply_package_config(params, args.config, args.steps)
  if args.config == "bfloat16":
    from official.modeling import performance  # pylint: disable=g-import-not-at-top
    params.runtime.mixed_precision_dtype = "bfloat16"
    performance.set_mixed_precision_policy(tf.bfloat16)
  tf_keras.utils.set_random_seed(args.seed)
  task = task_factory.get_task(params.task)
  model = task.build_model()
  if args.config == "normal_init":
    rng = np.random.default_rng(args.seed)
    for v in model.trainable_variables:
      if len(v.shape) >= 2:
        v.assign(rng.normal(0.0, 0.02, v.shape).astype(np.float32))
  optimizer = task.create_optimizer(params.trainer.optimizer_config,
                                    params.runtime)
  if args.config == "torch_epsilon":
    prepare_local = optimizer._prepare_local  # pylint: disable=protected-access

    def torch_placement(var_device, var_dtype, apply_state):
      prepare_local(var_device, var_dtype, apply_state)
      c = apply_state[(var_device, var_dtype)]
      c["epsilon"] = c["epsilon"] * tf.sqrt(1 - c["beta_2_power"])

    optimizer._prepare_local = torch_placement  # pylint: disable=protected-access
  step_fn = tf.function(lambda b: task.train_step(b, model, optimizer,
                                                  metrics=[]))
  logits = tf.function(lambda b: model(b, training=False)["mlm_logits"])
  inputs = iter(task.build_inputs(params.task.train_data))

  def evaluate():
    return mlm_scores(lambda b: logits(
        {k: tf.constant(v) for k, v in b.items()}).numpy(), heldout)

  return train_loop(args, lambda: step_fn(next(inputs))[task.loss], evaluate,
                    params.task.train_data.global_batch_size)


def train_loop(args, step, evaluate, batch_size: int):
  """Steps, scoring at EVAL_STEPS; the clocks count training only."""
  points, wall, cpu = [], 0.0, 0.0
  for n in range(1, args.steps + 1):
    w0, c0 = time.time(), time.process_time()
    loss = float(step())
    wall += time.time() - w0
    cpu += time.process_time() - c0
    if n in EVAL_STEPS or n == args.steps:
      heldout_loss, accuracy = evaluate()
      points.append(dict(step=n, heldout_mlm_loss=round(heldout_loss, 5),
                         heldout_mlm_accuracy=round(accuracy, 5),
                         train_loss=round(loss, 5), train_wall_s=round(wall, 1)))
      print(f"{args.side} seed {args.seed} step {n}: held-out loss "
            f"{heldout_loss:.4f}, accuracy {accuracy:.4f} ({wall:.0f} s)",
            flush=True)
  return dict(points=points, train_wall_s=round(wall, 1),
              train_cpu_s=round(cpu, 1),
              examples_per_second=round(args.steps * batch_size / wall, 2))


def read_blocks(pattern: str):
  """Wordpiece ids of every block in the records matching pattern."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return [list(tf.train.Example.FromString(r.numpy()).features.feature[
      "input_ids"].int64_list.value)
          for r in tf.data.TFRecordDataset(sorted(glob.glob(pattern)))]


def run_hf(args, data, heldout):
  """One HF run, as run_mlm.py trains: collator, sampler, AdamW, schedule."""
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  torch.set_num_threads(THREADS or os.cpu_count())
  torch.manual_seed(args.seed)
  with open(data.vocab_path, encoding="utf-8") as f:
    vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
  # (transformers 5 ignores vocab_file= here: the vocab goes in as a dict.)
  tokenizer = transformers.BertTokenizerFast(vocab=vocab, do_lower_case=False)
  collator = transformers.DataCollatorForLanguageModeling(
      tokenizer, mlm_probability=0.15)
  cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
  examples = [{"input_ids": [cls] + b[:SEQ_LENGTH - 2] + [sep]}
              for b in read_blocks(data.train_prefix + "-*.tfrecord")]
  model = transformers.BertForMaskedLM(hf_config(len(tokenizer), "gelu"))
  no_decay = ("bias", "LayerNorm.weight")
  named = list(model.named_parameters())
  optimizer = torch.optim.AdamW(
      [{"params": [p for n, p in named if not any(x in n for x in no_decay)],
        "weight_decay": 0.01},
       {"params": [p for n, p in named if any(x in n for x in no_decay)],
        "weight_decay": 0.0}], lr=args.learning_rate, betas=(0.9, 0.999),
      eps=1e-8)
  scheduler = transformers.get_linear_schedule_with_warmup(
      optimizer, max(1, args.steps // 10), args.steps)
  generator = torch.Generator().manual_seed(args.seed)

  def batches():
    while True:  # RandomSampler: a fresh permutation each epoch
      order = torch.randperm(len(examples), generator=generator).tolist()
      for i in range(0, len(order) - args.batch_size + 1, args.batch_size):
        yield collator([examples[j] for j in order[i:i + args.batch_size]])

  stream = batches()

  def step():
    model.train()
    out = model(**next(stream))
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    return out.loss.item()

  def logits(b):
    b = {k: torch.tensor(v, dtype=torch.long) for k, v in b.items()
         if k != "masked_lm_weights"}
    with torch.no_grad():
      sequence = model.bert(input_ids=b["input_word_ids"],
                            attention_mask=b["input_mask"],
                            token_type_ids=b["input_type_ids"]
                            ).last_hidden_state
      rows = torch.arange(sequence.shape[0])[:, None]
      return model.cls(sequence[rows, b["masked_lm_positions"]]).numpy()

  def evaluate():
    model.eval()
    return mlm_scores(logits, heldout)

  return train_loop(args, step, evaluate, args.batch_size)


def curves(args):
  """One run of one side; writes its JSON (skipped when it exists)."""
  out_dir = os.path.join(args.results_dir, args.config)
  path = os.path.join(out_dir, f"{args.side}-seed{args.seed}.json")
  if os.path.exists(path):
    print(f"{path} exists; skipped")
    return
  if args.config != "baseline" and args.side == "hf":
    raise SystemExit(f"config {args.config!r} changes the package side only")
  data = prepare(args.work_dir)
  heldout = heldout_batches(data, args.work_dir)
  load_before = os.getloadavg()
  result = (run_package if args.side == "package" else run_hf)(
      args, data, heldout)
  commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                          capture_output=True, text=True).stdout.strip()
  result = dict(side=args.side, seed=args.seed, config=args.config,
                description=CONFIGS[args.config], steps=args.steps,
                learning_rate=args.learning_rate, batch_size=args.batch_size,
                **result, load_before=[round(x, 2) for x in load_before],
                load_after=[round(x, 2) for x in os.getloadavg()],
                machine=f"{platform.node()} ({os.cpu_count()} cores)",
                threads=THREADS or os.cpu_count(),
                finished=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                commit=commit)
  os.makedirs(out_dir, exist_ok=True)
  with open(path + ".tmp", "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
  os.replace(path + ".tmp", path)
  print(f"wrote {path}")


def report(results_dir: str) -> str:
  """Mean ± sd per config, side and step, from the committed JSON files."""
  runs = []
  for path in sorted(glob.glob(os.path.join(results_dir, "*", "*.json"))):
    with open(path, encoding="utf-8") as f:
      run = json.load(f)
    if "side" in run:  # (lockstep/ holds the lockstep's figures)
      runs.append(run)
  groups = {}
  for r in runs:
    groups.setdefault((r["config"], r["side"]), []).append(r)
  lines = ["| config | side | seeds | " + " | ".join(
      f"loss @{s} | acc @{s}" for s in EVAL_STEPS) + " | examples/s |",
           "|---" * (4 + 2 * len(EVAL_STEPS)) + "|"]
  for (config, side), rs in sorted(groups.items()):
    cells = []
    for s in EVAL_STEPS:
      for key, scale, digits in (("heldout_mlm_loss", 1, 3),
                                 ("heldout_mlm_accuracy", 100, 2)):
        vals = [scale * p[key] for r in rs for p in r["points"]
                if p["step"] == s]
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        cells.append(f"{statistics.mean(vals):.{digits}f} ± {sd:.{digits}f}"
                     if vals else "")
    eps = statistics.mean(r["examples_per_second"] for r in rs)
    lines.append(f"| {config} | {side} | {len(rs)} | " + " | ".join(cells) +
                 f" | {eps:.1f} |")
  return "\n".join(lines)


# Peak of this machine's cores (AMD EPYC, Zen 4: two 256-bit FMA pipes a core,
# AVX-512 double-pumped): FLOPs per cycle per core.
PEAK_FLOPS_PER_CYCLE = {"float32": 32, "bfloat16": 64}


def cpu_hz() -> float:
  with open("/proc/cpuinfo", encoding="utf-8") as f:
    mhz = [float(l.split(":")[1]) for l in f if l.startswith("cpu MHz")]
  return statistics.mean(mhz) * 1e6


def model_flops(layers: int, hidden: int, intermediate: int, seq: int,
                batch: int, predictions: int, vocab: int) -> float:
  """Training FLOPs of one step (3 x the forward matmuls; 2 FLOPs a MAC)."""
  per_token = layers * (4 * hidden**2 + 2 * hidden * intermediate +
                        2 * seq * hidden)
  head = predictions * (hidden**2 + hidden * vocab)
  return 3 * 2 * (batch * seq * per_token + batch * head)


def speed(args):
  """Side-by-side step times: package float32 / bfloat16 and HF float32."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.modeling import performance  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  torch.set_num_threads(THREADS or os.cpu_count())
  data = prepare(args.work_dir)
  shapes = {"demo": dict(hidden_size=256, num_layers=2, num_attention_heads=4,
                         intermediate_size=1024),
            "base": dict(hidden_size=768, num_layers=12,
                         num_attention_heads=12, intermediate_size=3072)}
  rows = []
  for size in args.sizes:
    variants = {}
    batch = None
    for dtype in ("float32", "bfloat16"):
      params = package_params(data, "token", 1000,
                              batch_size=args.batch_size)
      params.task.model.encoder.bert_v2.override(shapes[size])
      performance.set_mixed_precision_policy(
          tf.bfloat16 if dtype == "bfloat16" else tf.float32)
      tf_keras.utils.set_random_seed(1)
      task = task_factory.get_task(params.task)
      model = task.build_model()
      opt = task.create_optimizer(params.trainer.optimizer_config,
                                  params.runtime)
      batch = batch or next(iter(task.build_inputs(params.task.train_data)))
      fn = tf.function(lambda b, t=task, m=model, o=opt: t.train_step(
          b, m, o, metrics=[])[t.loss])
      variants[f"package {dtype}"] = (lambda f=fn: float(f(batch)))
      performance.set_mixed_precision_policy(tf.float32)
    side = TorchSide(model, params, "token")
    side.hf = side.hf.float()
    tb = torch_batch(batch)
    variants["hf float32"] = lambda s=side: s.step(tb)[0]
    times = {k: [] for k in variants}
    for fn in variants.values():
      for _ in range(2):  # tracing / warm-up
        fn()
    names = list(variants)
    for r in range(args.rounds):
      for name in names[r % len(names):] + names[:r % len(names)]:
        c0 = time.process_time()
        t0 = time.time()
        for _ in range(args.round_steps):
          variants[name]()
        times[name].append(((time.time() - t0) / args.round_steps,
                            (time.process_time() - c0) / args.round_steps))
    enc = shapes[size]
    flops = model_flops(enc["num_layers"], enc["hidden_size"],
                        enc["intermediate_size"], SEQ_LENGTH, args.batch_size,
                        MAX_PREDICTIONS, data.vocab.size)
    hz = cpu_hz()
    for name in names:
      wall = statistics.median(t for t, _ in times[name])
      cpu = statistics.median(c for _, c in times[name])
      dtype = name.split()[-1]
      peak = PEAK_FLOPS_PER_CYCLE[dtype] * hz * os.cpu_count()
      rows.append(dict(size=size, variant=name, s_per_step=round(wall, 4),
                       cpu_s_per_step=round(cpu, 4),
                       examples_per_second=round(args.batch_size / wall, 2),
                       model_gflops_per_step=round(flops / 1e9, 2),
                       mfu=round(flops / wall / peak, 4)))
    base = statistics.median(t for t, _ in times["package float32"])
    for r in rows[-len(names):]:
      r["ratio_to_package_float32"] = round(base / r["s_per_step"], 3)
      print(json.dumps(r), flush=True)
  return dict(rows=rows, peak=("AMD EPYC (Zen 4) at %.0f MHz x %d cores; FLOPs "
                               "per cycle per core: %s" % (
                                   cpu_hz() / 1e6, os.cpu_count(),
                                   PEAK_FLOPS_PER_CYCLE)),
              batch_size=args.batch_size, seq_length=SEQ_LENGTH,
              load=os.getloadavg())


def limit_threads(n: int):
  """TensorFlow and torch use n threads (call before either runs an op)."""
  os.environ["OMP_NUM_THREADS"] = str(n)
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  tf.config.threading.set_intra_op_parallelism_threads(n)
  tf.config.threading.set_inter_op_parallelism_threads(n)
  torch.set_num_threads(n)
  global THREADS
  THREADS = n


THREADS = 0


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--mode", choices=("lockstep", "curves", "report", "speed"),
                  required=True)
  ap.add_argument("--work_dir", default="/tmp/pretraining_parity")
  ap.add_argument("--steps", type=int, default=None,
                  help="default: 300 (lockstep), 1200 (curves)")
  ap.add_argument("--learning_rate", type=float, default=1e-3)
  ap.add_argument("--objectives", nargs="+", default=list(EXPERIMENTS),
                  choices=list(EXPERIMENTS))
  ap.add_argument("--output_json", default=None)
  ap.add_argument("--adam_epsilon", type=float, default=None,
                  help="lockstep: AdamW epsilon of both sides (default: the "
                  "experiment's)")
  ap.add_argument("--torch_epsilon", action="store_true",
                  help="lockstep: the torch side keeps torch AdamW's eps "
                  "placement (default: Keras' / the reference's)")
  ap.add_argument("--noise_floor", action="store_true",
                  help="lockstep: also step a copy of the torch side whose "
                  "weights are perturbed by 1e-7 (relative), and report how "
                  "far it drifts from the unperturbed torch side")
  ap.add_argument("--side", choices=("package", "hf"), default="package")
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--config", choices=list(CONFIGS), default="baseline")
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--results_dir", default=RESULTS)
  ap.add_argument("--threads", type=int, default=0,
                  help="threads per framework (0: all cores); 1 keeps several "
                  "runs sharing a loaded machine from stalling each other")
  ap.add_argument("--sizes", nargs="+", default=["demo", "base"],
                  help="speed: encoder sizes")
  ap.add_argument("--rounds", type=int, default=6, help="speed")
  ap.add_argument("--round_steps", type=int, default=3, help="speed")
  args = ap.parse_args()
  if args.threads:
    limit_threads(args.threads)
  if args.steps is None:
    args.steps = 300 if args.mode == "lockstep" else max(EVAL_STEPS)
  if args.mode == "curves":
    curves(args)
  elif args.mode == "speed":
    out = speed(args)
    if args.output_json:
      with open(args.output_json, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
  elif args.mode == "report":
    print(report(args.results_dir))
  if args.mode == "lockstep":
    out = lockstep(args)
    summary = {k: {m: x for m, x in v.items() if m != "rows"}
               for k, v in out.items()}
    print(json.dumps(summary))
    if args.output_json:
      with open(args.output_json, "w", encoding="utf-8") as f:
        json.dump(dict(summary, details=out), f, indent=1)


if __name__ == "__main__":
  main()
