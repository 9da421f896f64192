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

"""Conversions fail in one line and write their output whole or not at all.

Issue 26, fault 13: a truncated model.safetensors used to raise
safetensors' SafetensorError without the file's name; a string where
config.json has a number, a TypeError deep in the conversion.

Issue 48, items 2 and 6: two conversions to one --output at once both
reported success; a full disk or a kill left `bert_model.ckpt_temp/` in the
output; a conversion wrote among unrelated files; a read-only output was
reported only after the whole conversion (interop/output_dir.py).
"""

import logging
import os
import re
import resource
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import yaml

from official_spanbert import interop as hc
from official_spanbert.interop import weight_map
from conftest import REPO, TOOLS
from test_convert_checkpoint import _mutated, _run_tool, _set, _tiny_hf_model, tiny_hf, tool  # noqa: F401  pylint: disable=unused-import
from train_helpers import read_only_cmd


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


# ----------------------------------------------------------------------------
# Issue 48 items 2 and 6: one writer per output, written whole or not at all.


def _tool_cmd(*args):
  """The tool as a user runs it, in a process of its own."""
  return [sys.executable, os.path.join(TOOLS, "convert_checkpoint.py"), *args]


def _env():
  return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
              TF_CPP_MIN_LOG_LEVEL="3")


def _error_lines(err):
  return [l for l in err.splitlines() if "error" in l or "Traceback" in l]


def _hidden_size(out):
  with open(os.path.join(out, "params.yaml")) as f:
    return yaml.safe_load(f)["task"]["model"]["encoder"]["bert_v2"][
        "hidden_size"]


def _embedding_width(out):
  reader = tf.train.load_checkpoint(os.path.join(out, hc.CHECKPOINT_NAME))
  return reader.get_variable_to_shape_map()[
      "encoder/_position_embedding_layer/embeddings/.ATTRIBUTES/"
      "VARIABLE_VALUE"][1]


@pytest.fixture(scope="module")
def other_hf(tmp_path_factory, cased_vocab):
  """A second tiny BERT of another width (hidden 32)."""
  d = tmp_path_factory.mktemp("other_hf")
  _tiny_hf_model(seed=3, hidden_size=32, num_attention_heads=2,
                 intermediate_size=64).save_pretrained(str(d))
  shutil.copyfile(cased_vocab, d / "vocab.txt")
  return str(d)


def test_a_second_conversion_to_an_output_in_use_is_refused(
    tiny_hf, other_hf, tmp_path, monkeypatch):
  """Item 2: a conversion started while another writes the same --output
  (a real second process, started once the first has read its weights)
  used to report success too; the directory could then hold one model's
  checkpoint beside the other's params.yaml."""
  out = str(tmp_path / "out")
  second = []
  assign = weight_map.assign_hf_weights

  def assign_then_start_another(*args, **kwargs):
    initialized = assign(*args, **kwargs)
    if not second:
      second.append(subprocess.run(
          _tool_cmd("--direction=hf_to_tf", f"--input={other_hf}",
                    f"--output={out}"), env=_env(), cwd=REPO,
          capture_output=True, text=True, timeout=600, check=False))
    return initialized

  monkeypatch.setattr(weight_map, "assign_hf_weights",
                      assign_then_start_another)
  result = hc.hf_to_tf(tiny_hf[0], out, hc.ConversionOptions(progress=False))
  assert result.output == out
  (other,) = second
  assert other.returncode == 1, other.stdout + other.stderr
  assert _error_lines(other.stderr) == other.stderr.splitlines()[-1:], (
      other.stderr)
  assert re.fullmatch(
      rf"convert_checkpoint: error: {re.escape(out)} is in use by another "
      rf"conversion: pid {os.getpid()} on \S+, started [^;]+ \(lock file "
      rf"{re.escape(out)}\.lock; delete it if that run is no longer "
      r"running\)", other.stderr.splitlines()[-1]), other.stderr
  # One model's files only: the checkpoint and params.yaml agree.
  assert _hidden_size(out) == _embedding_width(out) == 64
  assert sorted(os.listdir(tmp_path)) == ["out"]  # no lock, no temp dir


def test_full_disk_during_a_conversion_is_one_line_and_leaves_nothing(
    tiny_hf, tmp_path, capsys):
  """Item 6: a 67-line ResourceExhaustedError, and `bert_model.ckpt_temp/`
  left in the output."""
  out = tmp_path / "out"
  soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
  resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, hard))
  try:  # writes past 1 MB fail with EFBIG, as on a full disk
    rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                             f"--input={tiny_hf[0]}", f"--output={out}")
  finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
  assert rc == 1
  assert _error_lines(captured.err) == [
      f"convert_checkpoint: error: cannot write the conversion to {out}: "
      f"File too large; free space in {tmp_path} and rerun (nothing was left "
      "behind)"], captured.err
  assert os.listdir(tmp_path) == []
  # Over an earlier conversion (--overwrite): its files stay as they were.
  rc, _ = _run_tool(capsys, "--direction=hf_to_tf", f"--input={tiny_hf[0]}",
                    f"--output={out}")
  assert rc == 0
  before = {n: (out / n).read_bytes() for n in os.listdir(out)}
  resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, hard))
  try:
    rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                             f"--input={tiny_hf[0]}", f"--output={out}",
                             "--overwrite")
  finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
  assert rc == 1 and captured.err.splitlines()[-1].endswith(
      "(the files there are as they were)"), captured.err
  assert {n: (out / n).read_bytes() for n in os.listdir(out)} == before
  assert sorted(os.listdir(tmp_path)) == ["out"]
  tool.FLAGS.unparse_flags()


def test_a_rerun_removes_what_an_interrupted_conversion_left(
    tiny_hf, tmp_path, capsys, caplog):
  """Item 6: a kill (or a full disk) left `bert_model.ckpt_temp/` in the
  output, and a successful rerun kept it; now a killed conversion leaves
  only its temporary dir beside the output, which the next one removes."""
  out = tmp_path / "out"
  leftover = out / (hc.CHECKPOINT_NAME + "_temp")
  leftover.mkdir(parents=True)  # what a kill during the save left before
  (leftover / "part-00000-of-00001.data-00000-of-00001").write_bytes(
      b"\0" * 1000)
  staged = tmp_path / ".out.tmp-0badcafe"  # what a kill leaves now
  (staged / (hc.CHECKPOINT_NAME + "_temp")).mkdir(parents=True)
  with caplog.at_level(logging.WARNING):
    rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                             f"--input={tiny_hf[0]}", f"--output={out}")
  assert rc == 0, captured.err
  assert not leftover.exists() and not staged.exists()
  assert sorted(os.listdir(tmp_path)) == ["out"]
  assert sorted(os.listdir(out)) == sorted([
      "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index",
      "checkpoint", "conversion.json", "params.yaml", "vocab.txt"])
  assert (f"Removed 1 temporary folder(s) of an interrupted conversion to "
          f"{out}") in caplog.text
  tool.FLAGS.unparse_flags()


def test_sigterm_during_a_conversion_leaves_the_output_as_it_was(
    tiny_hf, tmp_path, capsys, monkeypatch):
  out = tmp_path / "out"
  assign = weight_map.assign_hf_weights

  def assign_then_sigterm(*args, **kwargs):
    initialized = assign(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    return initialized

  def unhandled(signum, frame):
    raise RuntimeError("the conversion did not handle SIGTERM")

  monkeypatch.setattr(weight_map, "assign_hf_weights", assign_then_sigterm)
  previous = signal.signal(signal.SIGTERM, unhandled)  # not to kill pytest
  try:
    rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                             f"--input={tiny_hf[0]}", f"--output={out}")
    assert signal.getsignal(signal.SIGTERM) is unhandled  # restored
  finally:
    signal.signal(signal.SIGTERM, previous)
  assert rc == 128 + signal.SIGTERM
  assert captured.err.splitlines()[-1] == (
      f"convert_checkpoint: stopped by SIGTERM; {out} is as it was (nothing "
      "was written there)"), captured.err
  assert os.listdir(tmp_path) == []
  tool.FLAGS.unparse_flags()


def test_an_output_of_unrelated_files_is_refused_unless_overwrite(
    tiny_hf, tmp_path, capsys):
  """Item 6: the conversion was written among the files already there."""
  out = tmp_path / "out"
  out.mkdir()
  (out / "notes.txt").write_text("mine\n")
  rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                           f"--input={tiny_hf[0]}", f"--output={out}")
  assert rc == 1
  assert captured.err.splitlines() == [
      f"convert_checkpoint: error: output {out} holds 1 file(s) that are not "
      "part of a hf_to_tf conversion (notes.txt); choose an empty or new "
      "directory, or pass --overwrite to write the conversion among them"]
  assert os.listdir(out) == ["notes.txt"]
  rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                           f"--input={tiny_hf[0]}", f"--output={out}",
                           "--overwrite")
  assert rc == 0, captured.err
  assert (out / "notes.txt").read_text() == "mine\n"
  assert (out / "params.yaml").exists()
  # A previous conversion: refused without --overwrite, naming the flag.
  rc, captured = _run_tool(capsys, "--direction=hf_to_tf",
                           f"--input={tiny_hf[0]}", f"--output={out}")
  assert rc == 1 and captured.err.splitlines() == [
      f"convert_checkpoint: error: output {out} already holds "
      "bert_model.ckpt.index (an earlier conversion); choose an empty "
      "directory or pass --overwrite to replace it"]
  tool.FLAGS.unparse_flags()


def test_a_read_only_output_is_refused_before_the_conversion(tiny_hf,
                                                             tmp_path):
  """Item 6: reported only after the whole conversion had run."""
  out = str(tmp_path / "out")
  os.makedirs(out)
  cmd = read_only_cmd(out, _tool_cmd("--direction=hf_to_tf",
                                      f"--input={tiny_hf[0]}",
                                      f"--output={out}"))
  result = subprocess.run(cmd, env=_env(), cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
  assert result.returncode == 1, result.stderr
  assert result.stderr.splitlines() == [
      f"convert_checkpoint: error: output {out} is not writable (Read-only "
      f"file system); choose a writable directory"
      if os.geteuid() == 0 else
      f"convert_checkpoint: error: output {out} is not writable (Permission "
      "denied); choose a writable directory"], result.stderr
  assert os.listdir(out) == [] and sorted(os.listdir(tmp_path)) == ["out"]


# ----------------------------------------------------------------------------
# Issue 48 item 11: messages that pointed the wrong way.


def test_a_task_head_names_the_flag_that_drops_it(tiny_hf, tmp_path, capsys):
  """The advice was `ignore_prefixes`, the Python argument; the flag is
  --ignore_prefix."""
  bad = _mutated(tiny_hf, tmp_path,
                 _set("qa_outputs.weight", np.zeros([2, 64], np.float32)))
  rc, out = _run_tool(capsys, "--direction=hf_to_tf", f"--input={bad}",
                      f"--output={tmp_path / 'out'}")
  assert rc == 1
  assert _error_lines(out.err) == out.err.splitlines()[-1:] == [
      f"convert_checkpoint: error: {bad}: unknown key 'qa_outputs.weight'; "
      "expected a BertModel, BertForMaskedLM or BertForPreTraining "
      "checkpoint (task heads such as qa_outputs or classifier can be "
      "dropped with --ignore_prefix=qa_outputs.)"], out.err
  rc, _ = _run_tool(capsys, "--direction=hf_to_tf", f"--input={bad}",
                    f"--output={tmp_path / 'out'}",
                    "--ignore_prefix=qa_outputs.")
  assert rc == 0
  tool.FLAGS.unparse_flags()
