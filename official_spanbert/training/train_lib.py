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

"""SpanBERT training: Model Garden's runner, with a model_dir guard.

`run()` is the library, `main()` the binary's (spanbert-train). What a run
does around the model_dir (lock, resume, divergence, errors, exit codes):
docs/pretraining.md, "Running".
"""

import contextlib
import dataclasses
import math
import os
import signal
import sys
import threading
import traceback
from typing import Any, Callable, Mapping, Optional, Tuple

from absl import flags
from absl import logging
import gin

import tensorflow as tf
import tf_keras

from official.common import distribute_utils
from official.core import config_definitions as cfg
from official.core import task_factory
from official.core import train_lib as tfm_train_lib
from official.core import train_utils
from official.modeling import hyperparams
from official.modeling import performance
from official.nlp import continuous_finetune_lib
from official_spanbert.configs import experiment_names
from official_spanbert.configs import override_keys
from official_spanbert.configs import yaml_files
from official_spanbert.modeling import checkpoints
from official_spanbert.training import best_checkpoint
from official_spanbert.training import checkpoint_recovery
from official_spanbert.training import config_check
from official_spanbert.training import device_check
from official_spanbert.training import precision_check
from official_spanbert.training import release
from official_spanbert.training import trainer as trainer_lib
from official_spanbert.utils import atomic_io
from official_spanbert.utils import cpu_threads
from official_spanbert.utils import run_lock

FLAGS = flags.FLAGS
# Logged when a run resumes from its model_dir's checkpoint (the demo, which
# resumes by design after its pilot steps, hides it without -v).
RESUME_MESSAGE = "Resuming from %s (step %d)"
TrainingDivergedError = trainer_lib.TrainingDivergedError
EmptyEvaluationError = trainer_lib.EmptyEvaluationError
Stopped = trainer_lib.Stopped
CONTINUOUS_TRAIN_AND_EVAL = "continuous_train_and_eval"
# Model Garden's default trainer.loss_upper_bound; for a task that knows its
# untrained loss (pretraining), the bound becomes this many times that loss.
_DEFAULT_LOSS_UPPER_BOUND = cfg.TrainerConfig().loss_upper_bound
DIVERGENCE_FACTOR = 10.0


@dataclasses.dataclass(frozen=True)
class Pause:
  """A training run that stops once at `step`, lets `then` decide how far to
  go on, and goes on in the same process: the same trainer, its train loop
  traced once, no checkpoint written or restored in between.

  `then(trainer)` returns the step to train to (at least `step`); it sees
  the train summaries so far (flushed). A polynomial learning-rate decay
  over the configured trainer.train_steps decays over the returned steps
  instead, as if they had been configured.

    pause = train_lib.Pause(20, lambda trainer: 120)
    model, _ = train_lib.run(params, model_dir, pause=pause)
  """
  step: int
  then: Callable[[Any], int]


def run(params: cfg.ExperimentConfig, model_dir: str, mode: str = "train",
        strategy: Optional[tf.distribute.Strategy] = None,
        run_post_eval: bool = False,
        enable_async_checkpointing: bool = False,
        pretrain_steps: Optional[int] = None,
        eval_summary_dir: Optional[str] = None,
        pause: Optional[Pause] = None
        ) -> Tuple[Optional[tf_keras.Model], Mapping[str, Any]]:
  """Runs an experiment; returns the model and the last eval logs.

  Args:
    params: the experiment config.
    model_dir: checkpoints, summaries and params.yaml go here.
    mode: train, eval, train_and_eval, continuous_eval, train_and_post_eval
      or continuous_train_and_eval (which returns no model: None).
    strategy: distribution strategy (default: from params.runtime).
    run_post_eval: evaluate once after training and return those logs.
    enable_async_checkpointing: Model Garden's async checkpointing.
    pretrain_steps: continuous_train_and_eval: the pretraining run's last
      step.
    eval_summary_dir: eval modes: where evaluation summaries go (default
      <model_dir>/validation; none when model_dir is read-only).
    pause: mode train: stop at pause.step and train on to the step
      pause.then returns (see Pause).

  Raises:
    TrainingDivergedError: the loss became NaN/Inf; the last good checkpoint
      is left in model_dir.
    EmptyEvaluationError: an evaluation read no batch (validation data
      smaller than its batch).
    run_lock.ModelDirLockedError: another training run holds model_dir.
    checkpoint_recovery.CheckpointError: the latest checkpoint is broken and
      (training) no intact one is left or (eval) the run does not train.
  """
  try:
    return _run(params, model_dir, mode, strategy, run_post_eval,
                enable_async_checkpointing, pretrain_steps, eval_summary_dir,
                pause)
  finally:
    # The finished run's trainer, datasets and traced functions are garbage
    # in reference cycles now.
    release_in_background()


def release_in_background() -> threading.Thread:
  """Collects the garbage of finished runs on a thread of its own, started
  now (run() calls it as it returns); join_releases waits for it.

  A finished run's training iterator ends only after tf.data's autotuning
  thread wakes, up to about a minute later (release.py). Collected on the
  caller's thread, it stopped the next step of that thread for that long: a
  demo's export (40 s of wall for 12 CPU-s, docs/demo.md) or a second run's
  checkpoint save (a test's 60 s with both cores idle, docs/testing.md).
  Example:

    model, _ = run(params, model_dir)   # its garbage goes on a thread
    seconds = join_releases()           # before timing what follows
  """
  return release.in_background(collect=True, name="release-training-run")


def join_releases(timeout: Optional[float] = None,
                  collecting_only: bool = False) -> float:
  """Waits for the threads release_in_background (and release.in_background)
  started, each up to `timeout` seconds (`collecting_only`: only those that
  collect, release.join); returns the seconds waited. Those that collect are
  also joined at exit."""
  return release.join(timeout, collecting_only=collecting_only)


def _run(params, model_dir, mode, strategy, run_post_eval,
         enable_async_checkpointing, pretrain_steps, eval_summary_dir, pause):
  """run()'s work, without the release of its garbage."""
  if pause is not None and mode != "train":
    raise ValueError(f"a Pause needs mode train, not {mode}")
  # What the records decide (e.g. num_classes 0), before params.yaml is
  # written.
  fill = getattr(params.task, "fill_from_data", None)
  if fill is not None:
    fill()
  config_check.check_values(params, mode)
  # The task config's own checks (e.g. the pretraining data's loaders,
  # kept for the run), before anything is built or written.
  params.task.validate(config_check.data_fields(mode))
  if strategy is None:  # logs the devices; refuses GPUs that are not there
    device_check.check(params.runtime)
  precision_check.check(params.runtime)  # e.g. bf16 on a CPU without it
  params, save_summary = _eval_summaries(params, model_dir, mode,
                                         eval_summary_dir)
  if params.runtime.mixed_precision_dtype:
    performance.set_mixed_precision_policy(
        params.runtime.mixed_precision_dtype)
  if mode == CONTINUOUS_TRAIN_AND_EVAL:
    # Model Garden's loop makes its own strategy; it fine-tunes on one host.
    with _model_dir_guard(params, model_dir, mode, chief=True), \
        trainer_lib.scope(), _without_flop_count():
      return None, continuous_finetune_lib.run_continuous_finetune(
          mode, params, model_dir, run_post_eval=run_post_eval,
          pretrain_steps=pretrain_steps)
  while True:
    run_strategy = strategy or distribute_utils.get_distribution_strategy(
        distribution_strategy=params.runtime.distribution_strategy,
        all_reduce_alg=params.runtime.all_reduce_alg,
        num_gpus=params.runtime.num_gpus,
        tpu_address=params.runtime.tpu,
        **params.runtime.model_parallelism())
    # As official/nlp/train.py: a preempted TPU job reconnects and resumes
    # from the last checkpoint. TF's watcher acts on Google's TPUs only;
    # elsewhere trainer.preemption_on_demand_checkpoint (a train action of
    # the runner) saves on preemption and the next run resumes.
    watcher = (tf.distribute.experimental.PreemptionWatcher()
               if isinstance(run_strategy, tf.distribute.TPUStrategy)
               else None)
    try:
      # The chief owns model_dir (other workers checkpoint to temporary dirs).
      with _model_dir_guard(params, model_dir, mode,
                            run_strategy.extended.should_checkpoint):
        with run_strategy.scope():
          task = task_factory.get_task(params.task, logging_dir=model_dir)
          _check_best_checkpoint_metric(params, task)
        params = _divergence_bound(params, task)
        with trainer_lib.scope(), _without_flop_count():
          return _Runner(
              distribution_strategy=run_strategy, task=task, mode=mode,
              params=params, model_dir=model_dir,
              run_post_eval=run_post_eval, save_summary=save_summary,
              enable_async_checkpointing=enable_async_checkpointing,
              pause=pause).run()
    except tf.errors.OpError:
      if strategy or not (watcher and watcher.preemption_message):
        raise
      logging.warning("TPU workers were preempted (%s); restarting from the "
                      "last checkpoint", watcher.preemption_message)
      watcher.block_until_worker_exit()


_flop_count = {"depth": 0, "lock": threading.Lock(), "function": None}


@contextlib.contextmanager
def _without_flop_count():
  """Model Garden's runner ends every run with train_utils.try_count_flops:
  the model traced again at batch 1 and frozen to constants, for one log
  line. It says 0 for the span-labeling models (their sequence length is
  None: "Incomplete shape") after 18 CPU-s at BERT-base size, 5 at MiniLM's,
  0.8 at the tests' (AVX2 EPYC, 2026-12-06), and nothing for the pretraining
  and NER models: skipped while a run runs (nested and concurrent runs
  included)."""
  with _flop_count["lock"]:
    if not _flop_count["depth"]:
      _flop_count["function"] = train_utils.try_count_flops
      train_utils.try_count_flops = lambda *args, **kwargs: None
    _flop_count["depth"] += 1
  try:
    yield
  finally:
    with _flop_count["lock"]:
      _flop_count["depth"] -= 1
      if not _flop_count["depth"]:
        train_utils.try_count_flops = _flop_count["function"]


class _Runner(tfm_train_lib.OrbitExperimentRunner):
  """What run_experiment runs, with best_checkpoint's exporter and a
  Pause."""

  def __init__(self, *args, pause: Optional[Pause] = None, **kwargs):
    self._pause = pause
    super().__init__(*args, **kwargs)

  def run(self):
    try:
      return self._run_or_pause()
    finally:
      # The run's iterators end on a thread of their own, not in the
      # collection of its garbage (which the exit waits for).
      release_iterators = getattr(self.trainer, "release_iterators", None)
      if release_iterators is not None:
        release_iterators()

  def _run_or_pause(self):
    if self._pause is None:
      return super().run()
    trainer = self.trainer
    with self.strategy.scope():
      decay = _variable_decay(trainer.optimizer,
                              self.params.trainer.train_steps)
      self.controller.train(steps=self._pause.step,
                            checkpoint_at_completion=False)
      summaries = getattr(self.controller, "summary_manager", None)
      if summaries is not None:
        summaries.flush()
      steps = int(self._pause.then(trainer))
      if steps < self._pause.step:
        raise ValueError(f"the pause at step {self._pause.step} asked to "
                         f"train to step {steps}")
      if decay is not None:
        decay.decay_steps.assign(steps)
      if hasattr(trainer, "set_train_steps"):
        trainer.set_train_steps(steps)
      self.controller.train(steps=steps)
    return trainer.model, {}

  def _build_best_checkpoint_exporter(self):
    return best_checkpoint.maybe_create(
        self.params, self.model_dir,
        training="train" in self._mode and
        self.strategy.extended.should_checkpoint)


def _variable_decay(optimizer, train_steps: int):
  """The optimizer's polynomial decay (under Model Garden's warm-up, of a
  HeadWarmupOptimizer or a LossScaleOptimizer's inner one) if it decays over
  train_steps, its decay_steps made a variable; else None."""
  inner = getattr(optimizer, "inner_optimizer", optimizer)
  schedule = getattr(inner, "learning_rate", None)
  schedule = getattr(schedule, "_after_warmup_lr_sched", schedule)
  if (not isinstance(schedule,
                     tf_keras.optimizers.schedules.PolynomialDecay) or
      isinstance(schedule.decay_steps, tf.Variable) or
      schedule.decay_steps != train_steps):
    return None
  with tf.init_scope():
    schedule.decay_steps = tf.Variable(float(train_steps), trainable=False,
                                       name="decay_steps")
  return schedule


def _read_only(model_dir: str) -> bool:
  """Whether model_dir is an existing local folder this process cannot
  write."""
  return ("://" not in model_dir and os.path.isdir(model_dir) and
          not os.access(model_dir, os.W_OK))


def _eval_summaries(params, model_dir, mode, eval_summary_dir):
  """(params, save_summary): evaluation summaries to eval_summary_dir, or
  none (with a warning) for an eval mode on a read-only local model_dir."""
  if eval_summary_dir:
    return params.replace(trainer={
        "validation_summary_subdir": os.path.abspath(eval_summary_dir)}), True
  if "train" not in mode and _read_only(model_dir):
    logging.warning("%s is read-only: evaluating without writing summaries "
                    "(pass --eval_summary_dir to write them elsewhere)",
                    model_dir)
    return params, False
  return params, True


def _check_best_checkpoint_metric(params, task) -> None:
  """Refuses a trainer.best_checkpoint_eval_metric the evaluation does not
  report (else a KeyError at the first evaluation). Checked for tasks that
  declare their evaluation's extra metrics (`eval_metric_names`)."""
  trainer = params.trainer
  name = trainer.best_checkpoint_eval_metric
  if (not (trainer.best_checkpoint_export_subdir and name) or "|" in name or
      not hasattr(task, "eval_metric_names")):
    return
  reported = ({m.name for m in task.build_metrics(training=False)} |
              {"validation_loss"} | set(task.eval_metric_names))
  if name not in reported:
    raise ValueError(
        f"trainer.best_checkpoint_eval_metric={name!r} is not reported by the "
        f"evaluation of this task, which reports {', '.join(sorted(reported))}"
        "; set it to one of these")


def _divergence_bound(params, task):
  """params with trainer.loss_upper_bound at DIVERGENCE_FACTOR x the task's
  untrained loss, if the task knows it and the bound is Model Garden's
  default (1e6, which a diverged pretraining run never reaches)."""
  initial = getattr(task, "initial_loss", lambda: None)()
  if (params.trainer.loss_upper_bound != _DEFAULT_LOSS_UPPER_BOUND or
      not initial or not math.isfinite(initial)):
    return params
  bound = DIVERGENCE_FACTOR * initial
  logging.info("trainer.loss_upper_bound: %.1f (%gx the loss of an untrained "
               "model, %.2f)", bound, DIVERGENCE_FACTOR, initial)
  return params.replace(trainer={"loss_upper_bound": bound})


@contextlib.contextmanager
def _model_dir_guard(params, model_dir, mode, chief):
  """Training modes: hold the lock, set the newest intact checkpoint to
  resume from, write params.yaml (the old one is put back if the run fails
  before it writes a checkpoint). Eval modes: refuse a broken or unlisted
  latest checkpoint."""
  if "train" not in mode:
    checkpoint_recovery.check_latest(model_dir)
    yield
    return
  created = "://" not in model_dir and not os.path.exists(model_dir)
  try:
    with (run_lock.hold(model_dir) if chief else contextlib.nullcontext()):
      with _restored_on_failure(params, model_dir, chief):
        yield
  finally:
    if created and os.path.isdir(model_dir) and not os.listdir(model_dir):
      os.rmdir(model_dir)  # the lock's folder, of a run that wrote nothing


@contextlib.contextmanager
def _restored_on_failure(params, model_dir, chief):
  """_model_dir_guard's part inside the lock: a run that fails before it
  writes a checkpoint leaves the model_dir as it found it (its params.yaml,
  or none, and no records its task prepared there)."""
  if chief:
    checkpoint_recovery.recover_latest(model_dir)
  path = os.path.join(model_dir, "params.yaml")
  old = (tf.io.gfile.GFile(path, "rb").read() if tf.io.gfile.exists(path)
         else None)
  names = set(tf.io.gfile.listdir(model_dir)) if tf.io.gfile.isdir(
      model_dir) else set()
  before = tf.train.latest_checkpoint(model_dir)
  init = getattr(params.task, "init_checkpoint", None)
  if not before and init and "://" not in init:
    checkpoints.resolve(init)  # missing or truncated: one line, now
  if before and chief:
    logging.warning(
        RESUME_MESSAGE, before,
        int(train_utils.read_global_step_from_checkpoint(before)))
  _write_params(params, path)
  try:
    yield
  except BaseException as e:
    if chief:
      checkpoint_recovery.remove_partial_saves(model_dir)
      best = params.trainer.best_checkpoint_export_subdir
      if best:
        checkpoint_recovery.remove_partial_saves(
            os.path.join(model_dir, best), train_utils.BEST_CHECKPOINT_NAME)
    if tf.train.latest_checkpoint(model_dir) != before:
      raise
    if old is not None:
      with atomic_io.writing(path) as tmp, tf.io.gfile.GFile(tmp, "wb") as f:
        f.write(old)
    elif chief:
      atomic_io.remove_file(path)
    if chief:  # e.g. SQuAD JSON converted into the model_dir
      for name in set(tf.io.gfile.listdir(model_dir)) - names:
        if name.endswith(".tf_record"):
          atomic_io.remove_file(os.path.join(model_dir, name))
    if before and isinstance(e, ValueError) and (
        "attempting to restore" in str(e)):
      raise ValueError(
          f"{before} does not fit the configured model "
          f"({config_check.one_line(e)}); resume with the model settings of "
          f"{path} (kept) or train in a new model_dir") from e
    raise


def _write_params(params, path: str) -> None:
  """Model Garden's serialize_config, written to a temporary name and
  renamed: a full disk or a kill leaves the previous params.yaml whole."""
  tf.io.gfile.makedirs(os.path.dirname(path))
  with atomic_io.writing(path) as tmp:
    hyperparams.save_params_dict_to_yaml(params, tmp)


def summary(model_dir: str, mode: str,
            eval_summary_dir: Optional[str] = None) -> str:
  """The line a finished run ends with: what it wrote where."""
  if mode == CONTINUOUS_TRAIN_AND_EVAL:
    metrics = sorted(tf.io.gfile.glob(f"{model_dir}/metrics-*.json"),
                     key=lambda p: int(p.rsplit("-", 1)[1][:-len(".json")]))
    return (f"fine-tuned and evaluated {len(metrics)} pretraining "
            f"checkpoint(s): metrics in {model_dir}/metrics-<step>.json "
            f"(last {metrics[-1] if metrics else 'none'}), TensorBoard "
            f"summaries in {model_dir}/eval")
  last = tf.train.latest_checkpoint(model_dir)
  step = last and int(train_utils.read_global_step_from_checkpoint(last))
  if "train" not in mode:
    where = (eval_summary_dir or
             ("none (read-only model_dir)" if _read_only(model_dir)
              else f"{model_dir}/validation"))
    return (f"evaluated {last or 'the initial model (no checkpoint)'} "
            f"(step {step or 0}): TensorBoard summaries in {where}")
  return (f"trained to step {step}: checkpoint {last}, TensorBoard summaries "
          f"in {model_dir}/train, config {model_dir}/params.yaml")


def _stop(signum, frame):
  """SIGTERM / SIGINT handler: raises Stopped where the run is; later
  signals are ignored, so that they do not interrupt the unwinding."""
  del frame
  for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, signal.SIG_IGN)
  raise Stopped(signum)


def main(_):
  # A SIGTERM (or Ctrl-C) unwinds like an error: the lock is released.
  for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, _stop)
  cpu_threads.fit_to_quota()  # before any op: pools sized to a CPU quota
  try:
    gin.parse_config_files_and_bindings(FLAGS.gin_file, FLAGS.gin_params)
    # A packaged config may be named, e.g. --config_file=models/base.yaml.
    FLAGS.config_file = [yaml_files.resolve(f) for f in FLAGS.config_file or ()]
    experiment_names.check(FLAGS.experiment)  # a LookupError listing none
    # A typo'd key: its dotted path, file and line, the nearest real keys.
    override_keys.check_all(experiment_names.get(FLAGS.experiment),
                            FLAGS.config_file, FLAGS.params_override)
    params = train_utils.parse_configuration(FLAGS)
    config_check.check_value_types(params)
    run(params, FLAGS.model_dir, FLAGS.mode,
        enable_async_checkpointing=FLAGS.enable_async_checkpointing,
        pretrain_steps=FLAGS.pretrain_steps,
        eval_summary_dir=FLAGS.eval_summary_dir)
  except Stopped as e:
    line = stopped_line(e, FLAGS.model_dir, FLAGS.mode)
    sys.stderr.write(f"spanbert-train: {line}\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(e.code)  # pylint: disable=protected-access
  except Exception as e:  # pylint: disable=broad-except
    if (isinstance(e, (TrainingDivergedError, EmptyEvaluationError)) or
        config_check.is_configuration_error(e)):
      message = config_check.one_line(e)
    elif config_check.is_disk_full(e):  # e.g. while saving a checkpoint
      message = _disk_full_line(e, FLAGS.model_dir)
    else:
      raise
    if FLAGS.verbosity >= 1:
      traceback.print_exc()
    sys.stderr.write(f"spanbert-train: error: {message}\n")
    sys.exit(1)
  if not _read_only(FLAGS.model_dir):
    train_utils.save_gin_config(FLAGS.mode, FLAGS.model_dir)
  print("spanbert-train: "
        f"{summary(FLAGS.model_dir, FLAGS.mode, FLAGS.eval_summary_dir)}")


def _disk_full_line(e: BaseException, model_dir: str) -> str:
  """The error line of a write that failed for lack of space."""
  last = tf.train.latest_checkpoint(model_dir)
  resume = (f"the newest checkpoint {last} is intact: free space and rerun "
            "to resume from it" if last else "free space and rerun")
  return (f"out of disk space writing to {model_dir} "
          f"({config_check.one_line(e)}); {resume}")


def stopped_line(e: Stopped, model_dir: str, mode: str) -> str:
  """The line a run stopped by a signal ends with: where, what to rerun."""
  last = tf.train.latest_checkpoint(model_dir)
  step = last and int(train_utils.read_global_step_from_checkpoint(last))
  evaluating = (f" during the evaluation at step {e.evaluating_step} (it "
                "wrote no metrics)" if e.evaluating_step is not None else "")
  if "train" not in mode:
    return (f"stopped by {e.signal_name}{evaluating}; rerun to evaluate "
            f"{last or 'the initial model'}")
  if not last:
    return (f"stopped by {e.signal_name}{evaluating} before the first "
            "checkpoint; rerun to start again")
  again = (", and with --mode=eval to evaluate it" if
           e.evaluating_step == step else "")
  return (f"stopped by {e.signal_name}{evaluating}; the newest checkpoint "
          f"{last} (step {step}) is intact: rerun to resume from it{again}")
