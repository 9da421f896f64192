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

"""Record bytes: tfrecord_writer.example_bytes writes a feature map in key
order, so the same records are the same bytes in every process (protobuf's
default map order changes from process to process)."""

import numpy as np
import tensorflow as tf

from official_spanbert.data import tfrecord_writer
from official_spanbert.data.pretraining.records import record_format


def _varint(n: int) -> bytes:
  out = b""
  while True:
    low, n = n & 0x7F, n >> 7
    out += bytes([low | (0x80 if n else 0)])
    if not n:
      return out


def _sorted_example(features) -> bytes:
  """The Example wire format with its map entries in key order, built entry
  by entry (field 1 of Example: Features; field 1 of Features: entries)."""
  entries = b"".join(
      tf.train.Features(feature={k: features[k]}).SerializeToString()
      for k in sorted(features))
  return b"\x0a" + _varint(len(entries)) + entries


def test_example_bytes_are_in_key_order():
  # Inserted in reverse order: protobuf's default serialization does not
  # give the sorted order for these.
  features = {f"feature_{c}": tfrecord_writer.int64_feature([i, i + 1])
              for i, c in enumerate("hgfedcba")}
  assert tfrecord_writer.example_bytes(features) == _sorted_example(features)


def test_a_pretraining_block_is_written_in_key_order():
  ids, starts = np.arange(5, 12), np.array([1, 0, 1, 1, 0, 1, 1])
  raw = record_format.serialize_block(ids, starts, segment_ids=np.zeros(7, np.int64),
                                      next_sentence_label=1)
  parsed = tf.train.Example.FromString(raw).features.feature
  assert raw == _sorted_example(dict(parsed))
  assert list(parsed["input_ids"].int64_list.value) == list(ids)
