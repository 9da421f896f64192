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


"""modeling/checkpoints.py: what resolve() says of a directory without one."""

import pytest

from official_spanbert.modeling import checkpoints


def test_a_hugging_face_directory_names_the_conversion(tmp_path):
  """Issue 48 item 11: an HF directory as init_checkpoint said only 'no
  checkpoint in directory'."""
  for name in ("config.json", "model.safetensors", "vocab.txt"):
    (tmp_path / name).write_text("{}")
  with pytest.raises(ValueError) as e:
    checkpoints.resolve(str(tmp_path))
  assert str(e.value) == (
      f"no checkpoint in directory {tmp_path}: it holds a Hugging Face model; "
      "convert it first with spanbert-convert-checkpoint --direction=hf_to_tf "
      f"--input={tmp_path} --output=<a new directory>, and use that as the "
      "checkpoint")


def test_a_model_pt_directory_names_fairseq_to_tf(tmp_path):
  (tmp_path / "model.pt").write_bytes(b"")
  with pytest.raises(ValueError, match="--direction=fairseq_to_tf "
                     f"--input={tmp_path}/model.pt "):
    checkpoints.resolve(str(tmp_path))


def test_an_empty_directory_is_no_checkpoint(tmp_path):
  with pytest.raises(ValueError) as e:
    checkpoints.resolve(str(tmp_path))
  assert str(e.value) == f"no checkpoint in directory {tmp_path}"
