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

"""What the demo shows: held-out accuracy and loss, span fills, loss curves.

Held-out metrics by the pretraining task's own validation step, the unigram
baseline they are read against, fills through the exported SavedModel and the
loss plot.
"""

import glob
import os
import re
from typing import Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf
import tf_keras

from official_spanbert.training import release

_WORD = re.compile(r"^[A-Za-z]{4,}$")


def split_documents(corpus_path: str, train_path: str, heldout_path: str,
                    every: int = 20) -> Dict[str, int]:
  """Writes every `every`-th document to heldout_path, the rest to train_path.

  Documents are separated by blank lines (BERT corpus format).
  """
  with open(corpus_path, encoding="utf-8") as f:
    documents = [d for d in f.read().split("\n\n") if d.strip()]
  heldout = documents[every - 1::every]
  train = [d for i, d in enumerate(documents) if (i + 1) % every]
  for path, docs in ((train_path, train), (heldout_path, heldout)):
    with open(path, "w", encoding="utf-8") as f:
      f.write("\n\n".join(d.strip("\n") for d in docs) + "\n")
  return {"train_documents": len(train), "heldout_documents": len(heldout)}


def heldout_batches(task, data_config, steps: int) -> List[dict]:
  """The first `steps` batches of data_config, read once: every model the
  demo measures is scored on these masked blocks, and the loader's pipeline
  is built and started once, not once a measurement (most of a measurement's
  time: 2026-12-06, MiniLM on the AVX2 EPYC)."""
  return list(task.build_inputs(data_config).take(steps))


def heldout_metrics(task, model, data_config, steps: Optional[int] = None
                    ) -> Dict[str, float]:
  """The task's validation metrics over `steps` batches of data_config, or
  over the batches heldout_batches read (a list; `steps` unused).

  Also "masked_lm_top5_accuracy" (the true token among the MLM's 5 best),
  "masked_tokens" and "sbo_targets": how many positions were scored.
  """
  metrics = task.build_metrics(training=False)
  top5 = tf_keras.metrics.SparseTopKCategoricalAccuracy(
      k=5, name="masked_lm_top5_accuracy")
  dataset = (data_config if isinstance(data_config, list) else
             task.build_inputs(data_config).take(steps))

  @tf.function(autograph=False)  # graph code already: a cheaper trace
  def step(inputs):  # the task's validation_step, keeping the logits
    outputs = task.inference_step(inputs, model)
    losses = task.compute_losses(inputs, outputs)
    task._update_metrics(metrics, inputs, outputs, losses)  # pylint: disable=protected-access
    top5.update_state(inputs["masked_lm_ids"],
                      tf.cast(outputs["mlm_logits"], tf.float32),
                      sample_weight=inputs["masked_lm_weights"])

  masked = sbo = 0.0
  for inputs in release.batches(dataset):
    step(inputs)
    masked += float(tf.reduce_sum(inputs["masked_lm_weights"]))
    if "sbo_weights" in inputs:
      sbo += float(tf.reduce_sum(inputs["sbo_weights"]))
  out = {m.name: float(m.result()) for m in metrics + [top5]}
  out["masked_tokens"] = int(masked)
  out["sbo_targets"] = int(sbo)
  return out


def unigram_log_probs(record_pattern: str, vocab_size: int,
                      special_ids: Sequence[int] = ()) -> np.ndarray:
  """log P(token) by its count in the records' input_ids (add-one smoothed).

  `special_ids` ([PAD], [CLS], [SEP], [MASK], ...) are never a masked
  target: their counts are left out (they keep the smoothing's one).
  """
  counts = np.zeros([vocab_size], np.float64)
  spec = {"input_ids": tf.io.RaggedFeature(tf.int64,
                                           row_splits_dtype=tf.int64)}
  dataset = tf.data.TFRecordDataset(tf.io.gfile.glob(record_pattern))
  for batch in dataset.batch(1024).map(
      lambda r: tf.io.parse_example(r, spec)["input_ids"].flat_values):
    counts += np.bincount(batch.numpy(), minlength=vocab_size)[:vocab_size]
  counts[list(special_ids)] = 0.0
  counts += 1.0  # add-one: every token, special ones too, keeps some mass
  return np.log(counts / counts.sum()).astype(np.float32)


def vocab_unigram_log_probs(record_pattern: str, vocab) -> np.ndarray:
  """unigram_log_probs, the vocab's special and [unused] tokens left out."""
  special = [vocab.pad_id, vocab.cls_id, vocab.sep_id, vocab.mask_id] + [
      i for i, tok in enumerate(vocab.tokens) if tok.startswith("[unused")]
  return unigram_log_probs(record_pattern, vocab.size, special)


class UnigramModel:
  """A stand-in for the pretrainer whose MLM and SBO logits are the
  unigram log-probabilities at every masked position, for heldout_metrics."""

  def __init__(self, log_probs: np.ndarray):
    self._log_probs = tf.constant(log_probs)

  def __call__(self, inputs, training=False):
    del training
    shape = tf.shape(inputs["masked_lm_positions"])
    logits = tf.broadcast_to(self._log_probs, tf.concat(
        [shape, tf.shape(self._log_probs)], 0))
    return {"mlm_logits": logits, "sbo_logits": logits}


def pick_sentences(heldout_path: str, vocab: Sequence[str], count: int = 4,
                   lower_case: bool = False) -> List[Dict[str, str]]:
  """Held-out sentences with one whole-word, in-vocab word masked.

  Takes the first sentence of 8-20 words of each held-out document, and masks
  its alphabetic word (4+ letters, one vocab token) nearest the middle; with
  lower_case (an uncased vocab) the word is looked up, and kept, lowercased.
  """
  in_vocab = set(vocab)
  picked = []
  with open(heldout_path, encoding="utf-8") as f:
    documents = f.read().split("\n\n")
  for document in documents:
    for line in document.splitlines():
      sentence = line.strip().split(". ")[0].rstrip(".") + "."
      words = sentence.split()
      if not 8 <= len(words) <= 20:
        continue
      middle = len(words) / 2
      candidates = sorted(
          (abs(i - middle), i) for i, w in enumerate(words[1:-1], 1)
          if _WORD.match(w) and (w.lower() if lower_case else w) in in_vocab)
      if not candidates:
        continue
      i = candidates[0][1]
      word = words[i].lower() if lower_case else words[i]
      picked.append({"text": sentence, "word": word,
                     "masked": " ".join(words[:i] + ["[MASK]"] +
                                        words[i + 1:])})
      break
    if len(picked) == count:
      break
  return picked


def fill_sentences(saved_model, sentences: List[Dict[str, str]]
                   ) -> List[Dict[str, object]]:
  """Fills each masked sentence with the SavedModel's `fill_spans`.

  Each result is the sentence's dict plus mlm_top5, sbo_top5 (when the model
  has the SBO head), mlm_hit / sbo_hit (the true word is among them) and hit
  (= mlm_hit).
  """
  if not sentences:
    return []
  out = saved_model.signatures["fill_spans"](
      text=tf.constant([s["masked"] for s in sentences]))
  results = []
  for i, s in enumerate(sentences):
    result = dict(s)
    for head in ("mlm", "sbo"):
      key = f"{head}_top_k_tokens"
      if key in out:
        top5 = [t.decode() for t in out[key].numpy()[i, 0]]
        result[f"{head}_top5"] = top5
        result[f"{head}_hit"] = s["word"] in top5
    result["hit"] = result["mlm_hit"]
    results.append(result)
  return results


def read_scalars(event_dir: str, tags: Sequence[str]
                 ) -> Dict[str, List[tuple]]:
  """{tag: [(step, value)]} from the TensorBoard event files in event_dir."""
  series = {t: [] for t in tags}
  for path in sorted(glob.glob(os.path.join(event_dir, "events*"))):
    for record in tf.data.TFRecordDataset(path):
      event = tf.compat.v1.Event.FromString(record.numpy())
      for v in event.summary.value:
        if v.tag in series:
          series[v.tag].append((event.step,
                                float(tf.make_ndarray(v.tensor))))
  return {t: sorted(s) for t, s in series.items()}


def plot_losses(model_dir: str, png_path: str, title: str,
                heldout: Optional[Dict[int, Dict[str, float]]] = None,
                unigram: Optional[Dict[str, float]] = None
                ) -> Dict[str, list]:
  """Writes a PNG of the MLM and SBO training losses; returns the series.

  Args:
    model_dir: the run's model_dir (its train/ summaries are read).
    png_path: where the PNG goes.
    title: its title.
    heldout: {step: held-out metrics} (heldout_metrics' mlm_loss, sbo_loss),
      drawn as points.
    unigram: the unigram baseline's held-out metrics, drawn as lines.
  """
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  series = read_scalars(os.path.join(model_dir, "train"),
                        ("mlm_loss", "sbo_loss"))
  fig, ax = plt.subplots(figsize=(6.4, 4))
  for (tag, label), color in zip((("mlm_loss", "MLM"), ("sbo_loss", "SBO")),
                                 ("tab:blue", "tab:orange")):
    if series[tag]:
      steps, values = zip(*series[tag])
      ax.plot(steps, values, marker=".", color=color,
              label=f"{label} training loss")
    points = sorted((step, m[tag]) for step, m in (heldout or {}).items()
                    if tag in m)
    if points:
      steps, values = zip(*points)
      ax.plot(steps, values, linestyle="none", marker="D", markersize=7,
              color=color, markeredgecolor="black",
              label=f"{label} held-out loss")
    if unigram and tag in unigram:
      ax.axhline(unigram[tag], color=color, linestyle="--", linewidth=1,
                 label=f"{label} unigram baseline ({unigram[tag]:.2f})")
  ax.set_xlabel("training step")
  ax.set_ylabel("loss (nats)")
  ax.set_title(title)
  ax.grid(alpha=0.3)
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(png_path, dpi=100)
  plt.close(fig)
  return series
