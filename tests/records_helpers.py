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

"""What the pretraining-records tests share: the tool, its arguments and
errors, and a slice of the real corpus."""

import os
import sys

import pytest

from conftest import TOOLS, data_path, first_lines

# tools/create_pretraining_data.py
TOOL = os.path.join(TOOLS, "create_pretraining_data.py")


@pytest.fixture(scope="module")
def corpus_slice(tmp_path_factory):
  """About 300 KB of real prose from three corpus files (whole documents)."""
  d = tmp_path_factory.mktemp("slice")
  return [first_lines(data_path("corpus", name), 100_000, str(d / name))
          for name in ("linux-doc.txt", "austen.txt", "python-doc.txt")]


def tool_args(input_file, vocab, prefix, *flags):
  return [sys.executable, TOOL, f"--input_file={input_file}",
          f"--vocab_file={vocab}", f"--output_prefix={prefix}", "--noprogress",
          *flags]


def errors(stderr):
  """The tool's error lines (TensorFlow's start-up logging may precede them)."""
  assert "Traceback" not in stderr, stderr
  return [l for l in stderr.splitlines()
          if l.startswith("create_pretraining_data:")]
