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

"""Bad Hugging Face files give one line naming the file (issue 26, fault 13).

A truncated model.safetensors used to raise safetensors' SafetensorError
without the file's name; a string where config.json has a number, a
TypeError deep in the conversion.
"""

import os
import re

import pytest

from test_convert_checkpoint import _mutated, _run_tool, _set, tiny_hf  # noqa: F401  pylint: disable=unused-import


def _truncate_weights(d):
  path = os.path.join(d, "model.safetensors")
  os.truncate(path, os.path.getsize(path) // 2)


@pytest.mark.parametrize("config_fn,message", [
    (None, r"cannot read {bad}/model.safetensors \(SafetensorError: .+\); it "
     r"is truncated or corrupt: download or copy it again"),
    (_set("hidden_size", "384"), r"{bad}/config.json: hidden_size must be an "
     r"integer, got '384'; fix it in config.json"),
    (_set("num_attention_heads", True), r"{bad}/config.json: "
     r"num_attention_heads must be an integer, got True; fix it in "
     r"config.json"),
], ids=["truncated_weights", "string_number", "bool_number"])
def test_bad_files_are_one_line_naming_the_file(tiny_hf, tmp_path, capsys,
                                                config_fn, message):
  bad = _mutated(tiny_hf, tmp_path, None, config_fn)
  if config_fn is None:
    _truncate_weights(bad)
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={bad}",
                      f"--output={tmp_path / 'out'}")
  assert rc == 1
  assert out.err.count("\n") == 1, out.err
  assert re.fullmatch("convert_checkpoint: error: " +
                      message.format(bad=re.escape(bad)) + "\n", out.err), (
                          out.err)
  assert not os.path.exists(tmp_path / "out" / "params.yaml")
