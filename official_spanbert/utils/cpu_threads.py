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

"""TensorFlow's CPU thread pools sized to a CPU quota.

`fit_to_quota()` sets the intra- and inter-op pools to a container's CPU quota
where it is below the schedulable cores (unless TF_NUM_*_THREADS is set). See
docs/pretraining.md, "Speed by processor".
"""

import os
from typing import Optional

from absl import logging

from official_spanbert.utils import cpu_features

ENV = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def fit_to_quota(cgroup_root: str = cpu_features.CGROUP,
                 proc_cgroup: str = "/proc/self/cgroup") -> Optional[int]:
  """Sets TF's thread pools to the CPU quota when it is below the
  schedulable cores; returns that thread count, or None (no quota, a larger
  one, threads set by the environment, or TF already running)."""
  if any(os.environ.get(k) for k in ENV):
    return None
  try:
    schedulable = len(os.sched_getaffinity(0))
  except (AttributeError, OSError):  # not Linux: no cgroups either
    return None
  limit = cpu_features.cgroup_cpu_limit(cgroup_root, proc_cgroup)
  if not limit or limit >= schedulable:
    return None
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  try:
    tf.config.threading.set_intra_op_parallelism_threads(limit)
    tf.config.threading.set_inter_op_parallelism_threads(limit)
  except RuntimeError as e:  # the runtime was initialised already
    logging.warning("A CPU quota allows %d of %d cores, but TensorFlow's "
                    "thread pools could not be resized (%s); set %s=%d",
                    limit, schedulable, e, ENV[0], limit)
    return None
  logging.info("A CPU quota allows %d of %d cores: TensorFlow's thread pools "
               "set to %d thread%s", limit, schedulable, limit,
               "s" * (limit != 1))
  return limit
