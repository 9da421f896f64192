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
  token         bert/token_single: subword tokens, one sequence, MLM
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
  pretrain:<arm>          official_spanbert.training.train_lib.run, model_dir per arm
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

  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation
  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation \
      --arms span,span_sbo --stages pretrain,heldout_mlm
  .venv/bin/python -m experiments.ablation --preset=cpu --work_dir /tmp/ablation \
      --stages report

Presets:

  cpu    4 layers, hidden 256, 4 heads, FFN 1024, seq 128, batch 32,
         6,000 steps (peak lr 1e-3, 600 warmup, the demo-size lr that
         pretraining parity used), mixed bfloat16 (1.44x at demo size with
         the same loss, RESULTS "Pretraining parity"). Vocab: a cased 8k
         WordPiece vocab learned on every 5th training line (24,182 lines,
         6.4 MB; 7,963 tokens; committed as ablation_results/cpu/vocab.txt),
         which shrinks the embedding and the softmax 3.6x against the cased
         BERT vocab; 62,628 training blocks (6.19M tokens; 120 documents,
         1,420 blocks held out), seen ~3 times. The shape: the pilot
         (--pilot, ablation_results/cpu/pilot.json) at 400-510 CPU-s a shape
         left all four on the unigram plateau, 2x256 and 4x256 level (6.603
         / 6.593 nats), 6x256 and 4x384 ~0.1 behind: too short to separate
         the two small ones; 4x256 is kept as compute-optimal for this
         budget by the usual scaling rule (~3M non-embedding parameters for
         ~1e14 FLOPs). An arm is ~0.65 CPU-s a step (pilot, loaded), i.e.
         ~35-65 min. Fine-tuning: 1,000 steps of batch 32 at seq 128 (0.45
         epoch of the ~71k training windows; the features are written in
         random order), lr 2e-4, scored on every 5th SQuAD v1.1 dev article
         (a fixed subset spanning the topics).
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
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official_spanbert.training import train_lib
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.pretraining.records import pretraining_records
from official_spanbert.data.pretraining import span_tagging
from official_spanbert.data.pretraining import vocab_builder
from official_spanbert.data.finetuning import squad
from official_spanbert.data import tokenization
from official_spanbert.modeling import span_bert_pretrainer
from official_spanbert.utils import atomic_io

from experiments import finetune_glue
from experiments import finetune_squad

DATA = finetune_squad.DATA
MANIFEST = "manifest.json"
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "ablation_results")
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
    "token": Arm("bert/token_single", "token", "single",
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
  vocab_size: int = 0           # 0: the cased BERT vocab; else one learned
  vocab_max_lines: int = 0      # on this many training lines (0: all)
  dev_every_article: int = 0    # score every n-th dev article (0: all)


_CPU = Preset(layers=4, hidden=256, heads=4, ffn=1024, seq_length=128,
              batch_size=32, pretrain_steps=6000, learning_rate=1e-3,
              warmup_steps=600, steps_per_loop=100, checkpoint_interval=500,
              max_predictions=20, finetune_seq_length=128, doc_stride=64,
              query_length=64, finetune_batch_size=32, finetune_steps=1000,
              finetune_learning_rate=2e-4, vocab_size=8000,
              vocab_max_lines=20_000, dev_every_article=5,
              mixed_precision="bfloat16")
PRESETS = {
    "cpu": _CPU,
    "gpu": dataclasses.replace(
        _CPU, vocab_size=0, vocab_max_lines=0, dev_every_article=0,
        layers=6, hidden=512, heads=8, ffn=2048, batch_size=256,
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
                    train_questions=16, dev_questions=24, eval_batch_size=16,
                    vocab_size=1000, vocab_max_lines=300),
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
  name: str = "custom"          # the preset's name, in the result files
  results_dir: str = ""         # committed result files; "" -> work_dir
  command: str = ""             # the command line, in the result files
  # The commit whose code this process runs (read when it starts: HEAD can
  # move while a long stage runs, and a result must name the code behind it).
  commit: str = dataclasses.field(default_factory=lambda: git_commit())

  def path(self, *parts: str) -> str:
    return os.path.join(self.work_dir, *parts)

  def vocab_file(self) -> str:
    """The vocab every arm uses: learned (stage vocab) or the given one."""
    if self.preset.vocab_size:
      return self.path("vocab", "vocab.txt")
    return self.vocab

  def results_path(self, name: str) -> str:
    """A file beside the committed results (results_dir, else
    <work_dir>/results)."""
    return os.path.join(self.results_dir or self.path("results"), name)

  def result_file(self, arm: str) -> str:
    return self.results_path(f"{arm}.json")

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
  with atomic_io.writing(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
    json.dump(value, f, indent=1)


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


def ensure_split(study: Study):
  """The train/held-out corpus split, made once."""
  if not os.path.exists(study.path("corpus", "split.json")):
    for k in ("train", "heldout"):
      os.makedirs(study.path("corpus", k), exist_ok=True)
    write_json(study.path("corpus", "split.json"), split_corpus(study))


def stage_vocab(study: Study) -> dict:
  """A cased WordPiece vocab learned on the training documents.

  It is copied beside the result files (commit it): a later session copies
  it back instead of learning again, so all arms share one vocab. With
  vocab_max_lines, every n-th training line is read so that the sample
  spans all corpus files (the learner reads its inputs in order).
  """
  ensure_split(study)
  preset = study.preset
  committed_vocab = study.results_path("vocab.txt")
  if os.path.exists(committed_vocab):
    # Learned in an earlier session and committed: every arm, in whichever
    # session it runs, uses the same vocab.
    os.makedirs(os.path.dirname(study.vocab_file()), exist_ok=True)
    shutil.copyfile(committed_vocab, study.vocab_file())
    return {"vocab_size": tokenization.load_vocab(study.vocab_file()).size,
            "requested": preset.vocab_size, "from": committed_vocab}
  inputs = sorted(glob.glob(os.path.join(study.path("corpus", "train"),
                                         "*.txt")))
  if preset.vocab_max_lines:
    lines = [line for path in inputs
             for line in open(path, encoding="utf-8") if line.strip()]
    every = max(1, len(lines) // preset.vocab_max_lines)
    sample = study.path("vocab", "sample.txt")
    os.makedirs(os.path.dirname(sample), exist_ok=True)
    with atomic_io.writing(sample) as tmp, open(tmp, "w",
                                                encoding="utf-8") as f:
      f.write("\n".join(lines[::every]))
    inputs = [sample]
  # The learner binary-searches a count threshold from upper_thresh down;
  # tf.text's default (10M) costs ~20 pure-Python passes, 2,000 about 10
  # (an 8k vocab of this corpus needs a threshold far below it).
  stats = vocab_builder.build_vocab(inputs, study.vocab_file(),
                                    vocab_size=preset.vocab_size,
                                    progress=False,
                                    learn_params={"upper_thresh": 2000})
  os.makedirs(os.path.dirname(committed_vocab), exist_ok=True)
  shutil.copyfile(study.vocab_file(), committed_vocab)
  return {"vocab_size": stats.vocab_size, "requested": preset.vocab_size,
          "lines": stats.lines, "bytes": stats.bytes,
          "seconds": stats.seconds}


def stage_records(study: Study, kind: str) -> dict:
  """Pretraining records of one kind; the corpus split comes first."""
  ensure_split(study)
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
        inputs, study.vocab_file(),
        os.path.join(study.records(kind), "records"),
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
  if preset.dev_every_article:
    dev = dev_subset(dev, os.path.join(out, "dev.json"),
                     preset.dev_every_article)
  elif preset.dev_questions:
    dev = finetune_squad.subset_json(dev, os.path.join(out, "dev.json"),
                                     preset.dev_questions)
  examples, features = squad.prepare(
      os.path.join(out, "train.json"),
      tokenization.WordpieceTokenizer(study.vocab_file(), lower_case=False),
      os.path.join(out, "train.tf_record"), is_training=True,
      max_seq_length=preset.finetune_seq_length,
      doc_stride=preset.doc_stride, max_query_length=preset.query_length)
  return {"train_questions": len(examples), "train_features": len(features),
          "dev_json": dev,
          "dev_questions": len([q for a in squad.load_data(dev)
                                for p in a["paragraphs"] for q in p["qas"]])}


def dev_subset(src: str, dst: str, every: int) -> str:
  """Every `every`-th article of a SQuAD file (the first, the every+1-th..):
  a fixed subset that spans the file's topics."""
  with open(src, encoding="utf-8") as f:
    data = json.load(f)
  write_json(dst, {"version": data.get("version", ""),
                   "data": data["data"][::every]})
  return dst


def _encoder_override(study: Study) -> dict:
  preset = study.preset
  return {"bert_v2": {"num_layers": preset.layers,
                      "hidden_size": preset.hidden,
                      "num_attention_heads": preset.heads,
                      "intermediate_size": preset.ffn,
                      "vocab_size": tokenization.load_vocab(
                          study.vocab_file()).size}}


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
          "vocab_file": study.vocab_file(), "seq_length": preset.seq_length,
          "max_predictions_per_seq": preset.max_predictions,
          "global_batch_size": preset.batch_size,
          "masking_scheme": spec.masking_scheme,
          "seed": preset.data_seed,
          "shuffle_buffer_size": preset.shuffle_buffer}
  params.override({
      "runtime": _runtime(preset),
      "task": {"model": {"encoder": _encoder_override(study)},
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
  train_lib.run(params, model_dir, mode="train")
  last = {tag: values[-1][1] for tag, values in scalars(model_dir).items()}
  return {"start_step": start_step, "steps": params.trainer.train_steps,
          "final": last,
          "examples_per_s": finetune_glue.train_throughput(model_dir)}


def heldout_params(study: Study, arm: str, masking_scheme: str = "span"):
  """The arm's model without NSP, on held-out blocks masked one way."""
  params = pretrain_params(study, "span" if arm == "random_init" else arm)
  params.task.model.use_next_sentence = False
  params.task.validation_data.override({
      "input_path": os.path.join(study.records("heldout"),
                                 "records-*.tfrecord"),
      "vocab_file": study.vocab_file(),
      "seq_length": study.preset.seq_length,
      "max_predictions_per_seq": study.preset.max_predictions,
      "global_batch_size": study.preset.batch_size,
      "masking_scheme": masking_scheme,
      "use_next_sentence_label": False, "seed": HELDOUT_SEED,
      "is_training": False})
  if arm != "random_init":
    params.task.init_checkpoint = study.pretrain_dir(arm)
  return params


def heldout_mlm(study: Study, arm: str, masking_scheme: str,
                max_batches: int = 0, checkpoint: str = "") -> dict:
  """The arm's metrics on held-out blocks masked with `masking_scheme`
  (the same masks for every arm: a fixed seed); max_batches: the first
  batches only; checkpoint: this one instead of the arm's latest."""
  params = heldout_params(study, arm, masking_scheme)
  if checkpoint:
    params.task.init_checkpoint = checkpoint
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
  dataset = task.build_inputs(params.task.validation_data)
  for batch in dataset.take(max_batches) if max_batches else dataset:
    step(batch)
    batches += 1
  result = {m.name: float(m.result()) for m in metrics}
  result.update(blocks=batches * study.preset.batch_size,
                restored_from=params.task.init_checkpoint)
  return result


def stage_heldout_mlm(study: Study, arm: str) -> dict:
  """Held-out MLM metrics on span-masked and on token-masked blocks."""
  result = {scheme: heldout_mlm(study, arm, scheme)
            for scheme in ("span", "token")}
  write_json(study.path("heldout", f"{arm}.json"), result)
  return result


def finetune_params(study: Study, arm: str, seed: int, dev_json: str):
  preset = study.preset
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  data = {"seq_length": preset.finetune_seq_length,
          "doc_stride": preset.doc_stride,
          "query_length": preset.query_length,
          "vocab_file": study.vocab_file(), "do_lower_case": False}
  steps = preset.finetune_steps
  params.override({
      "runtime": _runtime(preset),
      "task": {
          "init_checkpoint": ("" if arm == "random_init"
                              else study.pretrain_dir(arm)),
          "model": {"encoder": _encoder_override(study)},
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
  _, logs = train_lib.run(params, model_dir, mode="train", run_post_eval=True)
  steps = params.trainer.train_steps
  batch = params.task.train_data.global_batch_size
  result = {"arm": arm, "seed": seed,
            "f1": float(logs["f1"]), "exact_match": float(logs["exact_match"]),
            "steps": steps, "batch_size": batch,
            "epochs": steps * batch / records["train_features"],
            "train_examples_per_s": finetune_glue.train_throughput(model_dir)}
  write_json(os.path.join(model_dir, "result.json"), result)
  return result


# --------------------------------------------------------------------- pilot


def shape_preset(preset: Preset, shape: str) -> Preset:
  """"LxH": L layers of hidden H, H/64 heads, FFN 4H."""
  layers, hidden = (int(x) for x in shape.split("x"))
  return dataclasses.replace(preset, layers=layers, hidden=hidden,
                             heads=hidden // 64, ffn=4 * hidden)


def pilot(study: Study, shapes: List[str], cpu_budget_s: float,
          segment_steps: int, heldout_batches: int) -> dict:
  """Which encoder shape learns fastest per CPU-second.

  For each shape, span_sbo pretrains on this study's records in segments of
  `segment_steps` (each resumes from the last checkpoint; the schedule is the
  preset's, so every shape is at the same point of it at the same step)
  until the process has spent `cpu_budget_s` CPU seconds training; after
  every segment the held-out span-masked MLM loss on the first
  `heldout_batches` held-out batches (not counted).
  """
  results = {}
  for shape in shapes:
    sized = dataclasses.replace(study, preset=shape_preset(study.preset,
                                                           shape))
    model_dir = study.path("pilot", shape)
    points, cpu, wall, step = [], 0.0, 0.0, 0
    while cpu < cpu_budget_s and step < study.preset.pretrain_steps:
      step += segment_steps
      params = pretrain_params(sized, "span_sbo")
      params.trainer.train_steps = step
      params.trainer.checkpoint_interval = segment_steps
      t0, c0 = time.time(), time.process_time()
      tf_keras.utils.set_random_seed(study.preset.model_seed)
      train_lib.run(params, model_dir, mode="train")
      cpu += time.process_time() - c0
      wall += time.time() - t0
      tf_keras.backend.clear_session()
      held = heldout_mlm(sized, "span_sbo", "span", heldout_batches,
                         checkpoint=model_dir)
      tf_keras.backend.clear_session()
      points.append({"step": step, "train_cpu_s": round(cpu, 1),
                     "train_wall_s": round(wall, 1),
                     "heldout_mlm_loss": held["mlm_loss"],
                     "heldout_mlm_accuracy": held["masked_lm_accuracy"]})
      print(f"pilot {shape} step {step}: {cpu:.0f} CPU s, held-out MLM "
            f"loss {held['mlm_loss']:.3f}", flush=True)
    results[shape] = points
    write_json(study.results_path("pilot.json"),
               {"preset": study.name, "budget_cpu_s": cpu_budget_s,
                "segment_steps": segment_steps,
                "heldout_batches": heldout_batches, "commit": study.commit,
                "command": study.command, "shapes": results})
  return results


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


def git_commit() -> str:
  """The repository's HEAD (with "+dirty" if tracked files changed)."""
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  try:
    head = subprocess.run(["git", "-C", repo, "rev-parse", "--short=12",
                           "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", repo, "diff", "--quiet", "HEAD", "--",
         "official_spanbert", "experiments/ablation.py",
         "experiments/common.py", "benchmarks/common.py"],
        check=False).returncode
  except (OSError, subprocess.CalledProcessError):
    return "unknown"
  return head + ("+dirty" if dirty else "")


def arm_of(stage: str) -> Optional[str]:
  kind, _, rest = stage.partition(":")
  if kind in ("pretrain", "heldout_mlm", "finetune"):
    return rest.split(":")[0]
  return None


def arm_result(study: Study, arm: str, manifest: dict) -> dict:
  """The arm's committed result file, updated with the manifest's stages.

  What an earlier session committed is kept (its scratch manifest is gone);
  a stage finished in this work dir replaces its part.
  """
  spec = ARMS[arm]
  out = read_json(study.result_file(arm)) or {
      "arm": arm, "preset": study.name, "label": spec.label,
      "experiment": spec.experiment or None,
      "masking_scheme": spec.masking_scheme or None,
      "budget": manifest["preset"], "pretraining": None,
      "heldout_mlm_accuracy": {}, "heldout_mlm_loss": {}, "squad": [],
      "stages": {}}
  stages = manifest["stages"]
  if "records:vocab" in stages:
    out["vocab"] = stages["records:vocab"]["result"]
  for name, stage in stages.items():
    if arm_of(name) != arm:
      continue
    out["stages"][name] = {k: stage.get(k) for k in (
        "wall_s", "cpu_s", "finished", "commit", "command")}
    result = stage["result"]
    if name.startswith("pretrain:"):
      curves = scalars(study.pretrain_dir(arm))
      out["pretraining"] = {
          "steps": result["steps"], "start_step": result["start_step"],
          "final_loss": result["final"].get("training_loss"),
          "final": result["final"],
          "wall_s": stage["wall_s"], "cpu_s": stage["cpu_s"],
          "examples_per_s": result["examples_per_s"],
          "curves": {tag: curves[tag] for tag in (
              "training_loss", "mlm_loss", "sbo_loss", "masked_lm_accuracy",
              "next_sentence_loss") if tag in curves}}
    elif name.startswith("heldout_mlm:"):
      for scheme, metrics in result.items():
        out["heldout_mlm_accuracy"][scheme] = metrics["masked_lm_accuracy"]
        out["heldout_mlm_loss"][scheme] = metrics["mlm_loss"]
      out["heldout"] = result
    elif name.startswith("finetune:"):
      row = dict(result, wall_s=stage["wall_s"], cpu_s=stage["cpu_s"])
      out["squad"] = sorted([r for r in out["squad"]
                             if r["seed"] != row["seed"]] + [row],
                            key=lambda r: r["seed"])
  first = min(out["stages"].values(), key=lambda st: st["finished"] or "",
              default={})
  out["commit"], out["command"] = first.get("commit"), first.get("command")
  return out


def committed(study: Study, stage: str) -> bool:
  """Whether the committed result file already holds `stage`'s result.

  A pretraining stage counts only if its checkpoint is here or nothing of
  the arm that needs it is left to run (a new session has no checkpoints).
  """
  arm = arm_of(stage)
  result = read_json(study.result_file(arm)) if arm else None
  if not result:
    return False
  kind, _, rest = stage.partition(":")
  if kind == "heldout_mlm":
    return set(result["heldout_mlm_accuracy"]) >= {"span", "token"}
  if kind == "finetune":
    return int(rest.split(":")[1]) in {r["seed"] for r in result["squad"]}
  if kind == "pretrain" and result["pretraining"]:
    if tf.train.latest_checkpoint(study.pretrain_dir(arm)):
      return True
    return committed(study, f"heldout_mlm:{arm}") and all(
        committed(study, f"finetune:{arm}:{seed}")
        for seed in study.preset.seeds)
  return False


def collect(study: Study, arms: List[str]) -> List[dict]:
  """The committed result file of each arm (a row saying so if absent)."""
  stages = read_manifest(study.work_dir)["stages"]
  rows = []
  for arm in arms:
    result = read_json(study.result_file(arm))
    if result is None:
      records = stages.get(f"records:{ARMS[arm].records}", {})
      result = {"arm": arm, "label": ARMS[arm].label, "pretraining": None,
                "heldout_mlm_accuracy": {}, "squad": [],
                "status": ("pending: install .[linguistic]" if "pending" in
                           records.get("result", {}) else "not run yet")}
    rows.append(result)
  return rows


def verdict(rows: List[dict]) -> List[str]:
  """Each pretrained arm against the floor's mean + sd, and the paper's
  order (span_sbo >= span >= token on QA)."""
  f1 = {r["arm"]: [s["f1"] for s in r["squad"]] for r in rows
        if len(r["squad"]) >= 2}
  lines = []
  if "random_init" in f1:
    floor = f1["random_init"]
    bar = statistics.mean(floor) + statistics.stdev(floor)
    for arm, values in f1.items():
      if arm == "random_init":
        continue
      gap = statistics.mean(values) - statistics.mean(floor)
      lines.append(
          f"- {arm}: mean F1 {statistics.mean(values):.2f}, "
          f"{gap:+.2f} over the floor ({statistics.mean(floor):.2f} ± "
          f"{statistics.stdev(floor):.2f}); "
          + ("above the floor's mean + sd" if statistics.mean(values) > bar
             else "NOT above the floor's mean + sd: a defect to find"))
  order = [a for a in ("span_sbo", "span", "token") if a in f1]
  if len(order) > 1:
    means = [statistics.mean(f1[a]) for a in order]
    spread = max(statistics.stdev(f1[a]) for a in order)
    holds = all(x >= y for x, y in zip(means, means[1:]))
    lines.append(
        f"- paper's order {' >= '.join(order)}: "
        + ("holds" if holds else "does not hold")
        + f" ({', '.join(f'{m:.2f}' for m in means)}; largest seed sd "
        f"{spread:.2f}, largest difference "
        f"{max(means) - min(means):.2f})")
  return lines


def markdown(rows: List[dict]) -> str:
  lines = [
      "| arm | masking / objective | steps | final loss | held-out MLM acc "
      "span / token | SQuAD v1.1 EM | SQuAD v1.1 F1 | seeds | paper SQuAD "
      "2.0 F1 (direction only) |", "|---|---|---|---|---|---|---|---|---|"]
  for r in rows:
    pre = r.get("pretraining") or {}
    loss = (f"{pre['final_loss']:.3f}" if pre.get("final_loss") is not None
            else "—")
    acc = " / ".join(
        f"{100 * r['heldout_mlm_accuracy'][k]:.2f}%"
        if k in r["heldout_mlm_accuracy"] else "—" for k in ("span", "token"))
    label = r["label"] + (f" ({r['status']})" if r.get("status") else "")
    lines.append(
        f"| {r['arm']} | {label} | {pre.get('steps', 0)} | {loss} | {acc} | "
        f"{_mean_sd([s['exact_match'] for s in r['squad']])} | "
        f"{_mean_sd([s['f1'] for s in r['squad']])} | {len(r['squad'])} | "
        f"{PAPER_SQUAD2_F1.get(r['arm'], '—')} |")
  lines += ["", "| arm | stage | wall s | CPU s | finished | commit |",
            "|---|---|---|---|---|---|"]
  for r in rows:
    for name, stage in r.get("stages", {}).items():
      lines.append(f"| {r['arm']} | {name} | {stage['wall_s']:.0f} | "
                   f"{stage['cpu_s']:.0f} | {stage['finished']} | "
                   f"{stage['commit']} |")
  commands = sorted({r.get("command") for r in rows if r.get("command")})
  lines += ["", "Verdict:"] + (verdict(rows) or ["- too few arms scored"])
  lines += ["", "Commands:"] + [f"- `{c}`" for c in commands]
  return "\n".join(lines) + "\n"


def figure(rows: List[dict], path: str):
  """Pretraining MLM loss curves; SQuAD F1 per arm with sd error bars."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
  curves = [(r["arm"], (r.get("pretraining") or {}).get("curves", {}).get(
      "mlm_loss")) for r in rows]
  for arm, curve in curves:
    if curve:
      steps, values = zip(*curve)
      left.plot(steps, values, label=arm)
  left.set(xlabel="step", ylabel="training MLM loss",
           title="Pretraining (equal compute)")
  if any(curve for _, curve in curves):
    left.legend(fontsize=8)
  scored = [r for r in rows if r["squad"]]
  f1 = [[s["f1"] for s in r["squad"]] for r in scored]
  right.bar(range(len(scored)), [statistics.mean(v) for v in f1],
            yerr=[statistics.stdev(v) if len(v) > 1 else 0 for v in f1],
            capsize=4)
  right.set_xticks(range(len(scored)), [r["arm"] for r in scored],
                   rotation=30, ha="right")
  right.set(ylabel="F1 (mean ± sd over seeds)", title="SQuAD v1.1 dev")
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def stage_report(study: Study, arms: List[str]) -> dict:
  """report.md and ablation.png beside the result files, from them alone:
  the arms asked for and every other arm with a result file there (a run of
  one arm does not drop the others from the report)."""
  arms = [a for a in ARMS
          if a in arms or os.path.exists(study.result_file(a))]
  rows = collect(study, arms)
  text = markdown(rows)
  folder = os.path.dirname(study.result_file(arms[0]))
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, "report.md"), "w", encoding="utf-8") as f:
    f.write(f"# Ablation, preset {study.name}\n\n" + text)
  figure(rows, os.path.join(folder, "ablation.png"))
  print(text)
  return {"report": os.path.join(folder, "report.md"),
          "figure": os.path.join(folder, "ablation.png")}


# -------------------------------------------------------------------- driver


def plan(arms: List[str], seeds: List[int], vocab: bool = False
         ) -> List[str]:
  """Every stage of a study of `arms`, in order (vocab: learn one first)."""
  kinds = {ARMS[a].records for a in arms if ARMS[a].records}
  stages = ["records:vocab"] if vocab else []
  stages += [f"records:{k}" for k in ("single", "nsp", "tagged") if k in kinds]
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
  if stage == "records:vocab":
    return stage_vocab(study)
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
  for arm in arms:
    budget = (read_json(study.result_file(arm)) or {}).get("budget", config)
    if budget != config:
      raise ValueError(f"{study.result_file(arm)} holds a result with "
                       f"another preset ({budget}); use another --results_dir")
  for stage in plan(arms, seeds, vocab=bool(study.preset.vocab_size)):
    if not selected(stage, tokens):
      continue
    done = manifest["stages"].get(stage, {})
    if done and stage != "report" and "pending" not in done["result"]:
      print(f"{stage}: done ({manifest['stages'][stage]['finished']})")
      continue
    if committed(study, stage):
      print(f"{stage}: done (in {study.result_file(arm_of(stage))})")
      continue
    inputs = needs(stage) + (["records:vocab"] if study.preset.vocab_size and (
        stage.startswith("records:") and stage != "records:vocab"
        or stage == "finetune_records") else [])
    missing = [s for s in inputs if s not in manifest["stages"]
               and not committed(study, s)]
    pending = [s for s in inputs if "pending" in manifest["stages"].get(
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
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        "commit": study.commit, "command": study.command}
    write_json(path, manifest)
    if arm_of(stage):
      write_json(study.result_file(arm_of(stage)),
                 arm_result(study, arm_of(stage), manifest))
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
  ap.add_argument("--results_dir", default=None,
                  help="the arms' result files, report.md and ablation.png "
                  "(default: experiments/ablation_results/<preset>, committed)")
  ap.add_argument("--tag_processes", type=int, default=2)
  ap.add_argument("--pilot", default="",
                  help="comma-separated shapes LxH (e.g. 2x256,4x256): run "
                  "the shape pilot on this work dir's records instead")
  ap.add_argument("--pilot_cpu_s", type=float, default=300)
  ap.add_argument("--pilot_segment_steps", type=int, default=100)
  ap.add_argument("--pilot_heldout_batches", type=int, default=16)
  args = ap.parse_args(argv)
  # A SIGTERM unwinds like an error, so train_lib.run releases its model_dir lock.
  signal.signal(signal.SIGTERM, lambda signum, _: sys.exit(128 + signum))
  preset = PRESETS[args.preset]
  arms = args.arms.split(",") if args.arms else list(preset.arms)
  unknown = [a for a in arms if a not in ARMS]
  if unknown:
    ap.error(f"unknown arms {unknown}; choose from {list(ARMS)}")
  study = Study(preset, args.work_dir, corpus=args.corpus,
                tag_processes=args.tag_processes, name=args.preset,
                results_dir=args.results_dir or os.path.join(
                    RESULTS, args.preset),
                command=shlex.join(["python", "-m", "experiments.ablation"] + (
                    argv if argv is not None else sys.argv[1:])))
  if args.pilot:
    run_study(study, ["span_sbo"], [], ["records"])
    pilot(study, args.pilot.split(","), args.pilot_cpu_s,
          args.pilot_segment_steps, args.pilot_heldout_batches)
    return
  run_study(study, arms, args.seeds or list(preset.seeds),
            args.stages.split(",") if args.stages else None)


if __name__ == "__main__":
  main()
