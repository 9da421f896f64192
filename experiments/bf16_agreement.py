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

r"""A trained SQuAD run exported in float32 and in bfloat16: same answers?

Issue 45 item 4. Exports --model_dir (a fine-tuned spanbert/squad_v1 run)
twice with `spanbert-export-savedmodel` (--precision float32, bfloat16; the
latter needs a CPU with native bf16), asks both exports the first
--questions questions of SQuAD v1.1 dev (batches of 16), and writes how
many answer texts are equal, the official EM / F1 of each, and the
processor to --output (JSON).

  .venv/bin/python -m experiments.bf16_agreement \
      --model_dir .scratch/shifts/squad/span_sbo_no_warmup/seed2 \
      --output experiments/serving_results/bf16_agreement.json
"""

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(model_dir: str, export_base: str, precision: str) -> str:
  """Runs the export tool; returns the version directory it wrote."""
  subprocess.run([sys.executable, "-m", "tools.export_savedmodel",
                  f"--model_dir={model_dir}", f"--export_base={export_base}",
                  f"--precision={precision}"], cwd=REPO, check=True)
  versions = sorted(os.listdir(export_base), key=int)
  return os.path.join(export_base, versions[-1])


def questions(dev_json: str, n: int):
  """(dataset, [(id, question, context)]) of the first n dev questions."""
  with open(dev_json, encoding="utf-8") as f:
    data = json.load(f)["data"]
  rows = [(qa["id"], qa["question"], p["context"]) for a in data
          for p in a["paragraphs"] for qa in p["qas"]][:n]
  return data, rows


def answers(export_dir: str, rows, batch: int = 16):
  """{id: answer text} of the export's `answer` signature."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  answer = tf.saved_model.load(export_dir).signatures["answer"]
  out = {}
  for i in range(0, len(rows), batch):
    chunk = rows[i:i + batch]
    got = answer(question=tf.constant([q for _, q, _ in chunk]),
                 context=tf.constant([c for _, _, c in chunk]))
    for (qid, _, _), text in zip(chunk, got["answer_text"].numpy()):
      out[qid] = text.decode("utf-8")
  return out


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--model_dir", required=True)
  ap.add_argument("--dev", default=os.path.join(
      REPO, "..", "shared", "data", "squad", "dev-v1.1.json"))
  ap.add_argument("--questions", type=int, default=1000)
  ap.add_argument("--work_dir", default="/tmp/bf16_agreement")
  ap.add_argument("--output", required=True)
  args = ap.parse_args(argv)
  from official_spanbert.metrics import squad_evaluate  # pylint: disable=g-import-not-at-top
  from official_spanbert.utils import cpu_features  # pylint: disable=g-import-not-at-top
  data, rows = questions(args.dev, args.questions)
  texts, metrics, seconds = {}, {}, {}
  for precision in ("float32", "bfloat16"):
    version = export(args.model_dir,
                     os.path.join(args.work_dir, precision), precision)
    t0 = time.time()
    texts[precision] = answers(version, rows)
    seconds[precision] = round(time.time() - t0, 1)
    subset = [dict(a, paragraphs=[dict(p, qas=[qa for qa in p["qas"]
                                               if qa["id"] in texts[precision]])
                                  for p in a["paragraphs"]]) for a in data]
    metrics[precision] = squad_evaluate.evaluate_v1(subset, texts[precision])
  ids = [qid for qid, _, _ in rows]
  same = sum(texts["float32"][i] == texts["bfloat16"][i] for i in ids)
  result = {
      "model_dir": os.path.abspath(args.model_dir),
      "questions": len(ids), "same_answer_text": same,
      "agreement_percent": round(100 * same / len(ids), 2),
      "float32": metrics["float32"], "bfloat16": metrics["bfloat16"],
      "answer_wall_s": seconds,
      "differing": [{"id": i, "float32": texts["float32"][i],
                     "bfloat16": texts["bfloat16"][i]} for i in ids
                    if texts["float32"][i] != texts["bfloat16"][i]][:20],
      "processor": cpu_features.read().describe(),
      "commit": subprocess.run(["git", "-C", REPO, "rev-parse", "--short=12",
                                "HEAD"], capture_output=True, text=True,
                               check=False).stdout.strip(),
      "command": " ".join(["python -m experiments.bf16_agreement"] +
                          (argv if argv is not None else sys.argv[1:])),
      "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
  os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
  with open(args.output, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1, ensure_ascii=False)
  print(json.dumps({k: v for k, v in result.items() if k != "differing"}))


if __name__ == "__main__":
  main()
