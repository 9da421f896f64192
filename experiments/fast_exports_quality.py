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

r"""Quality of the int8 and bfloat16 exports on trained MiniLM models.

Issue 57 item 2. For one --task, fine-tunes all-MiniLM-L6-v2 with the
repo's own experiment script (a subprocess, once: its result JSON in the
work dir marks it done), exports the trained checkpoint with
registry.export (`spanbert-export-savedmodel`'s path) in each --precisions
and serves the task's real evaluation data through the export's signature,
as relation_int8.py does for SemEval:

  squad: finetune_squad.py (SQuADShifts training JSON); `answer` on the
         first ~1,000 SQuAD v1.1 dev questions in file order (the
         paragraphs the offline evaluation used); official EM / F1.
  cola:  finetune_glue.py --tasks cola (in_domain_train; the recipe
         chosen on its last 1,000 lines held out); `classify` on
         in_domain_dev + out_of_domain_dev (1,043 sentences); MCC and
         accuracy. (SST-2 has no training set in the shared data: CoLA
         stands in for it.)
  ner:   finetune_ner.py --model span (LitBank fold 0, best dev
         checkpoint); `extract_entities` on the 10 test documents, one
         request each, as text of tokens joined by spaces and as natural
         text (ner_natural_text.score); nested-span F1.

Per precision: the metric, the share of predictions identical to float32's
(answer strings; labels; entities, as |both| / |either|), the serving CPU
and wall seconds of that first pass (int8 pays once per new input shape)
and the export's seconds. Each precision's predictions are kept in the work
dir and the result JSON is rewritten after each one, so a rerun skips what
is done (--redo to serve again); a precision the CPU or the module refuses
is recorded with the refusal's line.

  nice -n 10 .venv/bin/python -m experiments.fast_exports_quality \
      --task cola --work_dir /work/scratch-quality
"""

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import numpy as np
import tensorflow as tf

from experiments import bf16_agreement
from experiments import common
from experiments import finetune_ner
from experiments import ner_natural_text
from experiments import relation_semeval
from experiments import study_lib

RESULTS = os.path.join(common.REPO, "experiments", "serving_results",
                       "fast_exports")
COLA_EVAL = ("in_domain_dev.tsv", "out_of_domain_dev.tsv")
# Training recipes, fixed before any evaluation, for a shared 2-core Zen 4
# EPYC: SQuAD 1 epoch of SQuADShifts new_wiki (8,814 windows of 256, ~50
# CPU-min), LitBank 120 steps of 8 windows (1.1 epochs of fold 0's 844; the
# best dev checkpoint is the last). CoLA: 1 epoch at 5e-5 labelled every
# sentence acceptable (MCC 0), so the recipe was chosen on held-out training
# data, never the dev sets: on in_domain_train's last 1,000 lines, after 3
# epochs of the other 7,551, lr 1e-4 gave MCC 21.7 and 5e-5 17.1
# (fast_exports/cola_recipe_search.json); then trained on all 8,551 lines
# (~801 steps, ~25 CPU-min).
TRAIN = {
    "squad": ["experiments.finetune_squad", "--max_seq_length=256",
              "--doc_stride=128", "--epochs=1", "--max_eval_questions=1000",
              "--mixed_precision_dtype=bfloat16"],
    "cola": ["experiments.finetune_glue", "--tasks=cola", "--epochs=3",
             "--max_seq_length=64", "--learning_rate=1e-4"],
    "ner": ["experiments.finetune_ner", "--model=span", "--seed=1",
            "--steps=120", "--evaluations=1"],
}
# --smoke: a few steps and items, to check the pipeline (measures nothing).
SMOKE = {
    "squad": ["--train_steps=2", "--max_eval_questions=20"],
    "cola": ["--max_train_examples=64", "--max_eval_examples=32"],
    "ner": ["--steps=2", "--evaluations=1", "--max_train_docs=1",
            "--max_eval_docs=1"],
}
SMOKE_ITEMS = 24


def _children_cpu() -> float:
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime + usage.ru_stime


def train(task: str, work_dir: str, threads: int, smoke: bool) -> dict:
  """Runs the task's fine-tuning script once; its result (+ times)."""
  done = os.path.join(work_dir, "finetune.json")
  if os.path.exists(done):
    with open(done, encoding="utf-8") as f:
      return json.load(f)
  command = [sys.executable, "-m"] + TRAIN[task] + [
      f"--work_dir={work_dir}", f"--result_json={done}"] + (
          SMOKE[task] if smoke else [])
  if task == "ner":
    command.append(f"--threads={threads}")
  env = dict(os.environ, TF_NUM_INTRAOP_THREADS=str(threads),
             TF_NUM_INTEROP_THREADS=str(threads))
  print("training:", shlex.join(command), flush=True)
  t0, c0 = time.time(), _children_cpu()
  subprocess.run(command, cwd=common.REPO, env=env, check=True)
  times = {"wall_s": round(time.time() - t0, 1),
           "cpu_s": round(_children_cpu() - c0, 1),
           "command": shlex.join(command[1:])}
  with open(done, encoding="utf-8") as f:
    result = json.load(f)
  result = result[0] if isinstance(result, list) else result
  result["training_process"] = times
  study_lib.write_json(done, result)
  return result


def run_of(task: str, work_dir: str):
  """The trained run to export (registry.Run)."""
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top
  model_dir = {"squad": "model", "cola": "cola_model",
               "ner": "span_seed1"}[task]
  model_dir = os.path.join(work_dir, model_dir)
  ckpt = (os.path.join(model_dir, "best_ckpt") if task == "ner"
          else tf.train.latest_checkpoint(model_dir))
  run = registry.load_run(model_dir, checkpoint_path=ckpt)
  if task == "squad":
    # The run trained on a JSON file; int8 calibrates on the training
    # records the task converted it to (model/train-<key>.tf_record).
    records = tf.io.gfile.glob(os.path.join(model_dir, "train-*.tf_record"))
    run.params.task.train_data.input_path = ",".join(records)
  return run


def _timed(fn, *args):
  t0, c0 = time.time(), time.process_time()
  out = fn(*args)
  return out, {"serve_wall_s": round(time.time() - t0, 1),
               "serve_cpu_s": round(time.process_time() - c0, 1)}


def squad_data(work_dir: str):
  """(dev subset articles, [(id, question, context)]) the offline
  evaluation used: the first paragraphs of dev-v1.1 with >= 1,000
  questions."""
  return bf16_agreement.questions(os.path.join(work_dir, "dev-subset.json"),
                                  10**9)


def serve_squad(export_dir: str, work_dir: str, smoke: bool) -> dict:
  from official_spanbert.metrics import squad_evaluate  # pylint: disable=g-import-not-at-top
  data, rows = squad_data(work_dir)
  del smoke  # the smoke run's dev subset is small
  answers, times = _timed(bf16_agreement.answers, export_dir, rows)
  metrics = squad_evaluate.evaluate_v1(data, answers)
  return {"metrics": {"exact_match": metrics["exact_match"],
                      "f1": metrics["f1"]}, "questions": len(rows),
          "predictions": answers, **times}


def cola_examples():
  from official_spanbert.data.finetuning import classification  # pylint: disable=g-import-not-at-top
  return {name: classification.read_tsv(
      common.data_path("glue", "CoLA", name), "cola") for name in COLA_EVAL}


def serve_cola(export_dir: str, work_dir: str, smoke: bool,
               batch: int = 32) -> dict:
  """classify's labels on CoLA's two dev files: MCC and accuracy."""
  from sklearn import metrics as sk  # pylint: disable=g-import-not-at-top
  del work_dir
  parts = {k: v[:SMOKE_ITEMS] if smoke else v
           for k, v in cola_examples().items()}
  texts = [e.text_a for name in COLA_EVAL for e in parts[name]]
  gold = [e.label for name in COLA_EVAL for e in parts[name]]
  classify = tf.saved_model.load(export_dir).signatures["classify"]

  def labels():
    out, probs = [], []
    for i in range(0, len(texts), batch):
      got = classify(text=tf.constant(texts[i:i + batch]))
      out.extend(x.decode() for x in got["label"].numpy())
      probs.extend(got["probabilities"].numpy().tolist())
    return out, probs

  (predicted, probs), times = _timed(labels)
  bounds, start = {"all": (0, len(gold))}, 0
  for name in COLA_EVAL:
    bounds[name[:-len(".tsv")]] = (start, start + len(parts[name]))
    start += len(parts[name])
  metrics = {name: {
      "matthews_corrcoef": 100 * sk.matthews_corrcoef(gold[lo:hi],
                                                      predicted[lo:hi]),
      "accuracy": 100 * sk.accuracy_score(gold[lo:hi], predicted[lo:hi]),
      "sentences": hi - lo} for name, (lo, hi) in bounds.items()}
  return {"metrics": metrics, "predictions": predicted,
          "probabilities": probs, **times}


def serve_ner(export_dir: str, work_dir: str, smoke: bool) -> dict:
  """extract_entities on fold 0 test: joined and natural text."""
  from official_spanbert.data.finetuning import litbank_text  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import span_ner as span_ner_data  # pylint: disable=g-import-not-at-top
  test = finetune_ner._split_file(0, "test", 1 if smoke else None, work_dir)  # pylint: disable=protected-access
  docs = span_ner_data.read_documents(span_ner_data.document_files(test))
  extract = tf.saved_model.load(export_dir).signatures["extract_entities"]
  out = {"metrics": {}, "predictions": {}, "serve_wall_s": 0,
         "serve_cpu_s": 0}
  for name, as_text in (("joined", litbank_text.joined_text),
                        ("natural", litbank_text.natural_text)):
    texts = [as_text(d.sentences) for d in docs]
    served, times = _timed(ner_natural_text.serve, extract,
                           [text for text, _ in texts])
    out["metrics"][name], entities = ner_natural_text.score(docs, texts,
                                                            served)
    out["predictions"][name] = [[list(k) for k in doc] for doc in entities]
    for k, v in times.items():
      out[k] = round(out[k] + v, 1)
      out["metrics"][name][k] = v
  return out


def cola_ranking(row: dict, smoke: bool) -> dict:
  """ROC AUC (percent) of P(label "1") against the gold labels: whether an
  export keeps float32's order of the sentences, also when every label is
  the same (a threshold-free aid, not CoLA's metric)."""
  from sklearn import metrics as sk  # pylint: disable=g-import-not-at-top
  parts = cola_examples()
  gold = [e.label == "1" for name in COLA_EVAL
          for e in parts[name][:SMOKE_ITEMS if smoke else None]]
  column = [p[1] for p in row["probabilities"]]  # label names ("0", "1")
  return {"roc_auc": 100 * sk.roc_auc_score(gold, column)}


SERVE = {"squad": serve_squad, "cola": serve_cola, "ner": serve_ner}


def identical(task: str, row: dict, base: dict) -> dict:
  """How much of a precision's output equals float32's."""
  if task == "squad":
    ids = list(base["predictions"])
    same = sum(row["predictions"][i] == base["predictions"][i] for i in ids)
    return {"identical_answers_percent": round(100 * same / len(ids), 2),
            "differing_answers": len(ids) - same}
  if task == "cola":
    same = np.mean([a == b for a, b in zip(row["predictions"],
                                           base["predictions"])])
    return {"identical_labels_percent": round(100 * float(same), 2),
            "max_probability_diff": float(np.abs(
                np.array(row["probabilities"]) -
                np.array(base["probabilities"])).max())}
  out = {}
  for name in base["predictions"]:
    both = either = docs_equal = 0
    for a, b in zip(row["predictions"][name], base["predictions"][name]):
      a, b = {tuple(k) for k in a}, {tuple(k) for k in b}
      both, either = both + len(a & b), either + len(a | b)
      docs_equal += a == b
    out[name] = {"identical_entities_percent": round(
        100 * both / either, 2) if either else 100.0,
                 "documents_equal": docs_equal}
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--task", choices=sorted(TRAIN), required=True)
  ap.add_argument("--work_dir", required=True,
                  help="runs and exports go to <work_dir>/<task>")
  ap.add_argument("--precisions", nargs="+",
                  default=["float32", "bfloat16", "int8"])
  ap.add_argument("--threads", type=int, default=1)
  ap.add_argument("--smoke", action="store_true",
                  help="train a few steps, serve a few items (checks the "
                  "pipeline; use another --work_dir and --result_json)")
  ap.add_argument("--redo", action="store_true",
                  help="export and serve the precisions again")
  ap.add_argument("--result_json", default="",
                  help="default experiments/serving_results/fast_exports/"
                  "<task>.json")
  args = ap.parse_args(argv)
  tf.config.threading.set_intra_op_parallelism_threads(args.threads)
  tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=unused-import
  from official_spanbert.serving import export_precision
  from official_spanbert.serving import quantization
  from official_spanbert.serving import registry
  from official_spanbert.utils import cpu_features
  # pylint: enable=g-import-not-at-top
  work_dir = os.path.join(args.work_dir, args.task)
  os.makedirs(work_dir, exist_ok=True)
  if args.smoke and not args.result_json:
    ap.error("--smoke needs --result_json (not the committed results)")
  out = args.result_json or os.path.join(RESULTS, f"{args.task}.json")
  finetuned = train(args.task, work_dir, args.threads, args.smoke)
  result = study_lib.read_json(out) or {}
  result.update({
      "task": args.task, "finetune": {k: v for k, v in finetuned.items()
                                      if k not in ("test_per_type",)},
      "machine": common.machine(), "cpu": cpu_features.read().describe(),
      "cpu_flags": relation_semeval.cpu_flags(), "threads": args.threads,
      "niceness": os.nice(0)})
  result.setdefault("precisions", {})
  cpu = cpu_features.read()
  for precision in ["float32"] + [p for p in args.precisions
                                  if p != "float32"]:
    kept = os.path.join(work_dir, f"served_{precision}.json")
    if os.path.exists(kept) and not args.redo:
      continue
    try:
      export_precision.check(precision, cpu)
      run = run_of(args.task, work_dir)
      t0, c0 = time.time(), time.process_time()
      path = registry.export(run, {"precision": precision},
                             os.path.join(work_dir, "export", precision))
      export = {"export_wall_s": round(time.time() - t0, 1),
                "export_cpu_s": round(time.process_time() - c0, 1)}
    except (export_precision.PrecisionError,
            quantization.QuantizationError) as e:
      print(f"{precision}: refused: {e}", flush=True)
      result["precisions"][precision] = {"refused": str(e).splitlines()[0]}
      study_lib.write_json(out, result)
      continue
    load = os.getloadavg()
    row = SERVE[args.task](path["model"], work_dir, args.smoke)
    row.update(export, export_dir=path["model"], load_average_before=load,
               load_average_after=os.getloadavg(),
               finished=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               commit=study_lib.git_commit())
    study_lib.write_json(kept, row)
    print(f"{precision}: {json.dumps(row['metrics'])[:300]}; served "
          f"{row['serve_cpu_s']} CPU-s", flush=True)
  base = study_lib.read_json(os.path.join(work_dir, "served_float32.json"))
  for precision in args.precisions:
    row = study_lib.read_json(os.path.join(work_dir,
                                           f"served_{precision}.json"))
    if not row:
      continue
    entry = {k: v for k, v in row.items()
             if k not in ("predictions", "probabilities")}
    if args.task == "cola":
      entry["metrics"]["all"].update(cola_ranking(row, args.smoke))
    if precision != "float32":
      entry["vs_float32"] = identical(args.task, row, base)
    result["precisions"][precision] = entry
  result["command"] = shlex.join(
      ["python", "-m", "experiments.fast_exports_quality"] +
      (argv if argv is not None else sys.argv[1:]))
  study_lib.write_json(out, result)
  print(f"wrote {out}")


if __name__ == "__main__":
  main()
