"""Writes SpanBERT SavedModels in TF Serving's layout, with warmup requests."""

import os
import time
from typing import Dict, List, Optional, Sequence

import official_spanbert  # noqa: F401
import tensorflow as tf

from official.core import task_factory
from official_spanbert.configs import experiments  # noqa: F401  (registers)
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import serving_modules
from official_spanbert.serving import text_preprocessor as tp

WARMUP_TEXTS = (
    "SpanBERT predicts [MASK] [MASK] from the tokens around them.",
    "The quick brown fox jumps over the lazy dog.",
)


def build_model(params, checkpoint_path: Optional[str] = None):
  """The task's model, restored from a training/encoder checkpoint."""
  task = task_factory.get_task(params.task)
  model = task.build_model()
  if checkpoint_path:
    checkpoints.restore(model, checkpoint_path)
  return model


def _next_version(export_base: str) -> int:
  versions = [int(d) for d in (tf.io.gfile.listdir(export_base)
                               if tf.io.gfile.isdir(export_base) else [])
              if d.strip("/").isdigit()]
  return max(versions + [int(time.time()) - 1]) + 1


def warmup_requests(signature_inputs: Dict[str, Dict[str, Sequence]]
                    ) -> List[bytes]:
  """Serialized PredictionLog records, one per signature."""
  from tensorflow_serving.apis import predict_pb2  # pylint: disable=g-import-not-at-top
  from tensorflow_serving.apis import prediction_log_pb2  # pylint: disable=g-import-not-at-top
  records = []
  for name, inputs in signature_inputs.items():
    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = name
    for key, value in inputs.items():
      request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
    log = prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=request))
    records.append(log.SerializeToString())
  return records


def _write_warmup(export_dir: str, signature_inputs) -> str:
  extra = os.path.join(export_dir, "assets.extra")
  tf.io.gfile.makedirs(extra)
  path = os.path.join(extra, "tf_serving_warmup_requests")
  with tf.io.TFRecordWriter(path) as writer:
    for record in warmup_requests(signature_inputs):
      writer.write(record)
  return path


def _save(module, signatures, export_base, version, signature_inputs) -> str:
  """Saves into <export_base>/<version>, atomically (tmp dir + rename)."""
  export_dir = os.path.join(export_base, str(version))
  if tf.io.gfile.exists(export_dir):
    raise ValueError(f"{export_dir} already exists; pick another --version")
  tmp = os.path.join(export_base, f".tmp-{version}")
  if tf.io.gfile.exists(tmp):
    tf.io.gfile.rmtree(tmp)
  tf.saved_model.save(module, tmp, signatures=signatures)
  _write_warmup(tmp, signature_inputs)
  tf.io.gfile.rename(tmp, export_dir)
  return export_dir


def export(model, vocab_file: str, export_base: str, *,
           lower_case: bool = False, seq_length: int = 128, top_k: int = 5,
           max_masks: int = 20, version: Optional[int] = None,
           preprocessing_export_base: Optional[str] = None) -> Dict[str, str]:
  """Exports the serving and preprocessing SavedModels.

  Args:
    model: a SpanBertPretrainer with weights.
    vocab_file: its WordPiece vocab.
    export_base: TF Serving model base path; the model goes to
      <export_base>/<version>.
    lower_case: uncased tokenization.
    seq_length: packed length (longer text is truncated).
    top_k: candidates per masked position in fill_spans.
    max_masks: [MASK] tokens predicted per text.
    version: integer version (default: next free, >= the current time).
    preprocessing_export_base: base path of the preprocessing model (default
      <export_base>_preprocessing).

  Returns:
    {"model": dir, "preprocessing": dir}.
  """
  preprocessor = tp.TextPreprocessor(vocab_file, lower_case, seq_length)
  module = serving_modules.SpanBertServingModule(model, preprocessor, top_k,
                                                 max_masks)
  version = version or _next_version(export_base)
  texts = list(WARMUP_TEXTS)
  ids = preprocessor(tf.constant(texts))
  model_dir = _save(module, module.signatures(), export_base, version, {
      "serving_default": {"text": texts},
      "encode_pair": {"text": texts, "text_pair": texts[::-1]},
      "encode_ids": {k: ids[k].numpy() for k in ids},
      "fill_spans": {"text": texts},
  })
  pre = serving_modules.PreprocessingModule(preprocessor)
  pre_base = preprocessing_export_base or export_base.rstrip("/") + (
      "_preprocessing")
  pre_dir = _save(pre, pre.signatures(), pre_base, version, {
      "serving_default": {"text": texts},
      "encode_pair": {"text": texts, "text_pair": texts[::-1]},
  })
  return {"model": model_dir, "preprocessing": pre_dir}
