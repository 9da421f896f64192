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

"""tests/conftest.py's two tiers when one session runs both (`make test`):
a unit test and the processes it starts see no data folder, and the summary
counts each tier."""

import os
import subprocess
import sys
import types

import conftest


def test_a_unit_test_and_its_processes_see_no_data_folder():
  assert os.environ["SPANBERT_DATA_DIR"] == conftest.NO_DATA_DIR
  seen = subprocess.run(
      [sys.executable, "-c",
       "import os; print(os.environ['SPANBERT_DATA_DIR'])"],
      capture_output=True, text=True, check=True).stdout.strip()
  assert seen == conftest.NO_DATA_DIR


def test_the_summary_counts_each_tier():
  def report(tier):
    return types.SimpleNamespace(keywords={tier: 1, "test_x": 1})
  stats = {"passed": [report("unit"), report("unit"), report("integration")],
           "skipped": [report("integration")],
           "failed": [report("unit")],
           "": [types.SimpleNamespace(keywords={"unit": 1})]}
  assert conftest.tier_counts(stats) == {
      "unit": {"passed": 2, "failed": 1},
      "integration": {"passed": 1, "skipped": 1}}
