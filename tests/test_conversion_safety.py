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

"""Conversions as a user runs them: issue 55, items 4, 5 and 7.

- `hf_to_tf` refusing a pytorch_model.bin that needs code to load said
  "truncated or corrupt" and repeated torch's advice to load it unsafely;
- `tf_to_hf` wrote model.safetensors 0600 beside 0644 files, and exported
  a checkpoint with NaN weights (hf_to_tf already refused NaN);
- `hf_to_tf --overwrite` into a training run's model_dir replaced the run's
  params.yaml and `checkpoint` file.
"""

import os
import stat

import numpy as np
import pytest
import tensorflow as tf

from test_convert_checkpoint import _run_tool, tiny_hf, tool  # noqa: F401  pylint: disable=unused-import

torch = pytest.importorskip("torch")


class _RunsCode:
  def __reduce__(self):
    return (os.getcwd, ())  # harmless, but a call: pickle could run anything


def test_a_pytorch_model_bin_that_would_run_code_is_refused_as_such(
    tiny_hf, tmp_path, capsys):
  d = tmp_path / "hf"
  d.mkdir()
  for name in ("config.json", "vocab.txt"):
    (d / name).write_bytes(open(os.path.join(tiny_hf[0], name), "rb").read())
  state = {k: v.detach().clone() for k, v in tiny_hf[1].state_dict().items()}
  torch.save({**state, "extra": _RunsCode()}, d / "pytorch_model.bin")
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={d}",
                      f"--output={tmp_path / 'out'}")
  assert rc == 1
  assert out.err.splitlines() == [
      f"convert_checkpoint: error: {d}/pytorch_model.bin needs posix.getcwd "
      "to load, which could run code; refused (only tensors are read). To "
      "use it, re-save it as model.safetensors (transformers' "
      "save_pretrained) where you trust the file"], out.err
  assert "weights_only=False" not in out.err
  assert not (tmp_path / "out").exists()
  tool.FLAGS.unparse_flags()


def _converted(tiny_hf, tmp_path, capsys):
  out = tmp_path / "ours"
  rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                           f"--input={tiny_hf[0]}", f"--output={out}")
  assert rc == 0, captured.err
  return out


def test_tf_to_hf_writes_every_file_with_one_mode(tiny_hf, tmp_path, capsys):
  ours = _converted(tiny_hf, tmp_path, capsys)
  rc, captured = _run_tool(capsys, "--direction=tf_to_hf", f"--input={ours}",
                           f"--output={tmp_path / 'hf'}")
  assert rc == 0, captured.err
  modes = {n: stat.S_IMODE(os.stat(tmp_path / "hf" / n).st_mode)
           for n in os.listdir(tmp_path / "hf")}
  umask = os.umask(0)
  os.umask(umask)
  assert modes == {n: 0o666 & ~umask for n in modes}, modes
  tool.FLAGS.unparse_flags()


def test_tf_to_hf_refuses_nan_weights_naming_the_tensor(tiny_hf, tmp_path,
                                                        capsys):
  ours = _converted(tiny_hf, tmp_path, capsys)
  prefix = str(ours / "bert_model.ckpt")
  reader = tf.train.load_checkpoint(prefix)
  key = ("encoder/_transformer_layers/0/_attention_layer/_key_dense/kernel/"
         ".ATTRIBUTES/VARIABLE_VALUE")
  value = reader.get_tensor(key)
  value[0, 0, 0] = np.nan
  # The same checkpoint with one NaN: rewrite it through its own variables.
  variables = {}
  for name in reader.get_variable_to_shape_map():
    if name.endswith("/.ATTRIBUTES/VARIABLE_VALUE"):
      variables[name] = tf.Variable(value if name == key else
                                    reader.get_tensor(name))
  _rewrite(prefix, variables)
  rc, captured = _run_tool(capsys, "--direction=tf_to_hf", f"--input={ours}",
                           f"--output={tmp_path / 'hf'}")
  assert rc == 1
  assert captured.err.splitlines() == [
      f"convert_checkpoint: error: checkpoint {prefix}: tensor "
      f"'{key[:-len('/.ATTRIBUTES/VARIABLE_VALUE')]}' holds 1 NaN or infinite "
      f"values (of {value.size}); the checkpoint is corrupt (or of a diverged "
      "run): use another one"], captured.err
  assert not (tmp_path / "hf").exists()
  tool.FLAGS.unparse_flags()


def _rewrite(prefix, variables):
  """Writes `variables` ({checkpoint key: tf.Variable}) under their keys."""
  root = tf.Module()
  for key, var in variables.items():
    node = root
    parts = key[:-len("/.ATTRIBUTES/VARIABLE_VALUE")].split("/")
    for part in parts[:-1]:
      if not hasattr(node, part) or not isinstance(getattr(node, part),
                                                   tf.Module):
        setattr(node, part, tf.Module())
      node = getattr(node, part)
    setattr(node, parts[-1], var)
  tf.train.Checkpoint(**{k: v for k, v in vars(root).items()
                         if isinstance(v, tf.Module)}).write(prefix)


def test_hf_to_tf_overwrite_into_a_training_run_is_refused(
    tiny_hf, tmp_path, capsys):
  run = tmp_path / "run"
  run.mkdir()
  tf.train.CheckpointManager(
      tf.train.Checkpoint(step=tf.Variable(30)), str(run), 1).save(30)
  (run / "params.yaml").write_text("task:\n  init_checkpoint: ''\n")
  before = {n: (run / n).read_bytes() for n in os.listdir(run)}
  rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                           f"--input={tiny_hf[0]}", f"--output={run}",
                           "--overwrite")
  assert rc == 1
  assert captured.err.splitlines() == [
      f"convert_checkpoint: error: output {run} holds a training run "
      "(ckpt-30.index); a conversion does not replace it, even with "
      "--overwrite: choose a new or empty directory"], captured.err
  assert {n: (run / n).read_bytes() for n in os.listdir(run)} == before
  assert tf.train.latest_checkpoint(str(run)).endswith("ckpt-30")
  tool.FLAGS.unparse_flags()
