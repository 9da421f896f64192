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


"""The demo's binary: `python -m official_spanbert.demo` and spanbert-demo.

It registers the experiments, as Model Garden's binaries do (the library,
pipeline.py, leaves that to its caller), and runs pipeline.main.

  python -m official_spanbert.demo --act=scratch --output_dir=/tmp/demo
"""

from official_spanbert.utils import console

if __name__ == "__main__":  # before TensorFlow is imported
  console.prefer_onednn()

from official_spanbert import registry_imports  # noqa: E402,F401  pylint: disable=unused-import,g-import-not-at-top
from official_spanbert.demo import pipeline  # noqa: E402  pylint: disable=g-import-not-at-top


def run():
  """The console script: the demo's flags, then pipeline.main."""
  pipeline.run()


if __name__ == "__main__":
  run()
