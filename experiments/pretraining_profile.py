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

r"""Pretraining parity, `--mode=profile`: where a bf16 step's CPU time goes.

Issue 58 item 1. The package's mixed-bfloat16 step (pretraining_speed's
package_bf16: bert/token_single's train_step in tf.function) is traced with
TensorFlow's profiler, HF BertForMaskedLM's step under torch.autocast
(bfloat16) (pretraining_speed's hf_bf16, the same weights) with
torch.profiler, each for --steps steps after --warmup. Each trace is reduced
to self CPU time per step by op type, by category (CATEGORIES: matmul,
elementwise / activation, casts, softmax, LayerNorm, dropout, gathers,
AdamW update, loss, other) and by phase (forward, backward, optimizer: TF
from the op's name scope, `gradient_tape/` for the backward and the
optimizer's scope; torch from record_function ranges around the three parts
of TorchSide.step).

--seqs 512 steps on the same tokens as 128: each row of the 512 batch is
four rows of the 128 batch end to end (--batch_size / 4 rows, four times the
masked positions), so the two lengths differ only in attention's share.

  .venv/bin/python -m experiments.pretraining_parity --mode=profile \
      --work_dir /tmp/pp --threads 1 --seqs 128 512 --output_json F

Example (the reduction alone):

  rows = [dict(type="_MklNativeFusedMatMul", name="encoder/dense/BiasAdd",
               self_us=300.0), dict(type="Cast", name="gradient_tape/Cast",
               self_us=100.0)]
  reduce_ops(rows, "tf", steps=1)["categories"]
  # ms a step: {"matmul": 0.3, ..., "casts": 0.1, ...}
"""

import argparse
import collections
import glob
import json
import os
import re
import tempfile
import time

from experiments import pretraining_common as common

CATEGORIES = ("matmul", "elementwise / activation", "casts", "softmax",
              "LayerNorm", "dropout", "gathers", "AdamW update",
              "gradient clipping", "loss", "other")
PHASES = ("forward", "backward", "optimizer")
TF_MATMUL = re.compile(r"MatMul|Einsum|Conv2D")
TORCH_MATMUL = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                "aten::matmul", "aten::linear", "aten::_addmm_activation",
                "mkldnn::_linear_pointwise"}
# TF scopes of the optimizer's update (Model Garden's AdamWeightDecay, tf_keras
# AdamW) and of the gradient clipping it applies.
TF_OPTIMIZER = re.compile(r"^(AdamWeightDecay|AdamW|Adam|LAMB|SGD)/|"
                          r"clip_by_global_norm|global_norm")
# Generic torch ops whose time belongs to the op that called them.
TORCH_GENERIC = {"aten::empty", "aten::empty_strided", "aten::copy_",
                 "aten::fill_", "aten::zero_", "aten::zeros",
                 "aten::zeros_like",
                 "aten::empty_like", "aten::as_strided", "aten::view",
                 "aten::reshape", "aten::resize_", "aten::add_",
                 "aten::mul", "aten::add", "aten::mul_", "aten::div",
                 "aten::t", "aten::transpose", "aten::contiguous",
                 "aten::clone", "aten::expand", "aten::select", "aten::slice",
                 "aten::detach", "aten::_reshape_alias", "aten::where",
                 "aten::masked_fill"}


def tf_category(op_type: str, name: str) -> str:
  """The CATEGORIES entry of a TF op (its type and full name)."""
  low = name.lower()
  if TF_MATMUL.search(op_type):
    return "matmul"
  if tf_phase(name) == "optimizer":
    return "gradient clipping" if "global_norm" in low else "AdamW update"
  if op_type == "Cast":
    return "casts"
  if "dropout" in low or op_type.startswith(("Random", "StatelessRandom")):
    return "dropout"
  if "layer_norm" in low or "layernorm" in low or "BatchNorm" in op_type:
    return "LayerNorm"
  if "CrossEntropy" in op_type or "loss" in low:
    return "loss"
  if "softmax" in low:
    return "softmax"
  if re.search(r"Gather|Scatter|SegmentSum|OneHot", op_type):
    return "gathers"
  if op_type in ("ReadVariableOp", "Identity", "NoOp", "Const", "Reshape",
                 "Shape", "StridedSlice", "Pack", "ConcatV2", "Transpose",
                 "Fill", "Range", "ExpandDims", "Squeeze"):
    return "other"
  return "elementwise / activation"


def tf_phase(name: str) -> str:
  """forward, backward or optimizer, from a TF op's name scope."""
  if name.startswith("gradient_tape/"):
    return "backward"
  if TF_OPTIMIZER.search(name):
    return "optimizer"
  return "forward"


def torch_category(op: str, ancestors, phase: str) -> str:
  """The CATEGORIES entry of a torch op, or of the nearest op that called
  it when it is a generic one (TORCH_GENERIC: empty, copy_, ...)."""
  if phase == "optimizer":
    return "gradient clipping" if "clip" in ancestors else "AdamW update"
  for name in [op] + list(ancestors):
    cat = _torch_own(name)
    if cat:
      return cat
  return "elementwise / activation" if op.startswith("aten::") else "other"


def _torch_own(name: str):
  """The category name itself says, or None for a generic op."""
  low = name.lower()
  if name in TORCH_MATMUL or re.search(r"(Mm|Bmm|Addmm)Backward", name):
    return "matmul"
  if "dropout" in low or "bernoulli" in low:
    return "dropout"
  if "layer_norm" in low or "LayerNorm" in name:
    return "LayerNorm"
  if "nll_loss" in low or "cross_entropy" in low or "log_softmax" in low:
    return "loss"
  if "softmax" in low:
    return "softmax"
  if name in ("aten::to", "aten::_to_copy", "ToCopyBackward0"):
    return "casts"
  if re.search(r"embedding|index|gather|scatter", low):
    return "gathers"
  if "gelu" in low:
    return "elementwise / activation"
  if name.startswith("aten::") and name not in TORCH_GENERIC:
    return "elementwise / activation"
  return None


def reduce_ops(rows, side: str, steps: int, top: int = 15) -> dict:
  """A trace's rows (type, name, self_us[, phase, category]) per step.

  side "tf" classifies by type and name (tf_category, tf_phase); "torch"
  rows carry their phase and category. Returns total ms a step, ms a step
  by category and by phase, the `top` op types (ms, share, category of
  most of their time) and the 4 x `top` ops by name (`layer_*` for every
  layer's).
  """
  by_cat, by_phase = collections.Counter(), collections.Counter()
  by_type, type_cat = collections.Counter(), collections.defaultdict(
      collections.Counter)
  by_name = collections.Counter()
  for r in rows:
    if side == "tf":
      cat, phase = tf_category(r["type"], r["name"]), tf_phase(r["name"])
    else:
      cat, phase = r["category"], r["phase"]
    ms = r["self_us"] / 1e3 / steps
    by_cat[cat] += ms
    by_phase[phase] += ms
    by_type[r["type"]] += ms
    type_cat[r["type"]][cat] += ms
    by_name[(r["type"], re.sub(r"_\d+(?=/|$)", "_*", r["name"]), cat,
             phase)] += ms
  total = sum(by_cat.values())
  return dict(
      total_ms=round(total, 3),
      categories={c: round(by_cat[c], 3) for c in CATEGORIES},
      phases={p: round(by_phase[p], 3) for p in PHASES},
      top_types=[dict(type=t, ms=round(ms, 3),
                      share=round(ms / total, 4) if total else 0.0,
                      category=type_cat[t].most_common(1)[0][0])
                 for t, ms in by_type.most_common(top)],
      top_ops=[dict(type=t, name=n, category=c, phase=p, ms=round(ms, 3))
               for (t, n, c, p), ms in by_name.most_common(4 * top)])


def ffn_ops(rows, steps: int) -> list:
  """The forward ops of the encoder's feed-forward input layer (Model
  Garden's `intermediate` EinsumDense and its activation) by type: whether
  the bias and GELU were fused into the matmul (`_FusedMatMul`) or not."""
  by_type = collections.Counter()
  for r in rows:
    if (re.search(r"/(intermediate|activation(_\d+)?)/", r["name"]) and
        tf_phase(r["name"]) == "forward"):
      by_type[r["type"]] += r["self_us"] / 1e3 / steps
  return [dict(type=t, ms=round(ms, 2)) for t, ms in by_type.most_common()]


def tf_trace(step, steps: int, logdir: str):
  """Rows (type, name, self_us) of TF's framework op stats over `steps`
  calls of `step` (warmed up already), and the CPU-s a step took."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.profiler.experimental.start(logdir)
  c0 = time.process_time()
  try:
    for i in range(steps):
      with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
        step()
  finally:
    cpu_s = (time.process_time() - c0) / steps
    tf.profiler.experimental.stop()
  return tf_op_rows(logdir), cpu_s


def tf_op_rows(logdir: str):
  """Rows (type, name, self_us) of every op the TF profiler's traces
  (.xplane.pb) under logdir saw run on the host.

  Read from the trace's events ("op name:OpType", self time = duration less
  the op events nested in it), not from the framework_op_stats tool, whose
  table keeps the 500 longest ops only (at base size that drops LayerNorm
  and most small ops).
  """
  from tensorflow.tsl.profiler.protobuf import xplane_pb2  # pylint: disable=g-import-not-at-top
  paths = sorted(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"),
                           recursive=True))
  if not paths:
    raise RuntimeError(f"{logdir}: TF's profiler wrote no .xplane.pb; check "
                       "that tensorflow's profiler plugin is installed")
  totals = collections.Counter()
  for path in paths:
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
      space.ParseFromString(f.read())
    for plane in space.planes:
      if plane.name != "/host:CPU":
        continue
      for line in plane.lines:
        ops = []
        for e in line.events:
          op = TF_OP_EVENT.match(plane.event_metadata[e.metadata_id].name)
          if op:
            ops.append((e.offset_ps, e.duration_ps, op.group(1), op.group(2)))
        for (name, op_type), ps in _self_times(sorted(ops)).items():
          totals[(op_type, name)] += ps
  return [dict(type=t, name=n, self_us=ps / 1e6)
          for (t, n), ps in totals.items()]


# A TF op's trace event: "scope/name:OpType".
TF_OP_EVENT = re.compile(r"^([^:\s][^:]*):([A-Z_][A-Za-z0-9_]*)$")


def _self_times(events) -> collections.Counter:
  """{(name, type): picoseconds} of (offset, duration, name, type) events
  sorted by offset on one thread, each less the events nested in it."""
  out, stack = collections.Counter(), []  # stack: (end, key)
  for offset, duration, name, op_type in events:
    while stack and stack[-1][0] <= offset:
      stack.pop()
    if stack:
      out[stack[-1][1]] -= duration
    out[(name, op_type)] += duration
    stack.append((offset + duration, (name, op_type)))
  return out


def torch_trace(step, steps: int):
  """Rows (type, name, self_us, phase, category) of torch.profiler's CPU
  events over `steps` calls of step(phase) (phase: record_function), and
  the CPU-s a step took. Ops under a "clip" range inside the optimizer
  are its gradient clipping."""
  import torch  # pylint: disable=g-import-not-at-top
  prof = torch.profiler.profile(activities=[
      torch.profiler.ProfilerActivity.CPU])
  c0 = time.process_time()
  with prof:
    for _ in range(steps):
      step(torch.profiler.record_function)
  cpu_s = (time.process_time() - c0) / steps
  rows = []
  for e in prof.events():
    if e.name in PHASES or e.name == "clip":
      continue
    ancestors, phase, p = [], None, e.cpu_parent
    while p is not None:
      if p.name in PHASES:
        phase = phase or p.name
      ancestors.append(p.name)
      p = p.cpu_parent
    if phase is None:
      continue  # the profiler's own and out-of-step events
    rows.append(dict(type=e.name, name=e.name, self_us=e.self_cpu_time_total,
                     phase=phase,
                     category=torch_category(e.name, ancestors, phase)))
  return rows, cpu_s


def stack_rows(batch, factor: int, seq: int):
  """A batch of seq-`seq` rows as rows `factor` times longer: row r of the
  result is rows r*factor .. r*factor+factor-1 end to end (masked positions
  shifted to their place), so the tokens stay the same."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  out = {}
  for k, v in batch.items():
    v = tf.convert_to_tensor(v)
    rows = v.shape[0] // factor
    if rows * factor != v.shape[0]:
      raise ValueError(f"--batch_size {v.shape[0]} is not a multiple of "
                       f"{factor}: pick one that is")
    if len(v.shape) < 2:
      raise ValueError(f"feature {k!r} has no positions axis: stack_rows "
                       "stacks [batch, n, ...] features only")
    if k.endswith("_positions") and "relative" not in k:  # token indices
      v = v + tf.reshape(tf.range(v.shape[0], dtype=v.dtype) % factor * seq,
                         [-1] + [1] * (len(v.shape) - 1))
    out[k] = tf.reshape(v, [rows, factor * v.shape[1]] + v.shape[2:])
  return out


def profile(args) -> dict:
  """Traces and their reductions for each of --seqs."""
  import torch  # pylint: disable=g-import-not-at-top
  from experiments import pretraining_speed as speed  # pylint: disable=g-import-not-at-top
  from experiments.pretraining_torch import TorchSide, torch_batch  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  cpu = cpu_features.read()
  print(f"processor: {cpu.describe()}; threads {common.threads()}",
        flush=True)
  data = common.prepare(args.work_dir)
  load_before, out = os.getloadavg(), []
  encoder = dict(dropout_rate=args.dropout, attention_dropout_rate=args.dropout,
                 hidden_activation=args.activation)
  for seq in args.seqs:
    factor = seq // common.SEQ_LENGTH
    reshape = None if factor == 1 else (
        lambda b, f=factor: stack_rows(b, f, common.SEQ_LENGTH))
    fn, model, params, batch = speed.package_step(
        data, args.size, args.batch_size, dtype="bfloat16", encoder=encoder,
        reshape=reshape)
    side = TorchSide(model, params, "token")
    tb = torch_batch(batch)
    hf = lambda phase=None: side.step(tb, torch.bfloat16, phase)[0]  # pylint: disable=cell-var-from-loop
    losses = dict(package_bf16=[fn() for _ in range(args.warmup)],
                  hf_bf16=[hf() for _ in range(args.warmup)])
    print(f"seq {seq}: warm-up losses {losses}", flush=True)
    logdir = tempfile.mkdtemp(prefix=f"tf_profile_{seq}_")
    tf_rows, tf_cpu = tf_trace(fn, args.steps, logdir)
    torch_rows, torch_cpu = torch_trace(hf, args.steps)
    shape = [int(d) for d in batch["input_word_ids"].shape]
    for name, rows, cpu_s, kind in (("package_bf16", tf_rows, tf_cpu, "tf"),
                                    ("hf_bf16", torch_rows, torch_cpu,
                                     "torch")):
      red = reduce_ops(rows, kind, args.steps)
      if kind == "tf":
        red["ffn_ops"] = ffn_ops(rows, args.steps)
      red.update(variant=name, seq=seq, batch=shape[0],
                 trace=logdir if kind == "tf" else None,
                 cpu_s_per_step=round(cpu_s, 3), warmup_losses=losses[name])
      out.append(red)
      print(json.dumps(red), flush=True)
    del fn, model, side
  return dict(rows=out, processor=cpu.describe(), threads=common.threads(),
              size=args.size, steps=args.steps, dropout=args.dropout,
              activation=args.activation,
              load_before=[round(x, 2) for x in load_before],
              load_after=[round(x, 2) for x in os.getloadavg()],
              finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


LABELS = {"package_bf16": "package mixed bf16 (TF profiler)",
          "hf_bf16": "HF autocast bf16 (torch.profiler)"}


def tables(out) -> str:
  """Markdown: categories and phases side by side per length; top types."""
  lines = []
  for seq in sorted({r["seq"] for r in out["rows"]}):
    rows = [r for r in out["rows"] if r["seq"] == seq]
    head = " | ".join(f"{LABELS[r['variant']]}, batch {r['batch']}: ms "
                      "| %" for r in rows)
    lines += [f"\nseq {seq}: self CPU time a step by category\n",
              f"| category | {head} |",
              "|---|" + "---:|---:|" * len(rows)]
    for group, key in ((CATEGORIES, "categories"), (PHASES, "phases")):
      for c in group:
        lines.append(f"| {c} | " + " | ".join(
            f"{r[key][c]:.0f} | {100 * r[key][c] / r['total_ms']:.1f}%"
            for r in rows) + " |")
      if key == "categories":
        lines.append("| **traced ops, total** | " + " | ".join(
            f"**{r['total_ms']:.0f}** | 100%" for r in rows) + " |")
        lines.append("| CPU-s a step (profiled) | " + " | ".join(
            f"{r['cpu_s_per_step']:.2f} | " for r in rows) + " |")
    for r in rows:
      lines += [f"\nseq {seq}, {LABELS[r['variant']]}: top op types\n",
                "| op type | category | ms a step | % |", "|---|---|---:|---:|"]
      lines += [f"| `{t['type']}` | {t['category']} | {t['ms']:.0f} | "
                f"{100 * t['share']:.1f}% |" for t in r["top_types"]]
  return "\n".join(lines)


def main(argv=None):
  # A binary registers the experiments (library modules do not).
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  common.add_common_args(ap, ("profile",))
  ap.add_argument("--size", default="base", choices=["demo", "base"])
  ap.add_argument("--seqs", nargs="+", type=int, default=[128],
                  choices=[128, 256, 512])
  ap.add_argument("--batch_size", type=int, default=16,
                  help="rows at seq 128; seq L steps on batch_size*128/L rows")
  ap.add_argument("--steps", type=int, default=3, help="steps traced")
  ap.add_argument("--warmup", type=int, default=2)
  ap.add_argument("--dropout", type=float, default=0.1,
                  help="dropout and attention dropout (models/base.yaml's)")
  ap.add_argument("--activation", default="gelu",
                  help="encoder's hidden_activation: gelu (Model Garden's tanh "
                  "form) or spanbert>gelu_exact")
  common.run_mode(ap, argv, profile, tables)


if __name__ == "__main__":
  main()
