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

r"""The peers' side of benchmarks/bench_finetuned_serving.py.

Runs in a separate process (and, for the pipelines, a venv with torch and
transformers 4.x, whose `pipeline("question-answering")` transformers 5
removed): reads JSON requests on stdin, one a line, times each call itself
and answers on stdout. `Worker` starts and drives it from the benchmark's
process. It imports nothing of this package.

  .scratch/hf4venv/bin/python benchmarks/hf_pipeline_worker.py \
      --minilm DIR --heads heads.npz --torch_threads 1

Its engines (the `engines` of its first answer: those this venv can run):

  * `pipeline`, `pipeline_bf16`: transformers' question-answering and
    text-classification pipelines, the model loaded in float32 and with
    torch_dtype=torch.bfloat16 (transformers 4.x and --heads only);
  * `ort`, `ort_int8` (op "ort_qa" builds them): BertForQuestionAnswering
    exported to ONNX (torch.onnx.export, opset 17, eager attention so that
    the optimizer finds it), optimized by onnxruntime.transformers' BERT
    optimizer (fused attention, LayerNorm, GELU), and that model quantized
    by onnxruntime.quantization.quantize_dynamic (int8 weights, uint8
    activations); `ort_int8_ffn` the same with each layer's feed-forward
    output MatMul (the one after the GELU) left float32, as the package's
    int8 export left it before it split their outlier channels off
    (serving/quantization.FFN_OUTPUT, modeling/ffn_outliers.py), since
    quantizing it whole costs accuracy; behind the fast tokenizer's windows (its
    stride: their overlap, as the pipeline's doc_stride) and the best start + end logit
    of any window (answers up to MAX_ANSWER pieces), as a user without the
    pipeline writes it. Needs onnxruntime (the `bench` extra).

The encoder alone (op "encoder"): BertModel in torch eager mode, the same
under torch.autocast("cpu", dtype=torch.bfloat16), and the ONNX export of it,
optimized and quantized as above, run by ONNX Runtime with --torch_threads
intra-op threads, sequential. All are built on the first such request.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

SEQ_QA, STRIDE, QUERY, N_BEST, MAX_ANSWER = 384, 128, 64, 20, 30
SEQ_CLS = 128
# Engines: the pipelines (transformers 4.x) and ONNX Runtime's, for `answer`;
# the encoder alone's.
PIPELINES = ("pipeline", "pipeline_bf16")
ORT_QA = ("ort", "ort_int8", "ort_int8_ffn")
ENCODERS = ("torch", "torch_bf16") + ORT_QA
# Engines whose answers fall outside issue 57's quality bound (within 1.0 F1
# of float32): quantize_dynamic's default lost 4.31 SQuAD F1 on a trained
# MiniLM (experiments/peer_fast_quality.py); the benches also compare ours
# with the fastest of the others.
LOSSY = ("ort_int8",)


def worker(args) -> None:
  """Reads JSON requests on stdin, one a line; answers on the original stdout."""
  out = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)  # whatever the libraries print goes to stderr
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  from transformers import pipelines  # pylint: disable=g-import-not-at-top
  torch.set_num_threads(args.torch_threads[0])
  tok = transformers.BertTokenizerFast.from_pretrained(args.minilm)

  def with_head(model, prefix):
    state = {k[len(prefix):]: torch.tensor(heads[k]) for k in heads.files
             if k.startswith(prefix)}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    assert not set(state) & set(missing)
    return model.eval()

  has_pipeline = "question-answering" in pipelines.SUPPORTED_TASKS
  has_ort = importlib.util.find_spec("onnxruntime") is not None
  engines = {}  # name: (qa, cls) pipelines, then ONNX Runtime's sessions
  attention = "?"
  if args.heads and has_pipeline:  # the encoder alone needs no heads
    heads = np.load(args.heads)
    for name, dtype in zip(PIPELINES, (torch.float32, torch.bfloat16)):
      qa_model = with_head(
          transformers.BertForQuestionAnswering.from_pretrained(
              args.minilm, torch_dtype=dtype), "qa/")
      cls_model = with_head(
          transformers.BertForSequenceClassification.from_pretrained(
              args.minilm, num_labels=2, id2label={0: "0", 1: "1"},
              label2id={"0": 0, "1": 1}, torch_dtype=dtype), "cls/")
      engines[name] = (
          transformers.pipeline("question-answering", model=qa_model,
                                tokenizer=tok, device=-1),
          transformers.pipeline("text-classification", model=cls_model,
                                tokenizer=tok, device=-1))
      attention = getattr(qa_model.config, "_attn_implementation", "?")
  elif args.heads:
    heads = np.load(args.heads)
  qa_kw = dict(max_seq_len=SEQ_QA, doc_stride=args.hf_doc_stride,
               max_question_len=QUERY, max_answer_len=MAX_ANSWER, top_k=1,
               align_to_words=False)
  cls_kw = dict(truncation=True, max_length=SEQ_CLS)

  def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()

  missing = []
  if not has_pipeline:
    missing.append(f"the pipelines (transformers {transformers.__version__}"
                   " has no question-answering pipeline: a venv with "
                   "transformers<5, --hf_python)")
  if not has_ort:
    missing.append("ONNX Runtime (onnxruntime is not installed in "
                   f"{sys.executable}: pip install onnxruntime onnx, or the "
                   "package's `bench` extra)")
  send({"ready": True, "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "attention": attention,
        "engines": list(engines) + (list(ORT_QA) if has_ort and args.heads
                                    else []),
        "encoders": list(ENCODERS[:2]) + (list(ORT_QA) if has_ort else []),
        "missing": missing})
  encoders = None
  for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "quit":
      break
    if op == "encoder":  # {engine, ids, mask, types, calls, save}
      if encoders is None:
        encoders = _encoders(args.minilm, args.torch_threads[0], req["work"],
                             has_ort)
        send(encoders["info"])
        continue
      send(_time_encoder(encoders, req))
      continue
    if op == "ort_qa":  # builds the ONNX Runtime engines of `answer`
      qa_model = with_head(
          transformers.BertForQuestionAnswering.from_pretrained(
              args.minilm, attn_implementation="eager"), "qa/")
      sessions, info = _onnx_models(
          qa_model, ["start_logits", "end_logits"], args.torch_threads[0],
          os.path.join(req["work"], "qa"))
      for name in ORT_QA:
        engines[name] = (sessions[name], None)
      send(info)
      continue
    if op == "windows":  # question wordpieces, passage wordpieces, HF windows
      rows = []
      for q, c in req["pairs"]:
        enc = tok(q, c, truncation="only_second", max_length=SEQ_QA,
                  stride=args.hf_doc_stride, return_overflowing_tokens=True)
        rows.append([len(tok.tokenize(q)), len(tok.tokenize(c)),
                     len(enc["input_ids"])])
      send({"rows": rows})
      continue
    walls, cpus, results = [], [], []
    qa, cls = engines[req.get("engine", "pipeline")]
    with torch.inference_mode():
      for call in req["calls"]:
        t0, c0 = time.perf_counter(), time.process_time()
        if op == "qa" and cls is None:  # ONNX Runtime
          res = _ort_answers(qa, tok, *call, args.hf_doc_stride)
        elif op == "qa":
          q, c = call
          if len(q) == 1:
            r = [qa(question=q[0], context=c[0], **qa_kw)]
          else:
            r = qa(question=q, context=c, batch_size=len(q), **qa_kw)
          res = [[x["start"], x["end"], x["answer"]] for x in r]
        else:
          r = cls(call if len(call) > 1 else call[0],
                  batch_size=len(call), **cls_kw)
          r = r if isinstance(r, list) else [r]
          res = [[x["label"], x["score"]] for x in r]
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        results.append(res)
    send({"wall": walls, "cpu": cpus, "results": results})


def _ort_answers(session, tok, questions, contexts, stride):
  """[[start char, end char, text]] of each question: the fast tokenizer's
  windows (a batch padded to its longest), one ONNX Runtime call, and the
  best start + end logit over the windows of each question."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  enc = tok(questions, contexts, truncation="only_second", max_length=SEQ_QA,
            stride=stride, return_overflowing_tokens=True,
            return_offsets_mapping=True, padding="longest")
  feed = {k: np.asarray(enc[k], np.int64) for k in (
      "input_ids", "attention_mask", "token_type_ids")}
  starts, ends = session.run(None, feed)
  n = feed["input_ids"].shape[1]
  band = np.triu(np.ones((n, n), bool)) & ~np.triu(np.ones((n, n), bool),
                                                   MAX_ANSWER)
  best = [(-np.inf, 0, 0)] * len(questions)
  for w, i in enumerate(enc["overflow_to_sample_mapping"]):
    context = np.array([s == 1 for s in enc.sequence_ids(w)])
    scores = np.where(context, starts[w], -np.inf)[:, None] + np.where(
        context, ends[w], -np.inf)[None, :]
    scores = np.where(band, scores, -np.inf)
    s, e = divmod(int(np.argmax(scores)), n)
    if scores[s, e] > best[i][0]:
      offsets = enc["offset_mapping"][w]
      best[i] = (scores[s, e], offsets[s][0], offsets[e][1])
  return [[int(a), int(b), contexts[i][a:b]]
          for i, (_, a, b) in enumerate(best)]


def ffn_outputs(graph) -> list:
  """Names of the MatMuls of an optimized ONNX BERT graph that take a GELU's
  output: each layer's feed-forward output projection."""
  gelu = {out for n in graph.node
          if n.op_type in ("BiasGelu", "Gelu", "FastGelu") for out in n.output}
  return [n.name for n in graph.node
          if n.op_type == "MatMul" and n.input[0] in gelu]


def _onnx_models(model, outputs, threads: int, prefix: str):
  """({engine: session} of ORT_QA, info) of a BERT model (inputs ids, mask,
  types): exported to ONNX, optimized, quantized (all MatMuls, and all but
  the feed-forward outputs)."""
  import onnx  # pylint: disable=g-import-not-at-top
  import onnxruntime as ort  # pylint: disable=g-import-not-at-top
  from onnxruntime import quantization  # pylint: disable=g-import-not-at-top
  from onnxruntime.transformers import optimizer  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top

  class Positional(torch.nn.Module):
    """Keyword inputs (transformers 5's forward takes others positionally)."""

    def __init__(self, inner):
      super().__init__()
      self.inner = inner

    def forward(self, ids, mask, types):
      got = self.inner(input_ids=ids, attention_mask=mask,
                       token_type_ids=types)
      return tuple(got[k] for k in outputs)

  config = model.config
  raw, fused, int8, int8_ffn = (prefix + ".onnx", prefix + "_opt.onnx",
                                prefix + "_int8.onnx",
                                prefix + "_int8_ffn_float.onnx")
  names = ["input_ids", "attention_mask", "token_type_ids"]
  ids = torch.ones((1, 16), dtype=torch.int64)
  t0 = time.perf_counter()
  with torch.inference_mode():  # eval(): export restores the mode it found
    torch.onnx.export(
        Positional(model).eval(), (ids, ids, torch.zeros_like(ids)), raw,
        input_names=names, output_names=outputs, opset_version=17,
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in names + outputs},
        dynamo=False)
  opt = optimizer.optimize_model(raw, model_type="bert",
                                 num_heads=config.num_attention_heads,
                                 hidden_size=config.hidden_size)
  opt.save_model_to_file(fused)
  kept = ffn_outputs(onnx.load(fused).graph)
  if len(kept) != config.num_hidden_layers:
    raise RuntimeError(f"{fused}: {len(kept)} feed-forward output MatMuls "
                       f"found after a GELU, for {config.num_hidden_layers} "
                       "layers (has the BERT optimizer's fusion changed?)")
  for path, exclude in ((int8, []), (int8_ffn, kept)):
    quantization.quantize_dynamic(
        fused, path, weight_type=quantization.QuantType.QInt8,
        nodes_to_exclude=exclude,
        # The fused ops' outputs have no inferred type: they are float.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
  seconds = time.perf_counter() - t0
  options = ort.SessionOptions()
  options.intra_op_num_threads = threads
  options.inter_op_num_threads = 1
  options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
  sessions = {name: ort.InferenceSession(path, options,
                                         providers=["CPUExecutionProvider"])
              for name, path in zip(ORT_QA, (fused, int8, int8_ffn))}
  quantized = sum(1 for n in onnx.load(int8).graph.node
                  if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul",
                                   "QAttention", "MatMulIntegerToFloat"))
  stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
  return sessions, {"onnxruntime": ort.__version__, "onnx": onnx.__version__,
                    "fused": stats, "int8_ops": quantized,
                    "ffn_outputs_float": len(kept),
                    "export_seconds": seconds, "threads": threads}


def _encoders(minilm: str, threads: int, work: str, has_ort: bool) -> dict:
  """{engine: model or session, "info": {...}} of the encoder alone."""
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  model = transformers.BertModel.from_pretrained(
      minilm, add_pooling_layer=False).eval()
  config = model.config
  info = {"torch": torch.__version__, "threads": threads,
          "attention": getattr(config, "_attn_implementation", "?")}
  encoders = {"torch": model, "torch_bf16": model, "info": info}
  if has_ort:
    sessions, more = _onnx_models(
        transformers.BertModel.from_pretrained(
            minilm, add_pooling_layer=False,
            attn_implementation="eager").eval(),
        ["last_hidden_state"], threads, os.path.join(work, "bert"))
    encoders.update(sessions)
    info.update(more)
  return encoders


def _time_encoder(encoders: dict, req: dict) -> dict:
  """Times req["calls"] calls of one engine on one input; saves the first
  output (float32 [batch, seq, hidden]) to req["save"] when given."""
  import contextlib  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  feed = {k: np.asarray(req[k], np.int64) for k in ("ids", "mask", "types")}
  walls, cpus, out = [], [], None
  engine = req["engine"]
  if engine in ORT_QA:
    session = encoders[engine]
    inputs = {"input_ids": feed["ids"], "attention_mask": feed["mask"],
              "token_type_ids": feed["types"]}
    for _ in range(req["calls"]):
      t0, c0 = time.perf_counter(), time.process_time()
      out = session.run(None, inputs)[0]
      walls.append(time.perf_counter() - t0)
      cpus.append(time.process_time() - c0)
  else:
    model = encoders[engine]
    tensors = {k: torch.from_numpy(v) for k, v in feed.items()}
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16)
                if engine == "torch_bf16" else contextlib.nullcontext())
    with torch.inference_mode(), autocast:
      for _ in range(req["calls"]):
        t0, c0 = time.perf_counter(), time.process_time()
        out = model(input_ids=tensors["ids"], attention_mask=tensors["mask"],
                    token_type_ids=tensors["types"]).last_hidden_state
        out = out.float().numpy()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
  if req.get("save"):
    np.save(req["save"], np.asarray(out, np.float32))
  return {"wall": walls, "cpu": cpus}


class Worker:
  """The HF worker process, driven over JSON lines."""

  def __init__(self, python: str, minilm: str, heads: str, threads: int,
               hf_doc_stride: int):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TRANSFORMERS_VERBOSITY="error")
    self.proc = subprocess.Popen(
        [python, os.path.abspath(__file__), "--minilm", minilm,
         "--torch_threads", str(threads), "--hf_doc_stride",
         str(hf_doc_stride)] + (["--heads", heads] if heads else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    self.info = self._read()

  def _read(self):
    line = self.proc.stdout.readline()
    if not line:
      sys.exit(f"the HF worker ({self.proc.args[0]}) stopped (exit "
               f"{self.proc.wait()}); see its stderr above")
    return json.loads(line)

  def ask(self, **req):
    self.proc.stdin.write(json.dumps(req) + "\n")
    self.proc.stdin.flush()
    return self._read()

  def close(self):
    if self.proc.poll() is None:
      self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
      self.proc.stdin.close()
      self.proc.wait(timeout=60)


if __name__ == "__main__":
  _ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  _ap.add_argument("--minilm", required=True)
  _ap.add_argument("--heads", default=None,
                   help="the heads of the pipelines (without: encoder only)")
  _ap.add_argument("--torch_threads", type=int, nargs=1, default=[1])
  _ap.add_argument("--hf_doc_stride", type=int, default=STRIDE)
  worker(_ap.parse_args())
