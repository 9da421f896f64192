r"""SpanBERT training binary (Model Garden style).

  spanbert-train --experiment=spanbert/pretraining \
    --config_file=configs/models/base.yaml \
    --params_override='task.train_data.input_path=/data/train-*.tfrecord,...' \
    --mode=train --model_dir=/tmp/spanbert

Modes: train, eval, train_and_eval, continuous_eval. A killed run resumes from
the last checkpoint in --model_dir. A NaN/Inf loss stops the run with an error
and leaves the last good checkpoint in place.
"""

import sys
from typing import Any, Mapping, Optional, Tuple

from absl import app
from absl import flags
from absl import logging
import gin

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
  if "train" in mode:
    train_utils.serialize_config(params, model_dir)
  with strategy.scope():
    task = task_factory.get_task(params.task, logging_dir=model_dir)
    trainer = train_utils.create_trainer(
        params, task, train="train" in mode,
        evaluate=("eval" in mode) or run_post_eval, trainer_cls=trainer_lib.SpanBertTrainer,
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


def main(_):
  gin.parse_config_files_and_bindings(FLAGS.gin_file, FLAGS.gin_params)
  params = train_utils.parse_configuration(FLAGS)
  try:
    run(params, FLAGS.model_dir, FLAGS.mode)
  except TrainingDivergedError as e:
    logging.error("%s", e)
    sys.stderr.write(f"spanbert-train: error: {e}\n")
    sys.exit(1)


def define_flags():
  tfm_flags.define_flags()
  flags.mark_flags_as_required(["experiment", "mode", "model_dir"])


def console_main():
  define_flags()
  app.run(main)


if __name__ == "__main__":
  console_main()
