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

"""int8 exports: post-training static quantization of a module's encoder.

`quantize_module(module, run)` quantizes what the serving module says
(`module.encoder_part(run)`, an `EncoderPart`): the task model on the encoder's
dict inputs (`answer`, `classify`, `classify_relation`) or the bare encoder
(`extract_entities`, `encode_spans`, `resolve`, `fill_spans`; their heads,
span scorers and MLM / SBO heads stay float32). Intel Neural Compressor's
TensorFlow backend (`neural-compressor-tf`, the `int8` extra) makes it an
int8 graph: the model is first laid out for it (modeling/int8_layout.py:
projections as MatMuls; the attention's core in bfloat16 where the CPU has
it; the feed-forward outputs' outlier channels computed apart,
modeling/ffn_outliers.py, found on the calibration windows), saved, calibrated
on a few hundred windows of the run's OWN training data (task.train_data;
never dev or test) and rewritten into TensorFlow's oneDNN int8 ops, each
projection's bias, GELU and bfloat16 cast then fused into its int8 MatMul
(int8_epilogues.py). The module's tf.functions then call that graph, so the
export keeps its signatures and loads in plain TensorFlow (+ tensorflow_text).
registry.export calls it for `precision: int8`.

Example:
  module = ner_module.SpanNerServingModule.from_run(run, params)
  info = quantization.quantize_module(module, run)  # its encoder is int8
  module.write("/models/litbank_ner")
"""

import collections
import contextlib
import copy
import dataclasses
import logging
import os
import tempfile
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from official.core import task_factory
from official_spanbert.modeling import ffn_outliers
from official_spanbert.modeling import int8_layout
from official_spanbert.serving import frozen_layer_norm
from official_spanbert.serving import int8_epilogues
from official_spanbert.serving import serving_module
from official_spanbert.utils import cpu_features

# How many training windows calibrate the activations' ranges, and in what
# batches (each cut to its longest window, as served).
CALIBRATION_EXAMPLES = 256
CALIBRATION_BATCH = 8
# INC's StaticQuantConfig arguments (and float_ops, _static_config): its
# defaults (int8, symmetric, per-tensor, minmax) for every projection. The
# feed-forward outputs are int8 too, with their outlier channels computed
# apart (modeling/ffn_outliers.py, split_outliers): made int8 whole, their
# input's one or two outlier channels cost the fine-tuned SQuAD model 3.3
# F1 (benchmarks/RESULTS.md, "The feed-forward outputs in int8"). FFN_OUTPUT
# names them, for a config that keeps them float instead
# ({"float_ops": [FFN_OUTPUT]}, the default before that split).
FFN_OUTPUT = r".*transformer/layer_[0-9]+/output/MatMul"
STATIC_CONFIG: Dict[str, object] = {}
# Every op outside the transformer blocks stays float32 whatever the config
# says: the type embeddings' one-hot MatMul, the pooler, the heads. They
# run once a window or have one or two outputs, so int8 saves no time
# there and only adds its error (the dense before a head reads the last
# LayerNorm's output, whose range a per-tensor int8 scale spends on a few
# outlier channels). Held-out training windows: benchmarks/RESULTS.md,
# "Only the blocks in int8, and the LayerNorms' epsilon".
OUTSIDE_BLOCKS = r"(?!.*transformer/layer_[0-9]+/)"
INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
# The records' names of the inputs (data/finetuning: classification, squad).
RECORD_FEATURES = ("input_ids", "input_mask", "segment_ids")
MISSING = ("--precision=int8 needs Intel Neural Compressor's TensorFlow "
           "backend at export (not to serve): pip install "
           "'official_spanbert[int8]' (neural-compressor-tf==3.10)")


class QuantizationError(ValueError):
  """An int8 export that cannot be made (one line)."""


def _inc():
  try:
    from neural_compressor import tensorflow as inc  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise QuantizationError(MISSING) from None
  logging.getLogger("neural_compressor").setLevel(logging.WARNING)
  return inc


@dataclasses.dataclass
class EncoderPart:
  """The part of a serving module that runs the encoder: what `precision:
  int8` quantizes, and what the other precisions lay out for serving
  (attention_layout.serving_layout).

  Attributes:
    model: called as `model(inputs, training=False)` on a dict of INPUTS
      ([batch, length] int32); its outputs (a nest of tensors) are the int8
      graph's.
    install: puts the int8 graph (a QuantizedModel, called as `model` is)
      everywhere the module's functions call `model`.
    windows: `windows(run, examples)`, the calibration batches (dicts of
      INPUTS) from the run's training data: `records_windows` or
      `loader_windows`.
  """
  model: Callable
  install: Callable[["QuantizedModel"], None]
  windows: Callable[..., List[Dict[str, np.ndarray]]]


def task_model_part(module) -> EncoderPart:
  """The EncoderPart of a module whose `model` is the task model on the
  encoder's dict inputs (encoder and head: `answer`, `classify`),
  calibrated on the run's training records."""
  return EncoderPart(module.model, lambda q: setattr(module, "model", q),
                     records_windows)


def check_supported(module_cls: type) -> None:
  """Raises QuantizationError (one line) for a module class that takes no
  int8 (no `encoder_part` of its own), or when neural-compressor-tf is
  missing."""
  if not serving_module.has_encoder_part(module_cls):
    raise QuantizationError(
        f"--precision=int8 is not supported for {module_cls.__name__} "
        f"({', '.join(module_cls.SIGNATURES)}): export it with "
        "--precision=float32 or bfloat16")
  _inc()


class EncoderOutputs(tf.Module):
  """A Model Garden encoder's `sequence_output` and `pooled_output` only
  (not every layer's `encoder_outputs`): what the int8 graph returns."""

  KEYS = ("sequence_output", "pooled_output")

  def __init__(self, encoder):
    super().__init__(name="encoder_outputs")
    self.encoder = encoder

  def __call__(self, inputs, training=False):
    out = self.encoder(inputs, training=training)
    return {k: out[k] for k in self.KEYS if k in out}


def training_files(params) -> List[str]:
  """The run's training record files (task.train_data.input_path)."""
  data = params.task.train_data
  path = data and data.input_path
  files = [f for p in (path or "").split(",") if p
           for f in sorted(tf.io.gfile.glob(p))]
  if not files:
    raise QuantizationError(
        "--precision=int8 calibrates on the run's training records, but "
        f"task.train_data.input_path ({path or 'unset'}) names no file: "
        "point it at the records the run was trained on")
  return files


def calibration_batches(files: Sequence[str], seq_length: int,
                        examples: int = CALIBRATION_EXAMPLES,
                        batch: int = CALIBRATION_BATCH
                        ) -> List[Dict[str, np.ndarray]]:
  """The first `examples` windows of `files` as the model's inputs, in
  batches each cut to its longest window."""
  spec = {k: tf.io.FixedLenFeature([seq_length], tf.int64)
          for k in RECORD_FEATURES}
  data = tf.data.TFRecordDataset(list(files)).take(examples).batch(batch)
  out = []
  for records in data:
    rows = tf.io.parse_example(records, spec)
    longest = int(tf.reduce_max(tf.reduce_sum(rows["input_mask"], 1)))
    out.append({name: rows[key][:, :max(longest, 1)].numpy().astype(np.int32)
                for name, key in zip(INPUTS, RECORD_FEATURES)})
  if not out:
    raise QuantizationError(f"the training records {files[0]} hold no "
                            "window to calibrate on")
  return out


def records_windows(run, examples: int = CALIBRATION_EXAMPLES
                    ) -> List[Dict[str, np.ndarray]]:
  """Calibration batches from the run's fine-tuning records (QA and
  classification: input_ids / input_mask / segment_ids), in file order; of
  a run trained from its source file (a SQuAD JSON, which its task converts
  as it trains), the windows its task's loader makes (loader_windows)."""
  files = training_files(run.params)
  try:
    return calibration_batches(files, run.params.task.train_data.seq_length,
                               examples)
  except tf.errors.DataLossError:  # not TFRecords: the task's source file
    return loader_windows(run, examples)


def _rows(features, name: str, like: np.ndarray) -> np.ndarray:
  if name not in features:
    if like is None:
      raise KeyError(f"the loader's features have no {name!r}")
    return np.zeros_like(like)
  value = np.asarray(features[name])
  return value.reshape(-1, value.shape[-1]).astype(np.int32)


def _first_windows(dataset, examples: int):
  """The features of `dataset`'s first elements holding `examples` rows."""
  found = 0
  for element in dataset:
    features = element[0] if isinstance(element, (tuple, list)) else element
    yield {k: np.asarray(v) for k, v in features.items()
           if k in ("input_word_ids", "input_mask", "input_type_ids")}
    found += int(np.prod(np.shape(features["input_mask"])[:-1]))
    if found >= examples:
      return


def loader_windows(run, examples: int = CALIBRATION_EXAMPLES,
                   batch: int = CALIBRATION_BATCH
                   ) -> List[Dict[str, np.ndarray]]:
  """Calibration batches of the encoder inputs that the run's own task
  loader makes of its training data (task.build_inputs(train_data), not
  shuffled): the first `examples` non-empty windows, in batches each cut to
  its longest. For tasks whose loader reads documents (NER, coreference)
  or masks blocks (pretraining); rows of [.., rows, length] are flattened.
  """
  config = copy.deepcopy(run.params.task)
  data = config.train_data
  if data is None or not data.input_path:
    raise QuantizationError(
        "--precision=int8 calibrates on the run's training data, but "
        "task.train_data.input_path is unset: point it at the data the run "
        "was trained on")
  data.is_training = False
  rows: Dict[str, List[np.ndarray]] = {k: [] for k in INPUTS}
  found = 0
  try:
    # A task that converts its input first (coreference's CoNLL) writes
    # into a scratch folder, not into the run's.
    with tempfile.TemporaryDirectory() as scratch:
      task = task_factory.get_task(config, logging_dir=scratch)
      elements = list(_first_windows(task.build_inputs(data), examples))
    for features in elements:
      ids = _rows(features, "input_word_ids", None)
      mask = _rows(features, "input_mask", ids)
      types = _rows(features, "input_type_ids", ids)
      keep = mask.sum(1) > 0
      for name, value in zip(INPUTS, (ids, mask, types)):
        rows[name].append(value[keep])
      found += int(keep.sum())
  except (OSError, ValueError, KeyError, tf.errors.OpError) as e:
    raise QuantizationError(
        "--precision=int8 could not read the run's training data "
        f"(task.train_data.input_path {data.input_path}) to calibrate on: "
        f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    ) from None
  if not found:
    raise QuantizationError(
        f"the training data {data.input_path} hold no window to calibrate on")
  # Windows of different loaders' batches may differ in width: pad to the
  # widest, then cut each calibration batch to its own longest.
  width = max(v.shape[1] for v in rows[INPUTS[0]])
  joined = {k: np.concatenate([np.pad(v, [(0, 0), (0, width - v.shape[1])])
                               for v in vs])[:examples]
            for k, vs in rows.items()}
  out = []
  for i in range(0, len(joined[INPUTS[0]]), batch):
    part = {k: v[i:i + batch] for k, v in joined.items()}
    longest = max(int(part["input_mask"].sum(1).max()), 1)
    out.append({k: v[:, :longest] for k, v in part.items()})
  return out


class _Loader:
  """INC's calibration loader: (inputs by tensor name, no label) batches."""

  def __init__(self, batches):
    self.batches = batches
    self.batch_size = len(batches[0][INPUTS[0]])

  def __iter__(self):
    for b in self.batches:
      yield dict(b), None

  def __len__(self):
    return len(self.batches)


class QuantizedModel(tf.Module):
  """The int8 graph, called as the Keras model was: inputs dict in, the
  float model's output structure out."""

  def __init__(self, graph_def, input_names, output_names, structure):
    super().__init__(name="int8_model")
    wrapped = tf.compat.v1.wrap_function(
        lambda: tf.compat.v1.import_graph_def(graph_def, name=""), [])
    graph = wrapped.graph
    self._fn = wrapped.prune(
        [graph.get_tensor_by_name(n) for n in input_names],
        [graph.get_tensor_by_name(n) for n in output_names])
    self._structure = structure

  def __call__(self, inputs, training=False):
    del training
    flat = self._fn(*[tf.cast(inputs[k], tf.int32) for k in INPUTS])
    return tf.nest.pack_sequence_as(self._structure, list(flat))


class _Fd2:
  """The process' stderr file descriptor, whatever sys.stderr is now."""

  def fileno(self):
    return 2


@contextlib.contextmanager
def _ranges_read_from_fd2():
  """INC reads the calibrated ranges from what the graph's Print ops write
  to file descriptor 2, capturing the fd of the sys.stderr it saw at import;
  when that was a replacement (pytest's, a console wrapper's), it captures
  nothing and fails ("list index out of range"): capture fd 2 itself."""
  from neural_compressor.tensorflow.utils import utility  # pylint: disable=g-import-not-at-top
  init = utility.CaptureOutputToFile.__init__
  before = init.__defaults__
  init.__defaults__ = (_Fd2(),)
  try:
    yield
  finally:
    init.__defaults__ = before


def _tensor_name(name: str) -> str:
  return name if ":" in name else name + ":0"


def op_counts(graph_def) -> Dict[str, int]:
  """{op type: count} of a GraphDef and its function library."""
  counts = collections.Counter(n.op for n in graph_def.node)
  for fn in graph_def.library.function:
    counts.update(n.op for n in fn.node_def)
  return dict(counts)


def float_dtype() -> tf.DType:
  """What the int8 graph's float parts compute in: bfloat16 where this CPU
  runs it natively (as --precision=bfloat16 asks), float32 elsewhere."""
  cpu = cpu_features.read()
  return tf.bfloat16 if cpu.native_bf16 and not cpu.isa_cap else tf.float32


def _static_config(inc, config: Optional[Dict[str, object]],
                   dtype: tf.DType):
  """INC's StaticQuantConfig of `config` (its arguments, and `float_ops`:
  regular expressions of op names kept out of int8, in `dtype`); ops
  outside the blocks (OUTSIDE_BLOCKS) in float32."""
  config = dict(STATIC_CONFIG if config is None else config)
  float_ops = config.pop("float_ops", ())
  static = inc.StaticQuantConfig(**config)
  name = {tf.bfloat16: "bf16", tf.float32: "fp32"}[dtype]
  for pattern in float_ops:
    static.set_local(pattern, inc.StaticQuantConfig(weight_dtype=name,
                                                    act_dtype=name))
  # INC matches op names with re.match: the lookahead takes every op
  # whose name is not inside a block.
  static.set_local(OUTSIDE_BLOCKS, inc.StaticQuantConfig(weight_dtype="fp32",
                                                         act_dtype="fp32"))
  return static


def quantize_model(model, batches: List[Dict[str, np.ndarray]],
                   workdir: Optional[str] = None,
                   config: Optional[Dict[str, object]] = None,
                   dtype: Optional[tf.DType] = None,
                   unfused: bool = False,
                   split_outliers: bool = True) -> Dict[str, object]:
  """A Keras model on the encoder's dict inputs, in int8 (`config`: INC's
  StaticQuantConfig arguments, default STATIC_CONFIG; `dtype`: what the
  parts left out of int8 compute in, default float_dtype(); `unfused`: also
  return INC's graph without int8_epilogues, "unfused_model", for
  comparisons;
  `split_outliers`: compute the feed-forward's outlier channels, found on
  `batches`, apart from its int8 output projection, ffn_outliers).

  Returns:
    {"model": the QuantizedModel, "ops_before" / "ops_after": op counts of
    the float32 and int8 graphs, "epilogues": what int8_epilogues.fuse moved
    into the int8 MatMuls, "layer_norms": LayerNorms fused with their
    epsilon (frozen_layer_norm.fuse's counts), "ffn_outliers": {block: outlier channels} split
    apart, "float_dtype": the dtype's name}.
  """
  inc = _inc()
  dtype = dtype or float_dtype()
  if dtype == tf.bfloat16:
    logging.getLogger(__name__).warning(
        "int8: the attention's core (scores, softmax, context) computes in "
        "bfloat16, which this CPU runs natively: serve "
        "on a CPU with AVX512-BF16 or AMX too (elsewhere they are emulated, "
        "slower), or export on the kind of CPU that will serve")
  # Called first: Keras creates the attention's projections when it builds.
  structure = model({k: tf.constant(v) for k, v in batches[0].items()},
                    training=False)
  outliers = ffn_outliers.find(model, batches) if split_outliers else {}
  ffn_outliers.split(model, outliers)
  int8_layout.int8_layout(model, None if dtype == tf.float32 else dtype)
  structure = tf.nest.map_structure(lambda _: 0, structure)
  spec = [tf.TensorSpec([None, None], tf.int32, name=k) for k in INPUTS]

  def serve(input_word_ids, input_mask, input_type_ids):
    out = model(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                     input_type_ids=input_type_ids), training=False)
    return {f"output_{i:03d}": tf.cast(t, tf.float32)
            for i, t in enumerate(tf.nest.flatten(out))}

  fn = tf.function(serve, input_signature=spec,
                   autograph=False).get_concrete_function()
  # The graph's output tensors, in the order of tf.nest.flatten(structure).
  outputs = [t.name for t in fn.outputs]
  ops_before = op_counts(fn.graph.as_graph_def())
  with tempfile.TemporaryDirectory(dir=workdir) as tmp:
    holder = tf.Module()
    # The variables, not the Keras model: no traces of its call methods.
    holder.weights = list(model.variables)
    path = os.path.join(tmp, "float32")
    tf.saved_model.save(holder, path, signatures=fn)
    with _ranges_read_from_fd2():
      q = inc.quantize_model(path, _static_config(inc, config, dtype),
                             calib_dataloader=_Loader(batches),
                             calib_iteration=len(batches))
  if q is None:
    raise QuantizationError("Intel Neural Compressor returned no int8 model "
                            "(its log above says why)")
  epsilon = frozen_layer_norm.keras_epsilon(model)
  graph_def, epilogues = int8_epilogues.fuse(q.graph_def, outputs)
  graph_def, layer_norms = frozen_layer_norm.fuse(graph_def, outputs, epsilon)
  inputs = [_tensor_name(k) for k in INPUTS]
  out = {"model": QuantizedModel(graph_def, inputs, outputs, structure),
         "ops_before": ops_before, "ops_after": op_counts(graph_def),
         "epilogues": epilogues, "layer_norms": layer_norms,
         "float_dtype": dtype.name,
         "ffn_outliers": {k: list(v.channels) for k, v in outliers.items()}}
  if unfused:
    # (Its LayerNorms with their epsilon too: only the epilogues differ.)
    out["unfused_model"] = QuantizedModel(
        frozen_layer_norm.fuse(q.graph_def, outputs, epsilon)[0], inputs,
        outputs, structure)
  return out


def quantize_module(module, run, workdir: Optional[str] = None,
                    examples: int = CALIBRATION_EXAMPLES,
                    config: Optional[Dict[str, object]] = None
                    ) -> Dict[str, object]:
  """Makes `module` compute its `encoder_part(run)` in int8, calibrated on
  `examples` windows of the run's training data (the module's tf.functions
  must not have been traced yet).

  Returns:
    quantize_model's dict, and "calibration_windows": how many windows.

  Raises:
    QuantizationError: (one line) a module that takes no int8, no training
      data, or no neural-compressor-tf.
  """
  check_supported(type(module))
  part = module.encoder_part(run)
  batches = part.windows(run, examples)
  out = quantize_model(part.model, batches, workdir, config)
  part.install(out["model"])
  out["calibration_windows"] = sum(len(b[INPUTS[0]]) for b in batches)
  return out
