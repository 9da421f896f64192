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

"""Runs spanbert-export-savedmodel, entering the export only when told.

Used by test_serving_reliability.py to start two exports at one moment:
  python concurrent_export.py GO_FILE NOW [export_savedmodel flags]
touches GO_FILE.ready-<pid> once the model is built, waits for GO_FILE, and
exports as if the time were NOW, so that two exports contend for one version.
"""

import os
import sys
import time
import types

from absl import app

from official_spanbert.serving import export_lib
from official_spanbert.serving import pretraining_module
from official_spanbert.tools import export_savedmodel


def main():
  go, now = sys.argv.pop(1), float(sys.argv.pop(1))
  write = pretraining_module.SpanBertServingModule.write
  export_lib.time = types.SimpleNamespace(time=lambda: now)

  def export_when_told(*args, **kwargs):
    with open(f"{go}.ready-{os.getpid()}", "w"):
      pass
    while not os.path.exists(go):
      time.sleep(0.005)
    return write(*args, **kwargs)

  pretraining_module.SpanBertServingModule.write = export_when_told
  app.run(export_savedmodel.main)


if __name__ == "__main__":
  main()
