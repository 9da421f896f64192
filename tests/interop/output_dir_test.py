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

"""Overwrites that lost a run or mixed two models (issue 55, item 4).

`hf_to_tf --overwrite` into a training run's model_dir replaced its
params.yaml and `checkpoint` state file (and without --overwrite the refusal
called the run's params.yaml "an earlier conversion"); `tf_to_hf --overwrite`
into a Hugging Face model folder kept its tokenizer.json, which transformers
then loaded with the converted weights; `--output=<symlink> --overwrite`
replaced the link and left a `.tmp-….old` link beside it. The files written
here stand in for a conversion's (output_dir.converting is what every
conversion writes through).
"""

import os

import pytest

from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir


def _convert(out, kind, overwrite, names=None):
  """A conversion of `kind` writing `names` (default: its markers)."""
  with output_dir.converting(str(out), kind, overwrite=overwrite) as o:
    for name in names or kind.markers:
      with open(os.path.join(o.staging, name), "w", encoding="utf-8") as f:
        f.write("new\n")


def _training_run(d):
  d.mkdir()
  for name, text in (("params.yaml", "task: {}\n"),
                     ("checkpoint", 'model_checkpoint_path: "ckpt-30"\n'),
                     ("ckpt-30.index", "i"),
                     ("ckpt-30.data-00000-of-00001", "d")):
    (d / name).write_text(text)
  return sorted(os.listdir(d))


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_import_into_a_training_run_is_refused_naming_it(tmp_path,
                                                            overwrite):
  run = tmp_path / "run"
  before = _training_run(run)
  with pytest.raises(hf_files.ConversionError) as e:
    _convert(run, output_dir.IMPORT, overwrite)
  assert str(e.value) == (
      f"output {run} holds a training run (ckpt-30.index); a conversion does "
      "not replace it, even with --overwrite: choose a new or empty "
      "directory")
  assert sorted(os.listdir(run)) == before
  assert (run / "params.yaml").read_text() == "task: {}\n"
  assert sorted(os.listdir(tmp_path)) == ["run"]


def test_a_params_yaml_without_conversion_json_is_not_an_earlier_conversion(
    tmp_path):
  """A run before its first checkpoint (or a config folder): its
  params.yaml was called "an earlier conversion" and replaced with
  --overwrite."""
  run = tmp_path / "run"
  run.mkdir()
  (run / "params.yaml").write_text("task: {}\n")
  for overwrite in (False, True):
    with pytest.raises(hf_files.ConversionError, match=(
        rf"^output {run} holds params\.yaml but no conversion\.json \(not an "
        r"earlier conversion: a training run's or another program's file\); "
        r"a conversion does not replace it, even with --overwrite")):
      _convert(run, output_dir.IMPORT, overwrite)
  assert (run / "params.yaml").read_text() == "task: {}\n"


def test_an_earlier_conversion_is_still_replaced_with_overwrite(tmp_path):
  out = tmp_path / "out"
  _convert(out, output_dir.IMPORT, False)
  with pytest.raises(hf_files.ConversionError, match="an earlier conversion"):
    _convert(out, output_dir.IMPORT, False)
  _convert(out, output_dir.IMPORT, True)
  assert sorted(os.listdir(out)) == sorted(output_dir.IMPORT.markers)


@pytest.mark.parametrize("foreign", ["tokenizer.json", "added_tokens.json",
                                     "pytorch_model.bin",
                                     "model.safetensors.index.json"])
def test_an_export_into_another_hugging_face_model_is_refused(tmp_path,
                                                              foreign):
  """transformers loads tokenizer.json before vocab.txt: kept beside the
  converted weights, it tokenized with the old model's vocab."""
  out = tmp_path / "hf"
  out.mkdir()
  for name in ("config.json", "model.safetensors", "vocab.txt", foreign):
    (out / name).write_text("old\n")
  with pytest.raises(hf_files.ConversionError) as e:
    _convert(out, output_dir.HF_EXPORT, True,
             ["config.json", "model.safetensors", "vocab.txt"])
  assert str(e.value) == (
      f"output {out} holds another model's files, which transformers would "
      f"load with the converted ones ({foreign}); a conversion does not "
      "replace it, even with --overwrite: choose a new or empty directory")
  assert all((out / n).read_text() == "old\n" for n in os.listdir(out))


def test_a_coref_conversion_keeps_a_later_checkpoint_of_a_run(tmp_path):
  """COREF_RUN owns ckpt-*: an overwrite removed a run's ckpt-30."""
  run = tmp_path / "run"
  before = _training_run(run)
  with pytest.raises(hf_files.ConversionError, match="a training run"):
    _convert(run, output_dir.COREF_RUN, True)
  assert sorted(os.listdir(run)) == before


def test_an_overwrite_through_a_symlink_writes_the_directory_it_names(
    tmp_path):
  real = tmp_path / "models" / "spanbert"
  _convert(real, output_dir.IMPORT, False)
  link = tmp_path / "current"
  link.symlink_to(real, target_is_directory=True)
  with output_dir.converting(str(link), output_dir.IMPORT, overwrite=True
                             ) as o:
    for name in output_dir.IMPORT.markers:
      (tmp_path / o.staging / name).write_text("second\n")
  assert os.path.islink(link) and os.readlink(link) == str(real)
  assert (real / "params.yaml").read_text() == "second\n"
  assert sorted(os.listdir(tmp_path)) == ["current", "models"]
  assert sorted(os.listdir(tmp_path / "models")) == ["spanbert"]
