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

"""Registers every official_spanbert experiment with Model Garden's exp_factory.

The one place that lists the experiment modules, as Model Garden's
official/common/registry_imports.py: binaries, tools, the demo, studies and
tests import this module, and dev/layout_report.py reads it to know which
modules form the "experiments" layer. A new `configs/*_experiments.py` adds
one line here.

  from official_spanbert import registry_imports  # noqa: F401
  params = exp_factory.get_exp_config("spanbert/squad_v1")
"""

# pylint: disable=unused-import
from official_spanbert.configs import pretraining_experiments  # noqa: F401
from official_spanbert.configs import classification_experiments  # noqa: F401
from official_spanbert.configs import squad_experiments  # noqa: F401
from official_spanbert.configs import coref_experiments  # noqa: F401
from official_spanbert.configs import span_ner_experiments  # noqa: F401
