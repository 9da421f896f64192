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

"""serving/export_lib.py: an export traces each function once.

tf.saved_model.save looks a module's tf.functions up again in its save
context (whose variable policy is part of tf.function's cache key) and, for
one without an input_signature, with its traces' named specs: a function
traced outside that context, or with other specs, was traced again (about
half of an export's CPU).
"""

import os

import pytest
import tensorflow as tf

from official_spanbert.serving import export_lib
from official_spanbert.serving import tfhub_export
from tensorflow_serving.apis import prediction_log_pb2


def _traces(fn) -> int:
  """The concrete functions of a tf.function without an input_signature:
  one per trace (listing one with a signature traces it)."""
  return len(fn._list_all_concrete_functions())  # pylint: disable=protected-access


class _Toy(tf.Module):
  """A signature over a shared inner function; the warmup runs the inner
  function itself (as the pretraining export's encode_ids warmup runs its
  preprocessor). `traced` counts the traces of each."""

  def __init__(self):
    super().__init__()
    self.traced = {"serve": 0, "inner": 0}

  @tf.function(autograph=False,
               input_signature=[tf.TensorSpec([None], tf.int32)])
  def inner(self, x):
    self.traced["inner"] += 1
    return x * 2

  @tf.function(autograph=False,
               input_signature=[tf.TensorSpec([None], tf.int32, name="x")])
  def serve(self, x):
    self.traced["serve"] += 1
    return {"y": self.inner(x)}

  def signatures(self):
    return {"serving_default": self.serve.get_concrete_function()}

  def warmup_inputs(self):
    return {"serving_default": {
        "x": self.inner(tf.constant([1, 2], tf.int32)).numpy()}}


def test_save_with_warmup_traces_each_function_once(tmp_path):
  toy = _Toy()
  export_lib.save_with_warmup(toy, str(tmp_path), toy.warmup_inputs)
  assert toy.traced == {"serve": 1, "inner": 1}
  records = list(tf.data.TFRecordDataset(
      os.path.join(tmp_path, "assets.extra", "tf_serving_warmup_requests")))
  log = prediction_log_pb2.PredictionLog.FromString(records[0].numpy())
  assert tf.make_ndarray(
      log.predict_log.request.inputs["x"]).tolist() == [2, 4]
  served = tf.saved_model.load(str(tmp_path)).signatures["serving_default"]
  assert served(x=tf.constant([3]))["y"].numpy().tolist() == [6]


def test_tfhub_preprocessor_is_traced_once(tmp_path, small_vocab):
  """The TF Hub preprocessor, built in tracing_for_save and saved as
  TFHubExport.write saves it: one trace per signature it was built for."""
  options = tf.saved_model.SaveOptions()
  with export_lib.tracing_for_save(options):
    pre = tfhub_export.Preprocessor(small_vocab, seq_length=16)
  tf.saved_model.save(pre, str(tmp_path), options=options)
  assert _traces(pre.__call__) == 1
  assert _traces(pre.tokenize.__call__) == 1
  assert _traces(pre.bert_pack_inputs.__call__) == 4  # 1-2 segments, rank 1-2
  loaded = tf.saved_model.load(str(tmp_path))
  text = tf.constant(["The cat sat.", ""])
  for key, value in pre(text).items():
    assert loaded(text)[key].numpy().tolist() == value.numpy().tolist(), key


def test_a_taken_version_is_refused_before_any_claim(tmp_path):
  """check_version_free (what spanbert-export-savedmodel asks before it
  loads the checkpoint) says what the claim says, and claims nothing."""
  base = tmp_path / "spanbert"
  (base / "7").mkdir(parents=True)
  export_lib.check_version_free(str(base), None)
  export_lib.check_version_free(str(base), 8)
  export_lib.check_version_free(str(tmp_path / "new"), 7)
  message = f"{base}/7 already exists; pick another --version"
  with pytest.raises(export_lib.VersionTakenError) as early:
    export_lib.check_version_free(str(base), 7)
  with pytest.raises(export_lib.VersionTakenError) as claimed:
    export_lib.claim_version([str(base)], 7)
  assert str(early.value) == str(claimed.value) == message
  assert sorted(os.listdir(base)) == ["7"]
