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

"""SavedModel signatures for TF Serving: text in, encodings and span fills out.

Unlike Model Garden's serving_modules.MaskedLM (which returns only the NSP
output and feeds word ids as type ids), `fill_spans` returns the MLM and SBO
predictions for every [MASK] and type ids come from the packer. The export
writes the serving model and the preprocessing model (PreprocessingModule)
under one version.

Example:
  run = serving_module.Run(params, model_dir="/runs/pretrain")
  SpanBertServingModule.from_run(run, SpanBertServingModule.Params(
      top_k=3)).write("/models/spanbert")
  # or, with a model in hand:
  SpanBertServingModule(model, "vocab.txt", seq_length=64).write("/models/x")
"""

import dataclasses
import os
from typing import Dict, Optional

import tensorflow as tf

from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.data.pretraining.masking import masking
from official_spanbert.modeling import builder
from official_spanbert.serving import export_lib
from official_spanbert.serving import quantization
from official_spanbert.serving import serving_module
from official_spanbert.serving import span_encoder_module
from official_spanbert.serving import text_preprocessor as tp
from official_spanbert.utils import atomic_io
from official_spanbert.utils import progress as progress_lib

_TEXT = tf.TensorSpec([None], tf.string, name="text")


def checked_encoder_inputs(inputs: Dict[str, tf.Tensor], vocab_size: int,
                           type_vocab_size: int, max_positions: int
                           ) -> Dict[str, tf.Tensor]:
  """The encoder inputs, after asserting their shapes and value ranges.

  Out-of-range type ids would otherwise select no type embedding (one-hot
  of zeros) and return garbage, and on GPU so would word ids; more positions
  than the position embeddings fail with a reshape error naming no input.
  Used by encode_ids and the TF Hub encoder (tfhub_export.py).
  """
  shape = tf.shape(inputs["input_word_ids"])
  checks = [tf.debugging.assert_equal(
      tf.shape(inputs[name]), shape,
      message=f"{name} must have the shape of input_word_ids")
            for name in ("input_mask", "input_type_ids")]
  checks.append(tf.debugging.Assert(shape[1] <= max_positions, [
      f"input_word_ids must have at most {max_positions} positions "
      "(max_position_embeddings); got", shape[1]]))
  for name, limit in (("input_word_ids", vocab_size),
                      ("input_mask", 2),
                      ("input_type_ids", type_vocab_size)):
    low, high = tf.reduce_min(inputs[name]), tf.reduce_max(inputs[name])
    checks.append(tf.debugging.Assert(
        (low >= 0) & (high < limit),
        [f"{name} must be in [0, {limit}); got min and max:", low, high]))
  with tf.control_dependencies(checks):
    # Identities without the static shape: a caller tracing with a concrete
    # length beyond max_positions reaches the check at run time instead of
    # failing shape inference in the position embedding.
    return {k: tf.compat.v1.placeholder_with_default(v, [None] * v.shape.rank)
            for k, v in inputs.items()}


def build_pretrainer(run: serving_module.Run):
  """The pretrainer of `run.params.task.model` (modeling/builder.py),
  restored from the run's training or encoder checkpoint if it names one.

  Raises:
    ValueError: params of an experiment that is not pretraining.
  """
  model_config = run.params.task.model
  if not isinstance(model_config, spanbert_configs.SpanBertPretrainerConfig):
    raise ValueError(
        "the export takes a pretraining experiment (task.model a "
        f"SpanBertPretrainerConfig), not one with "
        f"{type(model_config).__name__}")
  return run.restore(builder.build_pretrainer(model_config))


class SpanBertServingModule(serving_module.ServingModule):
  """Signatures of an exported SpanBERT.

  * `serving_default(text)`: sequence_output, pooled_output, input_word_ids,
    input_mask.
  * `encode_pair(text, text_pair)`: the same for two-segment inputs (batches
    of different sizes are an InvalidArgumentError).
  * `encode_ids(input_word_ids, input_mask, input_type_ids)`: for clients that
    tokenize themselves; ids outside [0, vocab_size), type ids outside
    [0, type_vocab_size), mask values other than 0/1 and more positions
    than max_position_embeddings are InvalidArgumentErrors.
  * `fill_spans(text)`: for each [MASK] (up to max_masks), the MLM head's top-k
    tokens and log-probabilities, the SBO head's top-k from the span's
    boundaries (when the model has one), and the text filled greedily.
  * `encode_spans(text, span_starts, span_ends)`: the encoder's span
    embeddings [x_start, x_end, mean] of character spans
    (span_encoder_module.py; windows of seq_length, no truncation).

  Args:
    model: a SpanBertPretrainer.
    vocab_file: its WordPiece vocab.
    lower_case, seq_length, top_k, max_masks, preprocessing_export_base:
      see Params.
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The pretraining export's options.

    Attributes:
      lower_case: uncased tokenization.
      seq_length: the packed length (longer text is truncated).
      top_k: fill_spans' candidates per masked position.
      max_masks: [MASK] tokens fill_spans predicts per text.
      preprocessing_export_base: base path of the preprocessing model
        (None: <export_base>_preprocessing).
    """
    lower_case: bool = False
    seq_length: int = tp.SEQ_LENGTH
    top_k: int = 5
    max_masks: int = 20
    preprocessing_export_base: Optional[str] = None

  SIGNATURES = ("serving_default", "encode_pair", "encode_ids", "fill_spans",
                "encode_spans")
  WARMUP_TEXTS = (
      "SpanBERT predicts [MASK] [MASK] from the tokens around them.",
      "The quick brown fox jumps over the lazy dog.",
  )

  @classmethod
  def from_run(cls, run: serving_module.Run,
               params: Params) -> "SpanBertServingModule":
    """The module of a pretraining run (or a converted checkpoint)."""
    return cls(build_pretrainer(run), run.vocab(params.vocab_file),
               params.lower_case, params.seq_length, params.top_k,
               params.max_masks, params.preprocessing_export_base)

  def encoder_part(self, run: serving_module.Run) -> quantization.EncoderPart:
    """int8: the encoder (the MLM and SBO heads stay float32), calibrated
    on the masked blocks of the run's training records."""

    def install(encoder):
      self.model.encoder_network = encoder
      if self.span_encoder is not None:
        self.span_encoder.use_encoder(encoder)

    return quantization.EncoderPart(
        quantization.EncoderOutputs(self.model.encoder_network), install,
        quantization.loader_windows)

  def warmup_inputs(self):
    texts = list(self.WARMUP_TEXTS)
    ids = self.preprocessor(tf.constant(texts))
    inputs = {
        "serving_default": {"text": texts},
        "encode_pair": {"text": texts, "text_pair": texts[::-1]},
        "encode_ids": {k: ids[k].numpy() for k in ids},
        "fill_spans": {"text": texts},
        "encode_spans": {"text": texts, "span_starts": [[0, 9], [0, 4]],
                         "span_ends": [[8, 17], [3, 9]]},
    }
    return {name: inputs[name] for name in self.SIGNATURES}

  def write(self, export_base: str, version: Optional[int] = None
            ) -> Dict[str, str]:
    """Writes <export_base>/<version>/ and the preprocessing model at
    <preprocessing_export_base>/<version>/, the version claimed in both
    (concurrent exports get different ones); the preprocessing is renamed
    into place first, so a version TF Serving sees has its own.

    Returns:
      {"model": dir, "preprocessing": dir}.

    Raises:
      export_lib.VersionTakenError: `version` exists or another export is
        writing it.
      export_lib.ExportOutputError: the disk is full (nothing is left).
    """
    pre_base = self.preprocessing_export_base or (
        export_base.rstrip("/") + "_preprocessing")
    if os.path.normpath(pre_base) == os.path.normpath(export_base):
      raise ValueError("the preprocessing model needs its own export base")
    report = progress_lib.Progress("export")
    pre = PreprocessingModule(self.preprocessor)
    texts = list(self.WARMUP_TEXTS)
    with export_lib.written_whole(export_base,
                                  [export_base, pre_base]) as writing:
      version, tmps = export_lib.claim_version([export_base, pre_base],
                                               version)
      dirs = [os.path.join(base, str(version))
              for base in (export_base, pre_base)]
      writing.target = dirs[0]
      renamed = []
      try:
        report.note(f"tracing and saving the model (version {version}, "
                    f"{len(self.SIGNATURES)} signatures, warmup requests)")
        # Its warmup ids come from the preprocessor traced for the
        # signatures (called outside the save, it was traced twice).
        export_lib.save_with_warmup(self, tmps[0], self.warmup_inputs)
        report.note("saving the preprocessing model")
        writing.target = dirs[1]
        export_lib.save_with_warmup(pre, tmps[1], {
            "serving_default": {"text": texts},
            "encode_pair": {"text": texts, "text_pair": texts[::-1]},
        })
        for tmp, export_dir in zip(tmps[::-1], dirs[::-1]):
          atomic_io.move_into_place(tmp, export_dir, overwrite=False)
          renamed.append(export_dir)
      except BaseException:
        # Only this export's own dirs: the claim makes them nobody else's.
        for path in tmps + renamed:
          atomic_io.remove_tree(path)
        raise
    report.done(f"export: wrote the model to {dirs[0]} and the "
                f"preprocessing to {dirs[1]} in {report.elapsed():.1f} s")
    return {"model": dirs[0], "preprocessing": dirs[1]}

  def __init__(self, model, vocab_file: str,
               lower_case: bool = Params.lower_case,
               seq_length: int = Params.seq_length,
               top_k: int = Params.top_k, max_masks: int = Params.max_masks,
               preprocessing_export_base: Optional[str] = None):
    super().__init__(name="spanbert_serving")
    self.preprocessing_export_base = preprocessing_export_base
    self.model = model
    self.preprocessor = tp.TextPreprocessor(vocab_file, lower_case,
                                            seq_length)
    self.top_k = top_k
    self.max_masks = max_masks
    self.has_sbo = getattr(model, "span_boundary", None) is not None
    config = model.encoder_network.get_config()
    self.vocab_size = config["vocab_size"]
    self.type_vocab_size = config["type_vocab_size"]
    self.max_positions = config["max_sequence_length"]
    self.max_sbo_targets = (model.span_boundary.max_targets
                            if self.has_sbo else 0)
    self.span_encoder = span_encoder_module.SpanEncoderModule(
        model.encoder_network, vocab_file, lower_case, seq_length)

  # One graph of the encoder for the 4 signatures (traced once, not 4 times).
  @tf.function(autograph=False, input_signature=[{
      k: tf.TensorSpec([None, None], tf.int32)
      for k in ("input_word_ids", "input_mask", "input_type_ids")}])
  def _encoder(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    return self.model.encoder_network(inputs, training=False)

  def _encode(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    out = self._encoder(inputs)
    return {"sequence_output": out["sequence_output"],
            "pooled_output": out["pooled_output"]}

  @tf.function(autograph=False, input_signature=[_TEXT])
  def serve_text(self, text):
    inputs = self.preprocessor(text)
    out = self._encode(inputs)
    out.update(input_word_ids=inputs["input_word_ids"],
               input_mask=inputs["input_mask"])
    return out

  @tf.function(autograph=False, input_signature=[
      _TEXT, tf.TensorSpec([None], tf.string, name="text_pair")])
  def serve_text_pair(self, text, text_pair):
    inputs = self.preprocessor(text, text_pair)
    out = self._encode(inputs)
    out.update(input_word_ids=inputs["input_word_ids"],
               input_mask=inputs["input_mask"],
               input_type_ids=inputs["input_type_ids"])
    return out

  @tf.function(autograph=False, input_signature=[
      tf.TensorSpec([None, None], tf.int32, name="input_word_ids"),
      tf.TensorSpec([None, None], tf.int32, name="input_mask"),
      tf.TensorSpec([None, None], tf.int32, name="input_type_ids")])
  def serve_ids(self, input_word_ids, input_mask, input_type_ids):
    inputs = {"input_word_ids": input_word_ids, "input_mask": input_mask,
              "input_type_ids": input_type_ids}
    return self._encode(self._checked(inputs))

  def _checked(self, inputs: Dict[str, tf.Tensor]) -> Dict[str, tf.Tensor]:
    return checked_encoder_inputs(inputs, self.vocab_size,
                                  self.type_vocab_size, self.max_positions)

  def _top_k(self, logits, prefix, slots, batch):
    """Top-k of [n, 1, vocab] logits laid out at `slots` (row, slot) of
    [batch, max_masks, top_k]; empty slots: id -1, token "", score 0."""
    log_probs = tf.nn.log_softmax(tf.cast(logits[:, 0], tf.float32))
    scores, ids = tf.math.top_k(log_probs, k=self.top_k)
    shape = tf.stack([batch, self.max_masks, self.top_k])

    filled = tf.scatter_nd(slots, tf.ones_like(ids, tf.bool), shape)

    def laid_out(values, empty):
      return tf.where(filled, tf.scatter_nd(slots, values, shape), empty)

    ids = laid_out(ids, -1)
    tokens = tf.gather(self.preprocessor.vocab_tokens, tf.maximum(ids, 0))
    return {f"{prefix}_top_k_ids": ids,
            f"{prefix}_top_k_tokens": tf.where(ids >= 0, tokens, ""),
            f"{prefix}_top_k_scores": laid_out(scores, 0.0)}

  @tf.function(autograph=False, input_signature=[_TEXT])
  def fill_spans(self, text):
    inputs = self.preprocessor(text)
    ids = inputs["input_word_ids"]
    batch = tf.shape(ids)[0]
    sequence_output = self._encoder(inputs)["sequence_output"]
    is_mask = tf.equal(ids, self.preprocessor.vocab.mask_id)
    where, first, last, _ = masking.masked_runs(is_mask)
    rows = where[:, 0]
    row_starts = tf.math.cumsum(tf.math.bincount(rows, minlength=batch),
                                exclusive=True)
    index_in_row = tf.range(tf.shape(rows)[0]) - tf.gather(row_starts, rows)
    # The heads run on the predicted [MASK]s only (at most max_masks a
    # text), not on max_masks slots of every text.
    predicted = tf.where(index_in_row < self.max_masks)[:, 0]
    where, first, last, slot = (tf.gather(v, predicted) for v in (
        where, first, last, index_in_row))
    rows, cols = where[:, 0], where[:, 1]

    def dense(values):
      return masking.rows_to_dense(values, rows, batch, self.max_masks)

    def at(positions):  # [n, 1, H]: the outputs at (row, position)
      return tf.gather_nd(sequence_output,
                          tf.stack([rows, positions], 1))[:, tf.newaxis]

    slots = tf.stack([rows, slot], 1)
    out = {"masked_positions": dense(cols),
           "masked_weights": dense(tf.ones_like(cols))}
    at_zero = tf.zeros_like(cols)[:, tf.newaxis]
    out.update(self._top_k(self.model.masked_lm(at(cols), at_zero), "mlm",
                           slots, batch))
    if self.has_sbo:
      rel = tf.minimum(cols - first, self.max_sbo_targets - 1)
      boundaries = tf.concat([at(first - 1), at(last + 1)], 1)  # [n, 2, H]
      out.update(self._top_k(self.model.span_boundary(
          boundaries, at_zero, at_zero + 1, rel[:, tf.newaxis]), "sbo",
                             slots, batch))
    # Greedy fill: every predicted [MASK] takes the MLM's top token.
    best = tf.gather_nd(out["mlm_top_k_ids"][:, :, 0], slots)
    filled = tf.tensor_scatter_nd_update(ids, where, best)
    out["filled_text"] = self.preprocessor.detokenize(filled,
                                                      inputs["input_mask"])
    return out

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    """Those of SIGNATURES, each traced here (a subclass that leaves one
    out does not pay its trace)."""
    functions = {"serving_default": self.serve_text,
                 "encode_pair": self.serve_text_pair,
                 "encode_ids": self.serve_ids,
                 "fill_spans": self.fill_spans}
    if self.span_encoder is not None:
      functions["encode_spans"] = self.span_encoder.encode_spans
    return {name: functions[name].get_concrete_function()
            for name in self.SIGNATURES}


class PreprocessingModule(tf.Module):
  """The text -> encoder inputs SavedModel (like TF Hub's BERT preprocess).

  Signatures: `serving_default(text)` and `encode_pair(text, text_pair)`, each
  returning input_word_ids, input_mask, input_type_ids.
  """

  def __init__(self, preprocessor: tp.TextPreprocessor):
    super().__init__(name="spanbert_preprocessing")
    self.preprocessor = preprocessor

  @tf.function(autograph=False, input_signature=[_TEXT])
  def serve_text(self, text):
    return self.preprocessor(text)

  @tf.function(autograph=False, input_signature=[
      _TEXT, tf.TensorSpec([None], tf.string, name="text_pair")])
  def serve_text_pair(self, text, text_pair):
    return self.preprocessor(text, text_pair)

  def signatures(self):
    return {"serving_default": self.serve_text.get_concrete_function(),
            "encode_pair": self.serve_text_pair.get_concrete_function()}
