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

"""SpanBERT as reusable SavedModels in the TF Hub format, for Keras users.

`TFHubExport.write` writes `<export_dir>/encoder` (TF Hub's text encoder API,
plus `mlm` and `sbo` sub-objects with the pretraining heads) and
`<export_dir>/preprocessor` (BERT's preprocessing API: `tokenize`,
`bert_pack_inputs`), as Model Garden's official/nlp/tools/export_tfhub_lib.py
does for BERT. See docs/serving.md#for-keras-users-tf-hub-savedmodels.

Example:
  registry.export(run, {"lower_case": True}, "/models/hub",
                  module_cls=tfhub_export.TFHubExport)
"""

import dataclasses
import os
from typing import Dict, List, Optional

import tensorflow as tf
import tf_keras

from official.nlp.modeling import layers
from official_spanbert.serving import export_lib
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from official_spanbert.utils import atomic_io
from official_spanbert.serving import text_preprocessor as tp


def _named_specs(**shapes_and_dtypes) -> List[tf.TensorSpec]:
  """TensorSpecs named after the arguments they trace, in that order.

  tf.saved_model.save traces a tf.function without an input_signature
  again for each of its traces' structured_input_signature, whose specs
  carry the argument names: traced with unnamed specs (or a keyword
  argument), it was traced twice.
  """
  return [tf.TensorSpec(shape, dtype, name=name)
          for name, (shape, dtype) in shapes_and_dtypes.items()]


class MlmSubModule(tf.Module):
  """The `mlm` sub-object: MLM logits at given positions of sequence_output."""

  def __init__(self, masked_lm: tf_keras.layers.Layer, hidden_size: int):
    super().__init__(name="mlm")
    self.masked_lm = masked_lm
    self.__call__.get_concrete_function(*_named_specs(
        sequence_output=([None, None, hidden_size], tf.float32),
        masked_lm_positions=([None, None], tf.int32)))

  @tf.function(autograph=False)
  def __call__(self, sequence_output, masked_lm_positions):
    return self.masked_lm(sequence_output, masked_positions=masked_lm_positions)


class SboSubModule(tf.Module):
  """The `sbo` sub-object: SBO logits from the spans' boundaries."""

  def __init__(self, span_boundary: tf_keras.layers.Layer, hidden_size: int):
    super().__init__(name="sbo")
    self.span_boundary = span_boundary
    positions = ([None, None], tf.int32)
    self.__call__.get_concrete_function(*_named_specs(
        sequence_output=([None, None, hidden_size], tf.float32),
        left_positions=positions, right_positions=positions,
        relative_positions=positions))

  @tf.function(autograph=False)
  def __call__(self, sequence_output, left_positions, right_positions,
               relative_positions):
    return self.span_boundary(sequence_output, left_positions,
                              right_positions, relative_positions)


class CheckedInputs(tf_keras.layers.Layer):
  """The encoder inputs after serving's checks (checked_encoder_inputs)."""

  def __init__(self, vocab_size: int, type_vocab_size: int,
               max_positions: int, **kwargs):
    super().__init__(**kwargs)
    self._limits = (vocab_size, type_vocab_size, max_positions)

  def call(self, inputs):
    return pretraining_module.checked_encoder_inputs(dict(inputs),
                                                     *self._limits)


def encoder_model(model, vocab_file: str,
                  lower_case: bool = False) -> tf_keras.Model:
  """The encoder of a SpanBertPretrainer as a Hub text encoder (see module)."""
  encoder = model.encoder_network
  config = encoder.get_config()
  checked = CheckedInputs(config["vocab_size"], config["type_vocab_size"],
                          config["max_sequence_length"])(dict(encoder.inputs))
  outputs = dict(encoder(checked))
  outputs["default"] = outputs["pooled_output"]
  core = tf_keras.Model(inputs=encoder.inputs, outputs=outputs)
  # The heads' weights stay out of the encoder's (trainable) variables.
  core._auto_track_sub_layers = False  # pylint: disable=protected-access
  hidden_size = model.masked_lm.embedding_table.shape[-1]
  core.mlm = MlmSubModule(model.masked_lm, hidden_size)
  if getattr(model, "span_boundary", None) is not None:
    core.sbo = SboSubModule(model.span_boundary, hidden_size)
  core.vocab_file = tf.saved_model.Asset(vocab_file)
  core.do_lower_case = tf.Variable(lower_case, trainable=False)
  return core


class Tokenize(tf.Module):
  """The `tokenize` sub-object: text -> [batch, (words), (wordpieces)]."""

  def __init__(self, preprocessor: tp.TextPreprocessor):
    super().__init__(name="tokenize")
    self.preprocessor = preprocessor
    vocab = preprocessor.vocab
    self._special = dict(vocab_size=vocab.size, start_of_sequence_id=vocab.cls_id,
                         end_of_segment_id=vocab.sep_id,
                         padding_id=vocab.pad_id, mask_id=vocab.mask_id)
    self.__call__.get_concrete_function(*_named_specs(
        text=([None], tf.string)))

  @tf.function(autograph=False)
  def __call__(self, text):
    tokens = self.preprocessor.tokenize(text)  # [batch, (wordpieces)] int64
    ids = tokens.flat_values
    rows = tokens.value_rowids()
    first_in_row = tf.equal(tf.range(tf.size(ids, tf.int64)),
                            tf.gather(tokens.row_starts(), rows))
    pieces = tf.strings.substr(tf.gather(self.preprocessor.vocab_tokens, ids),
                               0, 2)
    starts = tf.cast(first_in_row | tf.not_equal(pieces, "##"), tf.int64)
    words = tf.RaggedTensor.from_value_rowids(
        tf.cast(ids, tf.int32), tf.cumsum(starts) - 1,
        nrows=tf.reduce_sum(starts))
    return tf.RaggedTensor.from_row_lengths(
        words, tf.math.unsorted_segment_sum(starts, rows, tokens.nrows()))

  @tf.function(input_signature=[])
  def get_special_tokens_dict(self):
    return {k: tf.constant(v, tf.int32) for k, v in self._special.items()}


class BertPackInputs(tf.Module):
  """The `bert_pack_inputs` sub-object (Model Garden's packer, checked).

  Callable as bert_pack_inputs(inputs, seq_length=...) on a list of one or
  two int32 RaggedTensors of ragged rank 1 or 2 (as in
  export_tfhub_lib.BertPackInputsSavedModelWrapper, whose call is set on the
  instance so that the default seq_length survives saving).
  """

  def __init__(self, preprocessor: tp.TextPreprocessor):
    super().__init__(name="bert_pack_inputs")
    vocab = preprocessor.vocab

    @tf.function(autograph=False)
    def call(inputs, seq_length=preprocessor.seq_length):
      inputs = list(inputs)
      if len(inputs) == 2:
        # The trimmer reads out of bounds on batches of different sizes.
        check = tf.debugging.assert_equal(
            inputs[0].nrows(), inputs[1].nrows(),
            message="segments must have the same batch size")
        with tf.control_dependencies([check]):
          inputs = tf.nest.map_structure(tf.identity, inputs,
                                         expand_composites=True)
      return layers.BertPackInputs.bert_pack_inputs(
          inputs, seq_length=seq_length,
          start_of_sequence_id=vocab.cls_id, end_of_segment_id=vocab.sep_id,
          padding_id=vocab.pad_id)

    self.__call__ = call
    for ragged_rank in (1, 2):
      for segments in (1, 2):
        call.get_concrete_function(
            [tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32)] *
            segments, *_named_specs(seq_length=([], tf.int32)))


class Preprocessor(tf.Module):
  """The preprocessing SavedModel's root (see module docstring)."""

  def __init__(self, vocab_file: str, lower_case: bool = False,
               seq_length: int = tp.SEQ_LENGTH):
    super().__init__(name="spanbert_hub_preprocessor")
    self.preprocessor = tp.TextPreprocessor(vocab_file, lower_case, seq_length)
    self.tokenize = Tokenize(self.preprocessor)
    self.bert_pack_inputs = BertPackInputs(self.preprocessor)
    self.__call__.get_concrete_function(*_named_specs(
        text=([None], tf.string)))

  @tf.function(autograph=False)
  def __call__(self, text):
    return self.preprocessor(text)


def output_dirs(export_dir: str) -> Dict[str, str]:
  """{"encoder": dir, "preprocessor": dir} under export_dir.

  Raises:
    ValueError: one of the two exists already.
  """
  dirs = {name: os.path.join(export_dir, name)
          for name in ("encoder", "preprocessor")}
  for path in dirs.values():
    if tf.io.gfile.exists(path):
      raise ValueError(f"{path} exists; give another --export_dir")
  return dirs


class TFHubExport(serving_module.ServingModule):
  """A pretraining run as TF Hub encoder and preprocessor SavedModels.

  Args:
    model: a SpanBertPretrainer with weights.
    vocab_file: its WordPiece vocab.
    lower_case, seq_length: see Params.
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The TF Hub export's options.

    Attributes:
      lower_case: uncased tokenization.
      seq_length: the preprocessor's default sequence length.
    """
    lower_case: bool = False
    seq_length: int = tp.SEQ_LENGTH

  SIGNATURES = ("encoder", "preprocessor")
  WHAT = "TF Hub encoder"

  @classmethod
  def from_run(cls, run: serving_module.Run, params: Params) -> "TFHubExport":
    return cls(pretraining_module.build_pretrainer(run),
               run.vocab(params.vocab_file), params.lower_case,
               params.seq_length)

  def __init__(self, model, vocab_file: str, lower_case: bool = False,
               seq_length: int = Params.seq_length):
    super().__init__(name="spanbert_tfhub_export")
    self.model = model
    self.vocab_file = vocab_file
    self.lower_case = lower_case
    self.seq_length = seq_length

  def write(self, export_base: str, version: Optional[int] = None
            ) -> Dict[str, str]:
    """Writes <export_base>/encoder and <export_base>/preprocessor.

    Returns:
      {"encoder": dir, "preprocessor": dir}.

    Raises:
      ValueError: a `version` (TF Hub models have none), or one of the two
        dirs exists already.
      export_lib.ExportOutputError: the disk is full (nothing is left behind,
        export_base neither if this export created it).
    """
    if version is not None:
      raise ValueError("a TF Hub export has no versions; give a new "
                       "--export_dir instead of --version")
    dirs = output_dirs(export_base)
    tmp = os.path.join(export_base, f".tmp-hub-{os.getpid()}")
    # The sub-objects trace their functions when built: built where the
    # saves look them up, they are traced once, not twice.
    options = tf.saved_model.SaveOptions()
    with export_lib.written_whole(dirs["encoder"], [export_base]) as writing:
      try:
        with export_lib.tracing_for_save(options):
          encoder = encoder_model(self.model, self.vocab_file,
                                  self.lower_case)
        encoder.save(os.path.join(tmp, "encoder"), include_optimizer=False,
                     save_format="tf", options=options)
        writing.target = dirs["preprocessor"]
        with export_lib.tracing_for_save(options):
          preprocessor = Preprocessor(self.vocab_file, self.lower_case,
                                      self.seq_length)
        tf.saved_model.save(preprocessor, os.path.join(tmp, "preprocessor"),
                            options=options)
        for name, path in dirs.items():
          atomic_io.move_into_place(os.path.join(tmp, name), path,
                                    overwrite=False)
      finally:
        atomic_io.remove_tree(tmp)
    return dirs
