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

The converted encoder as a tf.function (the layout the exports serve:
matmul attention and fused projections, attention_layout.serving_layout, in
float32 and, where the CPU runs it natively, in mixed bfloat16 as
`--precision=bfloat16` exports it; optionally Model Garden's Keras layers
as trained, in both, and
chunks of windows with tf.map_fn) next to the peers in the worker (torch
eager in float32 and under autocast(bfloat16), ONNX Runtime float32 and
int8), on random ids of the given shapes: latency, CPU time, GFLOP/s
against the cores' float32 peak, each side's largest difference from TF
float32's output, and the fastest of ours against the fastest peer.
"""

import importlib.util
import os
import statistics
import time

from benchmarks import finetuned_serving_inputs
from benchmarks import hf_pipeline_worker
from benchmarks.common import load_avg
from official_spanbert.utils import cpu_features

TF_EINSUM = "TF Model Garden (Keras layers, as trained)"
TF_MATMUL = "TF float32 (as served: matmul attention, fused projections)"
TF_BF16 = "TF bfloat16 (as --precision=bfloat16 serves)"
TF_BF16_EINSUM = "TF bfloat16 (Keras layers, as trained)"
TF_INT8 = "TF int8 (as --precision=int8 serves)"
# The worker's encoder engines, as the tables name them.
PEERS = {"torch": "torch eager float32",
         "torch_bf16": "torch autocast(bfloat16)",
         "ort": "ONNX Runtime float32 (BERT optimizer)",
         "ort_int8": "ONNX Runtime int8 (quantize_dynamic)",
         "ort_int8_ffn": "ONNX Runtime int8, feed-forward outputs float"}
# The summary's columns: ours, then the peers.
OURS = (("TF float32", TF_MATMUL), ("TF bfloat16", TF_BF16),
        ("TF int8", TF_INT8))


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


def tf_encoders(minilm: str, work: str, chunks, einsum: bool, bf16: bool,
                int8_calibration: str = ""):
  """(encoder sizes, {side: tf.function(ids, mask, types) -> [b, s, H]});
  with `int8_calibration` (a training SQuAD JSON), the int8 encoder too,
  quantized as the int8 export quantizes its model, on the windows of
  finetuned_serving_inputs.calibration_records()."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.interop import hf_files  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import attention_layout  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import checkpoints  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import span_bert_pretrainer  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  converted = finetuned_serving_inputs.converted(work, minilm)
  config = hf_files.read_hf_config(minilm)

  def restored(precision="float32"):
    # As export_precision.scope builds it, without its check (--emulated_bf16
    # times bfloat16 where the export refuses it).
    before = tf_keras.mixed_precision.global_policy()
    if precision == "bfloat16":
      tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
      return built()
    finally:
      tf_keras.mixed_precision.set_global_policy(before)

  def built():
    model = interop.build_model(config.encoder_config(), config.tf_activation,
                                use_next_sentence=False)
    model(span_bert_pretrainer.dummy_inputs(1, 8, 4))
    encoder = model.checkpoint_items["encoder"]
    checkpoints.restore_encoder(encoder, converted)
    return encoder

  encoder, matmul = restored(), restored()
  attention_layout.serving_layout(matmul)  # what the exports serve

  def call(ids, mask, types, encoder=encoder):
    return tf.cast(encoder(dict(input_word_ids=ids, input_mask=mask,
                                input_type_ids=types),
                           training=False)["sequence_output"], tf.float32)

  spec = [tf.TensorSpec([None, None], tf.int32)] * 3
  sides = {TF_MATMUL: tf.function(lambda *x: call(*x, encoder=matmul),
                                  input_signature=spec)}
  if einsum or chunks:
    sides[TF_EINSUM] = tf.function(call, input_signature=spec)
  if bf16:
    half = restored("bfloat16")
    attention_layout.serving_layout(half)
    sides[TF_BF16] = tf.function(lambda *x: call(*x, encoder=half),
                                 input_signature=spec)
    if einsum:
      keras_half = restored("bfloat16")
      sides[TF_BF16_EINSUM] = tf.function(
          lambda *x: call(*x, encoder=keras_half), input_signature=spec)
  if int8_calibration:
    sides[TF_INT8] = int8_encoder(restored(), work, converted,
                                  int8_calibration)
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


def int8_encoder(encoder, work: str, converted: str, squad_json: str):
  """The float32 `encoder` in int8 as serving/quantization.py makes the
  export's (modeling/int8_layout.py: every MatMul projection in int8, the
  feed-forward outputs' outlier channels apart, modeling/ffn_outliers.py;
  the attention's core in bfloat16 where the CPU has it), calibrated on the QA export's training windows: a
  tf.function(ids, mask, types) -> its float32 sequence output."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official_spanbert.modeling import attention_layout  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import int8_epilogues  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import quantization  # pylint: disable=g-import-not-at-top

  class SequenceOutput(tf.Module):
    def __init__(self):
      super().__init__(name="sequence_output")
      self.encoder = encoder

    def __call__(self, inputs, training=False):
      return self.encoder(inputs, training=training)["sequence_output"]

  attention_layout.use_matmul_attention(encoder)
  qa_records, _ = finetuned_serving_inputs.calibration_records(
      work, converted, squad_json)
  t0 = time.perf_counter()
  out = quantization.quantize_model(
      SequenceOutput(), quantization.calibration_batches(
          [qa_records], finetuned_serving_inputs.SEQ_QA))
  int8 = out["model"]
  print(f"encoder part, {TF_INT8}: "
        f"{int8_epilogues.int8_matmuls(out['ops_after'])} "
        f"int8 MatMuls, quantized in {time.perf_counter() - t0:.0f} s",
        flush=True)
  return tf.function(
      lambda ids, mask, types: tf.cast(int8(dict(
          input_word_ids=ids, input_mask=mask, input_type_ids=types)),
                                       tf.float32),
      input_signature=[tf.TensorSpec([None, None], tf.int32)] * 3)


def refusal(precision: str):
  """None if this CPU runs `precision` natively (and int8's library is
  installed), else the reason in one line (export_precision.check's)."""
  from official_spanbert.serving import export_precision  # pylint: disable=g-import-not-at-top
  try:
    export_precision.check(precision)
  except export_precision.PrecisionError as e:
    return str(e)
  if precision == "int8" and not importlib.util.find_spec(
      "neural_compressor"):
    return ("--precision=int8 needs Intel Neural Compressor (the package's "
            "int8 extra), not installed here")
  return None


def short_refusal(line: str) -> str:
  """The table cell of a refused precision."""
  for words, cell in (("no AVX512-VNNI", "n/a: no VNNI"),
                      ("no AVX512-BF16", "n/a: no native bf16"),
                      ("Neural Compressor", "n/a: int8 extra not installed")):
    if words in line:
      return cell
  return "n/a: export failed"


def encoder_part(args, work: str, minilm: str, worker) -> list:
  """The encoder alone: ours (float32, bfloat16, int8 where this CPU runs
  them) and the peers of `worker` (None: ours alone); returns the rows."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  shapes = [tuple(int(x) for x in s.split("x")) for s in args.encoder_shapes]
  refused = {p: refusal(p) for p in ("bfloat16", "int8")}
  int8 = refused["int8"] is None and "int8" in args.tf_precisions
  config, tf_sides = tf_encoders(
      minilm, work, args.tf_chunks, args.tf_einsum,
      refused["bfloat16"] is None or args.emulated_bf16,
      args.calibration if int8 else "")
  for p, line in refused.items():
    if line:
      print(f"encoder part, TF {p}: {short_refusal(line)} ({line})")
  if refused["bfloat16"] and args.emulated_bf16:
    print(f"encoder part, {TF_BF16}: timed all the same (--emulated_bf16); "
          "not one of ours in ours / fastest peer")
  cpu = cpu_features.read()
  tf_threads = args.tf_threads or cpu_features.usable_cores()
  peer_threads = args.torch_threads[-1]
  peak_core = cpu.peak_flops_per_cycle("float32") * (cpu.mhz or 0) * 1e6
  engines = []
  if worker:
    info = worker.ask(op="encoder", work=work)
    engines = [e for e in PEERS if e in worker.info["encoders"]]
    ort_line = (f"onnxruntime {info['onnxruntime']} (fused "
                f"{info['fused']}; int8: {info['int8_ops']} quantized ops; "
                f"export, optimizer and quantization "
                f"{info['export_seconds']:.0f} s)"
                if "onnxruntime" in info else "no ONNX Runtime")
    print(f"encoder part: torch {info['torch']} eager (attention "
          f"{info['attention']}), {ort_line}; {info['threads']} thread(s) "
          "each", flush=True)
  rng = np.random.default_rng(args.seed)
  inputs = {}
  for b, n in shapes:
    ids = rng.integers(1000, config.vocab_size, (b, n)).astype(np.int32)
    types = np.zeros((b, n), np.int32)
    types[:, n // 3:] = 1  # question, then passage
    inputs[(b, n)] = (ids, np.ones((b, n), np.int32), types)

  def sides_for(b):
    names = [TF_MATMUL] + [n for n in (TF_BF16, TF_INT8, TF_EINSUM,
                                       TF_BF16_EINSUM) if n in tf_sides]
    names += [f"TF, chunks of {k}" for k in args.tf_chunks
              if k < b and b % k == 0]
    return names + [PEERS[e] for e in engines]

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
    engine = next(e for e, name in PEERS.items() if name == side)
    return worker.ask(op="encoder", engine=engine, ids=ids.tolist(),
                      mask=mask.tolist(), types=types.tolist(), calls=calls,
                      save=save)

  diffs = {}
  for shape in shapes:  # warmup; each side's output against TF float32's
    ref = None
    for side in sides_for(shape[0]):
      path = os.path.join(work, "encoder_out.npy")
      time_side(side, shape, 1, save=path)
      out = np.load(path)
      ref = out if ref is None else ref
      diffs[(shape, side)] = float(np.abs(out - ref).max())
    diffs[shape] = float(np.abs(ref).max())
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
        f"{config.hidden_size}, FFN {config.intermediate_size}); TF "
        f"{tf_threads} thread(s), the peers {peer_threads}; one core's "
        f"float32 peak {peak_core / 1e9:.0f} GFLOP/s "
        f"({cpu.peak_flops_per_cycle('float32')} FLOPs/cycle at "
        f"{cpu.mhz or 0:.0f} MHz, the cpuinfo clock), \"of peak\" against "
        "the side's threads x that:")
  print(f"processor: {cpu.describe()}")
  print()
  print("| shape | side | p50 ms | CPU ms / call | GFLOP/s (p50 wall) | "
        "GFLOP/s (CPU) | of peak (p50 wall) | p50 / TF float32 | "
        "max abs diff vs TF float32 | calls |")
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
  rows = []
  for shape in shapes:
    flops = encoder_flops(*shape, config.num_hidden_layers,
                          config.hidden_size, config.intermediate_size)
    ref_p50 = percentile(results[(shape, TF_MATMUL)]["wall"], 50)
    for side in sides_for(shape[0]):
      cell = results[(shape, side)]
      p50 = percentile(cell["wall"], 50)
      cpu_s = statistics.median(cell["cpu"])
      threads = tf_threads if side.startswith("TF") else peer_threads
      peak = peak_core * threads
      share = f"{flops / p50 / peak:.0%}" if peak else "?"
      rows.append(dict(shape=f"{shape[0]}x{shape[1]}", side=side,
                       p50_ms=p50 * 1e3, cpu_ms=cpu_s * 1e3,
                       gflops_wall=flops / p50 / 1e9,
                       max_abs_diff=diffs[(shape, side)],
                       max_abs_output=diffs[shape],
                       calls=len(cell["wall"])))
      by_cpu = f"{flops / cpu_s / 1e9:.0f}" if cpu_s > 0 else "?"
      print(f"| [{shape[0]},{shape[1]}] | {side} | {p50 * 1e3:,.1f} | "
            f"{cpu_s * 1e3:,.1f} | {flops / p50 / 1e9:.0f} | "
            f"{by_cpu} | {share} | {p50 / ref_p50:.2f}x | "
            f"{diffs[(shape, side)]:.1e} | {len(cell['wall'])} |")
  print()
  summary(shapes, results, refused, engines)
  return rows


def summary(shapes, results, refused, engines) -> None:
  """The issue's table: p50 ms of ours and of each peer, and the fastest of
  ours against the fastest peer (above 1x: ours is faster)."""
  columns = list(OURS) + [(PEERS[e], PEERS[e]) for e in engines]
  print("p50 ms a call; ours / fastest peer = the fastest peer's p50 over "
        "our fastest's (above 1x: ours is faster):")
  print()
  lossy = {PEERS[e] for e in hf_pipeline_worker.LOSSY}
  print("| shape | " + " | ".join(c for c, _ in columns) +
        " | ours / fastest peer | ours / fastest peer within the quality "
        "bound |")
  print("|---|" + "---:|" * (len(columns) + 2))
  for shape in shapes:
    cells, ours, peers, kept = [], [], [], []
    for title, side in columns:
      line = refused.get(title.split()[-1])
      if side is None or (shape, side) not in results:
        cells.append(short_refusal(line) if line else "n/a")
        continue
      p50 = percentile(results[(shape, side)]["wall"], 50) * 1e3
      if line:  # timed with --emulated_bf16: the export refuses it
        cells.append(f"{short_refusal(line)} (emulated: {p50:,.1f})")
        continue
      if title.startswith("TF"):
        ours.append(p50)
      else:
        peers.append(p50)
        if title not in lossy:
          kept.append(p50)
      cells.append(f"{p50:,.1f}")
    ratio = f"{min(peers) / min(ours):.2f}x" if peers else ""
    within = f"{min(kept) / min(ours):.2f}x" if kept and ours else ""
    print(f"| [{shape[0]},{shape[1]}] | " + " | ".join(cells) +
          f" | {ratio} | {within} |")
  print()
