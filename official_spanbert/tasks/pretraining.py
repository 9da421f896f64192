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

"""The SpanBERT pretraining task: MLM + span boundary objective (+ NSP)."""

import dataclasses
import json
import math
from typing import Dict, List, Sequence, Tuple


import tensorflow as tf
import tf_keras

from official.core import base_task
from official.core import config_definitions as cfg
from official.core import task_factory
from official.modeling import performance
from official.nlp.data import data_loader_factory
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.pretraining import dummy_inputs
from official_spanbert.data.pretraining import pretrain_dataloader
from official_spanbert.data.pretraining.records import record_format
from official_spanbert.modeling import builder
from official_spanbert.modeling import checkpoints
from official_spanbert.modeling import head_warmup

GRADIENT_NORMALIZATIONS = ("mean", "reference")


@dataclasses.dataclass
class SpanBertPretrainTaskConfig(cfg.TaskConfig):
  """The pretraining task: loss = MLM + sbo_weight * SBO (+ NSP).

  Attributes:
    model: the pretrainer.
    sbo_weight: weight of the SBO loss.
    gradient_normalization: what the optimizer (clip-norm, Adam's epsilon)
      sees. "mean": the gradient of the mean loss over the global batch.
      "reference": that gradient divided by the masked tokens of one
      reference GPU batch, as the fairseq reference does (its criterion
      returns the mean loss with sample_size = masked tokens, and the trainer
      divides the gradients by the sample size again): the gradient is
      scaled by (global batch / reference_sequences_per_gpu) / (masked
      tokens of the global batch), ~1/616 at 8 blocks of 512. Losses and
      metrics are reported unscaled; gradient_norm is the norm the clip sees.
    reference_sequences_per_gpu: sequences per GPU batch of the reference run
      (256 over 32 GPUs = 8).
    head_warmup_steps: N > 0 trains only the heads (MLM transform and bias,
      SBO head, NSP head) for steps 0..N-1, then everything: the encoder,
      and the word embeddings the MLM output is tied to, stay bit-identical
      and their Adam moments zero until step N (modeling/head_warmup.py).
      For an init_checkpoint without the heads (a converted sentence
      encoder): docs/pretraining.md, "Continued pretraining from a headless
      checkpoint". 0: one optimizer for all variables, as before.
    encoder_warmup_steps: the encoder's own linear learning-rate warm-up
      from step head_warmup_steps: its rate is the schedule's times
      min(1, (step - N + 1) / encoder_warmup_steps) (0: no extra warm-up).
      The heads follow trainer.optimizer_config's schedule from step 0.
    freeze_word_embeddings: the encoder's word embedding table, and with it
      the MLM and SBO output projections tied to it, is not trained: no
      gradient, clip share or Adam update for its vocab x hidden values
      (the output biases still learn). For short continued pretraining of a
      converted encoder: in the demo (all-MiniLM-L6-v2, 30,522 x 384, half
      its weights) a step cost 6.7% less CPU and learned as much
      (docs/demo.md). False: every variable trains, as before.
  """
  model: spanbert_configs.SpanBertPretrainerConfig = dataclasses.field(
      default_factory=spanbert_configs.SpanBertPretrainerConfig)
  sbo_weight: float = 1.0
  gradient_normalization: str = "mean"
  reference_sequences_per_gpu: int = 8
  head_warmup_steps: int = 0
  encoder_warmup_steps: int = 0
  freeze_word_embeddings: bool = False
  train_data: pretrain_dataloader.SpanBertPretrainDataConfig = (
      dataclasses.field(
          default_factory=pretrain_dataloader.SpanBertPretrainDataConfig))
  validation_data: pretrain_dataloader.SpanBertPretrainDataConfig = (
      dataclasses.field(default_factory=lambda: pretrain_dataloader.
                        SpanBertPretrainDataConfig(is_training=False)))

  def validate(self, data_fields: Sequence[str] = ()) -> None:
    """Raises a one-line error for a config that cannot work, before
    anything is built or written: Model Garden's restrictions, the loader of
    each data config in `data_fields` (the data the run reads: masking
    values, the vocab, the records against their stats), then check_config.
    The loaders are kept for build_inputs: a run builds each one once."""
    super().validate()
    _VALIDATED_LOADERS.clear()
    for field in data_fields:
      data = getattr(self, field)
      if not dummy_inputs.is_dummy(data):
        data = loader_config(self, data, field)
        _VALIDATED_LOADERS[_key(data)] = (
            data_loader_factory.get_data_loader(data))
    check_config(self)


# The loaders SpanBertPretrainTaskConfig.validate() built, by their data
# config's value (the run's params are copies): SpanBertPretrainTask.
# build_inputs takes each once; the next validate() drops those left (e.g.
# by a run that failed before reading).
_VALIDATED_LOADERS = {}


def _key(data) -> str:
  """A data config's value, as _VALIDATED_LOADERS's key."""
  return json.dumps(data.as_dict(), sort_keys=True, default=str)


def loader_config(params: SpanBertPretrainTaskConfig,
                  data: pretrain_dataloader.SpanBertPretrainDataConfig,
                  field: str
                  ) -> pretrain_dataloader.SpanBertPretrainDataConfig:
  """`data` with the model's SBO targets per span, task.model.
  max_sbo_targets, its one setting. A params.yaml written before sets
  max_sbo_targets in the data configs too: refused if it differs (with SBO
  and an input_path), else accepted."""
  targets = params.model.sbo_targets()
  if (data.max_sbo_targets not in (None, targets) and data.input_path and
      params.model.use_sbo):
    raise ValueError(
        f"task.{field}.max_sbo_targets={data.max_sbo_targets} differs from "
        f"task.model.max_sbo_targets={targets}, which is the one setting of "
        f"SBO targets per span now; remove task.{field}.max_sbo_targets (an "
        "older params.yaml's) or set it to the model's")
  return data.replace(max_sbo_targets=targets)


# do_not_convert: TF ops only; autograph has nothing to convert.
@tf.autograph.experimental.do_not_convert
def weighted_cross_entropy(labels, logits, weights):
  """Mean sparse cross-entropy over the weighted positions (float32).

  Under a distribution strategy the mean is over the whole global batch: each
  replica divides its weighted sum by the replicas' mean weight total, so the
  replicas' values average to the global mean and their gradients, scaled by
  1/num_replicas in train_step and summed, are the global mean's gradient --
  whatever the split of masked positions between replicas.
  """
  losses = tf_keras.losses.sparse_categorical_crossentropy(
      labels, tf.cast(logits, tf.float32), from_logits=True)
  weights = tf.cast(weights, tf.float32)
  denominator = tf.reduce_sum(weights)
  ctx = tf.distribute.get_replica_context()
  if ctx is not None and ctx.num_replicas_in_sync > 1:
    denominator = ctx.all_reduce(tf.distribute.ReduceOp.MEAN, denominator)
  return tf.math.divide_no_nan(tf.reduce_sum(losses * weights), denominator)


@tf.autograph.experimental.do_not_convert
def summed_rows(grad):
  """`grad` with each row once: an IndexedSlices' repeated rows are summed.

  A gather's gradient lists a row once per lookup, and tf.linalg.global_norm
  reads IndexedSlices.values: the SBO head's relative-position embeddings
  (in the tests' batch of 8, 80 lookups of 7 rows) count each row once per
  lookup, so the norm is not the dense gradient's. fairseq clips the dense
  gradient. Tensors are returned as they are.

  >>> g = tf.IndexedSlices(tf.ones([2, 3]), tf.constant([0, 0]), [4, 3])
  >>> float(tf.linalg.global_norm([summed_rows(g)]))  # |(2, 2, 2)|
  3.46...
  """
  if not isinstance(grad, tf.IndexedSlices):
    return grad
  rows, position = tf.unique(grad.indices)
  return tf.IndexedSlices(
      tf.math.unsorted_segment_sum(grad.values, position, tf.shape(rows)[0]),
      rows, grad.dense_shape)


def records_vocab_sizes(input_path) -> Dict[str, int]:
  """{records prefix: vocab size} from the stats of the records that
  `input_path` (globs, comma-separated) matches; prefixes without a stats
  file or a vocab_size in it are left out."""
  sizes = {}
  patterns = input_path.split(",") if isinstance(input_path, str) else ()
  for pattern in filter(None, (p.strip() for p in patterns)):
    for path in tf.io.gfile.glob(pattern):
      prefix = record_format.shard_prefix(path)
      if prefix and prefix not in sizes:
        sizes[prefix] = (record_format.read_stats(prefix) or {}).get(
            "vocab_size", 0)
  return {p: n for p, n in sizes.items() if n}


def check_config(params) -> None:
  """Raises ValueError for a task config that cannot work (see
  SpanBertPretrainTask); spanbert-train calls it before anything is built
  or written (SpanBertPretrainTaskConfig.validate), the task again when it
  is built."""
  encoder = params.model.encoder
  max_positions = getattr(encoder.get(), "max_position_embeddings", None)
  vocab_size = getattr(encoder.get(), "vocab_size", None)
  for field in ("train_data", "validation_data"):
    data = getattr(params, field)
    for prefix, size in records_vocab_sizes(data.input_path).items():
      if vocab_size and size > vocab_size:
        # An id beyond the table crashes the first step (on a GPU the
        # gather silently returns zeros).
        raise ValueError(
            f"records {prefix}-*.tfrecord were written with a vocab of "
            f"{size} tokens, more than task.model.encoder.{encoder.type}."
            f"vocab_size={vocab_size}; set vocab_size to {size} or rewrite "
            "the records with the encoder's vocab")
    if data.input_path and max_positions and (
        data.seq_length > max_positions):
      raise ValueError(
          f"task.{field}.seq_length={data.seq_length} is larger than the "
          f"encoder's max_position_embeddings={max_positions}; lower "
          f"task.{field}.seq_length or raise task.model.encoder."
          f"{encoder.type}.max_position_embeddings")
    loader_config(params, data, field)  # an older params.yaml's SBO targets
  if params.gradient_normalization not in (
      GRADIENT_NORMALIZATIONS):
    raise ValueError(
        "task.gradient_normalization must be one of "
        f"{GRADIENT_NORMALIZATIONS}, not "
        f"{params.gradient_normalization!r}")
  if params.reference_sequences_per_gpu < 1:
    raise ValueError("task.reference_sequences_per_gpu must be >= 1, got "
                     f"{params.reference_sequences_per_gpu}")
  for field in ("head_warmup_steps", "encoder_warmup_steps"):
    if getattr(params, field) < 0:
      raise ValueError(f"task.{field} must be >= 0, got "
                       f"{getattr(params, field)}")


def trained_variables(model: tf_keras.Model,
                      task_config: SpanBertPretrainTaskConfig) -> List:
  """The variables a train step updates: the model's trainable ones, less
  the word embedding table under task.freeze_word_embeddings."""
  tvars = model.trainable_variables
  if not task_config.freeze_word_embeddings:
    return tvars
  table = model.encoder_network.get_embedding_table()
  return [v for v in tvars if v is not table]


@task_factory.register_task_cls(SpanBertPretrainTaskConfig)
class SpanBertPretrainTask(base_task.Task):
  """Pretraining with span masking and the span boundary objective.

  Loss = mean MLM cross-entropy over masked positions + sbo_weight * mean SBO
  cross-entropy over SBO targets (+ NSP cross-entropy for the BERT baseline).
  The train step follows base_task.Task: the loss is divided by the number of
  replicas and, under mixed_float16, scaled by the LossScaleOptimizer and the
  gradients unscaled (Model Garden's MaskedLMTask.train_step skips this).

  With `gradient_normalization: reference` the loss the optimizer sees is
  scaled as in the fairseq reference (see SpanBertPretrainTaskConfig).

  With `head_warmup_steps` N (and `encoder_warmup_steps`) the optimizer is a
  HeadWarmupOptimizer (modeling/head_warmup.py) of the model build_model()
  built last: heads only until step N (the encoder's gradients are zeroed
  before the norm and the clip), then the encoder too with its own linear
  learning-rate warm-up, logged as `encoder_learning_rate`.

  Raises (at construction): ValueError when a data config's seq_length exceeds
  the encoder's max_position_embeddings, its records were written with a
  vocab larger than the encoder's vocab_size, an older params.yaml's data
  max_sbo_targets differs from the model's max_sbo_targets, or
  gradient_normalization is unknown.
  """

  # Evaluation reports the build_metrics names only (see train.py).
  eval_metric_names: Tuple[str, ...] = ()

  def __init__(self, params, logging_dir=None, name=None):
    super().__init__(params, logging_dir=logging_dir, name=name)
    check_config(params)

  def initial_loss(self) -> float:
    """The loss of an untrained model (uniform predictions): ln(vocab_size)
    for MLM, times 1 + sbo_weight with SBO, plus ln 2 with NSP."""
    config = self.task_config.model
    loss = math.log(config.encoder.get().vocab_size)
    if config.use_sbo:
      loss *= 1 + self.task_config.sbo_weight
    if config.use_next_sentence:
      loss += math.log(2)
    return loss

  def build_model(self, params=None) -> tf_keras.Model:
    """modeling/builder.py's pretrainer of `params` (default: task.model)."""
    self._model = builder.build_pretrainer(params or self.task_config.model)
    return self._model

  def warms_up_heads(self) -> bool:
    """Whether the heads and the encoder have their own optimizers
    (task.head_warmup_steps or task.encoder_warmup_steps set)."""
    return bool(self.task_config.head_warmup_steps or
                self.task_config.encoder_warmup_steps)

  def create_optimizer(self, optimizer_config, runtime_config=None,
                       dp_config=None):
    """Model Garden's optimizer; with a head warm-up, a HeadWarmupOptimizer
    of the model build_model() built last (loss-scaled under float16)."""
    if not self.warms_up_heads():
      return super().create_optimizer(optimizer_config, runtime_config,
                                       dp_config)
    if dp_config is not None:
      raise ValueError("task.head_warmup_steps does not support differential "
                       "privacy")
    model = getattr(self, "_model", None)
    if model is None:
      raise ValueError("build_model() must come before create_optimizer()")
    optimizer = head_warmup.HeadWarmupOptimizer(
        optimizer_config, self.task_config.head_warmup_steps,
        self.task_config.encoder_warmup_steps,
        lambda: model.encoder_network.trainable_variables)
    if runtime_config:
      optimizer = performance.configure_optimizer(
          optimizer,
          use_float16=runtime_config.mixed_precision_dtype == "float16",
          loss_scale=runtime_config.loss_scale)
    return optimizer

  def initialize(self, model: tf_keras.Model):
    """Loads `init_checkpoint` (used when model_dir has no checkpoint yet).

    Restores every item of model.checkpoint_items that the checkpoint holds:
    an encoder-only checkpoint (e.g. a converted BERT) restores the encoder, a
    pretraining checkpoint also the heads (see modeling/checkpoints.py).
    """
    if self.task_config.init_checkpoint:
      checkpoints.restore(model, self.task_config.init_checkpoint)

  def build_inputs(self, params, input_context=None) -> tf.data.Dataset:
    """The loader's batches (the loader validate() built, if it did), or
    synthetic ones for `input_path: dummy`; the SBO targets are the
    model's."""
    params = loader_config(
        self.task_config, params,
        "train_data" if params.is_training else "validation_data")
    if dummy_inputs.is_dummy(params):
      return dummy_inputs.load(params, input_context)
    loader = (_VALIDATED_LOADERS.pop(_key(params), None) or
              data_loader_factory.get_data_loader(params))
    return loader.load(input_context)

  def compute_losses(self, labels, model_outputs) -> Dict[str, tf.Tensor]:
    """All loss terms (float32 scalars), `total` among them."""
    losses = {"mlm_loss": weighted_cross_entropy(
        labels["masked_lm_ids"], model_outputs["mlm_logits"],
        labels["masked_lm_weights"])}
    total = losses["mlm_loss"]
    if "sbo_logits" in model_outputs:
      losses["sbo_loss"] = weighted_cross_entropy(
          labels["masked_lm_ids"], model_outputs["sbo_logits"],
          labels["sbo_weights"])
      total += self.task_config.sbo_weight * losses["sbo_loss"]
    if "next_sentence" in model_outputs:
      losses["next_sentence_loss"] = tf.reduce_mean(
          tf_keras.losses.sparse_categorical_crossentropy(
              labels["next_sentence_labels"],
              tf.cast(model_outputs["next_sentence"], tf.float32),
              from_logits=True))
      total += losses["next_sentence_loss"]
    losses["total"] = total
    return losses

  def build_losses(self, labels, model_outputs, aux_losses=None) -> tf.Tensor:
    total = self.compute_losses(labels, model_outputs)["total"]
    if aux_losses:
      total += tf.add_n(aux_losses)
    return total

  def build_metrics(self, training=None):
    config = self.task_config.model
    metrics = [
        tf_keras.metrics.SparseCategoricalAccuracy(name="masked_lm_accuracy"),
        tf_keras.metrics.Mean(name="mlm_loss"),
    ]
    if config.use_sbo:
      metrics += [
          tf_keras.metrics.SparseCategoricalAccuracy(name="sbo_accuracy"),
          tf_keras.metrics.Mean(name="sbo_loss")]
    if config.use_next_sentence:
      metrics += [
          tf_keras.metrics.SparseCategoricalAccuracy(
              name="next_sentence_accuracy"),
          tf_keras.metrics.Mean(name="next_sentence_loss")]
    if training:
      metrics.append(tf_keras.metrics.Mean(name="gradient_norm"))
      if self.warms_up_heads():
        metrics.append(tf_keras.metrics.Mean(name="encoder_learning_rate"))
    return metrics

  def _update_metrics(self, metrics, labels, outputs, losses, grad_norm=None,
                      encoder_learning_rate=None):
    if not metrics:
      return
    by_name = {m.name: m for m in metrics or []}
    if (encoder_learning_rate is not None and
        "encoder_learning_rate" in by_name):
      by_name["encoder_learning_rate"].update_state(encoder_learning_rate)
    for name, value in losses.items():
      if name in by_name:
        by_name[name].update_state(value)
    by_name["masked_lm_accuracy"].update_state(
        labels["masked_lm_ids"], outputs["mlm_logits"],
        labels["masked_lm_weights"])
    if "sbo_accuracy" in by_name:
      by_name["sbo_accuracy"].update_state(
          labels["masked_lm_ids"], outputs["sbo_logits"],
          labels["sbo_weights"])
    if "next_sentence_accuracy" in by_name:
      by_name["next_sentence_accuracy"].update_state(
          labels["next_sentence_labels"], outputs["next_sentence"])
    if grad_norm is not None and "gradient_norm" in by_name:
      by_name["gradient_norm"].update_state(grad_norm)

  def process_metrics(self, metrics, labels, model_outputs, **kwargs):
    self._update_metrics(metrics, labels, model_outputs,
                         self.compute_losses(labels, model_outputs))

  def _gradient_scale(self, inputs) -> tf.Tensor:
    """The reference's 1 / (masked tokens of one reference GPU batch).

    The reference divides the gradient of each GPU's mean loss by the masked
    tokens of all GPUs' batches, after DDP averaged it over the GPUs: the
    factor is gpus / masked tokens, with gpus = global batch / sequences per
    GPU. Counts are summed over replicas, so every replica uses the same one.
    """
    counts = tf.stack([
        tf.cast(tf.shape(inputs["masked_lm_weights"])[0], tf.float32),
        tf.reduce_sum(tf.cast(inputs["masked_lm_weights"], tf.float32))])
    ctx = tf.distribute.get_replica_context()
    if ctx is not None and ctx.num_replicas_in_sync > 1:
      counts = ctx.all_reduce(tf.distribute.ReduceOp.SUM, counts)
    gpus = counts[0] / self.task_config.reference_sequences_per_gpu
    return tf.math.divide_no_nan(gpus, counts[1])

  def train_step(self, inputs, model: tf_keras.Model,
                 optimizer: tf_keras.optimizers.Optimizer, metrics=None):
    """Forward, loss (scaled for replicas and fp16), backward, update."""
    warmup = head_warmup.find(optimizer)
    with tf.GradientTape(persistent=warmup is not None) as tape:
      outputs = model(inputs, training=True)
      losses = self.compute_losses(inputs, outputs)
      loss = losses["total"]
      if model.losses:
        loss += tf.add_n(model.losses)
      num_replicas = tf.distribute.get_strategy().num_replicas_in_sync
      scaled_loss = loss / num_replicas
      if isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer):
        scaled_loss = optimizer.get_scaled_loss(scaled_loss)
    tvars = trained_variables(model, self.task_config)
    # Before task.head_warmup_steps the encoder's gradients are zeros (not
    # computed), so that the norm and the clip are the heads'.
    grads = (tape.gradient(scaled_loss, tvars) if warmup is None
             else warmup.gradients(tape, scaled_loss, tvars))
    grads_and_vars = [(g, v) for g, v in zip(grads, tvars) if g is not None]
    grads = [g for g, _ in grads_and_vars]
    tvars = [v for _, v in grads_and_vars]
    # Sum over replicas here, so that clipping (AdamWeightDecay clips each
    # replica's gradient before its own all-reduce) sees the global gradient.
    grads = tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.SUM, grads)
    is_lso = isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
    if is_lso:
      grads = optimizer.get_unscaled_gradients(grads)
    encoder_lr = None if warmup is None else warmup.encoder_learning_rate()
    # The norm (clip and metric) of the dense gradient, as fairseq's.
    grads = [summed_rows(g) for g in grads]
    if self.task_config.gradient_normalization == "reference":
      # As fairseq's multiply_grads: after backprop, before clipping.
      scale = self._gradient_scale(inputs)
      grads = [tf.IndexedSlices(g.values * scale, g.indices, g.dense_shape)
               if isinstance(g, tf.IndexedSlices) else g * scale
               for g in grads]
    grad_norm = tf.linalg.global_norm(grads)
    clip_norm = getattr(optimizer.inner_optimizer if is_lso else optimizer,
                        "gradient_clip_norm", 0.0)
    if clip_norm and clip_norm > 0:
      grads, _ = tf.clip_by_global_norm(grads, clip_norm, use_norm=grad_norm)
    optimizer.apply_gradients(list(zip(grads, tvars)),
                              experimental_aggregate_gradients=False)
    self._update_metrics(metrics, inputs, outputs, losses, grad_norm,
                         encoder_lr)
    return {self.loss: loss}

  def validation_step(self, inputs, model: tf_keras.Model, metrics=None):
    outputs = self.inference_step(inputs, model)
    losses = self.compute_losses(inputs, outputs)
    self._update_metrics(metrics, inputs, outputs, losses)
    return {self.loss: losses["total"]}
