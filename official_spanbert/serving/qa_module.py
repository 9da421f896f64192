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


"""The `answer` signature: question + passage text in, answer span out.

Everything the offline SQuAD evaluation does (data/finetuning/squad.py and
squad_predictions.py) runs inside the graph with tf.text and core ops, so the
stock tensorflow_model_server serves it: tokenization, windows, the n-best
candidates, the max-context rule and SQuAD 2.0's null score. See
docs/serving.md#answer-question-answering-from-raw-text.

Example:
  module = QuestionAnsweringModule(span_labeler, "vocab.txt", seq_length=384)
  module.answer(tf.constant(["Who?"]), tf.constant(["Ann met Bob."]))
"""

import dataclasses
import math
import os
from typing import Dict, Optional

import tensorflow as tf

from official.core import task_factory
from official_spanbert.data import tokenization
from official_spanbert.metrics import null_threshold as null_threshold_lib
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_precision
from official_spanbert.serving import length_chunks
from official_spanbert.serving import quantization
from official_spanbert.serving import serving_module
from official_spanbert.tasks import question_answering

# Python's str.isspace() characters: the whitespace squad_examples splits on.
_SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002"
           "\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029"
           "\u202f\u205f\u3000")
WHITESPACE_PATTERN = "[" + "".join(f"\\x{{{ord(c):04x}}}" for c in _SPACES) + "]+"
_STRING = lambda name: tf.TensorSpec([None], tf.string, name=name)  # pylint: disable=unnecessary-lambda-assignment


def valid_utf8(text: tf.Tensor) -> tf.Tensor:
  """Invalid UTF-8 bytes become U+FFFD."""
  return tf.strings.unicode_transcode(text, "UTF-8", "UTF-8",
                                      errors="replace", replacement_char=0xFFFD)


def _ragged_take(values: tf.RaggedTensor, rows: tf.Tensor,
                 starts: tf.Tensor, lengths: tf.Tensor) -> tf.RaggedTensor:
  """[n, (lengths)]: values[rows[i]][starts[i]:starts[i] + lengths[i]]."""
  index = tf.ragged.range(starts, starts + lengths)
  flat = index + tf.expand_dims(tf.gather(values.row_starts(), rows), 1)
  return tf.gather(values.flat_values, flat)


def null_threshold(run: serving_module.Run,
                   override: Optional[float] = None) -> float:
  """The SQuAD 2.0 threshold: `override`, else the best-F1 one of the
  evaluation of the run's checkpoint's step (<predictions dir>/
  null_threshold.json, metrics/null_threshold.py), else the task config's.

  Raises:
    ValueError: `override` is not finite; the file is unusable or has no
      evaluation at the checkpoint's step (named in the message).
  """
  if override is not None:
    if not math.isfinite(override):
      raise ValueError(f"--null_score_diff_threshold must be a finite "
                       f"number, got {override}")
    return float(override)
  task = run.params.task
  out = task.predictions_dir or (run.model_dir and os.path.join(
      run.model_dir, question_answering.PREDICTIONS_DIR))
  path = out and os.path.join(out, null_threshold_lib.FILE)
  if (getattr(task.validation_data, "version_2_with_negative", False)
      and path and tf.io.gfile.exists(path)):
    return null_threshold_lib.for_step(path, _step(run.checkpoint))
  return float(task.null_score_diff_threshold)


def _step(checkpoint: Optional[str]) -> Optional[int]:
  """The global step saved in `checkpoint` (None: no step in it)."""
  if not checkpoint:
    return None
  reader = tf.train.load_checkpoint(checkpoints.resolve(checkpoint))
  key = "global_step/.ATTRIBUTES/VARIABLE_VALUE"
  return int(reader.get_tensor(key)) if reader.has_tensor(key) else None


class QuestionAnsweringModule(serving_module.ServingModule):
  """SavedModel signature `answer(question, context)` of a SQuAD model.

  Outputs per question: answer_text, answer_start / answer_end (int32
  character offsets into the context, end exclusive, -1 without an answer),
  score (start + end logit of the chosen span) and, for SQuAD 2.0, has_answer.

  Args:
    model: the task's span labeler (inputs dict -> start, end logits).
    vocab_file, lower_case: the run's tokenizer.
    seq_length, doc_stride, query_length: the run's windows.
    n_best_size, max_answer_length: the run's post-processing.
    version_2_with_negative: SQuAD 2.0 (adds has_answer).
    null_score_diff_threshold: SQuAD 2.0 threshold (null - best).
    max_context_wordpieces, encoder_batch_windows: see Params.
  """

  @dataclasses.dataclass
  class Params(serving_module.Params):
    """The `answer` export's options.

    Attributes:
      max_context_wordpieces: a request with a longer context is refused
        with InvalidArgumentError (0: no limit); memory grows linearly with
        it (~250,000 characters of English at the default).
      null_score_diff_threshold: SQuAD 2.0's no-answer threshold (None: the
        best-F1 one of the evaluation of the checkpoint's step, from
        <model_dir>/predictions/null_threshold.json, else the task's).
      encoder_batch_windows: the encoder takes at most this many windows at
        once, in length order, each chunk cut to its longest window: on CPU
        a window's cost barely falls in larger batches, while padding to a
        batch's longest window costs (benchmarks/RESULTS.md, "Length-ordered
        windows on Zen 4").
      doc_stride: wordpieces between the starts of a long context's windows
        (0: the run's, task.validation_data.doc_stride, BERT's 128). A
        larger one runs fewer windows: at 384 tokens, 240 gives about the
        windows of Hugging Face's pipeline (128 tokens of overlap), 0.64x
        those of 128 on ~5,000-character contexts. Each token is still
        scored in the window that gives it the most context.
    """
    max_context_wordpieces: int = 65536
    null_score_diff_threshold: Optional[float] = None
    encoder_batch_windows: int = 4
    doc_stride: int = 0

  SIGNATURES = ("answer",)
  WHAT = "question-answering model"
  WARMUP = {
      "question": ["Who wrote the letter?", ""],
      "context": ["The letter was written by Elizabeth in 1813, in Kent.", ""],
  }

  @classmethod
  def from_run(cls, run: serving_module.Run,
               params: Params) -> "QuestionAnsweringModule":
    """The module of a spanbert/squad_v1 or _v2 run (see Params)."""
    # Without validation_data: the task would convert the evaluation JSON.
    model = run.restore(task_factory.get_task(
        run.params.task.replace(validation_data=None)).build_model())
    task, data = run.params.task, run.params.task.validation_data
    return cls(model, run.vocab(params.vocab_file),
               lower_case=data.do_lower_case, seq_length=data.seq_length,
               doc_stride=params.doc_stride or data.doc_stride,
               query_length=data.query_length, n_best_size=task.n_best_size,
               max_answer_length=task.max_answer_length,
               version_2_with_negative=data.version_2_with_negative,
               null_score_diff_threshold=null_threshold(
                   run, params.null_score_diff_threshold),
               max_context_wordpieces=params.max_context_wordpieces,
               encoder_batch_windows=params.encoder_batch_windows)

  def encoder_part(self, run: serving_module.Run) -> quantization.EncoderPart:
    """The task model (encoder and head) on the encoder's inputs."""
    return quantization.task_model_part(self)

  def warmup_inputs(self):
    return {"answer": self.WARMUP, "serving_default": self.WARMUP}

  def __init__(self, model, vocab_file: str, lower_case: bool = False,
               seq_length: int = 384, doc_stride: int = 128,
               query_length: int = 64, n_best_size: int = 20,
               max_answer_length: int = 30,
               version_2_with_negative: bool = False,
               null_score_diff_threshold: float = 0.0,
               max_context_wordpieces: int = Params.max_context_wordpieces,
               encoder_batch_windows: int = Params.encoder_batch_windows):
    super().__init__(name="spanbert_question_answering")
    if seq_length < query_length + 4:
      raise ValueError(f"seq_length {seq_length} leaves no room for the "
                       f"passage after query_length {query_length}")
    if doc_stride <= 0:
      raise ValueError(f"doc_stride must be positive (0 in the serving "
                       f"params: the run's), got {doc_stride}")
    # Attention scores by one matmul: same outputs, faster on CPU.
    attention_layout.use_matmul_attention(model)
    # Under bfloat16 the start/end logits stay float32 (ties otherwise).
    if model.compute_dtype == "bfloat16":
      export_precision.float32_head(model, ("span_labeling", "start_positions",
                                            "end_positions"))
    self.model = model
    self.tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case)
    self.vocab = self.tokenizer.vocab
    self.seq_length = seq_length
    self.doc_stride = doc_stride
    self.query_length = query_length
    self.n_best = min(n_best_size, seq_length)
    self.max_answer_length = max_answer_length
    self.version_2 = version_2_with_negative
    self.threshold = float(null_score_diff_threshold)
    self.max_context_wordpieces = max_context_wordpieces
    self.encoder_batch_windows = encoder_batch_windows

  def _passage(self, context: tf.Tensor):
    """Passage tokens: ids and char start / end, [batch, (tokens)].

    The tokenizer reads all of Python's whitespace as " ", so tokenizing the
    whole passage gives the pieces of its whitespace words (the offline
    path tokenizes word by word); offsets are exact for uncased vocabs too.
    """
    ids, begin, end = self.tokenizer.tokenize_with_offsets(context)
    # One column more, so that a batch of empty passages can be indexed.
    pad = lambda x: tf.pad(x.to_tensor(0), [[0, 0], [0, 1]])  # pylint: disable=unnecessary-lambda-assignment
    return ids, pad(begin), pad(end)

  def _within_limit(self, doc: tf.RaggedTensor) -> tf.RaggedTensor:
    """`doc`, after refusing a passage longer than max_context_wordpieces."""
    if not self.max_context_wordpieces:
      return doc
    lengths = doc.row_lengths()
    longest = tf.argmax(tf.concat([lengths, [0]], 0))
    fits = tf.debugging.Assert(
        tf.reduce_all(lengths <= self.max_context_wordpieces), [
            tf.strings.format(
                "context {} of the request has {} wordpieces, more than the "
                "{} this model was exported for (max_context_wordpieces): "
                "split the context or re-export with a larger "
                "--qa_max_context_wordpieces", (longest,
                                                tf.reduce_max(lengths),
                                                self.max_context_wordpieces))])
    with tf.control_dependencies([fits]):
      return tf.nest.map_structure(tf.identity, doc, expand_composites=True)

  @tf.function(autograph=False,
               input_signature=[_STRING("question"), _STRING("context")])
  def answer(self, question, context):
    check = tf.debugging.assert_equal(
        tf.shape(question), tf.shape(context),
        message="question and context must have the same batch size")
    with tf.control_dependencies([check]):
      question, context = valid_utf8(question), valid_utf8(context)
    # A request of no question: an empty answer of each output (the windows
    # below cannot be cut from no context).
    return tf.cond(tf.equal(tf.size(context), 0),
                   lambda: self._no_answers(context),
                   lambda: self._answer(question, context))

  def _no_answers(self, context):
    """Every output of `answer` for a batch of 0."""
    none = tf.zeros_like(context, tf.int32)
    out = {"score": tf.zeros_like(context, tf.float32), "answer_start": none,
           "answer_end": none, "answer_text": context}
    if self.version_2:
      out["has_answer"] = tf.zeros_like(context, tf.bool)
    return out

  def _answer(self, question, context):
    """`answer` of a request of at least one question."""
    batch = tf.shape(context)[0]
    q_ids = self.tokenizer.tokenize(question)[0][:, :self.query_length]
    doc, char_begin, char_end = self._passage(context)
    doc = self._within_limit(doc)
    q_len = q_ids.row_lengths()
    doc_len = doc.row_lengths()
    max_doc = self.seq_length - q_len - 3
    stride = tf.minimum(max_doc, self.doc_stride)
    windows = 1 + (tf.maximum(doc_len - max_doc, 0) + stride - 1) // stride
    # Features: one row per (example, window).
    example = tf.repeat(tf.range(tf.cast(batch, tf.int64)), windows)
    k = tf.ragged.range(windows).flat_values
    w_start = k * tf.gather(stride, example)
    w_len = tf.minimum(tf.gather(doc_len, example) - w_start,
                       tf.gather(max_doc, example))
    f_q_len = tf.gather(q_len, example)
    n_feat = tf.shape(example, tf.int64)[0]
    def column(value):
      return tf.fill([n_feat, 1], tf.constant(value, tf.int64))
    window_ids = _ragged_take(doc, example, w_start, w_len)
    f_q = tf.gather(q_ids, example)
    ids = tf.concat([column(self.vocab.cls_id), f_q, column(self.vocab.sep_id),
                     window_ids, column(self.vocab.sep_id)], axis=1)
    types = tf.concat([tf.zeros_like(ids[:, :1]), tf.zeros_like(f_q),
                       tf.zeros_like(ids[:, :1]), tf.ones_like(window_ids),
                       tf.ones_like(ids[:, :1])], axis=1)
    # Windows fitted to the call: padded to its longest window, not to
    # seq_length, and encoded in length-ordered chunks each cut to its own
    # longest (the offline n-best ignores padding positions alike).
    inputs = {
        "input_word_ids": tf.cast(ids.to_tensor(self.vocab.pad_id), tf.int32),
        "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0), tf.int32),
        "input_type_ids": tf.cast(types.to_tensor(0), tf.int32)}
    outputs = self._span_logits(inputs)
    real = tf.cast(inputs["input_mask"], tf.bool)
    start_logits, end_logits = (
        tf.where(real, tf.cast(x, tf.float64), -float("inf")) for x in outputs)
    return self._choose(start_logits, end_logits, example, w_start, w_len,
                        f_q_len, windows, char_begin, char_end, context)

  def _logits(self, inputs):
    outputs = self.model(inputs, training=False)
    if isinstance(outputs, dict):
      outputs = (outputs["start_logits"], outputs["end_logits"])
    return tuple(tf.cast(x, tf.float32) for x in outputs)

  def _span_logits(self, inputs):
    """(start, end) logits of every window: in length order, at most
    encoder_batch_windows windows at a time, each chunk cut to its longest
    window (memory bounded; no position pays for another window's length)."""
    return length_chunks.encode_by_length(self._logits, inputs,
                                          self.encoder_batch_windows)

  def _max_context(self, example, w_start, w_len, windows, token):
    """[features, positions]: whether the feature's window gives the token
    its most context (the first such window on ties, as offline).

    A token lies in at most ceil(seq_length / doc_stride) windows on either
    side of its own, so only those are scored: memory is linear in the
    number of windows.
    """
    n_feat = tf.shape(example, tf.int64)[0]
    first = tf.gather(tf.cumsum(windows, exclusive=True), example)
    k_self = tf.range(n_feat) - first
    reach = -(-self.seq_length // self.doc_stride)
    d = tf.range(-reach, reach + 1, dtype=tf.int64)[tf.newaxis, tf.newaxis]
    k = k_self[:, tf.newaxis, tf.newaxis] + d  # [F, 1, D]
    ex_windows = tf.gather(windows, example)[:, tf.newaxis, tf.newaxis]
    rows = tf.clip_by_value(tf.range(n_feat)[:, tf.newaxis, tf.newaxis] + d,
                            0, tf.maximum(n_feat - 1, 0))
    o_start, o_len = tf.gather(w_start, rows), tf.gather(w_len, rows)
    t = token[:, :, tf.newaxis]
    contains = ((k >= 0) & (k < ex_windows) & (t >= o_start) &
                (t <= o_start + o_len - 1))
    score = (tf.cast(tf.minimum(t - o_start, o_start + o_len - 1 - t),
                     tf.float64) + 0.01 * tf.cast(o_len, tf.float64))
    score = tf.where(contains, score, tf.constant(-1e300, tf.float64))
    best = tf.reduce_max(score, axis=2, keepdims=True)
    best_d = tf.reduce_min(tf.where(score == best, d, reach + 1), axis=2)
    return best_d == 0

  def _choose(self, start_logits, end_logits, example, w_start, w_len, f_q_len,
              windows, char_begin, char_end, context):
    batch = tf.shape(context)[0]
    length = tf.shape(start_logits, tf.int64)[1]
    n = tf.minimum(tf.constant(self.n_best, tf.int64), length)
    pos = tf.range(length)[tf.newaxis]  # [1, L]
    offset = f_q_len[:, tf.newaxis] + 2
    in_passage = (pos >= offset) & (pos < offset + w_len[:, tf.newaxis])
    token = w_start[:, tf.newaxis] + pos - offset  # passage token index
    max_context = in_passage & self._max_context(example, w_start, w_len,
                                                 windows, token)
    # n-best starts and ends (top_k puts the lower index first on ties, like
    # the stable argsort offline).
    s_val, s_pos = tf.math.top_k(start_logits, tf.cast(n, tf.int32))
    e_val, e_pos = tf.math.top_k(end_logits, tf.cast(n, tf.int32))
    s_pos, e_pos = tf.cast(s_pos, tf.int64), tf.cast(e_pos, tf.int64)
    s_ok = tf.gather(max_context, s_pos, batch_dims=1)
    e_ok = tf.gather(in_passage, e_pos, batch_dims=1)
    s_p, e_p = s_pos[:, :, tf.newaxis], e_pos[:, tf.newaxis, :]
    valid = (s_ok[:, :, tf.newaxis] & e_ok[:, tf.newaxis, :] & (e_p >= s_p) &
             (e_p - s_p + 1 <= self.max_answer_length))
    cand = s_val[:, :, tf.newaxis] + e_val[:, tf.newaxis, :]  # [F, n, n]
    cand = tf.reshape(tf.where(valid, cand, -float("inf")), [-1, n * n])
    # Best per example, first in (window, start rank, end rank) order.
    feat_best = tf.reduce_max(cand, axis=1)
    ex_best = tf.math.unsorted_segment_max(feat_best, example, batch)
    flat = tf.reshape(cand, [-1])
    order = tf.range(tf.size(flat, tf.int64))
    row_example = tf.repeat(example, n * n)
    is_best = (flat == tf.gather(ex_best, row_example)) & (flat > -float("inf"))
    big = tf.size(flat, tf.int64)
    choice = tf.math.unsorted_segment_min(
        tf.where(is_best, order, big), row_example, batch)
    found = choice < big
    choice = tf.minimum(choice, big - 1)
    f = choice // (n * n)
    s = tf.gather_nd(s_pos, tf.stack([f, choice % (n * n) // n], 1))
    e = tf.gather_nd(e_pos, tf.stack([f, choice % n], 1))
    f_offset = tf.gather(offset[:, 0], f)
    f_start = tf.gather(w_start, f)
    ex = tf.range(tf.cast(batch, tf.int64))
    s_tok = tf.stack([ex, f_start + s - f_offset], 1)
    e_tok = tf.stack([ex, f_start + e - f_offset], 1)
    safe = lambda i: tf.where(found[:, tf.newaxis], i, 0)  # pylint: disable=unnecessary-lambda-assignment
    start_char = tf.gather_nd(char_begin, safe(s_tok))
    end_char = tf.gather_nd(char_end, safe(e_tok))
    best_score = tf.where(found, tf.gather(ex_best, ex), 0.0)
    out = {"score": tf.cast(best_score, tf.float32)}
    answered = found
    if self.version_2:
      null = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0],
                                          example, batch)
      answered = found & (null - best_score <= self.threshold)
      out["has_answer"] = answered
    start_char = tf.where(answered, start_char, -1)
    end_char = tf.where(answered, end_char, -1)
    out["answer_start"] = tf.cast(start_char, tf.int32)
    out["answer_end"] = tf.cast(end_char, tf.int32)
    out["answer_text"] = self._substr(context, start_char, end_char)
    return out

  @staticmethod
  def _substr(context, start_char, end_char):
    return tf.strings.substr(context, tf.maximum(start_char, 0),
                             tf.maximum(end_char - start_char, 0),
                             unit="UTF8_CHAR")

  def signatures(self) -> Dict[str, tf.types.experimental.ConcreteFunction]:
    fn = self.answer.get_concrete_function()
    return {"answer": fn, "serving_default": fn}
