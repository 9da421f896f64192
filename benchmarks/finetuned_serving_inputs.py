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

"""Inputs and exports of benchmarks/bench_finetuned_serving.py.

The SQuAD (question, context) pairs at the median and at a long context
length, the SST-2 sentences, --smoke's stand-ins for them (made from
tests/fixtures, with a random 1-layer BERT), and the package's side: the
converted encoder with seeded random heads, exported as `answer` and
`classify`, and those heads in Hugging Face's parameter names.
"""

import json
import os
import random
import statistics

from benchmarks.hf_pipeline_worker import (  # pylint: disable=g-multiple-import
    MAX_ANSWER, N_BEST, QUERY, SEQ_CLS, SEQ_QA, STRIDE)
from benchmarks.common import SMOKE_CORPUS, SMOKE_VOCAB


def squad_pairs(path: str, long_chars: int, seed: int):
  """(median-length pairs, long pairs, stats): (question, context) lists."""
  with open(path, encoding="utf-8") as f:
    articles = json.load(f)["data"]
  lengths = [len(p["context"]) for a in articles for p in a["paragraphs"]]
  median = statistics.median(lengths)
  lo, hi = 0.9 * median, 1.1 * median
  median_pairs = [(qa["question"], p["context"]) for a in articles
                  for p in a["paragraphs"] if lo <= len(p["context"]) <= hi
                  for qa in p["qas"]]
  long_pairs, long_lengths = [], []
  for a in articles:
    texts, questions = [], []
    for p in a["paragraphs"]:
      texts.append(p["context"])
      questions += [qa["question"] for qa in p["qas"]]
      joined = "\n\n".join(texts)
      if len(joined) >= long_chars:
        if len(joined) <= 1.25 * long_chars:
          long_pairs += [(q, joined) for q in questions]
          long_lengths.append(len(joined))
        texts, questions = [], []
  rng = random.Random(seed)
  rng.shuffle(median_pairs)
  rng.shuffle(long_pairs)
  stats = {"paragraphs": len(lengths), "median_chars": median,
           "median_contexts": len({c for _, c in median_pairs}),
           "median_questions": len(median_pairs),
           "long_contexts": len(long_lengths),
           "long_questions": len(long_pairs),
           "long_chars": (min(long_lengths), statistics.median(long_lengths),
                          max(long_lengths))}
  return median_pairs, long_pairs, stats


def sst2_sentences(path: str, seed: int):
  with open(path, encoding="utf-8") as f:
    rows = [line.rstrip("\n").split("\t") for line in f][1:]
  sentences = [r[0].strip() for r in rows if r and r[0].strip()]
  random.Random(seed).shuffle(sentences)
  return sentences


class Cursor:
  """Takes items from a list in order, wrapping around."""

  def __init__(self, items):
    self.items, self.i = items, 0

  def take(self, n):
    out = [self.items[(self.i + k) % len(self.items)] for k in range(n)]
    self.i += n
    return out


def smoke_inputs(args, work: str) -> None:
  """--smoke: sets args.minilm, .squad and .sst2 where no flag named them.

  A random 1-layer BERT in Hugging Face's layout (written by
  interop.tf_to_hf, with the fixture's vocab excerpt), and a SQuAD JSON and an
  SST-2 TSV of the fixture's prose: each document an article, each line a
  paragraph with questions made of its sentences (timing only).
  """
  with open(SMOKE_CORPUS, encoding="utf-8") as f:
    docs = [[line.strip() for line in doc.splitlines() if line.strip()]
            for doc in f.read().split("\n\n")]
  sentences = [s.strip() for doc in docs for p in doc
               for s in p.split(". ") if len(s.split()) > 3]
  if args.squad is None:
    args.squad = os.path.join(work, "smoke_squad.json")
    data = [{"title": f"document {i}", "paragraphs": [
        {"context": p, "qas": [
            {"id": f"{i}.{j}.{k}", "answers": [],
             "question": "What " + " ".join(s.split()[1:9]) + "?"}
            for k, s in enumerate(p.split(". ")[:2])]}
        for j, p in enumerate(doc)]} for i, doc in enumerate(docs)]
    with open(args.squad, "w", encoding="utf-8") as f:
      json.dump({"data": data, "version": "1.1"}, f)
  if args.sst2 is None:
    args.sst2 = os.path.join(work, "smoke_sst2.tsv")
    with open(args.sst2, "w", encoding="utf-8") as f:
      f.write("sentence\tlabel\n" + "".join(
          f"{s}\t{i % 2}\n" for i, s in enumerate(sentences)))
  if args.minilm is None:
    args.minilm = tiny_bert(work, SMOKE_VOCAB, args.seed)


def tiny_bert(work: str, vocab: str, seed: int) -> str:
  """A random 1-layer BERT (hidden 32) in Hugging Face's layout."""
  from official_spanbert.interop import random_bert  # pylint: disable=g-import-not-at-top
  return random_bert.write(work, vocab, seed)


# ----------------------------------------------------------------------------
# The package's side.


def converted(work: str, minilm: str) -> str:
  """<work>/minilm: the Hugging Face BERT `minilm` converted with
  interop.hf_to_tf, the first time it is asked for (the exports of every
  precision and the encoder part restore the same one)."""
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  out = os.path.join(work, "minilm")
  if not os.path.exists(os.path.join(out, interop.PARAMS_FILE)):
    interop.hf_to_tf(minilm, out)
  return out


# Calibration of the int8 exports: windows of this many training questions
# (quantization.CALIBRATION_EXAMPLES of them are read) and sentences.
CALIBRATION_QUESTIONS = 300
CALIBRATION_SENTENCES = 256


def calibration_records(work: str, converted_dir: str, squad_json: str):
  """(QA records, classification records) that the int8 exports calibrate
  on, written once into <work>/calibration: the windows of the first
  CALIBRATION_QUESTIONS questions of `squad_json` (a TRAINING file, such as
  SQuADShifts', never the timed dev set) and the first
  CALIBRATION_SENTENCES sentences of its contexts, tokenized as the exports
  tokenize them. The heads are random, so the labels are all 0.

  Example:
    qa, cls = calibration_records(work, converted(work, minilm),
                                  "squad/new_wiki_v1.0.json")
  """
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import classification as cls_data  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.finetuning import squad  # pylint: disable=g-import-not-at-top
  out = os.path.join(work, "calibration")
  qa, cls = (os.path.join(out, "squad.tf_record"),
             os.path.join(out, cls_data.TRAIN_FILE))
  if os.path.exists(qa) and os.path.exists(cls):
    return qa, cls
  with open(os.path.join(converted_dir, interop.CONVERSION_FILE),
            encoding="utf-8") as f:
    lower_case = bool(json.load(f)["lower_case"])
  tokenizer = tokenization.WordpieceTokenizer(
      os.path.join(converted_dir, interop.VOCAB_FILE), lower_case=lower_case)
  squad.prepare(squad_json, tokenizer, qa, is_training=False,
                max_seq_length=SEQ_QA, doc_stride=STRIDE,
                max_query_length=QUERY, max_examples=CALIBRATION_QUESTIONS)
  with open(squad_json, encoding="utf-8") as f:
    contexts = [p["context"] for a in json.load(f)["data"]
                for p in a["paragraphs"]]
  sentences = [s.strip() for c in contexts for s in c.split(". ")
               if len(s.split()) > 3][:CALIBRATION_SENTENCES]
  ids, segments, _ = cls_data.encode(
      tokenizer, [cls_data.Example(f"calibration:{i}", s, None, "0")
                  for i, s in enumerate(sentences)], SEQ_CLS)
  cls_data.write_records(cls, ids, segments, [0] * len(ids), SEQ_CLS,
                         pad_id=tokenizer.vocab.pad_id)
  return qa, cls


def head_weights(model) -> dict:
  """{variable name: array} of a task model's trainable variables outside
  its encoder (model.checkpoint_items["encoder"]): the task head."""
  encoder = {id(v) for v in model.checkpoint_items["encoder"].variables}
  return {v.name: v.numpy() for v in model.trainable_variables
          if id(v) not in encoder}


def _one(head, *words):
  """The one array of `head` whose name holds all `words`."""
  names = [n for n in head if all(w in n for w in words)]
  assert len(names) == 1, (words, sorted(head))
  return head[names[0]]


def hf_qa_head(qa_head) -> dict:
  """A span-labeling head (head_weights: kernel [hidden, 2], bias [2]) as
  BertForQuestionAnswering's `qa_outputs`, under the worker's "qa/" prefix
  (Dense kernels are [in, out]; Linear weights are [out, in])."""
  return {"qa/qa_outputs.weight": _one(qa_head, "kernel").T,
          "qa/qa_outputs.bias": _one(qa_head, "bias")}


def build_exports(work: str, converted_dir: str, seed: int,
                  precision: str = "float32", calibration: str = "",
                  doc_stride: int = 0):
  """Exports answer and classify of the converted encoder (converted());
  returns (qa dir, classify dir, heads.npz). int8 calibrates on
  calibration_records() of the training SQuAD JSON `calibration`;
  `doc_stride` is answer's serving option (0: the run's, STRIDE)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official.core import task_factory  # pylint: disable=g-import-not-at-top
  from official.core import train_utils  # pylint: disable=g-import-not-at-top
  from official.modeling.hyperparams import params_dict  # pylint: disable=g-import-not-at-top
  from official_spanbert import interop  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.data.finetuning import classification as cls_data  # pylint: disable=g-import-not-at-top
  from official_spanbert.serving import registry  # pylint: disable=g-import-not-at-top

  converted = converted_dir
  with open(os.path.join(converted, interop.CONVERSION_FILE),
            encoding="utf-8") as f:
    lower_case = bool(json.load(f)["lower_case"])
  vocab = os.path.join(converted, interop.VOCAB_FILE)

  def run_dir(name, params, serving=None):
    """Encoder from the conversion, seeded random head, saved as a run,
    exported with the serving params `serving` (and the precision)."""
    params.task.init_checkpoint = converted
    tf.keras.utils.set_random_seed(seed)
    task = task_factory.get_task(params.task.replace(validation_data=None))
    model = task.build_model()
    task.initialize(model)
    run = os.path.join(work, name + "_run")
    os.makedirs(run, exist_ok=True)
    train_utils.serialize_config(params, run)
    tf.train.Checkpoint(model=model, **model.checkpoint_items).save(
        os.path.join(run, "ckpt"))
    paths = registry.export(registry.load_run(run),
                            dict(serving or {}, precision=precision),
                            os.path.join(work, name + "_export"))
    return paths["model"], head_weights(model)

  def base(experiment):
    return params_dict.override_params_dict(
        exp_factory.get_exp_config(experiment),
        os.path.join(converted, interop.PARAMS_FILE), is_strict=True)

  qa_records = cls_records = None
  if precision == "int8":
    if not calibration:
      raise ValueError("an int8 export calibrates on training records: "
                       "pass a training SQuAD JSON (--calibration)")
    qa_records, cls_records = calibration_records(work, converted,
                                                  calibration)
  params = base("spanbert/squad_v1")
  data = dict(seq_length=SEQ_QA, doc_stride=STRIDE, query_length=QUERY,
              vocab_file=vocab, do_lower_case=lower_case)
  if qa_records:
    data["input_path"] = qa_records
  params.override({"task": {"train_data": data, "validation_data": data,
                            "n_best_size": N_BEST,
                            "max_answer_length": MAX_ANSWER}}, is_strict=True)
  qa_dir, qa_head = run_dir("qa", params, {"doc_stride": doc_stride})

  # The classification export reads its labels from the meta beside its
  # records (int8: the calibration records).
  records = (os.path.dirname(cls_records) if cls_records
             else os.path.join(work, "sst2_records"))
  os.makedirs(records, exist_ok=True)
  with open(os.path.join(records, cls_data.META_FILE), "w",
            encoding="utf-8") as f:
    json.dump({"task": "sst2", "labels": ["0", "1"], "num_labels": 2,
               "vocab_file": vocab, "lower_case": lower_case,
               "max_seq_length": SEQ_CLS}, f)
  params = base("spanbert/classification")
  params.override({"task": {"model": {"num_classes": 2}, "train_data": {
      "input_path": os.path.join(records, cls_data.TRAIN_FILE),
      "seq_length": SEQ_CLS}}}, is_strict=True)
  cls_dir, cls_head = run_dir("cls", params)

  # TF heads -> HF parameter names (Dense kernels are [in, out]; Linear
  # weights are [out, in]).
  assert len(qa_head) == 2 and len(cls_head) == 4, (qa_head, cls_head)
  heads = {
      **hf_qa_head(qa_head),
      "cls/bert.pooler.dense.weight": _one(cls_head, "pooler_dense",
                                           "kernel").T,
      "cls/bert.pooler.dense.bias": _one(cls_head, "pooler_dense", "bias"),
      "cls/classifier.weight": _one(cls_head, "logits", "kernel").T,
      "cls/classifier.bias": _one(cls_head, "logits", "bias"),
  }
  path = os.path.join(work, "heads.npz")
  np.savez(path, **{k: np.ascontiguousarray(v, np.float32)
                    for k, v in heads.items()})
  return qa_dir, cls_dir, path
