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

"""The side-by-side harness shared by parity_squad.py and parity_rte.py.

Each side ("pkg": this package, "hf": the transformers + PyTorch reference)
and seed runs in its own process (`--worker SIDE --seed N`) and writes
<work_dir>/<side>-seed<N>/result.json; `run_all` skips runs whose result exists,
so a stopped comparison resumes where it stopped.
"""

import json
import os
import statistics
import subprocess
import sys
import time

SIDES = ("pkg", "hf")


def add_common_args(ap, default_seeds, margin: float, margin_help: str):
  """The flags every parity script has."""
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--seeds", type=int, nargs="+", default=default_seeds)
  ap.add_argument("--margin", type=float, default=margin, help=margin_help)
  ap.add_argument("--worker", choices=SIDES, default=None,
                  help="internal: run one side")
  ap.add_argument("--seed", type=int, default=1, help="with --worker")


def worker(args, runners, config_keys):
  """Runs one side/seed in this process and writes its result.json."""
  run_dir = os.path.join(args.work_dir, f"{args.worker}-seed{args.seed}")
  os.makedirs(run_dir, exist_ok=True)
  load_before = os.getloadavg()
  result = runners[args.worker](args, run_dir)
  predictions = result.pop("predictions", None)
  if predictions is not None:
    with open(os.path.join(run_dir, "predictions.json"), "w",
              encoding="utf-8") as f:
      json.dump(predictions, f)
  result.update(side=args.worker, seed=args.seed,
                load_before=load_before, load_after=os.getloadavg(),
                finished=time.strftime("%Y-%m-%d %H:%M:%S"),
                config={k: getattr(args, k) for k in config_keys})
  with open(os.path.join(run_dir, "result.json"), "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
  print(json.dumps(result, indent=1))


def run_all(args, script: str, config_keys, overrides=None):
  """Runs every missing side/seed in a subprocess; returns all results."""
  overrides = overrides or {}
  results = []
  for seed in args.seeds:
    for side in SIDES:
      result_file = os.path.join(args.work_dir, f"{side}-seed{seed}",
                                 "result.json")
      if not os.path.exists(result_file):
        command = [sys.executable, os.path.abspath(script),
                   "--worker", side, "--seed", str(seed),
                   "--work_dir", args.work_dir]
        command += [x for k in config_keys
                    for x in (f"--{k}", str(overrides.get(k, getattr(args, k))))]
        print(f"{time.strftime('%H:%M:%S')} running: {' '.join(command)}",
              flush=True)
        subprocess.run(command, check=True)
      with open(result_file, encoding="utf-8") as f:
        results.append(json.load(f))
  return results


def mean_sd(values):
  sd = statistics.stdev(values) if len(values) > 1 else 0.0
  return f"{statistics.mean(values):.2f} ± {sd:.2f}"


# Per-run cost columns every parity table has: (header, result key, format).
COST_COLUMNS = (("train ex/s (loops)", "train_examples_per_s_loops", "{:.2f}"),
                ("train wall s", "train_wall_s", "{:.0f}"),
                ("train CPU s", "train_cpu_s", "{:.0f}"),
                ("eval wall s", "eval_wall_s", "{:.0f}"))


def side_values(results, key: str, scale: float = 1.0):
  """{side: [scale * result[key] per seed]} for the sides that have results."""
  values = {s: [scale * r[key] for r in results if r["side"] == s]
            for s in SIDES}
  return {s: v for s, v in values.items() if v}


def table(results, metrics) -> str:
  """The side-by-side markdown table: one row per run, then mean ± sd rows.

  `metrics` are the score columns, (header, result key, scale); the cost
  columns (COST_COLUMNS) and the 1-minute load follow them.
  """
  headers = [h for h, _, _ in metrics] + [h for h, _, _ in COST_COLUMNS]
  rows = ["| side | seed | " + " | ".join(headers) + " | load 1m before/after |",
          "|---" * (len(headers) + 3) + "|"]
  for r in results:
    cells = [f"{scale * r[key]:.2f}" for _, key, scale in metrics]
    cells += [fmt.format(r[key]) for _, key, fmt in COST_COLUMNS]
    rows.append(f"| {r['side']} | {r['seed']} | " + " | ".join(cells) +
                f" | {r['load_before'][0]:.1f} / {r['load_after'][0]:.1f} |")
  for side in SIDES:
    mine = [r for r in results if r["side"] == side]
    if mine:
      cells = [mean_sd([scale * r[key] for r in mine])
               for _, key, scale in metrics]
      cells += [fmt.format(statistics.mean(r[key] for r in mine))
                for _, key, fmt in COST_COLUMNS]
      rows.append(f"| {side} | mean ± sd | " + " | ".join(cells) + " | |")
  return "\n".join(rows)


def lr_factor(step: int, warmup: int, steps: int) -> float:
  """Model Garden's PolynomialWarmUp(PolynomialDecay), power 1, as a factor."""
  if step < warmup:
    return max(step, 1) / warmup * (1 - warmup / steps)
  return max(0.0, 1 - step / steps)


def hf_adamw(model, learning_rate: float, steps: int, *, eps: float = 1e-8,
             betas=(0.9, 0.999), weight_decay: float = 0.01, warmup=None):
  """torch AdamW and schedule as this package trains: (optimizer, scheduler).

  Weight decay except on biases and LayerNorm weights; warmup (default 10% of
  steps) and linear decay in Model Garden's form (`lr_factor`).
  """
  import torch  # pylint: disable=g-import-not-at-top
  no_decay = ("bias", "LayerNorm.weight")
  groups = [
      {"params": [p for n, p in model.named_parameters()
                  if not any(x in n for x in no_decay)],
       "weight_decay": weight_decay},
      {"params": [p for n, p in model.named_parameters()
                  if any(x in n for x in no_decay)], "weight_decay": 0.0}]
  optimizer = torch.optim.AdamW(groups, lr=learning_rate, betas=tuple(betas),
                                eps=eps)
  warmup = max(1, steps // 10) if warmup is None else warmup
  scheduler = torch.optim.lr_scheduler.LambdaLR(
      optimizer, lambda step: lr_factor(step, warmup, steps))
  return optimizer, scheduler


def hf_start(name: str, seed: int):
  """Offline transformers, every RNG seeded; (MiniLM's path, its tokenizer).

  Call it first on the Hugging Face side: the side's clocks start after it.
  """
  os.environ["HF_HUB_OFFLINE"] = "1"
  import random  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  from experiments import common  # pylint: disable=g-import-not-at-top
  path = common.minilm_path(name)
  random.seed(seed)
  np.random.seed(seed)
  torch.manual_seed(seed)
  return path, transformers.BertTokenizerFast.from_pretrained(path)


def hf_train(model, inputs, num_examples: int, args, steps: int) -> dict:
  """Fine-tunes a transformers `model` as both parity scripts do.

  `inputs(batch)` gives the model's keyword arguments for a list of example
  indices; batches come from `torch.randperm` epochs seeded by `args.seed`,
  `args.batch_size` each, with `hf_adamw` and gradient clipping at 1.0.
  Returns `losses` and `train_examples_per_s_loops` (after the first 25
  steps, which hold the warm-up).
  """
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  optimizer, scheduler = hf_adamw(model, args.learning_rate, steps)
  generator = torch.Generator().manual_seed(args.seed)
  order, losses = [], []
  model.train()
  t_loop, t_after_first = time.time(), None
  for step in range(steps):
    if len(order) < args.batch_size:
      order = torch.randperm(num_examples, generator=generator).tolist()
    batch, order = order[:args.batch_size], order[args.batch_size:]
    out = model(**inputs(batch))
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    losses.append(out.loss.item())
    if step + 1 == min(25, steps):
      t_after_first = time.time()
    if (step + 1) % 25 == 0:
      print(f"hf step {step + 1}/{steps}: loss {np.mean(losses[-25:]):.3f}",
            flush=True)
  t_end = time.time()
  rest = steps - min(25, steps)
  return {
      "losses": losses,
      "train_examples_per_s_loops": (
          rest * args.batch_size / (t_end - t_after_first) if rest else
          steps * args.batch_size / (t_end - t_loop)),
  }


def write_summary(work_dir: str, text: str, line: str, results, **extra):
  print(text)
  print(line)
  with open(os.path.join(work_dir, "summary.json"), "w",
            encoding="utf-8") as f:
    json.dump(dict(extra, table=text, verdict=line, results=results), f,
              indent=1)
