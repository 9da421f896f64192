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

TensorFlow sizes its pools from the cores the process may be scheduled on,
not from a CPU quota (`docker --cpus`, a Kubernetes CPU limit). In a
container limited to 2 CPUs on a 64-core host, it runs 64 threads a pool,
and the quota throttles them. `fit_to_quota()` sets the intra- and inter-op
pools to the quota where it is lower than the schedulable cores. It does
nothing where TF_NUM_INTRAOP_THREADS or TF_NUM_INTEROP_THREADS is set. On 2
cores under a 1-CPU quota the demo-size step took 0.245 s with the pools at
1 thread, against 0.280 s at TF's default of 2 (benchmarks/RESULTS.md).

  threads = cpu_threads.fit_to_quota()   # before TensorFlow runs an op
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
