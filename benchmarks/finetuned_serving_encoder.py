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

"""The encoder alone: `--parts encoder` of bench_finetuned_serving.py.

The converted encoder as a tf.function (Keras einsum attention, the matmul
attention serving runs, and optionally over chunks of windows with
tf.map_fn) next to torch eager and ONNX Runtime in the Hugging Face worker,
on random ids of the given shapes: latency, CPU time, GFLOP/s against one
core's float32 peak, and each side's largest difference from TF's output.
"""

import os
import statistics
import time

from benchmarks.common import load_avg
from benchmarks.hf_pipeline_worker import Worker
from official_spanbert.utils import cpu_features

TF_EINSUM = "TF Model Garden (Keras einsum attention)"
TF_MATMUL = "TF, matmul attention (as served)"


def percentile(xs, q):
  """The q-th percentile (0..100) of xs, interpolated linearly."""
  xs = sorted(xs)
  k = (len(xs) - 1) * q / 100
  f = int(k)
  return xs[f] + (xs[min(f + 1, len(xs) - 1)] - xs[f]) * (k - f)


def encoder_flops(batch: int, seq: int, layers: int, hidden: int,
                  ffn: int) -> float:
  """Model FLOPs of one encoder call: the matmuls (2 FLOPs a MAC)."""
  return 2.0 * batch * seq * layers * (4 * hidden * hidden + 2 * hidden * ffn
                                       + 2 * seq * hidden)


def tf_encoders(minilm: str, work: str, chunks):
  """(encoder sizes, {side: tf.function(ids, mask, types) -> [b, s, H]})."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import attention_layout  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import checkpoints  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import span_bert_pretrainer  # pylint: disable=g-import-not-at-top
  converted = os.path.join(work, "minilm")
  if not os.path.exists(os.path.join(converted, interop.PARAMS_FILE)):
    interop.hf_to_tf(minilm, converted)
  config = hf_files.read_hf_config(minilm)

  def restored():
    model = interop.build_model(config.encoder_config(), config.tf_activation,
                                use_next_sentence=False)
    model(span_bert_pretrainer.dummy_inputs(1, 8, 4))
    encoder = model.checkpoint_items["encoder"]
    checkpoints.restore_encoder(encoder, converted)
    return encoder

  encoder, matmul = restored(), restored()
  attention_layout.use_matmul_attention(matmul)  # what serving runs

  def call(ids, mask, types, encoder=encoder):
    return encoder(dict(input_word_ids=ids, input_mask=mask,
                        input_type_ids=types),
                   training=False)["sequence_output"]

  spec = [tf.TensorSpec([None, None], tf.int32)] * 3
  sides = {TF_EINSUM: tf.function(call, input_signature=spec),
           TF_MATMUL: tf.function(lambda *x: call(*x, encoder=matmul),
                                  input_signature=spec)}
  for k in chunks:
    def chunked(ids, mask, types, k=k):
      b, s = tf.shape(ids)[0], tf.shape(ids)[1]
      shaped = tuple(tf.reshape(x, [b // k, k, s]) for x in (ids, mask, types))
      out = tf.map_fn(lambda x: call(*x), shaped, parallel_iterations=1,
                      fn_output_signature=tf.TensorSpec(
                          [k, None, config.hidden_size], tf.float32))
      return tf.reshape(out, [b, s, config.hidden_size])
    sides[f"TF, chunks of {k}"] = tf.function(chunked, input_signature=spec)
  return config, sides


def encoder_part(args, work: str, minilm: str, hf_python) -> None:
  """The encoder alone: TF (whole, chunked), torch eager, ONNX Runtime."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  shapes = [tuple(int(x) for x in s.split("x")) for s in args.encoder_shapes]
  config, tf_sides = tf_encoders(minilm, work, args.tf_chunks)
  cpu = cpu_features.read()
  peak = cpu.peak_flops_per_cycle("float32") * (cpu.mhz or 0) * 1e6
  worker = None
  if hf_python:
    worker = Worker(hf_python, minilm, None, args.torch_threads[-1],
                    args.hf_doc_stride)
    info = worker.ask(op="encoder", work=work)
    print(f"encoder part: torch {info['torch']} eager (attention "
          f"{info['attention']}), onnxruntime {info['onnxruntime']}, "
          f"{info['threads']} thread(s) each; ONNX export + optimizer "
          f"{info['export_seconds']:.0f} s, fused {info['fused']}",
          flush=True)
  rng = np.random.default_rng(args.seed)
  inputs = {}
  for b, n in shapes:
    ids = rng.integers(1000, config.vocab_size, (b, n)).astype(np.int32)
    types = np.zeros((b, n), np.int32)
    types[:, n // 3:] = 1  # question, then passage
    inputs[(b, n)] = (ids, np.ones((b, n), np.int32), types)

  def sides_for(b):
    names = [TF_EINSUM, TF_MATMUL] + [f"TF, chunks of {k}" for k in
                                      args.tf_chunks if k < b and b % k == 0]
    return names + (["torch eager", "ONNX Runtime"] if worker else [])

  def time_side(side, shape, calls, save=None):
    ids, mask, types = inputs[shape]
    if side.startswith("TF"):
      fn = tf_sides[side]
      feed = [tf.constant(x) for x in (ids, mask, types)]
      walls, cpus, out = [], [], None
      for _ in range(calls):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*feed).numpy()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
      if save:
        np.save(save, out)
      return {"wall": walls, "cpu": cpus}
    return worker.ask(op="encoder", engine="ort" if side == "ONNX Runtime"
                      else "torch", ids=ids.tolist(), mask=mask.tolist(),
                      types=types.tolist(), calls=calls, save=save)

  diffs = {}
  for shape in shapes:  # warmup; each side's output against TF's
    ref = None
    for side in sides_for(shape[0]):
      path = os.path.join(work, "encoder_out.npy")
      time_side(side, shape, 1, save=path)
      out = np.load(path)
      ref = out if ref is None else ref
      diffs[(shape, side)] = float(np.abs(out - ref).max())
  results = {(shape, side): {"wall": [], "cpu": []} for shape in shapes
             for side in sides_for(shape[0])}
  for r in range(args.rounds):
    t0 = time.perf_counter()
    for shape in shapes:
      names = sides_for(shape[0])
      for side in names[r % len(names):] + names[:r % len(names)]:
        got = time_side(side, shape, args.encoder_calls)
        for k in ("wall", "cpu"):
          results[(shape, side)][k] += got[k]
    print(f"encoder round {r + 1}/{args.rounds} "
          f"{time.perf_counter() - t0:.0f} s, load {load_avg()}",
          flush=True)
  print()
  print(f"Encoder alone ({config.num_hidden_layers} layers, hidden "
        f"{config.hidden_size}, FFN {config.intermediate_size}); one core's "
        f"float32 peak {peak / 1e9:.0f} GFLOP/s "
        f"({cpu.peak_flops_per_cycle('float32')} FLOPs/cycle at "
        f"{cpu.mhz or 0:.0f} MHz):")
  print()
  print("| shape | side | p50 ms | CPU ms / call | GFLOP/s (p50 wall) | "
        "GFLOP/s (CPU) | of peak (CPU) | p50 / ONNX Runtime | "
        "max abs diff vs TF | calls |")
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
  for shape in shapes:
    flops = encoder_flops(*shape, config.num_hidden_layers,
                          config.hidden_size, config.intermediate_size)
    ort_p50 = None
    if worker:
      ort_p50 = percentile(results[(shape, "ONNX Runtime")]["wall"], 50)
    for side in sides_for(shape[0]):
      cell = results[(shape, side)]
      p50 = percentile(cell["wall"], 50)
      cpu_s = statistics.median(cell["cpu"])
      by_cpu = flops / cpu_s if cpu_s > 0 else float("nan")
      share = f"{by_cpu / peak:.0%}" if peak else "?"
      ratio = f"{p50 / ort_p50:.2f}x" if ort_p50 else ""
      print(f"| [{shape[0]},{shape[1]}] | {side} | {p50 * 1e3:,.1f} | "
            f"{cpu_s * 1e3:,.1f} | {flops / p50 / 1e9:.0f} | "
            f"{by_cpu / 1e9:.0f} | {share} | {ratio} | "
            f"{diffs[(shape, side)]:.1e} | {len(cell['wall'])} |")
  print()
  if worker:
    worker.close()
