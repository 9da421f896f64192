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

"""Subprocess side of tests/test_distributed_training.py.

Logical devices, multi-worker clusters and the global mixed-precision policy
are process-wide (and logical devices must be configured before TensorFlow
initialises its devices), so each distributed run happens in a fresh

  python tests/multiworker_worker.py MODE SPEC.json

SPEC (written by the test) names the inputs -- the global batches and the
initial weights as .npz files, the records and the vocab -- and the folder
`out` for the results (.npz weights + .json losses). Modes:

  mirrored  MirroredStrategy over two logical CPUs of this process.
  worker    one worker of a two-worker MultiWorkerMirroredStrategy cluster
            (TF_CONFIG set by the test).
  mixed     official_spanbert.tools.train.run under runtime.mixed_precision_dtype
            (`train_steps`, peak `learning_rate`; with `accelerator_path`
            the heads take the GPU/TPU path, "layers").
  loader    one worker of a `workers`-worker MultiWorkerMirroredStrategy
            cluster reading `steps` batches of the pretraining loader through
            distribute_datasets_from_function: its input pipeline id, the
            original blocks and the masked positions of its replica.

The test imports this module too, for the configs and the single-device
reference (`train_runs` under OneDeviceStrategy).
"""

import json
import os
import sys
import time

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import numpy as np

_START = time.time()
SEQ_LENGTH = 64
MAX_PREDICTIONS = 10  # = ceil(0.15 * 62), the masking budget of a full block
GLOBAL_BATCH = 8
TINY_ENCODER = dict(
    vocab_size=28996, hidden_size=32, num_layers=2, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=SEQ_LENGTH,
    type_vocab_size=2, hidden_activation="gelu", dropout_rate=0.0,
    attention_dropout_rate=0.0, initializer_range=0.02)


def _log(message):
  sys.stderr.write(f"[multiworker_worker {time.time() - _START:.1f}s] "
                   f"{message}\n")
  sys.stderr.flush()


def experiment(records: str, vocab: str,
               global_batch_size: int = GLOBAL_BATCH):
  """spanbert/pretraining with a tiny dropout-free encoder on `records`.

  The optimizer is the experiment's (AdamW, weight decay 0.01 without
  LayerNorm/bias, clip-norm 1.0) with a 3-step schedule: lr 1e-3 peak after one
  warmup step, linear decay to 0 at step 3.
  """
  from official.core import exp_factory
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  params = exp_factory.get_exp_config("spanbert/pretraining")
  data = dict(input_path=records, vocab_file=vocab, seq_length=SEQ_LENGTH,
              max_predictions_per_seq=MAX_PREDICTIONS,
              global_batch_size=global_batch_size, seed=1)
  params.override({
      "task": {
          "model": {"encoder": {"type": "bert_v2", "bert_v2": TINY_ENCODER},
                    "sbo_position_embedding_size": 16},
          "train_data": dict(data),
          "validation_data": dict(data, seed=2, is_training=False),
      },
      "runtime": {"distribution_strategy": "one_device", "num_gpus": 0},
      "trainer": {
          "train_steps": 3, "steps_per_loop": 1, "summary_interval": 1,
          "checkpoint_interval": 3, "validation_interval": 3,
          "validation_steps": 1,
          "optimizer_config": {
              "learning_rate": {"polynomial": {"initial_learning_rate": 1e-3,
                                               "decay_steps": 3}},
              "warmup": {"polynomial": {"warmup_steps": 1}}}},
  }, is_strict=True)
  return params


def build_task_and_model(params):
  """The task and its model with all variables created (under a scope)."""
  from official.core import task_factory
  from official_spanbert.modeling import span_bert_pretrainer
  task = task_factory.get_task(params.task)
  model = task.build_model()
  model(span_bert_pretrainer.dummy_inputs(1, SEQ_LENGTH, MAX_PREDICTIONS))
  return task, model


def make_optimizer(task, params, kind: str):
  """`sgd1`: plain SGD with lr 1, so w_before - w_after is exactly the
  gradient the optimizer applied (all-reduced over replicas);
  `experiment`: the experiment's own optimizer (task.create_optimizer)."""
  import tf_keras
  if kind == "sgd1":
    return tf_keras.optimizers.SGD(learning_rate=1.0)
  return task.create_optimizer(params.trainer.optimizer_config,
                               params.runtime)


def train_runs(strategy, params, batches, init_weights, runs):
  """Trains the model from `init_weights` with SpanBertPretrainTask.train_step.

  For each (optimizer kind, steps) in `runs` the weights are reset to
  init_weights, a fresh optimizer is made, and global batch i is fed at step
  i: replica r of R gets rows [r*B/R, (r+1)*B/R) of the B rows. Steps run
  eagerly (tracing a step costs far more than running this tiny model; the
  ops and the cross-replica reductions are the same in a tf.function).

  Returns:
    {kind: dict(losses=[steps] (the step loss as the trainer logs it: the mean
    over replicas of train_step's loss), per_replica=[steps][R],
    weights=[arrays in model.weights order], names=[variable names])}
  """
  import tensorflow as tf
  with strategy.scope():
    task, model = build_task_and_model(params)
  _log(f"model built under {type(strategy).__name__}")
  replicas = strategy.num_replicas_in_sync
  results = {}
  for kind, steps in runs.items():
    model.set_weights(init_weights)
    with strategy.scope():
      opt = make_optimizer(task, params, kind)
      metrics = task.build_metrics(training=True)
    losses, per_replica = [], []
    for batch in batches[:steps]:
      size = len(next(iter(batch.values())))
      assert size % replicas == 0, (size, replicas)
      part = size // replicas

      def value_fn(ctx, batch=batch, part=part):
        r = ctx.replica_id_in_sync_group
        return {k: tf.constant(v[r * part:(r + 1) * part])
                for k, v in batch.items()}

      inputs = strategy.experimental_distribute_values_from_function(value_fn)
      start = time.time()
      out = strategy.run(
          lambda x: task.train_step(x, model, opt, metrics)[task.loss],
          args=(inputs,))
      losses.append(float(strategy.reduce(tf.distribute.ReduceOp.MEAN, out,
                                          axis=None)))
      per_replica.append(
          [float(x) for x in strategy.experimental_local_results(out)])
      _log(f"{kind} step {len(losses)}: {time.time() - start:.1f}s")
    results[kind] = dict(losses=losses, per_replica=per_replica,
                         weights=[w.numpy() for w in model.weights],
                         names=[w.name for w in model.weights])
  return results


def save_batches(batches, path):
  arrays = {"steps": np.array(len(batches))}
  for i, b in enumerate(batches):
    arrays.update({f"{i}/{k}": v for k, v in b.items()})
  np.savez(path, **arrays)


def load_batches(path):
  with np.load(path) as f:
    return [{k.split("/", 1)[1]: f[k] for k in f.files
             if k.startswith(f"{i}/")} for i in range(int(f["steps"]))]


def save_weights(weights, path):
  np.savez(path, **{f"w{i}": w for i, w in enumerate(weights)})


def load_weights(path):
  with np.load(path) as f:
    return [f[f"w{i}"] for i in range(len(f.files))]


def write_results(results, out_dir, prefix):
  for kind, r in results.items():
    save_weights(r["weights"], os.path.join(out_dir, f"{prefix}_{kind}.npz"))
    with open(os.path.join(out_dir, f"{prefix}_{kind}.json"), "w") as f:
      json.dump({k: v for k, v in r.items() if k != "weights"}, f)


def read_results(out_dir, prefix, kinds):
  results = {}
  for kind in kinds:
    with open(os.path.join(out_dir, f"{prefix}_{kind}.json")) as f:
      results[kind] = json.load(f)
    results[kind]["weights"] = load_weights(
        os.path.join(out_dir, f"{prefix}_{kind}.npz"))
  return results


def _train_spec(spec, strategy, prefix):
  params = experiment(spec["records"], spec["vocab"])
  results = train_runs(strategy, params, load_batches(spec["batches"]),
                       load_weights(spec["init"]), spec["runs"])
  write_results(results, spec["out"], prefix)


def mode_mirrored(spec):
  """MirroredStrategy over two logical CPUs of this process."""
  import tensorflow as tf
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  strategy = tf.distribute.MirroredStrategy(
      ["/cpu:0", "/cpu:1"],
      cross_device_ops=tf.distribute.ReductionToOneDevice("/cpu:0"))
  assert len(tf.config.list_logical_devices("CPU")) == 2
  assert strategy.num_replicas_in_sync == 2
  _train_spec(spec, strategy, "mirrored")


def mode_worker(spec):
  """One worker of a MultiWorkerMirroredStrategy cluster (TF_CONFIG)."""
  import tensorflow as tf
  options = tf.distribute.experimental.CommunicationOptions(
      implementation=tf.distribute.experimental.CommunicationImplementation
      .RING, timeout_seconds=spec.get("collective_timeout_s", 120))
  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      communication_options=options)
  assert strategy.num_replicas_in_sync == 2, strategy.num_replicas_in_sync
  _log("MultiWorkerMirroredStrategy ready")
  index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
  _train_spec(spec, strategy, f"worker{index}")


def mode_mixed(spec):
  """official_spanbert.tools.train.run under a mixed-precision policy.

  Spies on train_utils.create_trainer (to see the optimizer the run used) and
  on SpanBertTrainer.train_loop_end (the logs of every loop).
  """
  import tensorflow as tf
  import tf_keras
  from official.core import train_utils
  from official_spanbert.training import train_lib as train_bin
  from official_spanbert.training import trainer as trainer_lib
  from official_spanbert.modeling import span_bert_pretrainer

  from official_spanbert.modeling import head_projection
  params = experiment(spec["records"], spec["vocab"],
                      spec.get("global_batch_size", GLOBAL_BATCH))
  steps = spec.get("train_steps", 3)
  params.override({
      "runtime": {"mixed_precision_dtype": spec["dtype"]},
      "trainer": {"train_steps": steps, "checkpoint_interval": steps,
                  "validation_interval": steps, "optimizer_config": {
                      "learning_rate": {"polynomial": {
                          "decay_steps": steps,
                          "initial_learning_rate": spec.get(
                              "learning_rate", 1e-3)}}}}})
  seen, logs, projections = {}, [], set()
  if spec.get("accelerator_path"):
    # What a GPU/TPU run resolves "auto" to: the heads called as layers.
    head_projection.accelerator_visible = lambda: True
    resolve = head_projection.resolve

    def spy_resolve(*args, **kwargs):
      projections.add(resolve(*args, **kwargs))
      return resolve(*args, **kwargs)

    head_projection.resolve = spy_resolve
  create_trainer = train_utils.create_trainer
  loop_end = trainer_lib.SpanBertTrainer.train_loop_end

  def spy_create_trainer(*args, **kwargs):
    _log("creating the trainer")
    seen["trainer"] = create_trainer(*args, **kwargs)
    _log("trainer created")
    return seen["trainer"]

  def spy_loop_end(self):
    out = loop_end(self)
    _log(f"train loop ended at step {int(self.global_step.numpy())}")
    logs.append({k: float(np.asarray(v)) for k, v in out.items()
                 if np.size(v) == 1})
    return out

  train_utils.create_trainer = spy_create_trainer
  trainer_lib.SpanBertTrainer.train_loop_end = spy_loop_end
  _log(f"train.run under mixed_{spec['dtype']}")
  model, _ = train_bin.run(params, spec["model_dir"], "train")
  _log("train.run returned")
  trainer = seen["trainer"]
  opt = trainer.optimizer
  is_lso = isinstance(opt, tf_keras.mixed_precision.LossScaleOptimizer)
  outputs = model(span_bert_pretrainer.dummy_inputs(
      1, SEQ_LENGTH, MAX_PREDICTIONS), training=False)
  result = dict(
      logs=logs,
      policy=tf_keras.mixed_precision.global_policy().name,
      optimizer=type(opt).__name__,
      inner_optimizer=(type(opt.inner_optimizer).__name__ if is_lso
                       else None),
      is_loss_scale_optimizer=is_lso,
      loss_scale=float(opt.loss_scale) if is_lso else None,
      global_step=int(trainer.global_step.numpy()),
      variable_dtypes=sorted({w.dtype.name for w in model.weights}),
      weights_finite=bool(all(np.all(np.isfinite(w.numpy()))
                              for w in model.weights)),
      mlm_logits_dtype=outputs["mlm_logits"].dtype.name,
      sbo_logits_dtype=outputs["sbo_logits"].dtype.name,
      checkpoint=tf.train.latest_checkpoint(spec["model_dir"]),
      projections=sorted(projections))
  with open(os.path.join(spec["out"], "mixed.json"), "w") as f:
    json.dump(result, f)


def mode_loader(spec):
  """The loader's batches on one worker of a MultiWorkerMirroredStrategy."""
  import tensorflow as tf
  from official_spanbert.data.pretraining import pretrain_dataloader
  strategy = tf.distribute.MultiWorkerMirroredStrategy()
  assert strategy.num_replicas_in_sync == spec["workers"]
  _log("MultiWorkerMirroredStrategy ready")
  loader = pretrain_dataloader.SpanBertPretrainDataLoader(
      pretrain_dataloader.SpanBertPretrainDataConfig(
          input_path=spec["records"], vocab_file=spec["vocab"],
          seq_length=SEQ_LENGTH, max_predictions_per_seq=MAX_PREDICTIONS,
          global_batch_size=spec["global_batch_size"], seed=1,
          use_xla_masking=False))  # the same masks without an XLA compile
  pipelines = []

  def dataset_fn(ctx):
    pipelines.append(ctx.input_pipeline_id)
    return loader.load(ctx, diagnostics=True)

  batches = iter(strategy.distribute_datasets_from_function(dataset_fn))
  out = dict(blocks=[], positions=[])
  for _ in range(spec["steps"]):
    batch = strategy.experimental_local_results(next(batches))[0]
    out["blocks"].append(batch["original_word_ids"].numpy().tolist())
    out["positions"].append(batch["masked_lm_positions"].numpy().tolist())
  out["pipelines"] = pipelines
  index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
  with open(os.path.join(spec["out"], f"loader{index}.json"), "w") as f:
    json.dump(out, f)
  # Leave together, at once: a worker still tearing TF down when worker 0
  # (the coordination service) exits fails its heartbeat and aborts.
  strategy.reduce(tf.distribute.ReduceOp.SUM,
                  strategy.run(lambda: tf.constant(1.0)), axis=None)
  _log("loader done")
  sys.stderr.flush()
  os._exit(0)  # pylint: disable=protected-access


def main(argv):
  mode, spec_path = argv[1], argv[2]
  with open(spec_path) as f:
    spec = json.load(f)
  {"mirrored": mode_mirrored, "worker": mode_worker,
   "mixed": mode_mixed, "loader": mode_loader}[mode](spec)
  _log(f"{mode} done")


if __name__ == "__main__":
  main(sys.argv)
