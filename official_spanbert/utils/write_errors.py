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

"""Whether a failed write ran out of space (a full disk, a quota, a file
size limit), for the tools that then print one line instead of a traceback.
"""

import errno

import tensorflow as tf

# What a write reports on a full disk (or over a quota or file size limit).
_REASONS = {errno.ENOSPC: "No space left on device",
            errno.EDQUOT: "Disk quota exceeded",
            errno.EFBIG: "File too large"}


def out_of_space(e: BaseException) -> str:
  """The reason ("No space left on device", ...) if `e` is a write that
  failed for lack of space, else ""."""
  if isinstance(e, OSError) and e.errno in _REASONS:
    return _REASONS[e.errno]
  message = e.message if isinstance(e, tf.errors.OpError) else str(e)
  return next((r for r in _REASONS.values() if r in message), "")
