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

Used by test_export.py in a fresh subprocess:
  python serving_client.py EXPORT_DIR REQUESTS.npz OUT.npz
REQUESTS.npz holds arrays named `<signature>:<input>`; OUT.npz gets
`<signature>:<output>`.
"""

import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tf.text ops)


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
