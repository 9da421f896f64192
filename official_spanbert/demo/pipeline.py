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

r"""The end-to-end demo behind `make demo` and `spanbert-demo`.

Runs the whole pipeline on the standard library's docstrings (no network, no
downloads): the `continued` act (continued.py) by default, `scratch` (this
module's run_demo) or `both`. The stages and the output: docs/demo.md.

  python -m official_spanbert.demo --output_dir=demo_out   # -v: the detail
"""

import contextlib
import dataclasses
import io
import json
import logging as std_logging
import os
import shutil
import sys
import time
from typing import Dict, Optional

from absl import flags
from absl import logging

import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official.modeling import performance
from official.modeling.hyperparams import params_dict
from official_spanbert.utils import cpu_features
from official_spanbert.utils import cpu_threads
from official_spanbert.utils import console
from official_spanbert.utils import run_lock
from official_spanbert.training import precision_check
from official_spanbert.training import train_lib
from official_spanbert.configs import yaml_files
from official_spanbert.data.pretraining.records import pretraining_records
from official_spanbert.data import tokenization
from official_spanbert.data.pretraining import vocab_builder
from official_spanbert.demo import time_budget
from official_spanbert.demo import continued as demo_continued
from official_spanbert.demo import corpus as demo_corpus
from official_spanbert.demo import evaluation
from official_spanbert.demo import summary as demo_summary
from official_spanbert.serving import pretraining_module

FLAGS = flags.FLAGS
# The most steps the demo picks by itself (time_budget.py): 500 steps of bf16
# on a 2-core CPU with AVX512-BF16 take about 76 s.
DEFAULT_STEPS = time_budget.MAX_STEPS
PRECISIONS = ("auto", "bfloat16", "float32")
flags.DEFINE_string("output_dir", "demo_out", "Where everything is written.")
flags.DEFINE_integer(
    "train_steps", None,
    "Pretraining steps (default: picked from the CPU time of the first "
    "steps (the warm-up's; the first act's first "
    f"{time_budget.PILOT_STEPS}) so that the demo takes about "
    f"{time_budget.DEMO_BUDGET_S:.0f} s on an idle machine of this kind; "
    "the first act: "
    f"{time_budget.MIN_STEPS} to {time_budget.MAX_STEPS}).")
flags.DEFINE_integer("vocab_size", 8000, "Target vocab size.")
flags.DEFINE_enum("precision", "auto", PRECISIONS,
                  "auto: bfloat16 (mixed) on a CPU with AVX512-BF16 or AMX, "
                  "else float32.")
DEFAULT_SENTENCE = ("The module provides functions for working with [MASK] "
                    "and directories.")
flags.DEFINE_string("sentence", DEFAULT_SENTENCE,
                    "Sentence with masked words ([MASK]) to fill.")
ACTS = ("continued", "scratch", "both")
flags.DEFINE_enum("act", "continued", ACTS,
                  "continued: the packaged all-MiniLM-L6-v2 continued on the "
                  "corpus (continued.py; in <output_dir>/minilm); scratch: a "
                  "small SpanBERT pretrained from scratch; both: scratch, "
                  "then continued, each with its own 5-minute budget.")
flags.DEFINE_string("base_model", "",
                    "--act=continued: a Hugging Face BERT directory to "
                    "continue (default: the packaged all-MiniLM-L6-v2).")
flags.DEFINE_integer("warmup_steps", None,
                     "--act=continued: head-only warm-up steps (default: "
                     "configs/experiments/demo_continued.yaml's).")
HELDOUT_EVERY = 20  # every 20th document is kept out of training
# tf.text's learner binary-searches the frequency threshold from 10^7 down;
# on this corpus the answer is the lowest (min_token_count), and starting at
# 64 reaches the same vocab in 6 passes instead of 14 (17 s instead of 38 s).
VOCAB_UPPER_THRESH = 64


def cpu_has_bf16(cpuinfo: str = cpu_features.CPUINFO) -> bool:
  """Whether the CPU computes bfloat16 natively (AVX512-BF16 or AMX)."""
  return cpu_features.read(cpuinfo).native_bf16


def resolve_precision(precision: str = "auto") -> str:
  """'bfloat16' or 'float32' for --precision (auto: by the CPU's flags).

  Raises precision_check.UnsupportedPrecisionError for bfloat16 where oneDNN
  is capped below it (ONEDNN_MAX_CPU_ISA=AVX2): its first matmul would kill
  the process."""
  if precision not in PRECISIONS:
    raise ValueError(f"precision={precision!r}: expected one of {PRECISIONS}")
  if precision == "auto":
    return "bfloat16" if cpu_has_bf16() else "float32"
  cpu = cpu_features.read()
  if precision_check.cannot_run(precision, cpu):
    raise precision_check.UnsupportedPrecisionError(
        f"--precision=bfloat16: ONEDNN_MAX_CPU_ISA={cpu.isa_cap} leaves "
        "oneDNN no bfloat16 matmul, so the first step would abort the "
        "process; unset the cap, or use --precision=float32 (or auto)")
  return precision


def build_params(prefix, heldout_prefix, vocab_path, vocab_size, train_steps,
                 experiment: str = "spanbert/pretraining",
                 precision: str = "float32"):
  """The demo's params: `experiment` with models/demo.yaml, demo_tiny.yaml;
  precision "bfloat16" sets runtime.mixed_precision_dtype. The caller
  imports registry_imports (the demo's binary, __main__.py, does)."""
  params = exp_factory.get_exp_config(experiment)
  for name in ("models/demo.yaml", "experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, yaml_files.path(name),
                                              is_strict=True)
  params.task.model.encoder.bert_v2.vocab_size = vocab_size
  for data, records in ((params.task.train_data, prefix),
                        (params.task.validation_data, heldout_prefix)):
    data.input_path = records + "-*.tfrecord"
    data.vocab_file = vocab_path
  trainer = params.trainer
  trainer.train_steps = train_steps
  trainer.optimizer_config.learning_rate.polynomial.decay_steps = train_steps
  trainer.optimizer_config.warmup.polynomial.warmup_steps = max(
      1, train_steps // 10)
  trainer.validation_interval = train_steps
  trainer.checkpoint_interval = min(trainer.checkpoint_interval, train_steps)
  trainer.steps_per_loop = min(trainer.steps_per_loop, train_steps)
  trainer.summary_interval = trainer.steps_per_loop
  if precision == "bfloat16":
    params.runtime.mixed_precision_dtype = "bfloat16"
  return params


@dataclasses.dataclass
class DemoData:
  """What prepare_data wrote: text, vocab and records of both parts."""
  corpus: Dict[str, int]  # corpus and split statistics
  train_text: str
  heldout_text: str
  vocab_path: str
  vocab: tokenization.Vocab
  train_prefix: str  # records: <prefix>-*.tfrecord
  heldout_prefix: str
  records: Dict[str, Dict[str, float]]  # "train"/"heldout" -> record stats
  seconds: Dict[str, float] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def _absl_level(level: int):
  """absl's verbosity at least as high as `level` inside the block."""
  old = logging.get_verbosity()
  logging.set_verbosity(min(old, level))
  try:
    yield
  finally:
    logging.set_verbosity(old)


def prepare_corpus(output_dir: str, log=print):
  """Stage 1 of either act: the corpus and its split; returns (stats,
  train text path, held-out text path, {"corpus": seconds})."""
  os.makedirs(output_dir, exist_ok=True)
  corpus_path = os.path.join(output_dir, "stdlib_docstrings.txt")
  train_text = os.path.join(output_dir, "train.txt")
  heldout_text = os.path.join(output_dir, "heldout.txt")
  t = time.time()
  log("== 1/5 corpus: the docstrings of Python's standard library")
  stats = demo_corpus.build_demo_corpus(corpus_path)
  stats.update(evaluation.split_documents(corpus_path, train_text,
                                          heldout_text, HELDOUT_EVERY))
  seconds = {"corpus": time.time() - t}
  log(f"   {stats['documents']} documents, {stats['lines']:,} lines, "
      f"{stats['bytes'] / 1e6:.2f} MB; {stats['heldout_documents']} (every "
      f"{HELDOUT_EVERY}th) held out  [{seconds['corpus']:.1f} s]")
  return stats, train_text, heldout_text, seconds


def prepare_data(output_dir: str, vocab_size: int = 8000,
                 seq_length: int = 128, log=print) -> DemoData:
  """Stages 1-3 of the demo: corpus and split, vocab, records.

  An existing <output_dir>/vocab.txt is reused; records are always rewritten
  (a few seconds), so they match the vocab and seq_length asked for.
  """
  stats, train_text, heldout_text, seconds = prepare_corpus(output_dir, log)

  vocab_path = os.path.join(output_dir, "vocab.txt")
  t = time.time()
  log("== 2/5 vocab: a cased WordPiece vocab learned from the training "
      "documents (tf.text)")
  reused = os.path.exists(vocab_path)
  if not reused:
    # The demo says the vocab's size itself; the builder's warning that the
    # corpus gives fewer tokens than asked is shown with -v.
    with _absl_level(logging.ERROR if not logging.level_info()
                     else logging.get_verbosity()):
      vocab_builder.build_vocab(
          [train_text], vocab_path, vocab_size=vocab_size, min_token_count=3,
          progress=False, learn_params={"upper_thresh": VOCAB_UPPER_THRESH})
  vocab = tokenization.load_vocab(vocab_path)
  seconds["vocab"] = time.time() - t
  log(f"   {vocab.size:,} tokens (asked for at most {vocab_size:,})"
      f"{', reused' if reused else ''} -> {vocab_path}  "
      f"[{seconds['vocab']:.1f} s]")

  t = time.time()
  log(f"== 3/5 pretraining records: blocks of up to {seq_length} tokens, "
      "unmasked (the loader masks)")
  prefixes = {"train": os.path.join(output_dir, "records", "train"),
              "heldout": os.path.join(output_dir, "records", "heldout")}
  records = {}
  for part, text in (("train", train_text), ("heldout", heldout_text)):
    rec = pretraining_records.create_pretraining_records(
        [text], vocab_path, prefixes[part], max_seq_length=seq_length,
        num_shards=2 if part == "train" else 1, progress=False)
    records[part] = {k: getattr(rec, k) for k in (
        "documents", "lines", "blocks", "tokens", "padding_ratio")}
  seconds["records"] = time.time() - t
  log(f"   train {records['train']['blocks']:,} blocks "
      f"({records['train']['tokens']:,} tokens), held-out "
      f"{records['heldout']['blocks']:,} blocks "
      f"({records['heldout']['tokens']:,} tokens)  "
      f"[{seconds['records']:.1f} s]")
  return DemoData(stats, train_text, heldout_text, vocab_path, vocab,
                  prefixes["train"], prefixes["heldout"], records, seconds)


class DemoServingModule(pretraining_module.SpanBertServingModule):
  """The pretraining export without `encode_spans`, which the demo does not
  call: tracing its text windows was about half of the export's time
  (MiniLM, AVX2 EPYC, 2026-12-06)."""

  SIGNATURES = tuple(
      name for name in pretraining_module.SpanBertServingModule.SIGNATURES
      if name != "encode_spans")

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.span_encoder = None  # saved with the module, it would be traced


def _quiet_export(model, vocab_path, export_base, lower_case=False):
  """The pretraining export (DemoServingModule), without its progress lines
  on stderr (quiet mode); anything else it writes there is passed on."""
  module = DemoServingModule(
      model, vocab_path, lower_case, seq_length=128, top_k=5, max_masks=8)
  if logging.level_info():
    return module.write(export_base, version=1)
  buffer = io.StringIO()
  try:
    with contextlib.redirect_stderr(buffer):
      return module.write(export_base, version=1)
  finally:
    rest = [line for line in buffer.getvalue().splitlines()
            if not line.startswith(("export [", "export: wrote"))]
    if rest:
      sys.stderr.write("\n".join(rest) + "\n")


def _export_and_fill(model, vocab_path, output_dir, heldout_text, tokens,
                     sentence, seconds, lower_case=False):
  """Stage 5 of either act: exports `model` to <output_dir>/export, fills
  held-out sentences and `sentence` through the SavedModel; returns (export
  paths, held-out fills, fill_spans' output for sentence) and adds the
  stages' times to `seconds`."""
  t, c = time.time(), time.process_time()
  print("== 5/5 export for TF Serving; fill masked words through the "
        "SavedModel", flush=True)
  export_base = os.path.join(output_dir, "export", "spanbert")
  for base in (export_base, export_base + "_preprocessing"):
    shutil.rmtree(base, ignore_errors=True)
  paths = _quiet_export(model, vocab_path, export_base, lower_case)
  seconds["export"] = time.time() - t
  seconds["export_cpu"] = time.process_time() - c
  t, c = time.time(), time.process_time()
  loaded = tf.saved_model.load(paths["model"])
  fills = evaluation.fill_sentences(loaded, evaluation.pick_sentences(
      heldout_text, tokens, lower_case=lower_case))
  out = loaded.signatures["fill_spans"](text=tf.constant([sentence]))
  seconds["fill"] = time.time() - t
  seconds["fill_cpu"] = time.process_time() - c
  return paths, fills, out


def _pilot(params, model_dir: str, before_cpu_s: float, precision: str):
  """Trains the first time_budget.PILOT_STEPS steps of `params` (a rerun
  resumes past them) and returns (steps to train, the timed loop's
  time_budget.Probe or None)."""
  pilot = params.replace(trainer={
      "train_steps": time_budget.PILOT_STEPS,
      "steps_per_loop": time_budget.PILOT_LOOP,
      "summary_interval": time_budget.PILOT_LOOP,
      "checkpoint_interval": time_budget.PILOT_STEPS})
  c = time.process_time()
  train_lib.run(pilot, model_dir, mode="train")
  pilot_cpu_s = time.process_time() - c
  probe = time_budget.pilot_probe(
      evaluation.read_scalars(os.path.join(model_dir, "train"),
                              time_budget.PROBE_TAGS),
      params.task.train_data.global_batch_size)
  if probe is None:
    return time_budget.MAX_STEPS, None
  after_s = (time_budget.after_training_s(precision, before_cpu_s) +
             time_budget.resume_overhead_cpu_s(pilot_cpu_s, probe))
  return time_budget.pick_steps(probe, cpu_features.usable_cores(),
                                time.process_time(), after_s), probe


class _DropResumeNotice(std_logging.Filter):
  """The resumed run after the pilot is the demo's own plan: its "Resuming
  from ..." warning is shown with -v only."""

  def filter(self, record):
    return record.msg != train_lib.RESUME_MESSAGE


def run_demo(output_dir: str, train_steps: Optional[int] = None,
             vocab_size: int = 8000, sentence: str = DEFAULT_SENTENCE,
             precision: str = "auto") -> dict:
  """Runs the demo; returns its summary (also <output_dir>/summary.json).

  train_steps None: picked from a measured first-steps throughput
  (time_budget.py).

  Prints stage lines and the summary on stdout, training progress on
  stderr; how much of the library's logging shows is absl's verbosity
  (console.py: WARNING unless --verbosity is given).
  """
  start = time.time()
  precision = resolve_precision(precision)
  if not logging.level_info():
    console.hide_known_warnings()
    console.quiet_cxx_absl_log()
  _print_start(output_dir, precision)
  data = prepare_data(output_dir, vocab_size,
                      log=lambda line: print(line, flush=True))
  seconds = dict(data.seconds)
  pick = train_steps is None

  def params_for(steps):
    return build_params(data.train_prefix, data.heldout_prefix,
                        data.vocab_path, data.vocab.size, steps,
                        precision=precision)

  params = params_for(time_budget.MAX_STEPS if pick else train_steps)
  validation = params.task.validation_data
  eval_steps = max(1, data.records["heldout"]["blocks"] //
                   validation.global_batch_size)
  t, c = time.time(), time.process_time()
  _print_pretraining(params, pick, train_steps, precision)
  old_policy = tf_keras.mixed_precision.global_policy()
  try:
    if params.runtime.mixed_precision_dtype:
      performance.set_mixed_precision_policy(
          params.runtime.mixed_precision_dtype)
    tf.keras.utils.set_random_seed(1)
    task = task_factory.get_task(params.task)
    heldout = evaluation.heldout_batches(task, validation, eval_steps)
    before, unigram = _measure_before(task, heldout, data)
    seconds["measure_before"] = time.time() - t
    seconds["measure_before_cpu"] = time.process_time() - c
    model_dir = os.path.join(output_dir, "model")
    t_train = time.time()
    cpu = time_budget.cpu_name()
    probe = None
    if pick:
      train_steps, probe = _pick_steps(params, model_dir, seconds, cpu,
                                       precision)
      params = params_for(train_steps)
    model = _train(params, model_dir, quiet_resume=pick)
    seconds["training"] = time.time() - t_train
    after, png = _measure_after(task, model, heldout,
                                output_dir, model_dir, train_steps,
                                precision, before, unigram, seconds)
    paths, fills, out = _export_and_fill(
        model, data.vocab_path, output_dir, data.heldout_text,
        data.vocab.tokens, sentence, seconds)
  finally:
    tf_keras.mixed_precision.set_global_policy(old_policy)
  print(f"   {paths['model']} (+ preprocessing model)  "
        f"[{seconds['export']:.1f} s]", flush=True)
  candidates = _candidates(out)
  seconds["total"] = time.time() - start
  summary = demo_summary.first_act_summary(
      train_steps=train_steps, precision=precision, cpu=cpu,
      steps_picked=({"pilot_steps": time_budget.PILOT_STEPS,
                     "probe": probe and dataclasses.asdict(probe),
                     "budget_s": time_budget.DEMO_BUDGET_S}
                    if pick else None),
      data=data, before=before, unigram=unigram, after=after, fills=fills,
      sentence=sentence, out=out, candidates=candidates, paths=paths,
      model_dir=model_dir, png=png, seconds=seconds)
  return _write_summary(summary, output_dir, demo_summary.print_summary)


def _print_start(output_dir, precision):
  """Prints the demo's first line: where, and at which precision."""
  why = ("this CPU has AVX512-BF16" if precision == "bfloat16" and
         cpu_has_bf16() else "")
  print(f"spanbert-demo: pretraining a small SpanBERT on Python's standard-"
        f"library docstrings, in {output_dir} ({precision}"
        f"{': ' + why if why else ''})", flush=True)


def _print_pretraining(params, pick, train_steps, precision):
  """Prints stage 4's line: the model and how many steps."""
  enc = params.task.model.encoder.bert_v2
  print(f"== 4/5 pretraining: {enc.num_layers} layers, hidden "
        f"{enc.hidden_size}, span masking + SBO, "
        f"{'steps by throughput' if pick else f'{train_steps} steps'} of "
        f"{params.task.train_data.global_batch_size} blocks, {precision} "
        "(CPU)", flush=True)


def _measure_before(task, heldout, data):
  """Held-out metrics of the untrained model and of the unigram baseline
  on the held-out batches (evaluation.heldout_batches)."""
  before = evaluation.heldout_metrics(task, task.build_model(), heldout)
  unigram = evaluation.heldout_metrics(
      task, evaluation.UnigramModel(evaluation.vocab_unigram_log_probs(
          data.train_prefix + "-*.tfrecord", data.vocab)), heldout)
  blocks = sum(int(b["input_word_ids"].shape[0]) for b in heldout)
  print(f"   held-out before training: {demo_summary.metrics_line(before)}; "
        f"{blocks} blocks, {before['masked_tokens']:,} masked "
        "tokens", flush=True)
  return before, unigram


def _pick_steps(params, model_dir, seconds, cpu, precision):
  """Runs the pilot; returns (the steps an idle machine of this kind fits in
  the budget, the pilot's time_budget.Probe or None)."""
  train_steps, probe = _pilot(params, model_dir,
                              seconds["measure_before_cpu"], precision)
  measured = (f"{probe.steps * probe.batch / probe.cpu_s:.1f} examples per "
              f"CPU-second over steps {time_budget.PILOT_LOOP + 1}-"
              f"{time_budget.PILOT_STEPS}" if probe is not None else
              "no throughput measured (a rerun)")
  print(f"   {measured} on this CPU ({cpu}, {precision}): {train_steps} "
        f"steps fit {time_budget.DEMO_BUDGET_S:.0f} s of demo time on an "
        f"idle machine ({time_budget.MIN_STEPS}-{time_budget.MAX_STEPS}; "
        "--train_steps sets them)", flush=True)
  busy = (time_budget.busy_line(probe, cpu_features.usable_cores())
          if probe is not None else "")
  if busy:
    print(busy, flush=True)
  return train_steps, probe
def _train(params, model_dir, quiet_resume):
  """Trains; with quiet_resume, hides the resume notice unless -v."""
  notice = _DropResumeNotice()
  if quiet_resume and not logging.level_info():
    logging.get_absl_logger().addFilter(notice)
  try:
    model, _ = train_lib.run(params, model_dir, mode="train")
  finally:
    logging.get_absl_logger().removeFilter(notice)
  return model


def _measure_after(task, model, heldout, output_dir, model_dir, train_steps,
                   precision, before, unigram, seconds):
  """Held-out metrics after training, and the loss-curve plot's path."""
  t_after = time.time()
  after = evaluation.heldout_metrics(task, model, heldout)
  png = os.path.join(output_dir, "loss_curves.png")
  evaluation.plot_losses(
      model_dir, png, f"demo SpanBERT, {train_steps} steps ({precision})",
      heldout={0: before, train_steps: after}, unigram=unigram)
  seconds["measure_after"] = time.time() - t_after
  print(f"   held-out after training:  {demo_summary.metrics_line(after)}  "
        f"[training {seconds['training']:.1f} s]", flush=True)
  return after, png


def _write_summary(summary: dict, output_dir: str, print_fn) -> dict:
  """Writes <output_dir>/summary.json, prints the summary, returns it."""
  summary_path = os.path.join(output_dir, "summary.json")
  with open(summary_path, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=1)
  summary["summary_path"] = summary_path
  print_fn(summary)
  return summary


def _onednn_on():
  """Whether TensorFlow runs its oneDNN kernels (None if it cannot say)."""
  try:
    from tensorflow.python.util import _pywrap_util_port  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
    return bool(_pywrap_util_port.IsMklEnabled())
  except (ImportError, AttributeError):
    return None


def _candidates(out) -> list:
  """fill_spans' MLM (and SBO) top-5 of each [MASK] of the first text."""
  candidates = []
  for i in range(int(out["masked_weights"].numpy()[0].sum())):
    line = {"mask": i + 1, "mlm_top5": [
        t.decode() for t in out["mlm_top_k_tokens"].numpy()[0, i]]}
    if "sbo_top_k_tokens" in out:
      line["sbo_top5"] = [t.decode()
                          for t in out["sbo_top_k_tokens"].numpy()[0, i]]
    candidates.append(line)
  return candidates


def run_continued(output_dir: str, train_steps: Optional[int] = None,
                  sentence: str = DEFAULT_SENTENCE, precision: str = "auto",
                  base_model: str = "", warmup_steps: Optional[int] = None,
                  process_start: Optional[float] = None) -> dict:
  """The second act (continued.py) in <output_dir>/minilm; returns its
  summary (also <output_dir>/minilm/summary.json)."""
  start = process_start or time.time()
  precision = resolve_precision(precision)
  if not logging.level_info():
    console.hide_known_warnings()
    console.quiet_cxx_absl_log()
  act_dir = os.path.join(output_dir, "minilm")
  print(f"spanbert-demo: continuing "
        f"{base_model or demo_continued.BASE_NAME} on Python's standard-"
        f"library docstrings, in {act_dir} ({precision})", flush=True)
  stats, train_text, heldout_text, seconds = prepare_corpus(
      output_dir, log=lambda line: print(line, flush=True))
  old_policy = tf_keras.mixed_precision.global_policy()
  try:
    if precision == "bfloat16":
      performance.set_mixed_precision_policy("bfloat16")
    notice = _DropResumeNotice()
    if not logging.level_info():
      logging.get_absl_logger().addFilter(notice)
    try:
      act = demo_continued.run_act(
          act_dir, {"train": train_text, "heldout": heldout_text}, precision,
          train_steps, base_model, warmup_steps,
          process_start=start, log=lambda line: print(line, flush=True))
    finally:
      logging.get_absl_logger().removeFilter(notice)
    seconds.update(act.pop("seconds"))
    paths, fills, out = _export_and_fill(
        act.pop("model"), act["vocab_file"], act_dir, heldout_text,
        act.pop("vocab").tokens, sentence, seconds,
        lower_case=act["lower_case"])
    # The training run's garbage, collected beside the export (train_lib).
    seconds["release_wait"] = train_lib.join_releases()
  finally:
    tf_keras.mixed_precision.set_global_policy(old_policy)
  print(f"   {paths['model']} (+ preprocessing model)  "
        f"[{seconds['export']:.1f} s]", flush=True)
  seconds["total"] = time.time() - start
  seconds["total_cpu"] = time.process_time()
  keys = ("masked_lm_accuracy", "masked_lm_top5_accuracy", "mlm_loss",
          "sbo_accuracy", "sbo_loss", "masked_tokens", "sbo_targets")
  summary = dict(act, precision=precision, cpu=time_budget.cpu_name(),
                 onednn=_onednn_on(), corpus=stats, heldout_fills=fills,
                 sentence=sentence,
                 filled=out["filled_text"].numpy()[0].decode(),
                 candidates=_candidates(out), export=paths,
                 seconds={k: round(v, 1) for k, v in seconds.items()})
  for row in ("unigram", "before", "after"):
    summary[row] = {k: act[row][k] for k in keys if k in act[row]}
  return _write_summary(summary, act_dir,
                        demo_summary.print_continued_summary)


LOCK_FILE = "demo.lock"  # in --output_dir while a demo runs there


class FlagError(ValueError):
  """A flag the demo cannot run with (checked before any work)."""


def check_flags(act: str, train_steps: Optional[int],
                warmup_steps: Optional[int], vocab_size: int,
                output_dir: str) -> None:
  """Refuses flags that would fail minutes into the demo, in one line.

  Raises:
    FlagError: naming the flag and what to do.
  """
  try:
    if train_steps is not None and train_steps < 1:
      raise ValueError(f"--train_steps={train_steps}: give a positive "
                       "number of steps, or leave it out (picked from the "
                       "measured throughput)")
    if act in ("continued", "both"):
      demo_continued.check_steps(train_steps, warmup_steps)
    if vocab_size < 1:
      raise ValueError(f"--vocab_size={vocab_size}: give a positive size")
  except ValueError as e:
    raise FlagError(str(e)) from None
  _check_output_dir(output_dir)


def _check_output_dir(output_dir: str) -> None:
  """Refuses an --output_dir that is a file or cannot be written."""
  if os.path.exists(output_dir) and not os.path.isdir(output_dir):
    raise FlagError(f"--output_dir={output_dir} is a file, not a directory; "
                    "choose a directory (new or the demo's own)")
  probe = os.path.join(output_dir, f".write-test-{os.getpid()}")
  try:
    os.makedirs(output_dir, exist_ok=True)
    os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    os.remove(probe)
  except OSError as e:
    raise FlagError(f"--output_dir={output_dir} is not writable "
                    f"({e.strerror or e}); choose a writable directory"
                    ) from None


def main(argv):
  del argv
  cpu_threads.fit_to_quota()  # before any op: pools sized to a CPU quota
  try:
    check_flags(FLAGS.act, FLAGS.train_steps, FLAGS.warmup_steps,
                FLAGS.vocab_size, FLAGS.output_dir)
    # A second demo in the same --output_dir would delete this one's model
    # directory while it trains.
    with run_lock.hold_file(os.path.join(FLAGS.output_dir, LOCK_FILE),
                            "demo", FLAGS.output_dir):
      if FLAGS.act in ("scratch", "both"):
        run_demo(FLAGS.output_dir, FLAGS.train_steps, FLAGS.vocab_size,
                 FLAGS.sentence, FLAGS.precision)
      if FLAGS.act in ("continued", "both"):
        run_continued(FLAGS.output_dir, FLAGS.train_steps, FLAGS.sentence,
                      FLAGS.precision, FLAGS.base_model, FLAGS.warmup_steps,
                      time_budget.process_start() if FLAGS.act == "continued"
                      else None)
  except (precision_check.UnsupportedPrecisionError,
          demo_continued.MissingBaseError, FlagError, run_lock.LockedError,
          run_lock.LockWriteError) as e:
    sys.stderr.write(f"spanbert-demo: error: {e}\n")
    return 1
  return 0


def run():
  console.run(main)
