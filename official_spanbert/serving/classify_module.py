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

"""The `classify` and `classify_relation` signatures: raw text in, labels out.

The encoding of the fine-tuning records (data/finetuning/classification.py,
tacred.py) runs inside the graph with tf.text and core ops: sentence (pair)
classification for GLUE, and the records' entity markers (any of tacred's
ENTITY_MODES) for relations. Entities are character spans of the raw text;
a wordpiece belongs to an entity when its characters overlap the span, so
markers fall where the records put them for the same words. Outputs
are `probabilities`, `label_id` and `label` (`score` for a regression model).
See docs/serving.md#classify-and-classify_relation-classification-from-raw-text.

Example:
  module = ClassifyModule(classifier, "vocab.txt", seq_length=128,
                          label_names=("entailment", "not_entailment"),
                          pair=True)
  module.classify(tf.constant(["A man sleeps."]), tf.constant(["He rests."]))
"""

import dataclasses
from typing import Dict, Mapping, Optional, Sequence

import tensorflow as tf
import tensorflow_text as tf_text

from official.core import task_factory
from official_spanbert.data import tokenization
from official_spanbert.data.finetuning import classification
from official_spanbert.data.finetuning import tacred
from official_spanbert.modeling import attention_layout
from official_spanbert.serving import length_chunks
from official_spanbert.serving import quantization
from official_spanbert.serving import qa_module
from official_spanbert.serving import serving_module
from official_spanbert.tasks import classification as classification_task

_STRING = lambda name: tf.TensorSpec([None], tf.string, name=name)  # pylint: disable=unnecessary-lambda-assignment
_INT = lambda name: tf.TensorSpec([None], tf.int32, name=name)  # pylint: disable=unnecessary-lambda-assignment


def pair_lengths(len_a: tf.Tensor, len_b: tf.Tensor, max_length: int):
  """Lengths after BERT's pair truncation (pop from the longer, b on ties)
  until len_a + len_b <= max_length; data/finetuning/classification's
  _truncate_pair in closed form."""
  over = len_a + len_b - max_length
  fits = over <= 0
  cut_a = (len_a > len_b) & (len_a - len_b >= over)
  cut_b = (len_b > len_a) & (len_b - len_a >= over)
  half_a = tf.cast((max_length + 1) // 2, len_a.dtype)
  half_b = tf.cast(max_length // 2, len_a.dtype)
  new_a = tf.where(fits | cut_b, len_a, tf.where(cut_a, len_a - over, half_a))
  new_b = tf.where(fits | cut_a, len_b, tf.where(cut_b, len_b - over, half_b))
  return new_a, new_b


def _head(ids: tf.RaggedTensor, lengths: tf.Tensor) -> tf.RaggedTensor:
  """ids[i][:lengths[i]] for each row."""
  rows = tf.range(ids.nrows())
  return qa_module._ragged_take(ids, rows, tf.zeros_like(lengths), lengths)  # pylint: disable=protected-access


def records_meta(params) -> Dict[str, object]:
  """The meta_data.json beside the run's training (else evaluation) records
  (tasks/classification.records_metas, as training reads it).

  Raises:
    ValueError: neither data config points at records with a meta file.
  """
  for _, _, meta in classification_task.records_metas(params.task):
    return meta
  raise ValueError(
      "the export needs the records' meta_data.json (label names, vocab, "
      "max_seq_length) beside task.train_data.input_path or "
      "validation_data's; none was found: point task.train_data.input_path "
      "at the records of spanbert-create-finetuning-data")


class ClassifyModule(serving_module.ServingModule):
  """SavedModel signatures of a fine-tuned sentence(-pair) classifier.

  Args:
    model: the task's classifier (inputs dict -> logits [batch, classes]).
    vocab_file, lower_case: the records' tokenizer.
    seq_length: the records' max_seq_length.
    label_names: one name per class id (the records' meta_data.json).
    pair: the task classifies sentence pairs (classify takes text_pair).
    entity_markers: for relation extraction (TACRED), marker -> token of
      the vocab ({"[SUBJ-PERSON]": "[unused1]", ...}); adds
      classify_relation and drops classify.
    entity_mode: how the records show the entities (tacred.ENTITY_MODES):
      `mask` drops their words for a typed marker; `marker` and
      `typed_marker` keep them between open and close markers.
    encoder_batch_rows: see Params.
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The `classify` / `classify_relation` export's options.

    Attributes:
      encoder_batch_rows: the encoder takes at most this many texts at
        once, in length order, each chunk cut to its longest text
        (serving/length_chunks.py).
    """
    encoder_batch_rows: int = 4

  SIGNATURES = ("classify", "classify_relation")
  WHAT = "classifier"
  _TEXT = "The letter was written by Elizabeth in 1813, in Kent."
  WARMUP = {
      "single": {"text": [_TEXT, ""]},
      "pair": {"text": [_TEXT, ""], "text_pair": ["Elizabeth wrote it.", ""]},
      "relation": {"text": [_TEXT], "subject_start": [26],
                   "subject_end": [35], "object_start": [48],
                   "object_end": [52]},
  }

  @classmethod
  def from_run(cls, run: serving_module.Run,
               params: Params) -> "ClassifyModule":
    """The module of a classification run; what its records were made with
    comes from their meta_data.json (records_meta)."""
    meta = records_meta(run.params)
    task_config = run.params.task.replace(train_data=None,
                                          validation_data=None)
    # num_classes 0 / entity_start marker ids: the records' (as in training).
    classification_task.fill_from_records(task_config, meta)
    model = run.restore(task_factory.get_task(task_config).build_model())
    labels = list(meta["labels"])
    if run.params.task.model.num_classes == 1:
      labels = ["score"]
    elif len(labels) != task_config.model.num_classes:
      raise ValueError(
          f"the records have {len(labels)} labels ({', '.join(labels)}) but "
          f"task.model.num_classes is {task_config.model.num_classes}")
    task = meta.get("task")
    pair = bool(task in classification.FORMATS and
                classification.FORMATS[task].text_b is not None)
    return cls(
        model, params.vocab_file or str(meta["vocab_file"]),
        lower_case=bool(meta.get("lower_case", False)),
        seq_length=int(meta.get("max_seq_length",
                                run.params.task.validation_data.seq_length)),
        label_names=labels, pair=pair,
        entity_markers=meta.get("entity_markers"),
        entity_mode=str(meta.get("entity_mode", "mask")),
        encoder_batch_rows=params.encoder_batch_rows)

  def encoder_part(self, run: serving_module.Run) -> quantization.EncoderPart:
    """The task model (encoder and head) on the encoder's inputs."""
    return quantization.task_model_part(self)

  def warmup_inputs(self):
    if self.relation:
      # Types of the records (any string in `marker` mode, which has none).
      subj = next((m[6:-1] for m in self.marker_names
                   if m.startswith("[SUBJ-")), "ANY")
      obj = next((m[5:-1] for m in self.marker_names
                  if m.startswith("[OBJ-")), "ANY")
      warmup = dict(self.WARMUP["relation"], subject_type=[subj],
                    object_type=[obj])
      return {"classify_relation": warmup, "serving_default": warmup}
    warmup = self.WARMUP["pair" if self.pair else "single"]
    return {"classify": warmup, "serving_default": warmup}

  def __init__(self, model, vocab_file: str, lower_case: bool = False,
               seq_length: int = 128, label_names: Sequence[str] = ("0", "1"),
               pair: bool = False,
               entity_markers: Optional[Mapping[str, str]] = None,
               entity_mode: str = "mask",
               encoder_batch_rows: int = Params.encoder_batch_rows):
    super().__init__(name="spanbert_classifier")
    if seq_length < (4 if pair else 3):
      raise ValueError(f"seq_length {seq_length} is too small")
    if not model.built:
      # A subclassed model (the relation classifier) creates its attention
      # layers at its first call: before it, there is nothing to swap.
      ones = tf.ones([1, 4], tf.int32)
      model({"input_word_ids": ones, "input_mask": ones,
             "input_type_ids": tf.zeros_like(ones)}, training=False)
    # Attention scores by one matmul: same outputs, faster on CPU.
    attention_layout.use_matmul_attention(model)
    self.model = model
    self.tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
    self.vocab = self.tokenizer.vocab
    self.seq_length = seq_length
    self.label_names = tuple(label_names)
    self.pair = pair
    self.regression = len(self.label_names) == 1
    self.encoder_batch_rows = encoder_batch_rows
    self.relation = entity_markers is not None
    if self.relation:
      ids = {t: i for i, t in enumerate(self.vocab.tokens)}
      unknown = sorted(set(entity_markers.values()) - set(ids))
      if unknown:
        raise ValueError(f"the vocab {vocab_file} has no {unknown[0]} (an "
                         "entity marker of the records)")
      self.marker_names = tuple(sorted(entity_markers))
      self._markers = tf.lookup.StaticHashTable(
          tf.lookup.KeyValueTensorInitializer(
              tf.constant(self.marker_names),
              tf.constant([ids[entity_markers[m]] for m in self.marker_names],
                          tf.int64)), default_value=-1)
      if entity_mode not in tacred.ENTITY_MODES:
        raise ValueError(f"entity mode {entity_mode!r} is not one of "
                         f"{tacred.ENTITY_MODES}")
      self.entity_mode = entity_mode
    # Only the task's signature is a tf.function (the export traces all).
    if self.relation:
      self.classify_relation = tf.function(
          self._classify_relation, autograph=False, input_signature=[
              _STRING("text"), _INT("subject_start"), _INT("subject_end"),
              _INT("object_start"), _INT("object_end"),
              _STRING("subject_type"), _STRING("object_type")])
    elif pair:
      self.classify = tf.function(
          self._classify_pair, autograph=False,
          input_signature=[_STRING("text"), _STRING("text_pair")])
    else:
      self.classify = tf.function(self._classify_single, autograph=False,
                                  input_signature=[_STRING("text")])

  def _outputs(self, ids: tf.RaggedTensor, types: tf.RaggedTensor
               ) -> Dict[str, tf.Tensor]:
    inputs = {
        "input_word_ids": tf.cast(ids.to_tensor(self.vocab.pad_id), tf.int32),
        "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0), tf.int32),
        "input_type_ids": tf.cast(types.to_tensor(0), tf.int32)}
    logits, = length_chunks.encode_by_length(
        self._logits, inputs, self.encoder_batch_rows,
        dims=(len(self.label_names),))
    if self.regression:
      return {"score": logits[:, 0]}
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {"probabilities": tf.nn.softmax(logits, axis=-1),
            "label_id": label_id,
            "label": tf.gather(tf.constant(self.label_names), label_id)}

  def _logits(self, inputs: Dict[str, tf.Tensor]):
    logits = self.model(inputs, training=False)
    if isinstance(logits, dict):
      logits = logits["logits"]
    return (tf.cast(logits, tf.float32),)

  def _column(self, n, value):
    return tf.fill([n, 1], tf.constant(value, tf.int64))

  def _single(self, body: tf.RaggedTensor):
    """`[CLS] body [SEP]` ids (body cut to fit) and their segment ids."""
    body = _head(body, tf.minimum(body.row_lengths(), self.seq_length - 2))
    n = body.nrows()
    ids = tf.concat([self._column(n, self.vocab.cls_id), body,
                     self._column(n, self.vocab.sep_id)], axis=1)
    return ids, tf.zeros_like(ids)

  def _encode_single(self, text):
    return self._single(self.tokenizer.tokenize(qa_module.valid_utf8(text))[0])

  def _classify_single(self, text):
    return self._outputs(*self._encode_single(text))

  def _classify_pair(self, text, text_pair):
    check = tf.debugging.assert_equal(
        tf.shape(text), tf.shape(text_pair),
        message="text and text_pair must have the same batch size")
    with tf.control_dependencies([check]):
      text = qa_module.valid_utf8(text)
      text_pair = qa_module.valid_utf8(text_pair)
    a = self.tokenizer.tokenize(text)[0]
    b = self.tokenizer.tokenize(text_pair)[0]
    len_a, len_b = pair_lengths(a.row_lengths(), b.row_lengths(),
                                self.seq_length - 3)
    a, b = _head(a, len_a), _head(b, len_b)
    n = tf.shape(text)[0]
    cls = self._column(n, self.vocab.cls_id)
    sep = self._column(n, self.vocab.sep_id)
    ids = tf.concat([cls, a, sep, b, sep], axis=1)
    types = tf.concat([tf.zeros_like(cls), tf.zeros_like(a),
                       tf.zeros_like(sep), tf.ones_like(b),
                       tf.ones_like(sep)], axis=1)
    return self._outputs(ids, types)

  def _marker_ids(self, template: str, types: tf.Tensor,
                  name: str) -> tf.Tensor:
    """[batch] vocab ids of one marker template ({type} filled per row)."""
    prefix, typed, suffix = template.partition("{type}")
    names = (tf.strings.join([prefix, types, suffix]) if typed else
             tf.fill(tf.shape(types), template))
    ids = self._markers.lookup(names)
    known = sorted({m[len(prefix):len(m) - len(suffix)]
                    for m in self.marker_names
                    if m.startswith(prefix) and m.endswith(suffix)})
    check = tf.debugging.assert_non_negative(
        ids, message=f"{name} is not an entity type the model was trained "
        f"with ({', '.join(known)})")
    with tf.control_dependencies([check]):
      return tf.identity(ids)

  def _classify_relation(self, text, subject_start, subject_end, object_start,
                        object_end, subject_type, object_type):
    n = tf.shape(text)[0]
    checks = [tf.debugging.assert_equal(
        tf.shape(x), [n], message=f"{name} must have text's batch size")
              for name, x in (("subject_start", subject_start),
                              ("subject_end", subject_end),
                              ("object_start", object_start),
                              ("object_end", object_end),
                              ("subject_type", subject_type),
                              ("object_type", object_type))]
    with tf.control_dependencies(checks):
      text = qa_module.valid_utf8(text)
    num_chars = tf.strings.length(text, unit="UTF8_CHAR")
    # TACRED's bracket tokens (-LRB- ...) read as the brackets they stand
    # for, padded with spaces so that every offset stays that of `text`.
    text_in = text
    for token, bracket in sorted(tacred._PTB_BRACKETS.items()):  # pylint: disable=protected-access
      text_in = tf.strings.regex_replace(
          text_in, r"(^|\s)(?i:" + token + ")",
          r"\1" + bracket + " " * (len(token) - 1))
    ids, begin, end = self.tokenizer.tokenize_with_offsets(text_in)
    row = ids.value_rowids()
    index = tf.range(tf.size(row, tf.int64))
    row_first = tf.equal(index, tf.gather(ids.row_starts(), row))
    row_last = tf.equal(index, tf.gather(ids.row_limits(), row) - 1)
    begin, end = begin.flat_values, end.flat_values
    spans = {}
    for name, start, stop in (("subject", subject_start, subject_end),
                              ("object", object_start, object_end)):
      ok = tf.debugging.assert_equal(
          (start >= 0) & (start < stop) & (stop <= num_chars),
          tf.ones_like(start, tf.bool),
          message=f"{name}_start/{name}_end must be a non-empty character "
          "span [start, end) of text")
      with tf.control_dependencies([ok]):
        s = tf.gather(tf.cast(start, tf.int64), row)
        e = tf.gather(tf.cast(stop, tf.int64), row)
      inside = (begin < e) & (end > s)
      covered = tf.math.unsorted_segment_max(tf.cast(inside, tf.int32), row,
                                             n)
      check = tf.debugging.assert_equal(
          covered, tf.ones_like(covered),
          message=f"the {name} span covers no wordpiece of text")
      with tf.control_dependencies([check]):
        inside = tf.identity(inside)
      first = inside & (row_first | ~tf.concat([[False], inside[:-1]], 0))
      last = inside & (row_last | ~tf.concat([inside[1:], [False]], 0))
      spans[name] = inside, first, last
    types = {"subject": subject_type, "object": object_type}
    markers = {}
    for side in ("subject", "object"):
      for which, template in zip(("open", "close"),
                                 tacred.MARKER_TEMPLATES[self.entity_mode][
                                     side]):
        if template:
          markers[side, which] = tf.gather(self._marker_ids(
              template, types[side], f"{side}_type"), row)

    def column(flags, ids_per_piece):
      return tf.RaggedTensor.from_row_lengths(
          tf.boolean_mask(ids_per_piece, flags), tf.cast(flags, tf.int64))

    keep = tf.ones_like(row_first)
    if self.entity_mode == "mask":
      keep = ~(spans["subject"][0] | spans["object"][0])
    # As tacred.encode_relations: open markers (subject first), the piece,
    # close markers (object first).
    columns = [column(spans["subject"][1], markers["subject", "open"]),
               column(spans["object"][1], markers["object", "open"]),
               column(keep, ids.flat_values)]
    for side in ("object", "subject"):
      if (side, "close") in markers:
        columns.append(column(spans[side][2], markers[side, "close"]))
    per_piece = tf.concat(columns, axis=1)
    body = tf.RaggedTensor.from_row_lengths(
        per_piece, ids.row_lengths()).merge_dims(1, 2)
    return self._outputs(*self._single(body))

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    name = "classify_relation" if self.relation else "classify"
    fn = getattr(self, name).get_concrete_function()
    return {name: fn, "serving_default": fn}
