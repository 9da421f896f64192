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

r"""Served NER on natural text vs tokens joined by spaces (issue 55).

Fine-tunes all-MiniLM-L6-v2 as `spanbert/span_ner` on LitBank fold 0 with
experiments/finetune_ner.py's recipe (200 steps by default; the best dev
checkpoint, evaluated once offline on the 10 test documents), exports that
checkpoint with the span NER export (`spanbert-export-savedmodel`'s path)
and serves the same test documents twice through `extract_entities`:

  joined:  the tsv tokens joined by spaces, one sentence a line;
  natural: LitBank detokenized (data/finetuning/litbank_text.py): no space
           before , . ; : ! ? ) ’ 's n't, none after ( “ ‘.

Served character spans map back to tokens when they start and end on token
boundaries (litbank_text.token_span); a span that does not (it starts or
ends inside a token: `Mr` of `Mr.`, or `didn` of natural `didn't`) is
counted as a wrong prediction (`f1`), or left out as the offline evaluation
leaves it out (`f1_aligned_only`). Nested-span F1 (exact type and
boundaries) against all gold entities; "served = offline" compares the
joined run's token entities with the offline evaluation's, document by
document. The offline result is kept in the work dir, so a rerun only
exports and serves. Test documents are never used for a choice.

  nice -n 19 .venv/bin/python -m experiments.ner_natural_text \
      --work_dir /tmp/ner_natural      # ~1 h on one core; resumes
  .venv/bin/python -m experiments.ner_natural_text --smoke \
      --work_dir /tmp/ner_smoke --result_json /tmp/smoke.json
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf

from official_spanbert.data.finetuning import litbank_text
from official_spanbert.data.finetuning import span_ner as span_ner_data
from official_spanbert.data.finetuning import litbank_tsv
from official_spanbert.metrics import span_f1
from official_spanbert.serving import registry

from experiments import common
from experiments import finetune_ner
from experiments import study_lib

RESULT = os.path.join(common.REPO, "experiments", "ner_results",
                      "natural_text.json")


def processor() -> dict:
  """lscpu's model name and whether the CPU has AVX512-BF16 / AMX."""
  try:
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True,
                           check=False).stdout
  except OSError:
    lscpu = ""
  name = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines()
               if line.startswith("Model name")), "unknown")
  flags = set()
  if os.path.exists("/proc/cpuinfo"):
    with open("/proc/cpuinfo", encoding="utf-8") as f:
      for line in f:
        if line.startswith("flags"):
          flags = set(line.split(":", 1)[1].split())
          break
  return {"model_name": name, "avx512_bf16": "avx512_bf16" in flags,
          "amx": sorted(f for f in flags if f.startswith("amx"))}


def score(docs, served_texts, out) -> dict:
  """P/R/F1 of served entities (character spans) against gold tokens."""
  scorer, aligned = span_f1.SpanF1(), span_f1.SpanF1()
  unaligned = 0
  entities = []
  for i, (doc, (text, spans)) in enumerate(zip(docs, served_texts)):
    keys = []
    for s, e, kind in zip(*(out[i][k] for k in (
        "entity_start", "entity_end", "entity_type"))):
      if s < 0:
        continue
      tokens = litbank_text.token_span(spans, int(s), int(e))
      if tokens is None:
        unaligned += 1
        keys.append(("unaligned", int(s), int(e), kind.decode()))
      else:
        keys.append((tokens[0], tokens[1], kind.decode()))
    gold = [x.key for x in doc.entities]
    scorer.update(gold, keys)
    aligned.update(gold, [k for k in keys if k[0] != "unaligned"])
    entities.append(keys)
    del text
  result, kept = scorer.result(), aligned.result()
  return {"precision": result["precision"], "recall": result["recall"],
          "f1": result["f1"], "predicted": result["predicted"],
          "correct": result["correct"], "gold": result["gold"],
          "unaligned_predictions": unaligned,
          # As the offline evaluation scores: spans off token boundaries
          # left out.
          "f1_aligned_only": kept["f1"],
          "precision_aligned_only": kept["precision"]}, entities


def serve(extract, texts):
  """extract_entities of each text (one request a document)."""
  out = []
  for text in texts:
    result = extract(text=tf.constant([text]))
    out.append({k: v.numpy()[0] for k, v in result.items()})
  return out


def run(args) -> dict:
  tf.config.threading.set_intra_op_parallelism_threads(args.threads)
  tf.config.threading.set_inter_op_parallelism_threads(args.threads)
  tune = argparse.Namespace(
      model="span", seed=args.seed, fold=args.fold, steps=args.steps,
      evaluations=args.evaluations, threads=args.threads,
      max_train_docs=args.max_train_docs, max_eval_docs=args.max_eval_docs,
      work_dir=args.work_dir, result_json=None)
  # Trains or resumes, then tests once offline; kept, so that a rerun of
  # the serving half does not evaluate again.
  done = os.path.join(args.work_dir, "ner_natural_text_offline.json")
  offline = study_lib.read_json(done)
  if not offline or offline["args"] != vars(tune):
    t0 = time.perf_counter()
    offline = finetune_ner.run(tune)
    offline["finetune_and_offline_test_s"] = round(time.perf_counter() - t0,
                                                   1)
    study_lib.write_json(done, offline)
  model_dir = os.path.join(args.work_dir, f"span_seed{args.seed}")
  best = os.path.join(model_dir, "best_ckpt")
  run = registry.load_run(model_dir, checkpoint_path=best)
  export_base = os.path.join(args.work_dir, "export")
  t0 = time.perf_counter()
  path = registry.export(run, {}, export_base)["model"]
  export_s = time.perf_counter() - t0
  extract = tf.saved_model.load(path).signatures["extract_entities"]

  test_list = finetune_ner._split_file(  # pylint: disable=protected-access
      args.fold, "test", args.max_eval_docs, args.work_dir)
  docs = span_ner_data.read_documents(
      span_ner_data.document_files(test_list))
  predictions = os.path.join(model_dir, "test_predictions")
  offline_keys = [[e.key for e in litbank_tsv.read_file(
      os.path.join(predictions, d.name + ".tsv")).entities] for d in docs]
  result = {"offline": offline["test"], "offline_counts":
            offline["test_counts"]}
  for name, as_text in (("joined", litbank_text.joined_text),
                        ("natural", litbank_text.natural_text)):
    texts = [as_text(d.sentences) for d in docs]
    t0 = time.perf_counter()
    out = serve(extract, [text for text, _ in texts])
    result[name], entities = score(docs, texts, out)
    result[name]["serve_s"] = round(time.perf_counter() - t0, 1)
    if name == "joined":
      # Offline leaves out spans off token boundaries; so does this.
      served = [{k for k in keys if k[0] != "unaligned"} for keys in entities]
      offline_sets = [set(keys) for keys in offline_keys]
      result["served_equals_offline"] = {
          "documents_equal": sum(a == b for a, b in zip(served,
                                                        offline_sets)),
          "documents": len(served),
          "entities_only_served": sum(len(a - b) for a, b in zip(
              served, offline_sets)),
          "entities_only_offline": sum(len(b - a) for a, b in zip(
              served, offline_sets)),
          "entities_both": sum(len(a & b) for a, b in zip(served,
                                                          offline_sets))}
  result.update({
      "natural_minus_joined_f1": result["natural"]["f1"] -
                                 result["joined"]["f1"],
      "before_fix_issue_55": {"joined_f1": 67.1, "natural_f1": 45.0,
                              "predicted": {"joined": 1048,
                                            "natural": 530}},
      "best_dev_f1": offline["best_dev_f1"],
      "best_step": offline["best_step"], "steps": args.steps,
      "test_documents": len(docs),
      "finetune_and_offline_test_s": offline[
          "finetune_and_offline_test_s"],
      "offline_machine": offline["machine"],
      "export_s": round(export_s, 1),
      "command": " ".join(shlex.quote(a) for a in (
          [sys.executable, "-m", "experiments.ner_natural_text"] +
          sys.argv[1:])),
      "niceness_at_end": os.nice(0),
      "commit": study_lib.git_commit(), "machine": common.machine(),
      "processor": processor(), "args": vars(args)})
  print(f"served F1: joined {result['joined']['f1']:.2f}, natural "
        f"{result['natural']['f1']:.2f}; offline {result['offline']['f1']:.2f}"
        f"; served = offline on {result['served_equals_offline']}",
        flush=True)
  return result


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--seed", type=int, default=1)
  parser.add_argument("--fold", type=int, default=0)
  parser.add_argument("--steps", type=int, default=200)
  parser.add_argument("--evaluations", type=int, default=2,
                      help="dev evaluations during training")
  parser.add_argument("--threads", type=int, default=1)
  parser.add_argument("--max_train_docs", type=int, default=None)
  parser.add_argument("--max_eval_docs", type=int, default=None)
  parser.add_argument("--smoke", action="store_true",
                      help="4 steps on 2 training documents, 1 dev and 1 "
                      "test document: checks the pipeline, measures nothing")
  parser.add_argument("--work_dir", default=None,
                      help="keeps the run and the export; the same command "
                      "again resumes (default: a temporary directory)")
  parser.add_argument("--result_json", default=None,
                      help=f"default {os.path.relpath(RESULT, common.REPO)}")
  args = parser.parse_args()
  if args.smoke:
    args.steps, args.evaluations = 4, 1
    args.max_train_docs, args.max_eval_docs = 2, 1
  common.minilm_path("ner_natural_text")  # exits without the interop extra
  if not os.path.isdir(finetune_ner.LITBANK):
    sys.exit("ner_natural_text: error: no LitBank entities at "
             f"{finetune_ner.LITBANK}")
  out = args.result_json or (None if args.smoke else RESULT)
  with tempfile.TemporaryDirectory() as tmp:
    if args.work_dir is None:
      args.work_dir = tmp
    os.makedirs(args.work_dir, exist_ok=True)
    result = run(args)
  if out:
    study_lib.write_json(out, result)
    print(f"wrote {out}")


if __name__ == "__main__":
  main()
