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

"""int8 exports: post-training static quantization of a module's model.

`quantize_module(module, run)` replaces the Keras model that a serving
module calls (`module.model`, the task model on the encoder's dict inputs)
by an int8 graph made by Intel Neural Compressor's TensorFlow backend
(`neural-compressor-tf`, the `int8` extra): the encoder's projections are
first made MatMuls (modeling/matmul_projections.py), the model is saved,
calibrated on a few hundred windows of the run's OWN training records
(task.train_data.input_path; never dev or test) and rewritten into
TensorFlow's oneDNN int8 ops. The module's tf.functions then call that
graph, so the export keeps its signatures and loads in plain TensorFlow
(+ tensorflow_text). registry.export calls it for `precision: int8`.

Example:
  module = classify_module.ClassifyModule.from_run(run, params)
  info = quantization.quantize_module(module, run)  # module.model is int8
  module.write("/models/semeval")
"""

import collections
import contextlib
import logging
import os
import tempfile
from typing import Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

from official_spanbert.modeling import matmul_projections
from official_spanbert.serving import classify_module
from official_spanbert.serving import qa_module

# The modules whose `.model` is the task model on the encoder's dict inputs.
SUPPORTED = (qa_module.QuestionAnsweringModule, classify_module.ClassifyModule)
# How many training windows calibrate the activations' ranges, and in what
# batches (each cut to its longest window, as served).
CALIBRATION_EXAMPLES = 256
CALIBRATION_BATCH = 8
# INC's StaticQuantConfig arguments (and fp32_ops, _static_config): its
# defaults (int8, symmetric, per-tensor, minmax), but each layer's second
# feed-forward projection (its input is GELU's output) stays float32. On the
# SemEval relation model (benchmarks/RESULTS.md#int8-exports-issue-57-item-1)
# all 36 projections in int8 lost 1.35 points of test macro-F1 (92.5% of the
# labels kept); these 6 in float32 lost 0.60 (97.6% kept). Per-channel
# weights or asymmetric activations changed no label there.
FFN_OUTPUT = r".*transformer/layer_[0-9]+/output/MatMul"
STATIC_CONFIG: Dict[str, object] = {"fp32_ops": [FFN_OUTPUT]}
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


def check_supported(module_cls: type) -> None:
  """Raises QuantizationError (one line) for a module class int8 does not
  take yet, or when neural-compressor-tf is missing."""
  if not issubclass(module_cls, SUPPORTED):
    served = ", ".join(s for cls in SUPPORTED for s in cls.SIGNATURES)
    raise QuantizationError(
        f"--precision=int8 is not supported for {module_cls.__name__} "
        f"({', '.join(module_cls.SIGNATURES)}) yet; it is for {served}: "
        "export this one with --precision=float32 or bfloat16")
  _inc()


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


def _static_config(inc, config: Optional[Dict[str, object]]):
  """INC's StaticQuantConfig of `config` (its arguments, and `fp32_ops`:
  regular expressions of op names kept in float32)."""
  config = dict(STATIC_CONFIG if config is None else config)
  fp32_ops = config.pop("fp32_ops", ())
  static = inc.StaticQuantConfig(**config)
  for pattern in fp32_ops:
    static.set_local(pattern, inc.StaticQuantConfig(weight_dtype="fp32",
                                                    act_dtype="fp32"))
  return static


def quantize_model(model, batches: List[Dict[str, np.ndarray]],
                   workdir: Optional[str] = None,
                   config: Optional[Dict[str, object]] = None
                   ) -> Dict[str, object]:
  """A Keras model on the encoder's dict inputs, in int8 (`config`: INC's
  StaticQuantConfig arguments, default STATIC_CONFIG).

  Returns:
    {"model": the QuantizedModel, "ops_before" / "ops_after": op counts of
    the float32 and int8 graphs}.
  """
  inc = _inc()
  # Called first: Keras creates the attention's projections when it builds.
  structure = model({k: tf.constant(v) for k, v in batches[0].items()},
                    training=False)
  matmul_projections.use_matmul_projections(model)
  structure = tf.nest.map_structure(lambda _: 0, structure)
  spec = [tf.TensorSpec([None, None], tf.int32, name=k) for k in INPUTS]

  def serve(input_word_ids, input_mask, input_type_ids):
    out = model(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                     input_type_ids=input_type_ids), training=False)
    return {f"output_{i:03d}": tf.cast(t, tf.float32)
            for i, t in enumerate(tf.nest.flatten(out))}

  fn = tf.function(serve, input_signature=spec).get_concrete_function()
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
      q = inc.quantize_model(path, _static_config(inc, config),
                             calib_dataloader=_Loader(batches),
                             calib_iteration=len(batches))
  if q is None:
    raise QuantizationError("Intel Neural Compressor returned no int8 model "
                            "(its log above says why)")
  graph_def = q.graph_def
  return {"model": QuantizedModel(graph_def, [_tensor_name(k) for k in INPUTS],
                                  outputs, structure),
          "ops_before": ops_before, "ops_after": op_counts(graph_def)}


def quantize_module(module, run, workdir: Optional[str] = None,
                    examples: int = CALIBRATION_EXAMPLES,
                    config: Optional[Dict[str, object]] = None
                    ) -> Dict[str, object]:
  """Makes `module` (of a SUPPORTED class) call its model in int8,
  calibrated on `examples` windows of run.params.task.train_data's records
  (the module's tf.functions must not have been traced yet).

  Returns:
    quantize_model's dict, and "calibration_files": the records read.

  Raises:
    QuantizationError: (one line) an unsupported module, no training
      records, or no neural-compressor-tf.
  """
  check_supported(type(module))
  files = training_files(run.params)
  seq_length = run.params.task.train_data.seq_length
  batches = calibration_batches(files, seq_length, examples)
  out = quantize_model(module.model, batches, workdir, config)
  module.model = out["model"]
  out["calibration_files"] = files
  return out
