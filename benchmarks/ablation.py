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

r"""The paper's ablations (Tables 6 and 7) as one resumable study.

Every arm pretrains the same encoder for the same steps, batch, schedule, data
order and seed; only the masking scheme or objective differs:

  random_init   no pretraining (the floor)
  token_single  bert/token_single: subword tokens, one sequence, MLM
  token_nsp     bert/token_nsp: subword tokens, two segments, MLM + NSP
  whole_word    spanbert/no_sbo, masking_scheme=whole_word
  named_entity  spanbert/no_sbo, masking_scheme=named_entity (tagged records)
  noun_phrase   spanbert/no_sbo, masking_scheme=noun_phrase (tagged records)
  span          spanbert/no_sbo: geometric spans, MLM
  span_sbo      spanbert/pretraining: geometric spans, MLM + SBO

Then each arm is fine-tuned with `spanbert/squad_v1` (encoder restored through
task.init_checkpoint) on all SQuADShifts training questions (new_wiki +
amazon_reviews + reddit) with several seeds and scored on SQuAD v1.1 dev with
the official metric; and its MLM accuracy is measured on span-masked blocks
of a held-out slice of the corpus (every `heldout_every`-th document, counted
over the corpus files in sorted order; pretraining never sees them).

Stages, in order (a manifest of finished ones is <work_dir>/manifest.json;
finished stages are skipped, a stopped stage resumes from its checkpoints):

  records:single, records:nsp, records:tagged, records:heldout
      the train/held-out corpus split and pretraining records at the preset's
      sequence length (tagged: --tag_spans=entities,noun_phrases; without
      spaCy the named_entity/noun_phrase arms are pending)
  finetune_records        SQuADShifts training features, the dev JSON
  pretrain:<arm>          official_spanbert.train.run, model_dir per arm
  heldout_mlm:<arm>       held-out span-masked MLM accuracy
  finetune:<arm>:<seed>   train + one evaluation on dev
  report                  <work_dir>/report.md, report.json and ablation.png,
                          rebuilt from the result files and event files

A stopped pretraining or fine-tuning stage resumes from its last checkpoint
(checked here: pretrain:span_sbo killed with SIGKILL after ckpt-100 resumed
from step 100). A SIGTERM exits (releasing the model_dir lock) only once the
current loop of steps_per_loop steps ends.

--stages takes stage names or their prefixes (`records`, `pretrain`,
`finetune:span`); --arms restricts the arms.

  .venv/bin/python benchmarks/ablation.py --preset=cpu --work_dir /tmp/ablation
  .venv/bin/python benchmarks/ablation.py --preset=cpu --work_dir /tmp/ablation \
      --arms span,span_sbo --stages pretrain,heldout_mlm
  .venv/bin/python benchmarks/ablation.py --preset=cpu --work_dir /tmp/ablation \
      --stages report

Presets:

  cpu    4 layers, hidden 256, 4 heads, FFN 1024, cased vocab 28,996, seq 128,
         batch 32, 3,000 steps (peak lr 5e-4, 300 warmup). Issue 15 measured
         ~47 examples/s (span + SBO) to ~59 (token MLM) on the idle 2-core
         machine, so an arm takes ~27-34 min and the 7 pretrained arms
         ~3.7 h; pretrain:span_sbo here at load 10 ran at 10 examples/s
         (100 steps in 5 min wall, 3.6 CPU min), i.e. ~2.7 h an arm at such
         a load; the 64,043 training blocks (5,912 documents; 120 held out,
         1,446 blocks) are seen 1.5 times. Fine-tuning: 600 steps of batch 32
         at seq 128 (0.27 epoch of the 71,550 training windows of the 27,626
         questions), lr 2e-4, then the full dev set (10,570 questions):
         ~5 min training + ~4 min features, inference and post-processing
         per run, so 8 arms x 3 seeds ~3.6 h. Records (measured at load 12):
         single 43 s, NSP 73 s, held-out 4 s, SQuAD features 79 s (15-19 CPU
         s each); spaCy tagging ran at 674 words/s at load 13 (a 300 KB
         sample), so the ~4.5M words take ~1.8 h at that load (less on an
         idle machine). Held-out MLM ~1 min an arm. In all ~9-10 h on 2
         idle cores, 2-3 times that at load 10; estimates, not yet measured
         end to end.
  gpu    6 layers, hidden 512, 8 heads, FFN 2048, seq 128, batch 256, 1,500
         steps (6 passes over the 64k blocks), bf16
         (runtime.mixed_precision_dtype=bfloat16, i.e. the mixed_bfloat16
         policy; Model Garden rejects "mixed_bfloat16"), one GPU.
         Sizing: non-embedding parameters 6 x 12 x 512^2 = 18.9M; a step is
         256 x 128 = 32,768 tokens, ~6 x 18.9M x 32,768 = 3.7 TFLOP in the
         encoder plus ~0.4 TFLOP per MLM/SBO projection (5,120 targets x
         28,996 x 512 x 6), ~4.5 TFLOP in all. At a conservative 25% of an
         H200's ~990 bf16 TFLOP/s that is ~18 ms a step, ~27 s for 1,500 steps,
         plus ~30 s of tracing and startup: ~1 min an arm, ~7 min for the 7
         pretrained arms. The input pipeline must then mask ~14k blocks/s on
         16 cores; if it cannot, steps wait on it, which is the first thing
         to check on a device. Fine-tuning (1,000 steps of batch 64 a run, 8
         arms x 3 seeds) comes on top: ~24 x ~40 s. Not yet measured on a
         device.
  micro  for the test: 1 layer, hidden 64, seq 64, a few steps, a few
         questions, arms random_init and span_sbo, 2 seeds.
"""

import argparse
import dataclasses
import glob
import json
import os
import signal
import statistics
import sys
import time
from typing import Dict, List, Optional

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official_spanbert import train
from official_spanbert.configs import experiments  # noqa: F401
from official_spanbert.configs import squad_experiments  # noqa: F401
from official_spanbert.data.pretraining import pretraining_records
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data.finetuning import squad
from official_spanbert.data import tokenization
from official_spanbert.modeling import span_bert_pretrainer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finetune_glue  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import finetune_squad  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position

DATA = finetune_squad.DATA
MANIFEST = "manifest.json"
SQUAD_TRAIN = ("new_wiki_v1.0.json", "amazon_reviews_v1.0.json",
               "reddit_v1.0.json")
HELDOUT_SEED = 7


@dataclasses.dataclass(frozen=True)
class Arm:
  experiment: str = ""          # "" for random_init
  masking_scheme: str = ""
  records: str = ""             # records:<kind> it pretrains on
  label: str = ""


ARMS = {
    "random_init": Arm(label="no pretraining"),
    "token_single": Arm("bert/token_single", "token", "single",
                        "subword tokens, 1 seq, MLM"),
    "token_nsp": Arm("bert/token_nsp", "token", "nsp",
                     "subword tokens, 2 seq, MLM + NSP"),
    "whole_word": Arm("spanbert/no_sbo", "whole_word", "single",
                      "whole words, 1 seq, MLM"),
    "named_entity": Arm("spanbert/no_sbo", "named_entity", "tagged",
                        "named entities, 1 seq, MLM"),
    "noun_phrase": Arm("spanbert/no_sbo", "noun_phrase", "tagged",
                       "noun phrases, 1 seq, MLM"),
    "span": Arm("spanbert/no_sbo", "span", "single",
                "geometric spans, 1 seq, MLM"),
    "span_sbo": Arm("spanbert/pretraining", "span", "single",
                    "geometric spans, 1 seq, MLM + SBO"),
}

# The paper's SQuAD 2.0 dev F1 (Joshi et al., 2020), for direction only. Source:
# arXiv 1907.10529v3 Table 6/7, verified (the ablations use BERT-large-size
# checkpoints at 1.2M steps, footnote 10, not the 2.4M-step final models).
# Every Table 6 row is bi-sequence training with NSP, so the whole_word,
# named_entity and noun_phrase arms here (one sequence, MLM only) match their
# row in masking scheme only. Table 6 "Geometric Spans" (85.4) equals Table 7
# "Span Masking (2seq) + NSP" and has no arm here.
PAPER_SQUAD2_F1 = {
    "token_nsp": "83.8 (T6 subword tokens, 2seq + NSP)",
    "whole_word": "84.3 (T6 whole words, 2seq + NSP)",
    "named_entity": "84.8 (T6 named entities, 2seq + NSP)",
    "noun_phrase": "85.0 (T6 noun phrases, 2seq + NSP)",
    "span": "86.7 (T7 span masking, 1seq)",
    "span_sbo": "86.8 (T7 span masking, 1seq + SBO)",
}


@dataclasses.dataclass(frozen=True)
class Preset:
  """Sizes and budgets of one study (the same for every arm)."""
  layers: int
  hidden: int
  heads: int
  ffn: int
  seq_length: int
  batch_size: int
  pretrain_steps: int
  learning_rate: float
  warmup_steps: int
  steps_per_loop: int
  checkpoint_interval: int
  max_predictions: int
  finetune_seq_length: int
  doc_stride: int
  query_length: int
  finetune_batch_size: int
  finetune_steps: int
  finetune_learning_rate: float
  seeds: tuple = (1, 2, 3)
  arms: tuple = tuple(ARMS)
  num_shards: int = 8
  shuffle_buffer: int = 20_000
  corpus_bytes: int = 0         # per corpus file; 0: whole files
  heldout_every: int = 50
  train_questions: int = 0      # per SQuADShifts file; 0: all
  dev_questions: int = 0        # 0: the full dev set
  eval_batch_size: int = 64
  data_seed: int = 1
  model_seed: int = 1
  mixed_precision: str = ""
  num_gpus: int = 0


_CPU = Preset(layers=4, hidden=256, heads=4, ffn=1024, seq_length=128,
              batch_size=32, pretrain_steps=3000, learning_rate=5e-4,
              warmup_steps=300, steps_per_loop=100, checkpoint_interval=500,
              max_predictions=20, finetune_seq_length=128, doc_stride=64,
              query_length=64, finetune_batch_size=32, finetune_steps=600,
              finetune_learning_rate=2e-4)
PRESETS = {
    "cpu": _CPU,
    "gpu": dataclasses.replace(
        _CPU, layers=6, hidden=512, heads=8, ffn=2048, batch_size=256,
        pretrain_steps=1500, learning_rate=1e-3, warmup_steps=150,
        steps_per_loop=250, finetune_batch_size=64, finetune_steps=1000,
        eval_batch_size=256, mixed_precision="bfloat16", num_gpus=1),
    "micro": Preset(layers=1, hidden=64, heads=2, ffn=128, seq_length=64,
                    batch_size=8, pretrain_steps=6, learning_rate=1e-3,
                    warmup_steps=1, steps_per_loop=2, checkpoint_interval=2,
                    max_predictions=11, finetune_seq_length=64, doc_stride=32,
                    query_length=16, finetune_batch_size=8, finetune_steps=4,
                    finetune_learning_rate=1e-3, seeds=(1, 2),
                    arms=("random_init", "span_sbo"), num_shards=2,
                    shuffle_buffer=100, corpus_bytes=20_000, heldout_every=5,
                    train_questions=16, dev_questions=24, eval_batch_size=16),
}


@dataclasses.dataclass
class Study:
  """A preset, its work dir and the data it reads."""
  preset: Preset
  work_dir: str
  corpus: str = os.path.join(DATA, "corpus", "*.txt")
  vocab: str = os.path.join(DATA, "vocab", "bert-base-cased-vocab.txt")
  squad_dir: str = os.path.join(DATA, "squad")
  tag_processes: int = 2

  def path(self, *parts: str) -> str:
    return os.path.join(self.work_dir, *parts)

  def records(self, kind: str) -> str:
    return self.path("records", kind)

  def pretrain_dir(self, arm: str) -> str:
    return self.path("pretrain", arm)

  def finetune_dir(self, arm: str, seed: int) -> str:
    return self.path("finetune", arm, f"seed{seed}")


# ------------------------------------------------------------------ manifest


def read_manifest(work_dir: str) -> dict:
  path = os.path.join(work_dir, MANIFEST)
  if not os.path.exists(path):
    return {"stages": {}}
  with open(path, encoding="utf-8") as f:
    return json.load(f)


def write_json(path: str, value):
  """Writes JSON atomically (a stop never leaves half a file)."""
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path + ".tmp", "w", encoding="utf-8") as f:
    json.dump(value, f, indent=1)
  os.replace(path + ".tmp", path)


def read_json(path: str) -> Optional[dict]:
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8") as f:
    return json.load(f)


# -------------------------------------------------------------------- stages


def split_corpus(study: Study) -> Dict[str, int]:
  """Every heldout_every-th document (over the sorted files) is held out."""
  counts = {"train": 0, "heldout": 0}
  index = 0
  for path in sorted(glob.glob(study.corpus)):
    name = os.path.basename(path)
    outs = {k: open(study.path("corpus", k, name), "w", encoding="utf-8")
            for k in counts}
    size, doc = 0, []
    with open(path, encoding="utf-8") as f:
      lines = list(f) + ["\n"]
    for line in lines:
      if line.strip():
        doc.append(line if line.endswith("\n") else line + "\n")
        size += len(line)
        continue
      if not doc:
        continue
      kind = ("heldout" if index % study.preset.heldout_every
              == study.preset.heldout_every - 1 else "train")
      outs[kind].write("".join(doc) + "\n")
      counts[kind] += 1
      index += 1
      doc = []
      if study.preset.corpus_bytes and size >= study.preset.corpus_bytes:
        break
    for out in outs.values():
      out.close()
      if not os.path.getsize(out.name):
        os.remove(out.name)
  return counts


def stage_records(study: Study, kind: str) -> dict:
  """Pretraining records of one kind; the corpus split comes first."""
  if not os.path.exists(study.path("corpus", "split.json")):
    for k in ("train", "heldout"):
      os.makedirs(study.path("corpus", k), exist_ok=True)
    write_json(study.path("corpus", "split.json"), split_corpus(study))
  source = "heldout" if kind == "heldout" else "train"
  inputs = [os.path.join(study.path("corpus", source), "*.txt")]
  options = dict(max_seq_length=study.preset.seq_length, progress=False,
                 num_shards=1 if kind == "heldout" else
                 study.preset.num_shards, seed=study.preset.data_seed)
  if kind == "nsp":
    options["mode"] = "nsp"
  if kind == "tagged":
    options.update(tag_spans=span_tagging.KINDS,
                   tag_processes=study.tag_processes)
  try:
    stats = pretraining_records.create_pretraining_records(
        inputs, study.vocab, os.path.join(study.records(kind), "records"),
        **options)
  except span_tagging.TaggingUnavailableError as e:
    return {"pending": f"pending: install .[linguistic] ({e})"}
  return {"documents": stats.documents, "blocks": stats.blocks,
          "tokens": stats.tokens,
          "split": read_json(study.path("corpus", "split.json"))}


def stage_finetune_records(study: Study) -> dict:
  """SQuADShifts training features (shared by every run) and the dev JSON."""
  preset = study.preset
  out = study.path("squad")
  os.makedirs(out, exist_ok=True)
  articles = []
  for name in SQUAD_TRAIN:
    src = os.path.join(study.squad_dir, name)
    if preset.train_questions:
      src = finetune_squad.subset_json(src, os.path.join(out, name),
                                       preset.train_questions)
    articles += squad.load_data(src)
  write_json(os.path.join(out, "train.json"),
             {"version": "1.1", "data": articles})
  dev = os.path.join(study.squad_dir, "dev-v1.1.json")
  if preset.dev_questions:
    dev = finetune_squad.subset_json(dev, os.path.join(out, "dev.json"),
                                     preset.dev_questions)
  examples, features = squad.prepare(
      os.path.join(out, "train.json"),
      tokenization.WordpieceTokenizer(study.vocab, lower_case=False),
      os.path.join(out, "train.tf_record"), is_training=True,
      max_seq_length=preset.finetune_seq_length,
      doc_stride=preset.doc_stride, max_query_length=preset.query_length)
  return {"train_questions": len(examples), "train_features": len(features),
          "dev_json": dev,
          "dev_questions": len([q for a in squad.load_data(dev)
                                for p in a["paragraphs"] for q in p["qas"]])}


def _encoder_override(preset: Preset) -> dict:
  return {"bert_v2": {"num_layers": preset.layers,
                      "hidden_size": preset.hidden,
                      "num_attention_heads": preset.heads,
                      "intermediate_size": preset.ffn,
                      "vocab_size": 28996}}


def _runtime(preset: Preset) -> dict:
  runtime = {"distribution_strategy": "one_device",
             "num_gpus": preset.num_gpus}
  if preset.mixed_precision:
    runtime["mixed_precision_dtype"] = preset.mixed_precision
  return runtime


def _trainer(steps: int, warmup: int, learning_rate: float,
             steps_per_loop: int, checkpoint_interval: int) -> dict:
  return {
      "train_steps": steps, "steps_per_loop": min(steps_per_loop, steps),
      "summary_interval": min(steps_per_loop, steps),
      "checkpoint_interval": checkpoint_interval,
      "validation_interval": steps, "max_to_keep": 2,
      "optimizer_config": {
          "learning_rate": {"polynomial": {
              "initial_learning_rate": learning_rate,
              "decay_steps": steps}},
          "warmup": {"polynomial": {"warmup_steps": warmup}}}}


def pretrain_params(study: Study, arm: str):
  """The arm's pretraining experiment: only objective and masking differ."""
  preset, spec = study.preset, ARMS[arm]
  params = exp_factory.get_exp_config(spec.experiment)
  data = {"input_path": os.path.join(study.records(spec.records),
                                     "records-*.tfrecord"),
          "vocab_file": study.vocab, "seq_length": preset.seq_length,
          "max_predictions_per_seq": preset.max_predictions,
          "global_batch_size": preset.batch_size,
          "masking_scheme": spec.masking_scheme,
          "seed": preset.data_seed,
          "shuffle_buffer_size": preset.shuffle_buffer}
  params.override({
      "runtime": _runtime(preset),
      "task": {"model": {"encoder": _encoder_override(preset)},
               "train_data": data,
               "validation_data": {"input_path": ""}},
      "trainer": _trainer(preset.pretrain_steps, preset.warmup_steps,
                          preset.learning_rate, preset.steps_per_loop,
                          preset.checkpoint_interval),
  }, is_strict=True)
  params.validate()
  return params


def stage_pretrain(study: Study, arm: str) -> dict:
  params = pretrain_params(study, arm)
  model_dir = study.pretrain_dir(arm)
  latest = tf.train.latest_checkpoint(model_dir) if os.path.isdir(
      model_dir) else None
  start_step = int(latest.rsplit("-", 1)[1]) if latest else 0
  tf_keras.utils.set_random_seed(study.preset.model_seed)
  train.run(params, model_dir, mode="train")
  last = {tag: values[-1][1] for tag, values in scalars(model_dir).items()}
  return {"start_step": start_step, "steps": params.trainer.train_steps,
          "final": last,
          "examples_per_s": finetune_glue.train_throughput(model_dir)}


def heldout_params(study: Study, arm: str):
  """The arm's model without NSP, on span-masked held-out blocks."""
  params = pretrain_params(study, "span" if arm == "random_init" else arm)
  params.task.model.use_next_sentence = False
  params.task.validation_data.override({
      "input_path": os.path.join(study.records("heldout"),
                                 "records-*.tfrecord"),
      "vocab_file": study.vocab, "seq_length": study.preset.seq_length,
      "max_predictions_per_seq": study.preset.max_predictions,
      "global_batch_size": study.preset.batch_size, "masking_scheme": "span",
      "use_next_sentence_label": False, "seed": HELDOUT_SEED,
      "is_training": False})
  if arm != "random_init":
    params.task.init_checkpoint = study.pretrain_dir(arm)
  return params


def stage_heldout_mlm(study: Study, arm: str) -> dict:
  params = heldout_params(study, arm)
  task = task_factory.get_task(params.task)
  tf_keras.utils.set_random_seed(study.preset.model_seed)
  model = task.build_model()
  model(span_bert_pretrainer.dummy_inputs(1, study.preset.seq_length,
                                          study.preset.max_predictions))
  task.initialize(model)
  metrics = task.build_metrics(training=False)
  step = tf.function(lambda batch: task.validation_step(batch, model,
                                                        metrics))
  batches = 0
  for batch in task.build_inputs(params.task.validation_data):
    step(batch)
    batches += 1
  result = {m.name: float(m.result()) for m in metrics}
  result.update(blocks=batches * study.preset.batch_size,
                restored_from=params.task.init_checkpoint)
  write_json(study.path("heldout", f"{arm}.json"), result)
  return result


def finetune_params(study: Study, arm: str, seed: int, dev_json: str):
  preset = study.preset
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  data = {"seq_length": preset.finetune_seq_length,
          "doc_stride": preset.doc_stride,
          "query_length": preset.query_length,
          "vocab_file": study.vocab, "do_lower_case": False}
  steps = preset.finetune_steps
  params.override({
      "runtime": _runtime(preset),
      "task": {
          "init_checkpoint": ("" if arm == "random_init"
                              else study.pretrain_dir(arm)),
          "model": {"encoder": _encoder_override(preset)},
          "train_data": dict(
              data, input_path=study.path("squad", "train.tf_record"),
              global_batch_size=preset.finetune_batch_size, seed=seed),
          "validation_data": dict(data, input_path=dev_json,
                                  global_batch_size=preset.eval_batch_size),
          "n_best_size": 20, "max_answer_length": 30},
      "trainer": dict(
          _trainer(steps, max(1, steps // 10),
                   preset.finetune_learning_rate, preset.steps_per_loop,
                   preset.checkpoint_interval),
          validation_steps=-1),
  }, is_strict=True)
  params.validate()
  return params


def stage_finetune(study: Study, arm: str, seed: int, manifest: dict) -> dict:
  records = manifest["stages"]["finetune_records"]["result"]
  params = finetune_params(study, arm, seed, records["dev_json"])
  model_dir = study.finetune_dir(arm, seed)
  tf_keras.utils.set_random_seed(seed)
  _, logs = train.run(params, model_dir, mode="train", run_post_eval=True)
  steps = params.trainer.train_steps
  batch = params.task.train_data.global_batch_size
  result = {"arm": arm, "seed": seed,
            "f1": float(logs["f1"]), "exact_match": float(logs["exact_match"]),
            "steps": steps, "batch_size": batch,
            "epochs": steps * batch / records["train_features"],
            "train_examples_per_s": finetune_glue.train_throughput(model_dir)}
  write_json(os.path.join(model_dir, "result.json"), result)
  return result


# -------------------------------------------------------------------- report


def scalars(model_dir: str, subdir: str = "train") -> Dict[str, List]:
  """{tag: [(step, value)]} from a run's event files (last write wins)."""
  values = {}
  for path in sorted(glob.glob(os.path.join(model_dir, subdir, "events*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for v in event.summary.value:
        if v.HasField("tensor"):
          values.setdefault(v.tag, {})[event.step] = float(
              tf.make_ndarray(v.tensor))
  return {tag: sorted(steps.items()) for tag, steps in values.items()}


def _mean_sd(values: List[float]) -> str:
  if not values:
    return "—"
  sd = statistics.stdev(values) if len(values) > 1 else 0.0
  return f"{statistics.mean(values):.2f} ± {sd:.2f}"


def collect(study: Study, arms: List[str]) -> List[dict]:
  """What is on disk for each arm."""
  manifest = read_manifest(study.work_dir)
  rows = []
  for arm in arms:
    spec = ARMS[arm]
    row = {"arm": arm, "label": spec.label, "status": ""}
    records = manifest["stages"].get(f"records:{spec.records}", {})
    if "pending" in records.get("result", {}):
      row["status"] = "pending: install .[linguistic]"
    curves = (scalars(study.pretrain_dir(arm))
              if spec.experiment and os.path.isdir(study.pretrain_dir(arm))
              else {})
    row["mlm_curve"] = curves.get("mlm_loss", [])
    row["mlm_loss"] = row["mlm_curve"][-1][1] if row["mlm_curve"] else None
    heldout = read_json(study.path("heldout", f"{arm}.json")) or {}
    row["heldout_mlm_accuracy"] = heldout.get("masked_lm_accuracy")
    runs = [read_json(p) for p in sorted(glob.glob(os.path.join(
        study.path("finetune", arm), "seed*", "result.json")))]
    row["f1"] = [r["f1"] for r in runs]
    row["exact_match"] = [r["exact_match"] for r in runs]
    row["seeds"] = [r["seed"] for r in runs]
    rows.append(row)
  return rows


def markdown(rows: List[dict], manifest: dict) -> str:
  lines = [
      "| arm | masking / objective | final MLM loss | held-out MLM acc "
      "(span-masked) | SQuAD v1.1 EM | SQuAD v1.1 F1 | seeds | paper SQuAD "
      "2.0 F1 (direction only) |", "|---|---|---|---|---|---|---|---|"]
  for r in rows:
    loss = f"{r['mlm_loss']:.3f}" if r["mlm_loss"] is not None else "—"
    acc = (f"{100 * r['heldout_mlm_accuracy']:.2f}%"
           if r["heldout_mlm_accuracy"] is not None else "—")
    label = r["label"] + (f" ({r['status']})" if r["status"] else "")
    lines.append(
        f"| {r['arm']} | {label} | {loss} | {acc} | "
        f"{_mean_sd(r['exact_match'])} | {_mean_sd(r['f1'])} | "
        f"{len(r['seeds'])} | {PAPER_SQUAD2_F1.get(r['arm'], '—')} |")
  lines += ["", "| stage | wall s | CPU s | finished |", "|---|---|---|---|"]
  for name, stage in manifest["stages"].items():
    lines.append(f"| {name} | {stage['wall_s']:.0f} | {stage['cpu_s']:.0f} "
                 f"| {stage['finished']} |")
  return "\n".join(lines) + "\n"


def figure(rows: List[dict], path: str):
  """Pretraining MLM loss curves; SQuAD F1 per arm with sd error bars."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
  for r in rows:
    if r["mlm_curve"]:
      steps, values = zip(*r["mlm_curve"])
      left.plot(steps, values, label=r["arm"])
  left.set(xlabel="step", ylabel="training MLM loss",
           title="Pretraining (equal compute)")
  if any(r["mlm_curve"] for r in rows):
    left.legend(fontsize=8)
  scored = [r for r in rows if r["f1"]]
  right.bar(range(len(scored)), [statistics.mean(r["f1"]) for r in scored],
            yerr=[statistics.stdev(r["f1"]) if len(r["f1"]) > 1 else 0
                  for r in scored], capsize=4)
  right.set_xticks(range(len(scored)), [r["arm"] for r in scored],
                   rotation=30, ha="right")
  right.set(ylabel="F1 (mean ± sd over seeds)", title="SQuAD v1.1 dev")
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def stage_report(study: Study, arms: List[str]) -> dict:
  rows = collect(study, arms)
  text = markdown(rows, read_manifest(study.work_dir))
  with open(study.path("report.md"), "w", encoding="utf-8") as f:
    f.write(text)
  write_json(study.path("report.json"), rows)
  figure(rows, study.path("ablation.png"))
  print(text)
  return {"report": study.path("report.md"),
          "figure": study.path("ablation.png")}


# -------------------------------------------------------------------- driver


def plan(arms: List[str], seeds: List[int]) -> List[str]:
  """Every stage of a study of `arms`, in order."""
  kinds = {ARMS[a].records for a in arms if ARMS[a].records}
  stages = [f"records:{k}" for k in ("single", "nsp", "tagged") if k in kinds]
  stages += ["records:heldout", "finetune_records"]
  stages += [f"pretrain:{a}" for a in arms if ARMS[a].experiment]
  stages += [f"heldout_mlm:{a}" for a in arms]
  stages += [f"finetune:{a}:{s}" for a in arms for s in seeds]
  return stages + ["report"]


def selected(stage: str, tokens: Optional[List[str]]) -> bool:
  return not tokens or any(stage == t or stage.startswith(t + ":")
                           for t in tokens)


def needs(stage: str) -> List[str]:
  """The stages `stage` reads the output of."""
  kind, _, rest = stage.partition(":")
  arm = rest.split(":")[0]
  if kind == "pretrain":
    return [f"records:{ARMS[arm].records}"]
  if kind == "heldout_mlm":
    return ["records:heldout"] + (
        [f"pretrain:{arm}"] if ARMS[arm].experiment else [])
  if kind == "finetune":
    return ["finetune_records"] + (
        [f"pretrain:{arm}"] if ARMS[arm].experiment else [])
  return []


def run_stage(study: Study, stage: str, manifest: dict, arms: List[str]):
  kind, _, rest = stage.partition(":")
  if kind == "records":
    return stage_records(study, rest)
  if kind == "finetune_records":
    return stage_finetune_records(study)
  if kind == "pretrain":
    return stage_pretrain(study, rest)
  if kind == "heldout_mlm":
    return stage_heldout_mlm(study, rest)
  if kind == "finetune":
    arm, seed = rest.split(":")
    return stage_finetune(study, arm, int(seed), manifest)
  return stage_report(study, arms)


def run_study(study: Study, arms: List[str], seeds: List[int],
              tokens: Optional[List[str]] = None) -> dict:
  """Runs the selected unfinished stages; returns the manifest."""
  os.makedirs(study.work_dir, exist_ok=True)
  manifest = read_manifest(study.work_dir)
  config = dataclasses.asdict(study.preset)
  config["seeds"], config["arms"] = list(config["seeds"]), list(config["arms"])
  if manifest.get("preset", config) != config:
    raise ValueError(f"{study.work_dir} holds a study with another preset "
                     f"({manifest['preset']}); use a new --work_dir")
  manifest["preset"] = config
  path = os.path.join(study.work_dir, MANIFEST)
  for stage in plan(arms, seeds):
    if not selected(stage, tokens):
      continue
    done = manifest["stages"].get(stage, {})
    if done and stage != "report" and "pending" not in done["result"]:
      print(f"{stage}: done ({manifest['stages'][stage]['finished']})")
      continue
    missing = [s for s in needs(stage) if s not in manifest["stages"]]
    pending = [s for s in needs(stage) if "pending" in manifest["stages"].get(
        s, {}).get("result", {})]
    if pending:
      print(f"{stage}: skipped, {pending[0]} is pending")
      continue
    if missing:
      raise ValueError(f"stage {stage} needs {', '.join(missing)} first")
    print(f"{time.strftime('%H:%M:%S')} {stage}: running", flush=True)
    t0, c0 = time.time(), time.process_time()
    result = run_stage(study, stage, manifest, arms)
    manifest["stages"][stage] = {
        "result": result, "wall_s": time.time() - t0,
        "cpu_s": time.process_time() - c0,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    write_json(path, manifest)
    tf_keras.backend.clear_session()
    print(f"{time.strftime('%H:%M:%S')} {stage}: done in "
          f"{manifest['stages'][stage]['wall_s']:.0f} s", flush=True)
  return manifest


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
  ap.add_argument("--work_dir", required=True)
  ap.add_argument("--arms", default="",
                  help="comma-separated arms (default: the preset's)")
  ap.add_argument("--stages", default="",
                  help="comma-separated stages or prefixes (default: all)")
  ap.add_argument("--seeds", type=int, nargs="+", default=None,
                  help="fine-tuning seeds (default: the preset's)")
  ap.add_argument("--corpus", default=Study.corpus)
  ap.add_argument("--tag_processes", type=int, default=2)
  args = ap.parse_args(argv)
  # A SIGTERM unwinds like an error, so train.run releases its model_dir lock.
  signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
  preset = PRESETS[args.preset]
  arms = args.arms.split(",") if args.arms else list(preset.arms)
  unknown = [a for a in arms if a not in ARMS]
  if unknown:
    ap.error(f"unknown arms {unknown}; choose from {list(ARMS)}")
  study = Study(preset, args.work_dir, corpus=args.corpus,
                tag_processes=args.tag_processes)
  run_study(study, arms, args.seeds or list(preset.seeds),
            args.stages.split(",") if args.stages else None)


if __name__ == "__main__":
  main()
