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

r"""The Hugging Face side of benchmarks/bench_finetuned_serving.py.

Runs in a separate venv with torch and transformers 4.x (whose
`pipeline("question-answering")` transformers 5 removed): reads JSON requests
on stdin, one a line, times each pipeline call itself and answers on stdout.
`Worker` starts and drives it from the benchmark's process. It imports
nothing of this package.

  /work/tmp/hf4venv/bin/python benchmarks/hf_pipeline_worker.py \
      --minilm DIR --heads heads.npz --torch_threads 1

The encoder alone (op "encoder"): BertModel in torch eager mode, and the
same model exported to ONNX (torch.onnx.export, opset 17) and optimized with
onnxruntime.transformers' BERT optimizer (fused attention, LayerNorm, GELU),
run by ONNX Runtime with --torch_threads intra-op threads, sequential. Both
are built on the first such request (onnxruntime is then needed in the venv).
"""

import argparse
import json
import os
import subprocess
import sys
import time

SEQ_QA, STRIDE, QUERY, N_BEST, MAX_ANSWER = 384, 128, 64, 20, 30
SEQ_CLS = 128


def worker(args) -> None:
  """Reads JSON requests on stdin, one a line; answers on the original stdout."""
  out = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)  # whatever the libraries print goes to stderr
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  torch.set_num_threads(args.torch_threads[0])
  tok = transformers.BertTokenizerFast.from_pretrained(args.minilm)

  def with_head(model, prefix):
    state = {k[len(prefix):]: torch.tensor(heads[k]) for k in heads.files
             if k.startswith(prefix)}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    assert not set(state) & set(missing)
    return model.eval()

  qa = cls = None
  attention = "?"
  if args.heads:  # the pipelines (the encoder alone needs no heads)
    heads = np.load(args.heads)
    qa_model = with_head(
        transformers.BertForQuestionAnswering.from_pretrained(args.minilm),
        "qa/")
    cls_model = with_head(
        transformers.BertForSequenceClassification.from_pretrained(
            args.minilm, num_labels=2, id2label={0: "0", 1: "1"},
            label2id={"0": 0, "1": 1}), "cls/")
    qa = transformers.pipeline("question-answering", model=qa_model,
                               tokenizer=tok, device=-1)
    cls = transformers.pipeline("text-classification", model=cls_model,
                                tokenizer=tok, device=-1)
    attention = getattr(qa_model.config, "_attn_implementation", "?")
  qa_kw = dict(max_seq_len=SEQ_QA, doc_stride=args.hf_doc_stride,
               max_question_len=QUERY, max_answer_len=MAX_ANSWER, top_k=1,
               align_to_words=False)
  cls_kw = dict(truncation=True, max_length=SEQ_CLS)

  def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()

  send({"ready": True, "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "attention": attention})
  encoders = None
  for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "quit":
      break
    if op == "encoder":  # {engine, ids, mask, types, calls, save}
      if encoders is None:
        encoders = _encoders(args.minilm, args.torch_threads[0], req["work"])
        send(encoders["info"])
        continue
      send(_time_encoder(encoders, req))
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
    with torch.inference_mode():
      for call in req["calls"]:
        t0, c0 = time.perf_counter(), time.process_time()
        if op == "qa":
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


def _encoders(minilm: str, threads: int, work: str) -> dict:
  """{"torch": BertModel, "ort": an InferenceSession, "info": {...}}."""
  import onnxruntime as ort  # pylint: disable=g-import-not-at-top
  from onnxruntime.transformers import optimizer  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  model = transformers.BertModel.from_pretrained(
      minilm, add_pooling_layer=False).eval()
  config = model.config
  raw, fused = os.path.join(work, "bert.onnx"), os.path.join(work,
                                                             "bert_opt.onnx")
  ids = torch.ones((1, 16), dtype=torch.int64)
  t0 = time.perf_counter()
  with torch.inference_mode():
    torch.onnx.export(
        model, (ids, ids, torch.zeros_like(ids)), raw,
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"], opset_version=17,
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in (
            "input_ids", "attention_mask", "token_type_ids",
            "last_hidden_state")}, dynamo=False)
  opt = optimizer.optimize_model(raw, model_type="bert",
                                 num_heads=config.num_attention_heads,
                                 hidden_size=config.hidden_size)
  opt.save_model_to_file(fused)
  seconds = time.perf_counter() - t0
  options = ort.SessionOptions()
  options.intra_op_num_threads = threads
  options.inter_op_num_threads = 1
  options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
  session = ort.InferenceSession(fused, options,
                                 providers=["CPUExecutionProvider"])
  stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
  return {"torch": model, "ort": session, "info": {
      "onnxruntime": ort.__version__, "torch": torch.__version__,
      "attention": getattr(config, "_attn_implementation", "?"),
      "fused": stats, "export_seconds": seconds, "threads": threads}}


def _time_encoder(encoders: dict, req: dict) -> dict:
  """Times req["calls"] calls of one engine on one input; saves the first
  output (float32 [batch, seq, hidden]) to req["save"] when given."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  feed = {k: np.asarray(req[k], np.int64) for k in ("ids", "mask", "types")}
  walls, cpus, out = [], [], None
  if req["engine"] == "ort":
    session = encoders["ort"]
    inputs = {"input_ids": feed["ids"], "attention_mask": feed["mask"],
              "token_type_ids": feed["types"]}
    for _ in range(req["calls"]):
      t0, c0 = time.perf_counter(), time.process_time()
      out = session.run(None, inputs)[0]
      walls.append(time.perf_counter() - t0)
      cpus.append(time.process_time() - c0)
  else:
    model = encoders["torch"]
    tensors = {k: torch.from_numpy(v) for k, v in feed.items()}
    with torch.inference_mode():
      for _ in range(req["calls"]):
        t0, c0 = time.perf_counter(), time.process_time()
        out = model(input_ids=tensors["ids"], attention_mask=tensors["mask"],
                    token_type_ids=tensors["types"]).last_hidden_state.numpy()
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
