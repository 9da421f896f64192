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


r"""Pretraining parity, `--mode=curves` and `--mode=report`: learning curves of
the package and HF, each run as its users run it.

`curves`: one independent run: own initialisation, own masking of the same
records, own data order. The package side is `task.train_step` on
`task.build_inputs` (what spanbert-train runs); the HF side is
BertForMaskedLM with transformers' own init, its
DataCollatorForLanguageModeling and a shuffled epoch sampler, torch AdamW and
get_linear_schedule_with_warmup, as HF's run_mlm.py does. Both are scored at
EVAL_STEPS on the same held-out blocks, masked once (package token masking,
seed 2, four passes over the 149 held-out blocks). One JSON per run goes to
experiments/pretraining_parity_results/<config>/<side>-seed<N>.json (skipped
when it exists, so seeds can be added later). `--config` names what differs
from the defaults: see CONFIGS. `report` prints the table of a folder.

  .venv/bin/python -m experiments.pretraining_parity --mode=curves \
      --work_dir /work/runs/pp --side package --seed 1 --config baseline
  .venv/bin/python -m experiments.pretraining_parity --mode=report
"""

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import time

import numpy as np

from experiments import pretraining_common as common
from experiments.pretraining_common import REPO, RESULTS, SEQ_LENGTH
from experiments.pretraining_torch import hf_config

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
    "xla": "package: the train step compiled with XLA (runtime.enable_xla)",
}
EVAL_STEPS = (300, 600, 1200)
HELDOUT_SEEDS = (2, 3, 4, 5)



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
    params = common.package_params(data, "token", 1).task.validation_data
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
  from official_spanbert.training import release  # pylint: disable=g-import-not-at-top
  params = common.package_params(data, "token", args.steps, seed=args.seed,
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
                                                  metrics=[]),
                        jit_compile=args.config == "xla")
  logits = tf.function(lambda b: model(b, training=False)["mlm_logits"])
  inputs = release.batches(task.build_inputs(params.task.train_data))

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
  torch.set_num_threads(common.threads())
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
  data = common.prepare(args.work_dir)
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
                threads=common.threads(),
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


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  common.add_common_args(ap, ("curves", "report"))
  ap.add_argument("--steps", type=int, default=max(EVAL_STEPS))
  ap.add_argument("--learning_rate", type=float, default=1e-3)
  ap.add_argument("--side", choices=("package", "hf"), default="package")
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--config", choices=list(CONFIGS), default="baseline")
  ap.add_argument("--batch_size", type=int, default=16)
  ap.add_argument("--results_dir", default=RESULTS)
  args = ap.parse_args(argv)
  common.apply_threads(args)
  if args.mode == "report":
    print(report(args.results_dir))
  else:
    curves(args)


if __name__ == "__main__":
  main()
