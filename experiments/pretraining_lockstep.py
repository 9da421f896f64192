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


r"""Pretraining parity, `--mode=lockstep`: the package's step and HF's on the
same batches from the same weights.

The package's `task.train_step` and a PyTorch step run on the same masked
batches (the package's loader output) from the same weights (the package's
initial weights, converted with `interop.weight_map`), dropout 0, the same
AdamW (betas, eps, weight decay groups), clip-norm and schedule (Model
Garden's warmup + linear decay). Two objectives:

* `token`: `bert/token_single` against `transformers.BertForMaskedLM`;
* `span_sbo`: `spanbert/pretraining` against BertForMaskedLM plus
  `ReferenceSBOHead`, a PyTorch transcription of the reference's SBO head
  (fairseq `BertPairTargetPredictionHead` + `MLPWithLayerNorm`, tied decoder,
  own bias), loss MLM + SBO as in `spanbert_loss.py`.

It writes {"max_rel_loss_diff", "max_rel_grad_norm_diff", "steps", ...} per
objective to --output_json.

  .venv/bin/python -m experiments.pretraining_parity --mode=lockstep \
      --work_dir /work/runs/pp --steps 300 --output_json /tmp/lockstep.json
"""

import argparse
import json
import time

import numpy as np

from experiments import pretraining_common as common
from experiments.pretraining_common import EXPERIMENTS
from experiments.pretraining_torch import TorchSide, torch_batch


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
  data = common.prepare(args.work_dir)
  out = {}
  for objective in args.objectives:
    params = common.package_params(data, objective, args.steps,
                            learning_rate=args.learning_rate)
    if args.adam_epsilon is not None:
      params.trainer.optimizer_config.optimizer.adamw.epsilon = (
          args.adam_epsilon)
    params.task.model.encoder_layout = args.encoder_layout
    out[objective] = lockstep_run(params, objective, args.steps,
                                  noise_floor=args.noise_floor,
                                  epsilon_hat=not args.torch_epsilon)
    out[objective]["experiment"] = EXPERIMENTS[objective]
    out[objective]["encoder_layout"] = args.encoder_layout
    print(f"{objective}: " + ", ".join(
        f"{k} {v:.2e}" for k, v in out[objective].items()
        if k.startswith("max_rel")), flush=True)
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  common.add_common_args(ap, ("lockstep",))
  ap.add_argument("--steps", type=int, default=300)
  ap.add_argument("--learning_rate", type=float, default=1e-3)
  ap.add_argument("--objectives", nargs="+", default=list(EXPERIMENTS),
                  choices=list(EXPERIMENTS))
  ap.add_argument("--output_json", default=None)
  ap.add_argument("--adam_epsilon", type=float, default=None,
                  help="AdamW epsilon of both sides (default: the "
                  "experiment's)")
  ap.add_argument("--torch_epsilon", action="store_true",
                  help="the torch side keeps torch AdamW's eps placement "
                  "(default: Keras' / the reference's)")
  ap.add_argument("--encoder_layout", default="keras",
                  choices=("keras", "matmul"),
                  help="the package side's task.model.encoder_layout")
  ap.add_argument("--noise_floor", action="store_true",
                  help="also step a copy of the torch side whose weights are "
                  "perturbed by 1e-7 (relative), and report how far it "
                  "drifts from the unperturbed torch side")
  args = ap.parse_args(argv)
  common.apply_threads(args)
  out = lockstep(args)
  summary = {k: {m: x for m, x in v.items() if m != "rows"}
             for k, v in out.items()}
  print(json.dumps(summary))
  if args.output_json:
    with open(args.output_json, "w", encoding="utf-8") as f:
      json.dump(dict(summary, details=out), f, indent=1)


if __name__ == "__main__":
  main()
