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

"""Tests of GLUE / TACRED fine-tuning: data, metrics and a tiny end to end run."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import yaml

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official.nlp.tasks import sentence_prediction as mg_sentence_prediction
from official_spanbert.training import train_lib
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.finetuning import classification as cls_data
from official_spanbert.data.finetuning import classification_records as cls_records
from official_spanbert.data.finetuning import tacred
from official_spanbert.data import tokenization
from official_spanbert import interop
from official_spanbert.tasks import classification as sp
from conftest import TOOLS, data_path

SEQ = 64


def _tokenizer(vocab):
  return tokenization.WordpieceTokenizer(vocab, lower_case=False)


def _tokens(tokenizer, ids):
  return [t.decode() for t in tokenizer.detokenize_ids(ids).numpy()]


def _write(path, text):
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return str(path)


def _records(n=4):
  """Hand-made TACRED records (subject/object spans inclusive)."""
  base = [
      dict(token=["Bill", "Gates", "founded", "Microsoft", "-LRB-", "MSFT",
                  "-RRB-", "."], subj_start=0, subj_end=1, obj_start=3,
           obj_end=3, subj_type="PERSON", obj_type="ORGANIZATION",
           relation="org:founded_by"),
      dict(token=["Paris", "is", "where", "Marie", "Curie", "lived", "."],
           subj_start=3, subj_end=4, obj_start=0, obj_end=0,
           subj_type="PERSON", obj_type="CITY",
           relation="per:cities_of_residence"),
      dict(token=["He", "met", "IBM", "officials", "in", "Boston", "."],
           subj_start=2, subj_end=2, obj_start=5, obj_end=5,
           subj_type="ORGANIZATION", obj_type="CITY", relation="no_relation"),
  ]
  return [dict(base[i % 3], id=f"r{i}") for i in range(n)]


# ---------------------------------------------------------------------------
# Readers and encoding.


def test_reads_real_glue_files():
  cola = cls_data.read_tsv(
      data_path("glue", "CoLA", "in_domain_dev.tsv"), "cola")
  rte = cls_data.read_tsv(data_path("glue", "RTE", "dev.tsv"), "rte")
  sst = cls_data.read_tsv(data_path("glue", "SST-2", "dev.tsv"), "sst2")
  assert (len(cola), len(rte), len(sst)) == (527, 277, 872)
  assert {e.label for e in cola} == {"0", "1"}
  assert {e.label for e in rte} == {"entailment", "not_entailment"}
  assert all(e.text_b for e in rte) and all(e.text_b is None for e in sst)
  assert rte[0].guid.endswith("dev.tsv:2")


@pytest.mark.parametrize("task,text,line,message", [
    ("cola", "gj04\t1\t\tFine.\ngj04\t1\tOnly three columns\n", 2,
     "expected 4 tab-separated columns"),
    ("cola", "gj04\t1\t\tFine.\n\ngj04\tyes\t\tBad label.\n", 3,
     "unknown label 'yes'"),
    ("rte", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n"
     "1\ta\tb\tcontradiction\n", 3, "unknown label 'contradiction'"),
    ("rte", "index\tsentence1\tsentence2\tlabel\n0\ta\tb\tc\tentailment\n",
     2, "expected 4 tab-separated columns"),
    ("rte", "0\ta\tb\tentailment\n", 1, "expected the header"),
    ("sst2", "sentence\tlabel\n \t1\n", 2, "empty sentence"),
])
def test_bad_tsv_line_is_one_error_naming_file_and_line(
    tmp_path, cased_vocab, task, text, line, message):
  path = _write(tmp_path / "bad.tsv", text)
  out = tmp_path / "out"
  with pytest.raises(cls_data.DataError) as e:
    cls_records.create_finetuning_data(task, cased_vocab, str(out),
                                    train_file=path)
  assert str(e.value).startswith(f"{path}:{line}: ") and message in str(
      e.value), e.value
  assert not out.exists()  # validated before anything is written


def test_cli_reports_bad_input_with_exit_code_1(tmp_path, cased_vocab):
  good = _write(tmp_path / "train.tsv", "gj04\t1\t\tFine.\n")
  bad = _write(tmp_path / "dev.tsv", "gj04\t1\t\tFine.\ngj04\t2\t\tNo.\n")
  result = subprocess.run(
      [sys.executable, os.path.join(TOOLS, "create_finetuning_data.py"),
       "--task=cola", f"--train_file={good}", f"--eval_file={bad}",
       f"--vocab_file={cased_vocab}", f"--output_dir={tmp_path / 'out'}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  errors = [l for l in result.stderr.splitlines()
            if l.startswith("create_finetuning_data: error:")]
  assert result.returncode == 1, result.stderr[-2000:]
  assert errors == [f"create_finetuning_data: error: {bad}:2: unknown label "
                    "'2'; cola labels are 0, 1"], result.stderr[-2000:]
  assert "Traceback" not in result.stderr
  assert not (tmp_path / "out").exists()


def test_pair_encoding_truncates_longer_segment_first(cased_vocab):
  tokenizer = _tokenizer(cased_vocab)
  examples = [
      cls_data.Example("a", "one two three four five six seven", "eight",
                       "0"),
      cls_data.Example("b", "Short one.", None, "1"),
      cls_data.Example("c", "one two three four five six seven eight nine",
                       None, "1"),
  ]
  ids, segments, truncated = cls_data.encode(tokenizer, examples, 8)
  assert _tokens(tokenizer, ids[0]) == ["[CLS]", "one", "two", "three",
                                        "four", "[SEP]", "eight", "[SEP]"]
  assert segments[0] == [0] * 6 + [1] * 2
  assert _tokens(tokenizer, ids[1]) == ["[CLS]", "Short", "one", ".",
                                        "[SEP]"]
  assert segments[1] == [0] * 5
  assert len(ids[2]) == 8 and _tokens(tokenizer, ids[2])[-1] == "[SEP]"
  assert truncated == 2


def test_records_match_model_garden_loader(tmp_path, cased_vocab):
  meta = cls_records.create_finetuning_data(
      "rte", cased_vocab, str(tmp_path), lower_case=False,
      train_file=data_path("glue", "RTE", "train.tsv"),
      eval_file=data_path("glue", "RTE", "dev.tsv"), max_seq_length=SEQ,
      max_train_examples=40, max_eval_examples=10)
  with open(tmp_path / cls_data.META_FILE, encoding="utf-8") as f:
    assert json.load(f) == meta
  assert meta["num_labels"] == 2 and meta["train_data_size"] == 40
  assert meta["labels"] == ["entailment", "not_entailment"]
  assert sum(meta["eval_label_counts"].values()) == 10
  params = exp_factory.get_exp_config("spanbert/classification")
  data = params.task.validation_data
  data.input_path, data.seq_length = str(tmp_path / cls_data.EVAL_FILE), SEQ
  data.global_batch_size = 16
  task = task_factory.get_task(params.task)
  batches = list(task.build_inputs(data))
  assert len(batches) == 1 and batches[0]["input_word_ids"].shape == (10, SEQ)
  batch = batches[0]
  sep = _tokenizer(cased_vocab).vocab.sep_id
  for ids, mask, types in zip(batch["input_word_ids"].numpy(),
                              batch["input_mask"].numpy(),
                              batch["input_type_ids"].numpy()):
    n = mask.sum()
    assert mask[:n].all() and not mask[n:].any() and ids[n - 1] == sep
    assert types[n - 1] == 1 and types[0] == 0 and not types[n:].any()
  rte = cls_data.read_tsv(data_path("glue", "RTE", "dev.tsv"), "rte")[:10]
  assert batch["label_ids"].numpy().tolist() == [
      meta["labels"].index(e.label) for e in rte]


def test_tacred_entity_masking(tmp_path, cased_vocab):
  path = _write(tmp_path / "train.json", json.dumps(_records(3)))
  tokenizer = _tokenizer(cased_vocab)
  examples = tacred.read_tacred(path)
  markers = tacred.entity_markers(examples, tokenizer.vocab)
  # Sorted markers take [unused1], [unused2], ...
  assert {k: tokenizer.vocab.tokens[v] for k, v in markers.items()} == {
      "[OBJ-CITY]": "[unused1]", "[OBJ-ORGANIZATION]": "[unused2]",
      "[SUBJ-ORGANIZATION]": "[unused3]", "[SUBJ-PERSON]": "[unused4]"}
  ids, segments, truncated = tacred.encode_relations(
      tokenizer, examples, markers, SEQ)
  assert _tokens(tokenizer, ids[0]) == [
      "[CLS]", "[unused4]", "founded", "[unused2]", "(", "MS", "##FT", ")",
      ".", "[SEP]"]
  assert _tokens(tokenizer, ids[1]) == [
      "[CLS]", "[unused1]", "is", "where", "[unused4]", "lived", ".", "[SEP]"]
  assert segments[0] == [0] * 10 and truncated == 0
  _, _, truncated = tacred.encode_relations(tokenizer, examples, markers, 6)
  assert truncated == 3

  meta = cls_records.create_finetuning_data(
      "tacred", cased_vocab, str(tmp_path / "out"), train_file=path,
      eval_file=path, max_seq_length=SEQ)
  assert meta["labels"] == ["no_relation", "org:founded_by",
                            "per:cities_of_residence"]
  assert meta["negative_label_id"] == 0
  assert meta["entity_markers"]["[SUBJ-PERSON]"] == "[unused4]"

  few = _write(tmp_path / "vocab.txt", "\n".join(
      ["[PAD]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
  with pytest.raises(cls_data.DataError, match=r"has no \[unused2\].*needs 4"):
    tacred.entity_markers(examples, tokenization.load_vocab(few))


@pytest.mark.parametrize("change,message", [
    (lambda r: r.pop("obj_type"), "record 1 (id 'r1'): missing field "
     "'obj_type'"),
    (lambda r: r.update(subj_end=9), "record 1 (id 'r1'): subj_start..subj_end"
     " = 3..9 is not a span of the 7 tokens"),
    (lambda r: r.update(obj_start="0"), "record 1 (id 'r1'): field "
     "'obj_start' must be a JSON integer"),
    (lambda r: r.update(token="Paris is"), "field 'token' must be a JSON list"),
    (lambda r: r.update(id="r0"), "record 1 (id 'r0'): duplicate id"),
])
def test_malformed_tacred_record_is_one_error_naming_record(
    tmp_path, cased_vocab, change, message):
  records = _records(3)
  change(records[1])
  path = _write(tmp_path / "bad.json", json.dumps(records))
  with pytest.raises(cls_data.DataError) as e:
    cls_records.create_finetuning_data("tacred", cased_vocab,
                                    str(tmp_path / "out"), train_file=path)
  assert str(e.value).startswith(f"{path}: ") and message in str(e.value), (
      e.value)
  assert not (tmp_path / "out").exists()


def test_invalid_tacred_json_names_line(tmp_path):
  path = _write(tmp_path / "bad.json", '[\n{"id": "a",\n "token": [}\n]')
  with pytest.raises(cls_data.DataError, match=r"bad.json:3: invalid JSON"):
    tacred.read_tacred(path)
  path = _write(tmp_path / "obj.json", '{"id": "a"}')
  with pytest.raises(cls_data.DataError, match="expected a non-empty JSON "
                     "list"):
    tacred.read_tacred(path)


# ---------------------------------------------------------------------------
# Metrics on crafted predictions.


def _task(metric_type, num_classes=2, **kwargs):
  config = sp.SpanBertClassificationConfig(
      metric_type=metric_type,
      model=sp.SpanBertClassifierConfig(num_classes=num_classes), **kwargs)
  return task_factory.get_task(config)


def _logits(predictions, num_classes):
  return np.eye(num_classes, dtype=np.float32)[predictions] * 5.0


def test_tacred_scores_hand_computed():
  # guessed (pred != 0): 4; correct among them: 2 (ids 1, 3); gold != 0: 5.
  labels = [0, 1, 2, 0, 1, 3, 2]
  preds = [0, 1, 1, 2, 0, 3, 0]
  scores = sp.tacred_scores(preds, labels, negative_label_id=0)
  assert scores["precision"] == pytest.approx(2 / 4)
  assert scores["recall"] == pytest.approx(2 / 5)
  assert scores["f1"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)
  # Nothing guessed: precision 1 (TACRED's scorer), recall 0, F1 0.
  assert sp.tacred_scores([0, 0], [1, 0]) == {"precision": 1.0,
                                              "recall": 0.0, "f1": 0.0}
  # Another negative id.
  assert sp.tacred_scores([2, 1], [2, 1], negative_label_id=2)["f1"] == 1.0

  task = _task("tacred_f1", num_classes=4)
  logs = task.reduce_aggregated_logs({
      "sentence_prediction": [_logits(preds[:3], 4), _logits(preds[3:], 4)],
      "labels": [np.array(labels[:3]), np.array(labels[3:])]})
  assert logs == pytest.approx({"tacred_f1": 4 / 9, "tacred_precision": 0.5,
                                "tacred_recall": 0.4})


def test_matthews_and_accuracy_hand_computed():
  labels = np.array([1, 1, 1, 0, 0, 0, 1, 0])
  preds = np.array([1, 1, 0, 0, 0, 1, 1, 0])
  # TP 3, TN 3, FP 1, FN 1: (3*3 - 1*1) / sqrt(4*4*4*4) = 0.5.
  task = _task("matthews_corrcoef")
  logits = tf.constant(_logits(preds, 2))
  state = None
  for rows in (slice(0, 5), slice(5, 8)):
    out = task.validation_step(
        {"label_ids": tf.constant(labels[rows])}, model=_FixedModel(
            logits[rows]))
    # The trainer passes per-replica tuples (here: one replica).
    state = task.aggregate_logs(state, {k: (v,) for k, v in out.items()})
  assert task.reduce_aggregated_logs(state) == pytest.approx(
      {"matthews_corrcoef": 0.5})

  task = _task("accuracy")
  metrics = task.build_metrics()
  task.process_metrics(metrics, {"label_ids": tf.constant(labels)}, logits)
  accuracy = {m.name: float(m.result()) for m in metrics}["cls_accuracy"]
  assert accuracy == pytest.approx(6 / 8)
  assert task.reduce_aggregated_logs(None) is None


class _FixedModel(tf.keras.Model):
  """Returns fixed logits (for validation_step on crafted predictions)."""

  def __init__(self, logits):
    super().__init__()
    self.logits = logits

  def call(self, inputs, training=False):
    del inputs, training
    return self.logits


def test_bad_task_config_is_rejected_up_front():
  with pytest.raises(ValueError, match="metric_type 'f2'"):
    _task("f2")
  with pytest.raises(ValueError, match="negative_label_id 5"):
    _task("tacred_f1", num_classes=3, negative_label_id=5)


# ---------------------------------------------------------------------------
# Tiny model end to end.


def _tiny(params, records_dir, num_classes, steps, batch=16, lr=1e-3,
          hidden=32):
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = hidden, 2 * hidden, 1
  enc.num_attention_heads = 2
  enc.dropout_rate = enc.attention_dropout_rate = 0.0
  params.task.model.num_classes = num_classes
  params.runtime.distribution_strategy = "one_device"
  params.runtime.num_gpus = 0
  for data, name in ((params.task.train_data, cls_data.TRAIN_FILE),
                     (params.task.validation_data, cls_data.EVAL_FILE)):
    data.input_path = os.path.join(records_dir, name)
    data.seq_length, data.global_batch_size = SEQ, batch
  t = params.trainer
  t.train_steps = t.checkpoint_interval = t.validation_interval = steps
  t.steps_per_loop = t.summary_interval = steps
  t.best_checkpoint_export_subdir = "best_ckpt"
  opt = t.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = lr
  opt.learning_rate.polynomial.decay_steps = steps
  opt.warmup.polynomial.warmup_steps = max(steps // 10, 1)
  return params


def _predict(params, model):
  """Predicted label ids of the eval records, in file order (Model Garden)."""
  task = task_factory.get_task(params.task)
  data = params.task.validation_data.replace(include_example_id=True)
  return [int(p) for p in mg_sentence_prediction.predict(task, data, model)]


def test_tiny_cola_memorises_training_sentences_mcc_from_predictions(
    tmp_path, cased_vocab):
  """64 CoLA training sentences, evaluated on themselves: MCC near 1.

  The MCC is recomputed from the model's predictions against the labels of
  the raw tsv (not the records), so a label misaligned in the records, which
  a memorising model learns just as well, cannot pass: with the records'
  labels rotated by one example (scratch run), the logged MCC was 1.0 and
  the recomputed one 0.25.

  The bar is 0.6, between those two: unseeded, the MCC after 160 steps ranged
  0.84-1.0 over 8 seeds on a 2-core EPYC and was 0.797 in one CI run (a few
  sentences stay unlearnt for a 1-layer model), so "near 1" was flaky while
  the rotation it guards against gives 0.25. Seeded, it is 1.0 there.
  """
  tf.keras.utils.set_random_seed(0)
  train_tsv = data_path("glue", "CoLA", "in_domain_train.tsv")
  records = str(tmp_path / "cola")
  meta = cls_records.create_finetuning_data(
      "cola", cased_vocab, records, train_file=train_tsv,
      eval_file=train_tsv, max_seq_length=SEQ, max_train_examples=64,
      max_eval_examples=64)
  params = exp_factory.get_exp_config("spanbert/classification")
  params.task.metric_type = meta["metric_type"]
  params = _tiny(params, records, meta["num_labels"], steps=160, lr=3e-3,
                 hidden=64)
  model, logs = train_lib.run(params, str(tmp_path / "model"), mode="train",
                              run_post_eval=True)
  with open(train_tsv, encoding="utf-8") as f:
    gold = [int(line.split("\t")[1]) for line in f][:64]
  predicted = _predict(params, model)
  tp = sum(p == g == 1 for p, g in zip(predicted, gold))
  tn = sum(p == g == 0 for p, g in zip(predicted, gold))
  fp = sum(p == 1 and g == 0 for p, g in zip(predicted, gold))
  fn = sum(p == 0 and g == 1 for p, g in zip(predicted, gold))
  denominator = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
  mcc = (tp * tn - fp * fn) / denominator if denominator else 0.0
  assert mcc >= 0.6, (mcc, logs)
  assert logs["matthews_corrcoef"] == pytest.approx(mcc)
  assert logs["cls_accuracy"] == pytest.approx((tp + tn) / 64)


_FILLER = ("said", "that", "the", "new", "report", "about", "was", "in", "a",
           "statement", "on", "Monday", "and", "also", "met", "with",
           "officials", "from", "during", "visit", "its", "last", "year")
# (subject type, object type) -> relation: only the entity markers tell.
_RELATIONS = (("ORGANIZATION", "PERSON", "org:founded_by"),
              ("PERSON", "CITY", "per:cities_of_residence"),
              ("PERSON", "ORGANIZATION", "no_relation"))


def _relation_records(n, seed, prefix):
  """TACRED records whose relation follows from the entity types only."""
  rng = np.random.default_rng(seed)
  records = []
  for i in range(n):
    subj_type, obj_type, relation = _RELATIONS[i % len(_RELATIONS)]
    words = [str(w) for w in rng.choice(_FILLER, size=5, replace=False)]
    subj, obj = (0, 6) if rng.random() < 0.5 else (6, 0)
    words.insert(subj, "Alpha")
    words.insert(obj, "Beta")
    records.append(dict(
        id=f"{prefix}{i}", token=words + ["."], subj_start=subj,
        subj_end=subj, obj_start=obj, obj_end=obj, subj_type=subj_type,
        obj_type=obj_type, relation=relation))
  return records


def test_tiny_tacred_learns_entity_types_scored_on_a_separate_split(
    tmp_path, cased_vocab):
  """Trained on 24 records, scored on 12 others with other wording.

  TACRED itself (LDC) is not in the shared data, so both splits are
  hand-made; the relation depends only on the entity types, which the model
  sees only through the entity markers. tacred_f1 is recomputed from the
  predictions against the relations in the eval JSON: with the records'
  labels rotated by one example (scratch run), the logged tacred_f1 was 1.0
  and the recomputed one 0.0.
  """
  train_json = _write(tmp_path / "train.json",
                      json.dumps(_relation_records(24, 0, "t")))
  eval_records = _relation_records(12, 1, "e")
  eval_json = _write(tmp_path / "eval.json", json.dumps(eval_records))
  records = str(tmp_path / "tacred")
  meta = cls_records.create_finetuning_data("tacred", cased_vocab, records,
                                         train_file=train_json,
                                         eval_file=eval_json,
                                         max_seq_length=SEQ)
  params = exp_factory.get_exp_config("spanbert/tacred")
  # Fixed initialisation: with a random one, a fresh-clone CI run stopped at
  # F1 0.67 after 60 steps. Seeds 2-5 reach >= 0.9, seed 1 does not: this
  # budget is marginal, which the seed pins rather than hides.
  tf.keras.utils.set_random_seed(2)
  params = _tiny(params, records, meta["num_labels"], steps=60, batch=8,
                 lr=3e-3, hidden=64)
  model, logs = train_lib.run(params, str(tmp_path / "model"), mode="train",
                              run_post_eval=True)
  predicted = [meta["labels"][p] for p in _predict(params, model)]
  gold = [r["relation"] for r in eval_records]
  guessed = [p for p in predicted if p != "no_relation"]
  correct = sum(p == g != "no_relation" for p, g in zip(predicted, gold))
  precision = correct / len(guessed) if guessed else 1.0
  recall = correct / sum(g != "no_relation" for g in gold)
  f1 = 2 * precision * recall / (precision + recall) if correct else 0.0
  assert f1 >= 0.9, (f1, predicted, gold)
  assert logs["tacred_f1"] == pytest.approx(f1)
  assert logs["tacred_precision"] == pytest.approx(precision)
  with open(tmp_path / "model" / "best_ckpt" / "info.json",
            encoding="utf-8") as f:
    assert json.load(f)["tacred_f1"] == pytest.approx(f1)


def test_initialize_restores_encoder_with_converted_params(tmp_path):
  params = exp_factory.get_exp_config("spanbert/classification")
  params = _tiny(params, str(tmp_path), 2, steps=1)
  # A converted checkpoint's params.yaml (encoder + mlm_activation) applies.
  with open(tmp_path / "params.yaml", "w", encoding="utf-8") as f:
    yaml.safe_dump(interop.params_dict(
        params.task.model.encoder, interop.EXACT_GELU), f)
  params = params_dict.override_params_dict(
      params, str(tmp_path / "params.yaml"), is_strict=True)
  assert params.task.model.mlm_activation == interop.EXACT_GELU
  task = task_factory.get_task(params.task)
  source = task.build_model()
  tf.train.Checkpoint(encoder=source.checkpoint_items["encoder"]).write(
      str(tmp_path / "enc" / "ckpt"))
  params.task.init_checkpoint = str(tmp_path / "enc" / "ckpt")
  task = task_factory.get_task(params.task)
  model = task.build_model()
  task.initialize(model)
  for a, b in zip(source.checkpoint_items["encoder"].weights,
                  model.checkpoint_items["encoder"].weights):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  params.task.model.encoder.bert_v2.hidden_size = 48
  task = task_factory.get_task(params.task)
  with pytest.raises(ValueError, match=r"checkpoint .*ckpt.*: its encoder "
                     "does not match"):
    task.initialize(task.build_model())
