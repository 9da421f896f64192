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

"""SpanBERT (Joshi et al., 2019) as a TensorFlow Model Garden style package.

Sets TF_USE_LEGACY_KERAS=1 (and, through console.setup_before_tensorflow,
TF_CPP_MIN_LOG_LEVEL) before anything imports TensorFlow, so that tf.keras is
tf_keras and mixed-precision policies reach Model Garden's layers.
"""

import os
import sys

if "tensorflow" in sys.modules and os.environ.get("TF_USE_LEGACY_KERAS") != "1":
  # TensorFlow was imported first; the setting below can no longer reach it.
  sys.stderr.write(
      "official_spanbert: warning: tensorflow was imported before "
      "official_spanbert with TF_USE_LEGACY_KERAS unset; import "
      "official_spanbert first (or export TF_USE_LEGACY_KERAS=1).\n")
os.environ["TF_USE_LEGACY_KERAS"] = "1"
# Quiet by default (TF's C++ log, known third-party warnings); --verbosity /
# -v on the command line gives the detail back (console.py).
from official_spanbert.utils import console as _console  # noqa: E402
_console.setup_before_tensorflow()

__version__ = "0.1.0"
