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

"""Serving never returns garbage or crashes on bad requests; exports never mix.

Issue 11, faults 1-3: encode_pair with batches of different sizes, encode_ids
with out-of-range ids, and concurrent exports to one export base.
"""

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.serving import export_lib
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import serving_module
from official_spanbert.serving import tfhub_export
from conftest import REPO, TOOLS
import export_helpers
from export_helpers import SEQ

_model = export_helpers.seeded_model


@pytest.fixture(scope="module")
def exported(tmp_path_factory, cased_vocab):
  """The tiny export the TF Hub and span encoder tests load too."""
  return export_helpers.shared_export(tmp_path_factory, cased_vocab)


def _module(exported):
  """The module that wrote the export (or, when another process did, one
  module for this file): another write of it reuses its traced signatures
  (a new module traced them again, ~6 s of CPU a write); what these tests
  check is where the export's directories go."""
  if exported["module"] is None:
    exported["module"] = pretraining_module.SpanBertServingModule(
        exported["keras"], exported["vocab"], seq_length=SEQ)
  return exported["module"]


@pytest.fixture(scope="module")
def loaded(exported):
  return tf.saved_model.load(exported["model"])


@pytest.fixture(scope="module")
def encode_ids(loaded):
  return loaded.signatures["encode_ids"]


def _ids():
  return {"input_word_ids": tf.constant([[101, 1109, 4937, 102, 0]]),
          "input_mask": tf.constant([[1, 1, 1, 1, 0]]),
          "input_type_ids": tf.constant([[0, 0, 1, 1, 0]])}


def _mismatches(encode_pair):
  """50 requests of text and text_pair batches of 3 vs 2 and 2 vs 3."""
  good = dict(text=tf.constant(["a cat", "a dog"]),
              text_pair=tf.constant(["sat", "ran far"]))
  before = encode_pair(**good)["input_word_ids"].numpy()
  errors, other = 0, []
  for i in range(50):
    sizes = (3, 2) if i % 2 else (2, 3)
    try:
      out = encode_pair(text=tf.constant(["a b c"] * sizes[0]),
                        text_pair=tf.constant(["d e"] * sizes[1]))
      other.append(f"{sizes}: returned ids of shape "
                   f"{out['input_word_ids'].shape}")
    except tf.errors.InvalidArgumentError as e:
      if "text and text_pair must have the same batch size" in e.message:
        errors += 1
      else:
        other.append(f"{sizes}: {e.message[:200]}")
  after = encode_pair(**good)["input_word_ids"].numpy()
  return {"errors": errors, "other": other[:4],
          "same_after": bool((before == after).all())}


def test_encode_pair_batch_mismatch_is_invalid_argument(exported, loaded):
  # Before the fix 3 vs 2 read out of bounds (garbage ids, or
  # std::length_error aborting the process: the worker would crash, failing
  # the test) and 2 vs 3 dropped a pair. In this process (a fresh one cost
  # ~8 s of CPU to import TensorFlow and load both models again).
  pre = tf.saved_model.load(exported["preprocessing"])
  for name, fn in (("model", loaded.signatures["encode_pair"]),
                   ("preprocessing", pre.signatures["encode_pair"])):
    assert _mismatches(fn) == {"errors": 50, "other": [],
                               "same_after": True}, name


@pytest.mark.parametrize("name,bad,allowed", [
    ("input_type_ids", 2, "[0, 2)"), ("input_type_ids", -1, "[0, 2)"),
    ("input_type_ids", 99, "[0, 2)"), ("input_mask", 2, "[0, 2)"),
    ("input_mask", -1, "[0, 2)"), ("input_word_ids", 28996, "[0, 28996)"),
    ("input_word_ids", -1, "[0, 28996)")])
def test_encode_ids_rejects_out_of_range_values(encode_ids, name, bad,
                                                allowed):
  inputs = _ids()
  inputs[name] = tf.tensor_scatter_nd_update(inputs[name], [[0, 2]], [bad])
  with pytest.raises(tf.errors.InvalidArgumentError) as e:
    encode_ids(**inputs)
  assert f"{name} must be in {allowed}" in e.value.message


def test_encode_ids_checks_shapes_and_accepts_valid_ids(exported, encode_ids):
  inputs = _ids()
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="input_type_ids must have the shape of "
                           "input_word_ids"):
    encode_ids(**{**inputs, "input_type_ids": tf.constant([[1]])})
  expected = exported["keras"].encoder_network(inputs, training=False)
  np.testing.assert_allclose(encode_ids(**inputs)["sequence_output"],
                             expected["sequence_output"], atol=1e-5)


def test_auto_version_skips_one_another_export_holds(exported, tmp_path):
  base = tmp_path / "spanbert"
  (base / "5000000000").mkdir(parents=True)
  (base / ".tmp-5000000001").mkdir()
  (base / ".tmp-5000000001" / "theirs").write_text("in progress")
  dirs = _module(exported).write(str(base))
  assert dirs == {"model": str(base / "5000000002"),
                  "preprocessing": str(tmp_path / "spanbert_preprocessing" /
                                       "5000000002")}
  assert (base / ".tmp-5000000001" / "theirs").exists()
  with pytest.raises(export_lib.VersionTakenError,
                     match="another export is writing version 5000000001"):
    _module(exported).write(str(base), version=5000000001)
  assert sorted(os.listdir(base)) == [".tmp-5000000001", "5000000000",
                                      "5000000002"]
  assert os.listdir(tmp_path / "spanbert_preprocessing") == ["5000000002"]


def test_failed_export_removes_only_its_own_dirs(exported, tmp_path,
                                                 monkeypatch):
  base = tmp_path / "spanbert"
  (base / ".tmp-5000000001").mkdir(parents=True)
  write_warmup = export_lib._write_warmup  # pylint: disable=protected-access
  calls = []

  def fail_second(*args):
    calls.append(args)
    if len(calls) == 2:  # the preprocessing model's
      raise OSError("disk full")
    return write_warmup(*args)

  monkeypatch.setattr(export_lib, "_write_warmup", fail_second)
  with pytest.raises(OSError, match="disk full"):
    _module(exported).write(str(base))
  assert os.listdir(base) == [".tmp-5000000001"]
  # The preprocessing base this export created is removed (issue 26).
  assert not os.path.exists(tmp_path / "spanbert_preprocessing")


def test_concurrent_exports_each_get_their_own_version(tmp_path, cased_vocab):
  models, procs = [], []
  go = str(tmp_path / "go")
  base = str(tmp_path / "spanbert")
  now = time.time()
  for seed in (1, 2):
    models.append(_model(seed))
    ckpt = tf.train.Checkpoint(model=models[-1]).save(
        str(tmp_path / f"ckpt{seed}" / "ckpt"))
    with open(tmp_path / f"out{seed}", "w") as out, open(
        tmp_path / f"err{seed}", "w") as err:
      procs.append(subprocess.Popen(  # pylint: disable=consider-using-with
          [sys.executable, os.path.join(REPO, "tests", "concurrent_export.py"),
           go, str(now)] + export_helpers.tool_flags(ckpt, cased_vocab, base),
          stdout=out, stderr=err))
  deadline = time.time() + 600
  while (len([f for f in os.listdir(tmp_path) if f.startswith("go.ready")])
         < 2 and time.time() < deadline and
         all(p.poll() is None for p in procs)):
    time.sleep(0.05)
  with open(go, "w"):
    pass
  outputs = []
  for seed, p in zip((1, 2), procs):
    p.wait(timeout=600)
    outputs.append(((tmp_path / f"out{seed}").read_text(),
                    (tmp_path / f"err{seed}").read_text()))
    assert p.returncode == 0, outputs[-1][1][-3000:]

  versions = set()
  for model, (out, _) in zip(models, outputs):
    line = out.strip().splitlines()[-1]
    model_dir, pre_dir = line.split("exported model to ")[1].split(
        " and preprocessing to ")
    version = os.path.basename(model_dir)
    versions.add(int(version))
    assert pre_dir == os.path.join(base + "_preprocessing", version)
    assert os.path.isdir(pre_dir)
    encode = tf.saved_model.load(model_dir).signatures["encode_ids"]
    expected = model.encoder_network(_ids(), training=False)
    np.testing.assert_allclose(encode(**_ids())["pooled_output"],
                               expected["pooled_output"], atol=1e-5)
  # Both wanted the same version (the time): one got the next.
  assert versions == {int(now), int(now) + 1}
  assert not np.allclose(
      models[0].encoder_network(_ids())["pooled_output"],
      models[1].encoder_network(_ids())["pooled_output"])
  assert sorted(os.listdir(base)) == [str(v) for v in sorted(versions)]

  # An explicit version that is taken: one line, no traceback.
  proc = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "export_savedmodel.py")] +
      export_helpers.tool_flags(ckpt, cased_vocab, base) +
      [f"--version={int(now)}"],
      capture_output=True, text=True, timeout=600)
  assert proc.returncode == 1
  assert proc.stderr.strip().splitlines()[-1] == (
      f"export_savedmodel: error: {base}/{int(now)} already exists; pick "
      "another --version")
  assert "Traceback" not in proc.stderr


def test_an_export_base_that_is_a_file_or_an_unknown_experiment_is_one_line(
    tmp_path):
  """Issue 48 item 9: a file as --export_base gave 35 lines ending
  `FailedPreconditionError: … is not a directory` (after the model was
  built and restored); a typo'd --experiment, 30 lines of LookupError."""
  base = tmp_path / "models"
  base.write_text("")
  tool = [sys.executable, os.path.join(TOOLS, "export_savedmodel.py")]
  proc = subprocess.run(
      tool + [f"--model_dir={tmp_path / 'no_run'}", f"--export_base={base}"],
      capture_output=True, text=True, timeout=600, check=False)
  assert proc.returncode == 1
  assert proc.stderr.strip().splitlines() == [
      f"export_savedmodel: error: --export_base {base} is a file, not a "
      "directory: TF Serving's model base path is a folder of numbered "
      "versions; give a new or existing folder"], proc.stderr
  proc = subprocess.run(
      tool + ["--experiment=spanbert/squad_v3", f"--export_base={tmp_path}"],
      capture_output=True, text=True, timeout=600, check=False)
  assert proc.returncode == 1
  (line,) = proc.stderr.strip().splitlines()
  assert line.startswith(
      "export_savedmodel: error: unknown experiment 'spanbert/squad_v3'; the "
      "registered experiments, nearest first: spanbert/squad_v1, "
      "spanbert/squad_v2, "), line
  assert sorted(os.listdir(tmp_path)) == ["models"]


@pytest.mark.parametrize("experiment,override", [
    ("spanbert/squad_v1", {"task": {"train_data": {"seq_length": 64}}}),
    ("spanbert/squad_v2", {"task": {"train_data": {"seq_length": 64}}}),
    ("spanbert/classification", {"task": {"model": {"num_classes": 3}}}),
    ("spanbert/tacred", {"trainer": {"train_steps": 7}}),
])
def test_a_run_is_exported_under_its_own_experiment(experiment, override,
                                                    tmp_path):
  """Issue 48 item 11: the export's last line named spanbert/squad_v1 for a
  v2 run and spanbert/classification for a TACRED run (the first config
  that took the params.yaml)."""
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  params = exp_factory.get_exp_config(experiment)
  params.override(override, is_strict=True)
  train_utils.serialize_config(params, str(tmp_path))  # as training does
  assert registry.load_run(str(tmp_path)).experiment == experiment


def test_a_run_dir_without_params_yaml_says_so_first(tmp_path):
  """Issue 48 item 11: `--model_dir` of a checkpoint without params.yaml
  asked for --vocab_file (the pretraining default's first need)."""
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  (tmp_path / "checkpoint").write_text("")
  with pytest.raises(ValueError) as e:
    registry.load_run(str(tmp_path))
  assert str(e.value).startswith(
      f"{tmp_path} has no params.yaml, so the run's experiment and model "
      "sizes are unknown: pass --model_dir of the directory training or a "
      "conversion wrote, or --experiment")
  assert "--vocab_file" not in str(e.value)
  # Told what it is, the export goes on (to the checkpoint's own errors).
  run = registry.load_run(str(tmp_path), "spanbert/squad_v1")
  assert run.experiment == "spanbert/squad_v1"
  assert run.params.task.train_data.seq_length


@pytest.fixture(scope="module")
def hub_encoder(exported, tmp_path_factory):
  """The TF Hub encoder of the exported model (tfhub_export.encoder_model)."""
  path = str(tmp_path_factory.mktemp("hub") / "encoder")
  tf.saved_model.save(
      tfhub_export.encoder_model(exported["keras"], exported["vocab"]), path)
  return tf.saved_model.load(path)


@pytest.mark.parametrize("name,bad,message", [
    ("input_type_ids", 5, r"input_type_ids must be in \[0, 2\)"),
    ("input_type_ids", -1, r"input_type_ids must be in \[0, 2\)"),
    ("input_mask", 3, r"input_mask must be in \[0, 2\)"),
    ("input_word_ids", 10**6, r"input_word_ids must be in \[0, 28996\)"),
])
def test_hub_encoder_checks_inputs_as_serving(hub_encoder, encode_ids, name,
                                              bad, message):
  """Issue 26, fault 6: the same checks, the same messages."""
  good = hub_encoder(_ids())
  assert good["pooled_output"].shape == (1, 32)
  inputs = _ids()
  inputs[name] = tf.tensor_scatter_nd_update(inputs[name], [[0, 1]], [bad])
  for fn in (hub_encoder, lambda x: encode_ids(**x)):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
      fn(inputs)


def test_hub_encoder_and_serving_refuse_more_positions_than_they_have(
    hub_encoder, encode_ids):
  n = 513  # max_position_embeddings of the tiny model: 512
  inputs = {k: tf.zeros([1, n], tf.int32) for k in _ids()}
  message = (r"input_word_ids must have at most 512 positions "
             r"\(max_position_embeddings\); got\] \[513\]")
  for fn in (hub_encoder, lambda x: encode_ids(**x)):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
      fn(inputs)


def test_full_disk_during_export_is_one_line_and_leaves_nothing(
    exported, tmp_path, monkeypatch):
  """Issue 26, fault 12: no traceback, no empty export dirs."""
  base = str(tmp_path / "new" / "spanbert")

  def full_disk(module, export_dir, signature_inputs):
    del module, signature_inputs
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
      f.write(b"partial")
    # What TF's file writer raises on a full disk.
    raise tf.errors.ResourceExhaustedError(
        None, None, f"{export_dir}/variables/variables.data-00000-of-00001."
        "tempstate1; No space left on device")

  monkeypatch.setattr(export_lib, "save_with_warmup", full_disk)
  with pytest.raises(OSError) as e:  # export_lib.ExportOutputError
    _module(exported).write(base, version=7)
  assert str(e.value) == (
      f"cannot write the export {base}/7: No space left on device; free space "
      f"in {base} and rerun (nothing was left behind)")
  assert os.listdir(tmp_path / "new") == []
  # (tools/export_savedmodel.py prints an OSError such as this in one line.)


def test_truncated_checkpoint_is_one_line_naming_its_files(
    exported, tmp_path, cased_vocab):
  """Issue 39, fault 2: every exporter (and the conversions) resolve the
  checkpoint through checkpoints.resolve, which refuses a truncated one."""
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import keras_hub_preset  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import checkpoints  # pylint: disable=g-import-not-at-top
  prefix = tf.train.Checkpoint(model=exported["keras"]).save(
      str(tmp_path / "run" / "ckpt"))
  data = prefix + ".data-00000-of-00001"
  os.truncate(data, os.path.getsize(data) // 2)
  expected = (f"cannot read checkpoint {prefix}: ckpt-1.data-00000-of-00001 "
              f"in {tmp_path}/run hold {os.path.getsize(data)} bytes, fewer "
              "than the ")
  with pytest.raises(checkpoints.CheckpointReadError) as e:
    pretraining_module.build_pretrainer(serving_module.Run(  # every export
        export_helpers.params(), checkpoint_path=str(tmp_path / "run")))
  assert str(e.value).startswith(expected) and "\n" not in str(e.value)
  with pytest.raises(hf_files.ConversionError) as e:  # keras-hub, tf_to_hf
    keras_hub_preset.export_keras_hub_preset(prefix, str(tmp_path / "kh"),
                                             progress=False)
  assert str(e.value).startswith(expected)
  # The binary: one line, no traceback.
  proc = subprocess.run(
      [sys.executable, "-m", "official_spanbert.tools.export_tfhub",
       f"--checkpoint_path={prefix}", f"--vocab_file={cased_vocab}",
       f"--export_dir={tmp_path / 'hub'}"] + [
           f for f in export_helpers.tool_flags(prefix, cased_vocab, "-")
           if f.startswith(("--config_file", "--params_override"))],
      capture_output=True, text=True, timeout=600, check=False)
  assert proc.returncode == 1, proc.stderr[-3000:]
  assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
  assert proc.stderr.strip().splitlines()[-1].startswith(
      "export_tfhub: error: " + expected), proc.stderr[-3000:]
  # A corrupt (not short) file is the same one line when it is read.
  with open(data, "r+b") as f:
    f.truncate(0)
    f.write(b"\xff" * (2 * os.path.getsize(prefix + ".index") + 10**6))
  with pytest.raises(checkpoints.CheckpointReadError,
                     match=f"^cannot read checkpoint {prefix}: "):
    checkpoints.restore(exported["keras"], prefix)


def test_keras_hub_export_refuses_a_directory_of_unrelated_files(tmp_path):
  """Issue 39, fault 9: the preset was written among them."""
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import keras_hub_preset  # pylint: disable=g-import-not-at-top
  out = tmp_path / "preset"
  out.mkdir()
  (out / "notes.txt").write_text("mine")
  with pytest.raises(hf_files.ConversionError, match=(
      rf"^output {out} holds 1 file\(s\) that are not part of a keras-hub "
      r"preset \(notes.txt\); choose an empty or new directory$")):
    keras_hub_preset.export_keras_hub_preset(str(tmp_path / "none"), str(out),
                                             overwrite=True, progress=False)
  assert os.listdir(out) == ["notes.txt"]


def _full_disk(path):
  """What TF's file writer raises on a full disk."""
  return tf.errors.ResourceExhaustedError(
      None, None, f"{path}/variables/variables.data-00000-of-00001.tempstate1"
      "; No space left on device")


def test_full_disk_during_a_task_export_is_one_line_and_leaves_nothing(
    tmp_path, monkeypatch):
  """Issue 39 probe (c): export_module (the SQuAD, coref and classifier
  exports) let TF's ResourceExhaustedError through (a traceback from
  spanbert-export-savedmodel) and left the base it created."""

  def full_disk(module, export_dir, signature_inputs):
    del module, signature_inputs
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
      f.write(b"partial")
    raise _full_disk(export_dir)

  class Module:
    def signatures(self):
      return {}

  monkeypatch.setattr(export_lib, "save_with_warmup", full_disk)
  base = str(tmp_path / "squad")
  with pytest.raises(export_lib.ExportOutputError) as e:
    export_lib.export_module(Module(), base, {"answer": {}}, version=3)
  assert str(e.value) == (
      f"cannot write the export {base}/3: No space left on device; free space "
      f"in {base} and rerun (nothing was left behind)")
  assert os.listdir(tmp_path) == []


def test_full_disk_during_tfhub_export_is_one_line_and_leaves_nothing(
    exported, tmp_path, monkeypatch):
  """Issue 39 probe (c), on a 3 MB tmpfs: spanbert-export-tfhub printed a
  28-line traceback ending in ResourceExhaustedError and left the export
  dir it created."""

  class Encoder:
    def save(self, path, **kwargs):
      del kwargs
      os.makedirs(os.path.join(path, "variables"))
      raise _full_disk(path)

  monkeypatch.setattr(tfhub_export, "encoder_model", lambda *a: Encoder())
  out = tmp_path / "hub"
  with pytest.raises(export_lib.ExportOutputError) as e:
    tfhub_export.TFHubExport(exported["keras"], exported["vocab"]).write(
        str(out))
  assert str(e.value) == (
      f"cannot write the export {out}/encoder: No space left on device; free "
      f"space in {out} and rerun (nothing was left behind)")
  assert os.listdir(tmp_path) == []


def _fake_keras_hub_writer(cmd, **kwargs):
  """keras_hub_writer.py's files (small) and summary, without Keras 3."""
  del kwargs
  out = cmd[-2]
  os.makedirs(os.path.join(out, "assets", "tokenizer"))
  files = ["assets/tokenizer/vocabulary.txt", "config.json", "metadata.json",
           "model.weights.h5", "preprocessor.json", "tokenizer.json"]
  for name in files:
    with open(os.path.join(out, name), "wb") as f:
      f.write(b"new " * 1000)
  return subprocess.CompletedProcess(
      cmd, 0, json.dumps({"files": files, "tensors": 23}) + "\n", "")


@pytest.mark.parametrize("earlier", [False, True])
def test_full_disk_during_keras_hub_export_leaves_no_half_preset(
    exported, tmp_path, monkeypatch, earlier):
  """Issue 39 probe (c), on a tmpfs: the preset's files were moved from /tmp
  one by one, so a full disk left a preset without config.json and a cut
  model.weights.h5 (2.8 of 7.8 MB), and with --overwrite half of the earlier
  preset replaced. Simulated here: /tmp on another filesystem (rename fails
  with EXDEV) and the output full when model.weights.h5 is copied."""
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import keras_hub_preset  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  run = tmp_path / "run"
  prefix = tf.train.Checkpoint(**exported["keras"].checkpoint_items).save(
      str(run / "ckpt"))
  params_dict.save_params_dict_to_yaml(export_helpers.params(),
                                       str(run / "params.yaml"))
  out = tmp_path / "preset"
  if earlier:
    out.mkdir()
    for name in ("config.json", "model.weights.h5", "metadata.json"):
      (out / name).write_text(f"earlier {name}")
  monkeypatch.setattr(keras_hub_preset.subprocess, "run",
                      _fake_keras_hub_writer)
  rename, copyfile = os.rename, shutil.copyfile

  def other_filesystem(src, dst, *args, **kwargs):
    tmp = tempfile.gettempdir() + "/spanbert_keras_hub_"
    if str(src).startswith(tmp) and not str(dst).startswith(tmp):
      raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src)
    return rename(src, dst, *args, **kwargs)

  def full_output(src, dst, **kwargs):
    if os.path.basename(dst) == "model.weights.h5":
      with open(dst, "wb") as f:
        f.write(b"cut")
      raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), dst)
    return copyfile(src, dst, **kwargs)

  monkeypatch.setattr(os, "rename", other_filesystem)
  monkeypatch.setattr(shutil, "copyfile", full_output)
  with pytest.raises(hf_files.ConversionError) as e:
    keras_hub_preset.export_keras_hub_preset(
        prefix, str(out), vocab_file=exported["vocab"], overwrite=earlier,
        progress=False)
  monkeypatch.undo()
  assert str(e.value) == (
      f"cannot write the keras-hub preset {out}: No space left on device; "
      "free space there and rerun (" + (
          "the files there are as they were)" if earlier else
          "nothing was left behind)"))
  if earlier:
    assert {p.name: p.read_text() for p in out.iterdir()} == {
        n: f"earlier {n}" for n in ("config.json", "model.weights.h5",
                                    "metadata.json")}
  else:
    assert not out.exists()
