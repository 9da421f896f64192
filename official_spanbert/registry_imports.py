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

The one list of the modules that register them (`configs/<task>.py`, as
Model Garden's official/vision/configs/<task>.py), as Model Garden's
official/common/registry_imports.py; a new one adds one line here.
"""

# pylint: disable=unused-import
from official_spanbert.configs import pretraining  # noqa: F401
from official_spanbert.configs import classification  # noqa: F401
from official_spanbert.configs import squad  # noqa: F401
from official_spanbert.configs import coref  # noqa: F401
from official_spanbert.configs import span_ner  # noqa: F401
