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

"""What the demo shows: held-out MLM accuracy, span fills, loss curves.

* `split_documents` keeps every n-th document of the corpus out of training;
* `heldout_metrics` runs the pretraining task's own validation step on those
  documents' records (fixed masks: the data config's seed) for any model, so
  the same numbers are measured before and after training;
* `fill_sentences` picks a few held-out sentences, masks one word of each and
  fills it through the exported SavedModel;
* `plot_losses` draws the MLM and SBO training losses from TensorBoard events.
"""

import glob
import os
import re
from typing import Dict, List, Sequence

import tensorflow as tf

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


def heldout_metrics(task, model, data_config, steps: int) -> Dict[str, float]:
  """The task's validation metrics over `steps` batches of data_config."""
  metrics = task.build_metrics(training=False)
  dataset = task.build_inputs(data_config)
  step = tf.function(lambda inputs: task.validation_step(
      inputs, model, metrics=metrics))
  for inputs in dataset.take(steps):
    step(inputs)
  return {m.name: float(m.result()) for m in metrics}


def pick_sentences(heldout_path: str, vocab: Sequence[str], count: int = 4
                   ) -> List[Dict[str, str]]:
  """Held-out sentences with one whole-word, in-vocab word masked.

  Takes the first sentence of 8-20 words of each held-out document, and masks
  its alphabetic word (4+ letters, one vocab token) nearest the middle.
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
          if _WORD.match(w) and w in in_vocab)
      if not candidates:
        continue
      i = candidates[0][1]
      picked.append({"text": sentence, "word": words[i],
                     "masked": " ".join(words[:i] + ["[MASK]"] +
                                        words[i + 1:])})
      break
    if len(picked) == count:
      break
  return picked


def fill_sentences(saved_model, sentences: List[Dict[str, str]]
                   ) -> List[Dict[str, object]]:
  """Fills each masked sentence with the SavedModel's `fill_spans`."""
  if not sentences:
    return []
  out = saved_model.signatures["fill_spans"](
      text=tf.constant([s["masked"] for s in sentences]))
  results = []
  for i, s in enumerate(sentences):
    top5 = [t.decode() for t in out["mlm_top_k_tokens"].numpy()[i, 0]]
    results.append(dict(s, mlm_top5=top5, hit=s["word"] in top5))
  return results


def read_scalars(event_dir: str, tags: Sequence[str]
                 ) -> Dict[str, List[tuple]]:
  """{tag: [(step, value)]} from the TensorBoard event files in event_dir."""
  series = {t: [] for t in tags}
  for path in sorted(glob.glob(os.path.join(event_dir, "events*"))):
    for event in tf.compat.v1.train.summary_iterator(path):
      for v in event.summary.value:
        if v.tag in series:
          series[v.tag].append((event.step,
                                float(tf.make_ndarray(v.tensor))))
  return {t: sorted(s) for t, s in series.items()}


def plot_losses(model_dir: str, png_path: str, title: str) -> Dict[str, list]:
  """Writes a PNG of the MLM and SBO training losses; returns the series."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  series = read_scalars(os.path.join(model_dir, "train"),
                        ("mlm_loss", "sbo_loss"))
  fig, ax = plt.subplots(figsize=(6, 3.5))
  for tag, label in (("mlm_loss", "MLM"), ("sbo_loss", "SBO")):
    if series[tag]:
      steps, values = zip(*series[tag])
      ax.plot(steps, values, marker=".", label=label)
  ax.set_xlabel("training step")
  ax.set_ylabel("loss (mean over the summary interval)")
  ax.set_title(title)
  ax.grid(alpha=0.3)
  ax.legend()
  fig.tight_layout()
  fig.savefig(png_path, dpi=100)
  plt.close(fig)
  return series
