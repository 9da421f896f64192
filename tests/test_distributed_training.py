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

"""Distributed and mixed-precision training of the pretraining task.

A tiny dropout-free SpanBERT (2 layers, hidden 32, the real 28,996-token cased
vocab, so the tied vocab projections dominate) is trained from the same
initial weights on the same 3 global batches of 8 real blocks (austen.txt
through the records tool and the loader) with SpanBertPretrainTask.train_step:

* on one device, in this process (the reference);
* under MirroredStrategy over two logical CPUs (in a subprocess: logical
  devices must be configured before TensorFlow initialises its devices);
* by two MultiWorkerMirroredStrategy workers on localhost ports;

each replica getting its half of every global batch. The halves hold
different numbers of masked (MLM) and SBO target positions, as batches
normally do. The distributed runs must reproduce the one-device run to 1e-5
in: the step loss the trainer logs (the mean over replicas of train_step's
loss), the applied gradient of every variable (one step of plain SGD with
lr 1: w_before - w_after) and the weights after 3 steps of the experiment's
own optimizer (AdamW, weight decay, clip-norm 1.0, warmup/decay schedule).

mixed_bfloat16 and mixed_float16 runs of official_spanbert.tools.train.run (each in
a subprocess: the global policy leaks), with the heads on the GPU/TPU path,
must finish 5 steps with finite, falling losses, float16 through a
LossScaleOptimizer. Four MultiWorkerMirroredStrategy workers read the
loader: distinct shards, batches and masks.

Every subprocess is killed when it runs past its timeout or when a peer
fails. Helper script: tests/multiworker_worker.py. Each expensive run belongs
to one test, so `pytest -n 2` does not repeat it.
"""

import glob
import json
import os
import socket
import subprocess
import sys
import time

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.nlp.data import data_loader_factory
from official_spanbert.data.pretraining.records import pretraining_records as pr
from conftest import data_path, first_lines
import multiworker_worker as mw
import train_helpers

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "multiworker_worker.py")
TOL = 1e-5
# sgd1: one step shows the applied (all-reduced) gradient; experiment: three
# steps of the experiment's AdamW (clip-norm, weight decay, lr schedule).
RUNS = {"sgd1": 1, "experiment": 3}
SUBPROCESS_TIMEOUT_S = 420


def _env(**extra):
  """train_helpers.env() (this process's sys.path, Bazel runfiles or the
  checkout, and the TF log level the session's fork servers have: with
  another, each of the file's 9 processes ran the real interpreter and
  imported TensorFlow again), never a TF_CONFIG of ours."""
  env = train_helpers.env()
  env.pop("TF_CONFIG", None)
  env.update(extra)
  return env


def _tail(path, n=4000):
  with open(path, errors="replace") as f:
    return f.read()[-n:]


def _start(mode, spec, out_dir, name, env=None):
  spec_path = os.path.join(out_dir, f"{name}.spec.json")
  with open(spec_path, "w") as f:
    json.dump(spec, f)
  log_path = os.path.join(out_dir, f"{name}.log")
  log = open(log_path, "w")
  proc = subprocess.Popen([sys.executable, WORKER, mode, spec_path],
                          stdout=log, stderr=subprocess.STDOUT,
                          env=env or _env())
  log.close()
  return proc, log_path


def _wait_all(procs, timeout_s):
  """Waits for all (proc, log); on a timeout or as soon as one fails, kills
  the others (a worker whose peer died would wait on its collectives)."""
  deadline = time.time() + timeout_s
  try:
    while True:
      codes = [proc.poll() for proc, _ in procs]
      for (_, log), rc in zip(procs, codes):
        if rc not in (None, 0):
          pytest.fail(f"{log}: exit status {rc}\n{_tail(log)}")
      if all(rc == 0 for rc in codes):
        return
      if time.time() > deadline:
        logs = [log for (_, log), rc in zip(procs, codes) if rc is None]
        pytest.fail(f"no result after {timeout_s}s from {logs}; killed.\n"
                    f"{_tail(logs[0])}")
      time.sleep(0.5)
  finally:
    for proc, _ in procs:
      if proc.poll() is None:
        proc.kill()
        proc.wait()


def _free_ports(n):
  socks = []
  try:
    for _ in range(n):
      s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
      s.bind(("localhost", 0))
      socks.append(s)
    return [s.getsockname()[1] for s in socks]
  finally:
    for s in socks:
      s.close()


@pytest.fixture(scope="module")
def records(tmp_path_factory, cased_vocab):
  """Pretraining records of ~30 kB of real text (blocks of <= 62 tokens)."""
  d = tmp_path_factory.mktemp("records")
  part = first_lines(data_path("corpus", "austen.txt"), 30_000,
                     str(d / "austen.txt"))
  pr.create_pretraining_records([part], cased_vocab, str(d / "rec"),
                                max_seq_length=mw.SEQ_LENGTH, progress=False)
  return ",".join(sorted(glob.glob(str(d / "rec") + "-*.tfrecord")))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, records, cased_vocab):
  """3 global batches from the loader, initial weights, and the spec the
  subprocesses read."""
  d = tmp_path_factory.mktemp("distributed")
  params = mw.experiment(records, cased_vocab)
  loader = data_loader_factory.get_data_loader(
      params.task.train_data.replace(is_training=False))
  steps = max(RUNS.values())
  batches = [{k: v.numpy() for k, v in b.items()}
             for b in loader.load().take(steps)]
  assert len(batches) == steps
  half = mw.GLOBAL_BATCH // 2
  for key in ("masked_lm_weights", "sbo_weights"):
    # Unequal halves in some step (the normal case): the replicas' own means
    # then differ from the mean over the global batch, which the comparison
    # below would catch.
    assert any(b[key][:half].sum() != b[key][half:].sum()
               for b in batches), key
  mw.save_batches(batches, str(d / "batches.npz"))
  tf_keras.utils.set_random_seed(20191024)  # reproducible initial weights
  _, model = mw.build_task_and_model(params)
  init = [w.numpy() for w in model.weights]
  mw.save_weights(init, str(d / "init.npz"))
  spec = dict(records=records, vocab=cased_vocab,
              batches=str(d / "batches.npz"), init=str(d / "init.npz"),
              runs=RUNS, out=str(d))
  return dict(dir=str(d), spec=spec, params=params, batches=batches,
              init=init)


@pytest.fixture(scope="module")
def reference(inputs):
  """The same training on one device, in this process (float32)."""
  policy = tf_keras.mixed_precision.global_policy()
  tf_keras.mixed_precision.set_global_policy("float32")
  try:
    return mw.train_runs(tf.distribute.OneDeviceStrategy("/cpu:0"),
                         inputs["params"], inputs["batches"], inputs["init"],
                         RUNS)
  finally:
    tf_keras.mixed_precision.set_global_policy(policy)


def _loss_errors(got, want, what):
  diff = np.abs(np.array(got["losses"]) - np.array(want["losses"]))
  if np.all(diff <= TOL):
    return []
  return [f"{what}: step losses {got['losses']} (per replica "
          f"{got['per_replica']}) vs one device {want['losses']}: "
          f"|diff| {diff.tolist()}"]


def _weight_errors(got, want, what, init=None):
  """Per variable max |difference| <= TOL; with init, of the updates
  init - w (for SGD with lr 1: the applied gradients)."""
  assert len(got["names"]) == len(want["names"])
  bad = []
  for name, a, b, w0 in zip(want["names"], got["weights"], want["weights"],
                            init or [None] * len(want["weights"])):
    if w0 is not None:
      a, b = w0 - a, w0 - b
    err = float(np.max(np.abs(a - b)))
    if not err <= TOL:
      bad.append((f"{err:.3g}", name, f"{float(np.max(np.abs(b))):.3g}"))
  bad.sort(key=lambda x: -float(x[0]))
  if not bad:
    return []
  return [f"{what}: {len(bad)} of {len(want['names'])} variables differ by "
          f"more than {TOL} (max |diff|, variable, max |one-device value|): "
          f"{bad[:4]}"]


def _errors(got, want, init, what):
  """Everything compared: step losses of both runs, the applied gradient
  (SGD lr 1, one step) and the weights after 3 steps of the experiment's
  AdamW."""
  errors = []
  for kind in RUNS:
    errors += _loss_errors(got[kind], want[kind], f"{what} ({kind})")
  errors += _weight_errors(got["sgd1"], want["sgd1"],
                           f"{what}: applied gradient", init)
  errors += _weight_errors(got["experiment"], want["experiment"],
                           f"{what}: weights after 3 AdamW steps")
  return errors


def test_mirrored_two_cpus_matches_one_device(inputs, reference):
  """MirroredStrategy over two logical CPUs == one device, same global
  batch: step loss, gradients, and 3 AdamW steps, to 1e-5."""
  _wait_all([_start("mirrored", inputs["spec"], inputs["dir"], "mirrored")],
            SUBPROCESS_TIMEOUT_S)
  mirrored = mw.read_results(inputs["dir"], "mirrored", RUNS)
  errors = _errors(mirrored, reference, inputs["init"],
                   "MirroredStrategy, 2 logical CPUs")
  assert not errors, "\n".join(errors)


def test_multiworker_matches_single_worker(inputs, reference):
  """Two MultiWorkerMirroredStrategy workers (one replica each, localhost)
  == one worker, same global batches, to 1e-5; both workers end with the
  same weights."""
  ports = _free_ports(2)
  cluster = {"worker": [f"localhost:{p}" for p in ports]}
  procs = []
  try:
    for i in range(2):
      tf_config = json.dumps({"cluster": cluster,
                              "task": {"type": "worker", "index": i}})
      procs.append(_start("worker", dict(inputs["spec"],
                                         collective_timeout_s=180),
                          inputs["dir"], f"worker{i}",
                          env=_env(TF_CONFIG=tf_config)))
  finally:
    _wait_all(procs, SUBPROCESS_TIMEOUT_S)
  workers = [mw.read_results(inputs["dir"], f"worker{i}", RUNS)
             for i in range(2)]
  for kind in RUNS:
    for a, b in zip(workers[0][kind]["weights"], workers[1][kind]["weights"]):
      np.testing.assert_array_equal(a, b)
  errors = []
  for i, worker in enumerate(workers):
    errors += _errors(worker, reference, inputs["init"],
                      f"MultiWorkerMirroredStrategy worker {i}")
  assert not errors, "\n".join(errors)


def test_four_workers_read_distinct_shards_and_draw_distinct_masks(
    tmp_path, cased_vocab):
  """4 MultiWorkerMirroredStrategy workers (one replica each) on 4 shards:
  distinct input pipelines and shards (no block read by two workers), no
  batch served twice, and distinct masked positions at every step."""
  part = first_lines(data_path("corpus", "austen.txt"), 20_000,
                     str(tmp_path / "austen.txt"))
  pr.create_pretraining_records([part], cased_vocab, str(tmp_path / "rec"),
                                max_seq_length=mw.SEQ_LENGTH, num_shards=4,
                                progress=False)
  spec = dict(records=str(tmp_path / "rec-*.tfrecord"), vocab=cased_vocab,
              workers=4, global_batch_size=8, steps=2, out=str(tmp_path))
  cluster = {"worker": [f"localhost:{p}" for p in _free_ports(4)]}
  procs = []
  try:
    for i in range(4):
      tf_config = json.dumps({"cluster": cluster,
                              "task": {"type": "worker", "index": i}})
      procs.append(_start("loader", spec, str(tmp_path), f"loader{i}",
                          env=_env(TF_CONFIG=tf_config)))
  finally:
    _wait_all(procs, SUBPROCESS_TIMEOUT_S)
  runs = []
  for i in range(4):
    with open(tmp_path / f"loader{i}.json") as f:
      runs.append(json.load(f))
  assert sorted(r["pipelines"][0] for r in runs) == [0, 1, 2, 3]
  blocks = [{tuple(row) for batch in r["blocks"] for row in batch}
            for r in runs]
  assert all(len(b) == 2 * 2 for b in blocks)  # 2 steps of 2 blocks
  assert len(set.union(*blocks)) == sum(map(len, blocks))  # disjoint
  for step in range(2):
    positions = {json.dumps(r["positions"][step]) for r in runs}
    assert len(positions) == 4, step


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mixed_precision_training_runs(tmp_path, records, cased_vocab, dtype):
  """train.run, 5 steps of the tiny model under mixed_<dtype> (in a
  subprocess: the global policy leaks) with the heads on the accelerator
  path ("layers", what "auto" takes on a GPU/TPU): finite, falling losses,
  float32 weights, <dtype> logits; float16 through a LossScaleOptimizer."""
  spec = dict(records=records, vocab=cased_vocab, dtype=dtype,
              out=str(tmp_path), model_dir=str(tmp_path / "model"),
              global_batch_size=4, train_steps=5, learning_rate=1e-2,
              accelerator_path=True)
  _wait_all([_start("mixed", spec, str(tmp_path), "mixed")],
            SUBPROCESS_TIMEOUT_S)
  with open(tmp_path / "mixed.json") as f:
    r = json.load(f)
  assert r["policy"] == f"mixed_{dtype}"
  assert r["projections"] == ["layers"], r
  assert r["global_step"] == 5 and len(r["logs"]) == 5, r
  for logs in r["logs"]:
    for key in ("training_loss", "mlm_loss", "sbo_loss", "gradient_norm"):
      assert np.isfinite(logs[key]), (dtype, logs)
    assert 10 < logs["training_loss"] < 25, logs  # ~2 ln(28996) at init
  losses = [logs["training_loss"] for logs in r["logs"]]
  assert losses[-1] < losses[0] - 0.1, losses
  assert r["weights_finite"] and r["checkpoint"].endswith("ckpt-5"), r
  assert r["variable_dtypes"] == ["float32"], r  # float32 master weights
  assert r["mlm_logits_dtype"] == dtype and r["sbo_logits_dtype"] == dtype, r
  if dtype == "float16":
    assert r["is_loss_scale_optimizer"], r
    assert r["inner_optimizer"] == "AdamWeightDecay", r
    assert np.isfinite(r["loss_scale"]) and r["loss_scale"] >= 1, r
  else:
    assert not r["is_loss_scale_optimizer"], r
    assert r["optimizer"] == "AdamWeightDecay", r
