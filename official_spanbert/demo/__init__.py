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

"""The end-to-end demo (`make demo`, `spanbert-demo`): see pipeline.py.

corpus.py (the embedded standard-library corpus) imports no TensorFlow; the
pipeline's names are loaded on first use, so `spanbert-build-demo-corpus`
stays light.
"""

from official_spanbert.utils import console

_PIPELINE_NAMES = ("run_demo", "DEFAULT_SENTENCE", "DEFAULT_STEPS")


def __getattr__(name):
  if name == "run":  # spanbert-demo: the binary's, which registers experiments
    console.prefer_onednn()
    from official_spanbert.demo import __main__ as binary  # pylint: disable=g-import-not-at-top
    return binary.run
  if name in _PIPELINE_NAMES:
    from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
    return getattr(pipeline, name)
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
