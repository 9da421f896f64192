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

"""Loads an exported SavedModel with only tensorflow + tensorflow_text.

Used by test_pretraining_export.py in a fresh subprocess:
  python serving_client.py EXPORT_DIR REQUESTS.npz OUT.npz
REQUESTS.npz holds arrays named `<signature>:<input>`; OUT.npz gets
`<signature>:<output>`.
"""

import os
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf.text ops)


def predict(loaded, request_bytes: bytes) -> bytes:
  """A serialized PredictRequest -> a serialized PredictResponse, through
  the SavedModel's signature as tensorflow_model_server's Predict does."""
  from tensorflow_serving.apis import predict_pb2  # pylint: disable=g-import-not-at-top
  request = predict_pb2.PredictRequest.FromString(request_bytes)
  fn = loaded.signatures[request.model_spec.signature_name]
  result = fn(**{k: tf.constant(tf.make_ndarray(v))
                 for k, v in request.inputs.items()})
  response = predict_pb2.PredictResponse()
  for k, v in result.items():
    response.outputs[k].CopyFrom(tf.make_tensor_proto(v.numpy()))
  return response.SerializeToString()


def assert_round_trip(loaded, export_dir, signature, inputs, model_name=""):
  """A PredictRequest of `inputs` through predict() answers what calling
  the signature directly does, and every warmup record of the export runs.
  """
  from tensorflow_serving.apis import predict_pb2  # pylint: disable=g-import-not-at-top
  request = predict_pb2.PredictRequest()
  request.model_spec.name = model_name
  request.model_spec.signature_name = signature
  for key, value in inputs.items():
    request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
  back = predict_pb2.PredictResponse.FromString(
      predict(loaded, request.SerializeToString()))
  direct = loaded.signatures[signature](
      **{k: tf.constant(v) for k, v in inputs.items()})
  assert set(back.outputs) == set(direct)
  for key, value in direct.items():
    np.testing.assert_array_equal(tf.make_ndarray(back.outputs[key]),
                                  value.numpy())
  assert replay_warmup(loaded, export_dir) == set(loaded.signatures)


def replay_warmup(loaded, export_dir):
  """Runs every warmup request of an export as TF Serving does at load;
  returns the signature names they call."""
  from tensorflow_serving.apis import prediction_log_pb2  # pylint: disable=g-import-not-at-top
  path = os.path.join(export_dir, "assets.extra", "tf_serving_warmup_requests")
  seen = set()
  for raw in tf.data.TFRecordDataset(path).as_numpy_iterator():
    req = prediction_log_pb2.PredictionLog.FromString(raw).predict_log.request
    fn = loaded.signatures[req.model_spec.signature_name]
    fn(**{k: tf.constant(tf.make_ndarray(v)) for k, v in req.inputs.items()})
    seen.add(req.model_spec.signature_name)
  return seen


def main(export_dir, requests_path, out_path):
  assert "official_spanbert" not in sys.modules
  loaded = tf.saved_model.load(export_dir)
  requests = np.load(requests_path, allow_pickle=False)
  by_signature = {}
  for key in requests.files:
    signature, name = key.split(":")
    by_signature.setdefault(signature, {})[name] = requests[key]
  out = {}
  for signature, inputs in by_signature.items():
    fn = loaded.signatures[signature]
    result = fn(**{k: tf.constant(v) for k, v in inputs.items()})
    for name, value in result.items():
      value = value.numpy()
      if value.dtype == object:  # strings: store as fixed-width bytes
        value = value.astype(bytes)
      out[f"{signature}:{name}"] = value
  np.savez(out_path, **out)
  leaked = [m for m in sys.modules if m.startswith("official")]
  print("modules from official*:", leaked)
  return 1 if leaked else 0


if __name__ == "__main__":
  sys.exit(main(*sys.argv[1:]))
