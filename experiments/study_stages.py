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

"""The stages the resumable studies share, on a Study (its preset and arms).

Corpus split and records, a learned vocab, SQuAD features; pretraining an
arm with train_lib.run; held-out MLM on span- and token-masked blocks; SQuAD
fine-tuning scored once on dev. experiments/ablation.py and continued.py
list and order them (study_lib.run_stages runs them).

  study = study_stages.Study(preset, "/tmp/study", arms={"span": spec})
  study_stages.stage_records(study, "single")
  study_stages.stage_pretrain(study, "span")
"""

import dataclasses
import glob
import json
import os
import shutil
from typing import Any, Dict

import official_spanbert  # noqa: F401  (before tensorflow)
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official_spanbert.training import release
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
from experiments import study_lib

DATA = finetune_squad.DATA
SQUAD_TRAIN = ("new_wiki_v1.0.json", "amazon_reviews_v1.0.json",
               "reddit_v1.0.json")
HELDOUT_SEED = 7


@dataclasses.dataclass
class Study:
  """A preset, its arms, its work dir and the data it reads.

  A study's arms are specs with `experiment` ("" when it does not pretrain),
  `masking_scheme`, `records` (the records:<kind> it pretrains on) and
  `label`; its preset has the sizes the stages read (see
  experiments/ablation_arms/cpu.yaml).
  """
  preset: Any
  work_dir: str
  corpus: str = os.path.join(DATA, "corpus", "*.txt")
  vocab: str = os.path.join(DATA, "vocab", "bert-base-cased-vocab.txt")
  squad_dir: str = os.path.join(DATA, "squad")
  tag_processes: int = 2
  name: str = "custom"          # the preset's name, in the result files
  results_dir: str = ""         # committed result files; "" -> work_dir
  command: str = ""             # the command line, in the result files
  lower_case: bool = False      # uncased tokenization (an uncased vocab)
  pretrain_init: str = ""       # the checkpoint pretraining starts from
  # The commit whose code this process runs (read when it starts: HEAD can
  # move while a long stage runs, and a result must name the code behind it).
  commit: str = dataclasses.field(default_factory=study_lib.git_commit)
  arms: dict = dataclasses.field(default_factory=dict)
  # Also write each finished stage's manifest entry to its own small JSON
  # beside the result files (study_lib.stage_file).
  stage_files: bool = False

  def path(self, *parts: str) -> str:
    return os.path.join(self.work_dir, *parts)

  def vocab_file(self) -> str:
    """The vocab every arm uses: learned (stage vocab) or the given one."""
    if getattr(self.preset, "vocab_size", 0):
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

  def arm(self, name: str):
    """The arm's spec."""
    return self.arms[name]

  def encoder(self) -> dict:
    """The encoder override every experiment of the study gets."""
    return _encoder_override(self)

  def init_checkpoint(self, arm: str) -> str:
    """What fine-tuning and held-out scoring restore: the arm's pretraining,
    or pretrain_init for an arm that does not pretrain."""
    if self.arm(arm).experiment:
      return self.pretrain_dir(arm)
    return self.pretrain_init

  def finetune_dir(self, arm: str, seed: int) -> str:
    return self.path("finetune", arm, f"seed{seed}")


# -------------------------------------------------------------------- stages


def split_corpus(study: Study) -> Dict[str, int]:
  """Every heldout_every-th document (over the sorted files) is held out."""
  counts = {"train": 0, "heldout": 0}
  index = 0
  paths = sorted(p for pattern in study.corpus.split(",")
                 for p in glob.glob(pattern))
  if not paths:
    raise study_lib.StudyError(f"corpus {study.corpus} matches no file; set "
                               "SPANBERT_DATA_DIR to the data folder")
  for path in paths:
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
    study_lib.write_json(study.path("corpus", "split.json"), split_corpus(study))


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
                 lower_case=study.lower_case,
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
          "split": study_lib.read_json(study.path("corpus", "split.json"))}


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
  study_lib.write_json(os.path.join(out, "train.json"),
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
      tokenization.WordpieceTokenizer(study.vocab_file(),
                                     lower_case=study.lower_case),
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
  study_lib.write_json(dst, {"version": data.get("version", ""),
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


def _runtime(preset) -> dict:
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
  preset, spec = study.preset, study.arm(arm)
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
      "task": dict({"model": {"encoder": study.encoder()},
                    "init_checkpoint": study.pretrain_init,
                    "train_data": data,
                    "validation_data": {"input_path": ""}},
                   **head_warmup(preset, spec)),
      "trainer": _trainer(preset.pretrain_steps, preset.warmup_steps,
                          preset.learning_rate, preset.steps_per_loop,
                          preset.checkpoint_interval),
  }, is_strict=True)
  params.validate()
  return params


def head_warmup(preset, spec) -> dict:
  """The task's head warm-up settings for an arm: the preset's
  head_warmup_steps and encoder_warmup_steps unless the arm opts out
  (`head_warmup: false`); {} for a preset without them."""
  steps = getattr(preset, "head_warmup_steps", 0)
  if not steps or not getattr(spec, "head_warmup", True):
    return {}
  return {"head_warmup_steps": steps,
          "encoder_warmup_steps": getattr(preset, "encoder_warmup_steps", 0)}


def stage_pretrain(study: Study, arm: str) -> dict:
  params = pretrain_params(study, arm)
  model_dir = study.pretrain_dir(arm)
  latest = tf.train.latest_checkpoint(model_dir) if os.path.isdir(
      model_dir) else None
  start_step = int(latest.rsplit("-", 1)[1]) if latest else 0
  tf_keras.utils.set_random_seed(study.preset.model_seed)
  train_lib.run(params, model_dir, mode="train")
  last = {tag: values[-1][1]
          for tag, values in study_lib.scalars(model_dir).items()}
  return {"start_step": start_step, "steps": params.trainer.train_steps,
          "final": last,
          "examples_per_s": finetune_glue.train_throughput(model_dir)}


def heldout_params(study: Study, arm: str, masking_scheme: str = "span"):
  """The arm's model without NSP, on held-out blocks masked one way."""
  params = pretrain_params(study, arm if study.arm(arm).experiment
                           else "span")
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
  params.task.init_checkpoint = study.init_checkpoint(arm)
  return params


def heldout_mlm(study: Study, arm: str, masking_scheme: str,
                max_batches: int = 0, checkpoint: str = "",
                params=None) -> dict:
  """The arm's metrics on held-out blocks masked with `masking_scheme`
  (the same masks for every arm: a fixed seed); max_batches: the first
  batches only; checkpoint: this one instead of the arm's latest; params:
  these instead of heldout_params(study, arm), masked with masking_scheme."""
  if params is None:
    params = heldout_params(study, arm, masking_scheme)
  return heldout_mlms(study, params, [masking_scheme], max_batches,
                      checkpoint)[masking_scheme]


def heldout_mlms(study: Study, params, masking_schemes, max_batches: int = 0,
                 checkpoint: str = "") -> dict:
  """{scheme: heldout_mlm's metrics} with `params` (heldout_params) and its
  validation data masked each way: the model is built, restored and its
  step traced once for all of them (the blocks' shapes do not depend on
  the masking; each scheme half the CPU of a model of its own).

    heldout_mlms(study, heldout_params(study, "span"), ["span", "token"])
  """
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
                                                        metrics),
                     autograph=False)
  results = {}
  for scheme in masking_schemes:
    for m in metrics:
      m.reset_states()
    data = params.task.validation_data.replace(masking_scheme=scheme)
    batches = 0
    dataset = task.build_inputs(data)
    for batch in release.batches(dataset.take(max_batches) if max_batches
                                 else dataset):
      step(batch)
      batches += 1
    results[scheme] = {m.name: float(m.result()) for m in metrics}
    results[scheme].update(blocks=batches * study.preset.batch_size,
                           restored_from=params.task.init_checkpoint)
  return results


def stage_heldout_mlm(study: Study, arm: str) -> dict:
  """Held-out MLM metrics on span-masked and on token-masked blocks."""
  result = heldout_mlms(study, heldout_params(study, arm), ["span", "token"])
  study_lib.write_json(study.path("heldout", f"{arm}.json"), result)
  return result


def finetune_params(study: Study, arm: str, seed: int, dev_json: str):
  preset = study.preset
  params = exp_factory.get_exp_config("spanbert/squad_v1")
  data = {"seq_length": preset.finetune_seq_length,
          "doc_stride": preset.doc_stride,
          "query_length": preset.query_length,
          "vocab_file": study.vocab_file(), "do_lower_case": study.lower_case}
  steps = preset.finetune_steps
  params.override({
      "runtime": _runtime(preset),
      "task": {
          "init_checkpoint": study.init_checkpoint(arm),
          "model": {"encoder": study.encoder()},
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


def stage_finetune(study: Study, arm: str, seed: int, manifest: dict,
                   params_fn=None) -> dict:
  """SQuAD fine-tuning of one arm and seed, scored once on dev; params_fn:
  another study's finetune_params."""
  records = manifest["stages"]["finetune_records"]["result"]
  params = (params_fn or finetune_params)(study, arm, seed,
                                          records["dev_json"])
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
  study_lib.write_json(os.path.join(model_dir, "result.json"), result)
  return result


# Each shared stage kind, and how it runs: (study, the rest of the stage's
# name after "kind:", the manifest) -> its result.
STAGES = {
    "records": lambda study, rest, _: (stage_vocab(study) if rest == "vocab"
                                       else stage_records(study, rest)),
    "finetune_records": lambda study, rest, _: stage_finetune_records(study),
    "pretrain": lambda study, rest, _: stage_pretrain(study, rest),
    "heldout_mlm": lambda study, rest, _: stage_heldout_mlm(study, rest),
    "finetune": lambda study, rest, manifest: stage_finetune(
        study, rest.split(":")[0], int(rest.split(":")[1]), manifest),
}


def run_stage(study: Study, stage: str, manifest: dict) -> dict:
  """Runs a stage of a kind in STAGES (e.g. "finetune:span:2")."""
  kind, _, rest = stage.partition(":")
  return STAGES[kind](study, rest, manifest)
