r"""SpanBERT training binary (Model Garden style).

  spanbert-train --experiment=spanbert/pretraining \
    --config_file=configs/models/base.yaml \
    --params_override='task.train_data.input_path=/data/train-*.tfrecord,...' \
    --mode=train --model_dir=/tmp/spanbert

Modes: train, eval, train_and_eval, continuous_eval. A killed run resumes from
the last checkpoint in --model_dir; if that checkpoint's files are broken, it
is moved into <model_dir>/broken_checkpoints/ and the run resumes from the
newest intact one. A NaN/Inf loss stops the run with an error and leaves the
last good checkpoint in place.

Training modes hold <model_dir>/train.lock while they run, so a second
training run on the same --model_dir refuses to start and names the first;
eval and continuous_eval take no lock.

A configuration error (a bad config value or override, inputs matching no
file, a locked or unusable model_dir) or a diverged run prints one line,
`spanbert-train: error: <message>`, and exits with status 1. Pass
--verbosity=1 to see the traceback as well.
"""

import contextlib
import signal
import sys
import traceback
from typing import Any, Mapping, Optional, Tuple

from absl import app
from absl import flags
import gin
import yaml

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import tensorflow as tf
import tf_keras

from official.common import distribute_utils
from official.common import flags as tfm_flags
from official.core import config_definitions as cfg
from official.core import task_factory
from official.core import train_lib
from official.core import train_utils
from official.modeling import performance
from official_spanbert.configs import experiments  # noqa: F401  (registers)
from official_spanbert.configs import classification_experiments  # noqa: F401
from official_spanbert.configs import squad_experiments  # noqa: F401
from official_spanbert import checkpoint_recovery
from official_spanbert import config_check
from official_spanbert import run_lock
from official_spanbert import trainer as trainer_lib

FLAGS = flags.FLAGS


class TrainingDivergedError(RuntimeError):
  """The loss became NaN/Inf (or exceeded trainer.loss_upper_bound)."""


def run(params: cfg.ExperimentConfig, model_dir: str, mode: str = "train",
        strategy: Optional[tf.distribute.Strategy] = None,
        run_post_eval: bool = False
        ) -> Tuple[tf_keras.Model, Mapping[str, Any]]:
  """Runs an experiment; returns the model and the last eval logs.

  Args:
    params: the experiment config.
    model_dir: checkpoints, summaries and params.yaml go here.
    mode: train, eval, train_and_eval or continuous_eval.
    strategy: distribution strategy (default: from params.runtime).
    run_post_eval: evaluate once after training and return those logs.

  Raises:
    TrainingDivergedError: the loss became NaN/Inf; the last good checkpoint
      is left in model_dir.
    run_lock.ModelDirLockedError: another training run holds model_dir.
    checkpoint_recovery.CheckpointError: the latest checkpoint is broken and
      (training) no intact one is left or (eval) the run does not train.
  """
  if params.runtime.mixed_precision_dtype:
    performance.set_mixed_precision_policy(
        params.runtime.mixed_precision_dtype)
  if strategy is None:
    strategy = distribute_utils.get_distribution_strategy(
        distribution_strategy=params.runtime.distribution_strategy,
        all_reduce_alg=params.runtime.all_reduce_alg,
        num_gpus=params.runtime.num_gpus,
        tpu_address=params.runtime.tpu)
  # The chief owns model_dir (other workers checkpoint to temporary dirs).
  chief = strategy.extended.should_checkpoint
  train = "train" in mode
  with (run_lock.hold(model_dir) if train and chief
        else contextlib.nullcontext()):
    if train:
      train_utils.serialize_config(params, model_dir)
      if chief:
        checkpoint_recovery.recover_latest(model_dir)
    else:
      checkpoint_recovery.check_latest(model_dir)
    return _run_experiment(params, model_dir, mode, strategy, run_post_eval)


def _run_experiment(params, model_dir, mode, strategy, run_post_eval):
  """run()'s Model Garden part, raising TrainingDivergedError."""
  with strategy.scope():
    task = task_factory.get_task(params.task, logging_dir=model_dir)
    trainer = train_utils.create_trainer(
        params, task, train="train" in mode,
        evaluate=("eval" in mode) or run_post_eval,
        trainer_cls=trainer_lib.SpanBertTrainer,
        checkpoint_exporter=train_utils.maybe_create_best_ckpt_exporter(
            params, model_dir))
  try:
    return train_lib.run_experiment(
        distribution_strategy=strategy, task=task, mode=mode, params=params,
        model_dir=model_dir, trainer=trainer, run_post_eval=run_post_eval)
  except RuntimeError as e:
    if "loss value" not in str(e):
      raise
    last = tf.train.latest_checkpoint(model_dir)
    raise TrainingDivergedError(
        f"training diverged at step {int(trainer.global_step.numpy())}: {e} "
        f"Last good checkpoint: {last or 'none (no checkpoint was written)'}; "
        "lower the learning rate or check the data, then rerun to resume "
        "from it.") from None


# What `spanbert-train` reports in one line when raised while the run is set
# up (see _during_setup): errors in the configuration, in the inputs it names
# or with the model_dir, also from gin-wrapped builders; and a diverged run.
CONFIGURATION_ERRORS = (
    ValueError, TypeError, KeyError, OSError, yaml.YAMLError,
    tf.errors.NotFoundError, tf.errors.InvalidArgumentError,
    TrainingDivergedError, run_lock.ModelDirLockedError)


def _during_setup(e: BaseException) -> bool:
  """Whether `e` was raised outside Model Garden's run_experiment, i.e. not by
  a training or evaluation step, where a TypeError is a bug that keeps its
  traceback. run() raises TrainingDivergedError itself, outside it."""
  tb = e.__traceback__
  while tb is not None:
    if tb.tb_frame.f_code is train_lib.run_experiment.__code__:
      return False
    tb = tb.tb_next
  return True


def _original(e: BaseException) -> BaseException:
  """The exception that gin re-raised as `e` to add "In call to configurable
  ..." to its message (gin's proxy has the original as its context)."""
  while (e.__context__ is not None and
         getattr(type(e).__str__, "__module__", None) == gin.utils.__name__):
    e = e.__context__
  return e


def _error_message(e: BaseException) -> str:
  """`e`'s message on one line, without gin's call-site notes."""
  e = _original(e)
  if isinstance(e, tf.errors.OpError):
    message = e.message
  elif isinstance(e, KeyError) and e.args:
    message = str(e.args[0])
  else:
    message = str(e)
  return " ".join(message.split()) or type(e).__name__


def main(_):
  # A SIGTERM unwinds like an error, so the model_dir lock is released.
  signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
  try:
    gin.parse_config_files_and_bindings(FLAGS.gin_file, FLAGS.gin_params)
    params = train_utils.parse_configuration(FLAGS)
    config_check.check_value_types(params)
    run(params, FLAGS.model_dir, FLAGS.mode)
  except CONFIGURATION_ERRORS as e:
    if not _during_setup(e):
      raise
    if FLAGS.verbosity >= 1:
      traceback.print_exc()
    sys.stderr.write(f"spanbert-train: error: {_error_message(e)}\n")
    sys.exit(1)


def define_flags():
  tfm_flags.define_flags()
  flags.mark_flags_as_required(["experiment", "mode", "model_dir"])


def console_main():
  define_flags()
  app.run(main)


if __name__ == "__main__":
  console_main()
