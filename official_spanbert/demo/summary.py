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

"""The demo's closing summaries: what was learned, the fills, what it cost."""

from typing import List

def _pct(metrics, name):
  return f"{100 * metrics.get(name, float('nan')):.1f}%"


def metrics_line(metrics) -> str:
  return (f"MLM {_pct(metrics, 'masked_lm_accuracy')} (loss "
          f"{metrics['mlm_loss']:.2f}), SBO {_pct(metrics, 'sbo_accuracy')} "
          f"(loss {metrics['sbo_loss']:.2f})")


def _table(before, unigram, after, train_steps) -> List[str]:
  rows = [("untrained model", before), ("unigram baseline", unigram),
          (f"after {train_steps} steps", after)]
  lines = [f"   {'':<18} {'MLM acc':>8} {'MLM loss':>9} {'SBO acc':>8} "
           f"{'SBO loss':>9}"]
  for name, m in rows:
    lines.append(f"   {name:<18} {_pct(m, 'masked_lm_accuracy'):>8} "
                 f"{m['mlm_loss']:>9.3f} {_pct(m, 'sbo_accuracy'):>8} "
                 f"{m['sbo_loss']:>9.3f}")
  return lines


def verdict(after, unigram, margin: float = 0.05) -> str:
  """What the held-out MLM loss says against the unigram baseline."""
  gap = unigram["mlm_loss"] - after["mlm_loss"]
  if gap > margin:
    return (f"   MLM loss {gap:.2f} nats below the unigram baseline: the "
            "model has begun to use the context, beyond word frequencies")
  if gap >= -margin:
    return ("   MLM loss at the unigram baseline: so far the model has "
            "learned word frequencies; more steps leave this plateau "
            "(benchmarks/RESULTS.md, \"The demo's learning budget\")")
  return (f"   MLM loss {-gap:.2f} nats above the unigram baseline: the "
          "model has not yet learned even word frequencies; train longer")


def _fill_lines(fills) -> List[str]:
  lines = []
  for f in fills:
    lines.append(f"   {f['masked']}")
    text = f"      true {f['word']!r}: MLM {'+' if f['mlm_hit'] else '-'} " + (
        ", ".join(f["mlm_top5"]))
    if "sbo_top5" in f:
      text += (f" | SBO {'+' if f['sbo_hit'] else '-'} " +
               ", ".join(f["sbo_top5"]))
    lines.append(text)
  return lines


def _sentence_lines(s) -> List[str]:
  lines = [f"your sentence: {s['sentence']}"]
  for c in s["candidates"]:
    text = f"   [MASK] {c['mask']}: MLM " + ", ".join(c["mlm_top5"])
    if "sbo_top5" in c:
      text += " | SBO " + ", ".join(c["sbo_top5"])
    lines.append(text)
  lines.append(f"   filled: {s['filled']}")
  return lines


def print_summary(s: dict) -> None:
  """Prints the summary a person reads (what was learned, fills, costs)."""
  before, unigram, after = s["before"], s["unigram"], s["after"]
  fills = s["heldout_fills"]
  lines = [f"\n== what was learned: held-out ({s['corpus']['heldout_documents']}"
           f" documents, {before['masked_tokens']:,} masked tokens, the same "
           "masks for every row)"]
  lines += _table(before, unigram, after, s["train_steps"])
  lines.append("   (unigram baseline: every masked token predicted by its "
               "frequency in the training records)")
  lines.append(verdict(after, unigram))
  lines.append("held-out sentences, one word masked (+: the true word is in "
               "the top 5):")
  lines += _fill_lines(fills)
  lines += _sentence_lines(s)
  sec = s["seconds"]
  cost = ", ".join(f"{name} {sec[key]:.0f} s" for name, key in (
      ("corpus", "corpus"), ("vocab", "vocab"), ("records", "records"),
      ("measure before", "measure_before"), ("training", "training"),
      ("measure after + plot", "measure_after"), ("export", "export"),
      ("fills", "fill")) if key in sec)
  mlm_hits = sum(f["mlm_hit"] for f in fills)
  sbo_hits = sum(f.get("sbo_hit", False) for f in fills)
  lines.append(
      f"\nspanbert-demo: held-out MLM accuracy "
      f"{_pct(before, 'masked_lm_accuracy')} -> "
      f"{_pct(after, 'masked_lm_accuracy')} (unigram baseline "
      f"{_pct(unigram, 'masked_lm_accuracy')}), loss "
      f"{before['mlm_loss']:.2f} -> {after['mlm_loss']:.2f} (unigram "
      f"{unigram['mlm_loss']:.2f}); held-out words in the top 5: MLM "
      f"{mlm_hits}/{len(fills)}, SBO {sbo_hits}/{len(fills)}")
  lines.append(f"   {sec['total']:.0f} s in all: {cost}")
  lines.append(f"   wrote: model {s['model_dir']}, export {s['export']['model']}"
               f", curves {s['loss_curves']}, summary {s['summary_path']}")
  print("\n".join(lines), flush=True)


def _continued_table(s) -> List[str]:
  rows = [("unigram baseline", s["unigram"]),
          (f"{s['base']} + heads warmed {s['warmup_steps']} steps",
           s["before"]),
          (f"after {s['train_steps'] - s['warmup_steps']} more steps",
           s["after"])]
  width = max(len(name) for name, _ in rows)
  lines = [f"   {'':<{width}} {'MLM top-1':>9} {'MLM top-5':>9} "
           f"{'MLM loss':>9} {'SBO acc':>8} {'SBO loss':>9}"]
  for name, m in rows:
    lines.append(
        f"   {name:<{width}} {_pct(m, 'masked_lm_accuracy'):>9} "
        f"{_pct(m, 'masked_lm_top5_accuracy'):>9} {m['mlm_loss']:>9.3f} "
        f"{_pct(m, 'sbo_accuracy'):>8} {m['sbo_loss']:>9.3f}")
  return lines


def print_continued_summary(s: dict) -> None:
  """The second act's summary: before (warmed heads) / after / unigram,
  fills, costs."""
  before, unigram, after = s["before"], s["unigram"], s["after"]
  fills = s["heldout_fills"]
  change = s["encoder_change_in_warmup"]
  lines = [f"\n== what was measured: held-out "
           f"({s['corpus']['heldout_documents']} documents, "
           f"{before['masked_tokens']:,} masked tokens, the same masks for "
           "every row)"]
  lines += _continued_table(s)
  lines.append("   (unigram baseline: every masked token predicted by its "
               "frequency in the training records; before: the encoder as "
               f"converted, {'unchanged' if change == 0.0 else 'CHANGED'} by "
               "the head warm-up)")
  lines.append(verdict(after, unigram))
  lines.append("held-out sentences, one word masked, filled through the "
               "exported SavedModel after continuing (+: the true word is in "
               "the top 5):")
  lines += _fill_lines(fills)
  lines += _sentence_lines(s)
  sec = s["seconds"]
  cost = ", ".join(f"{name} {sec[key]:.0f} s" for name, key in (
      ("corpus", "corpus"), ("base + records", "base"),
      ("heads", "heads"), ("warm-up", "warmup"),
      ("measure before", "measure_before"), ("training", "training"),
      ("measure after", "measure_after"), ("export", "export"),
      ("fills", "fill")) if key in sec)
  mlm_hits = sum(f["mlm_hit"] for f in fills)
  lines.append(
      f"\nspanbert-demo: {s['base']} continued: held-out MLM top-5 accuracy "
      f"{_pct(before, 'masked_lm_top5_accuracy')} -> "
      f"{_pct(after, 'masked_lm_top5_accuracy')}, top-1 "
      f"{_pct(before, 'masked_lm_accuracy')} -> "
      f"{_pct(after, 'masked_lm_accuracy')} (unigram baseline "
      f"{_pct(unigram, 'masked_lm_top5_accuracy')} / "
      f"{_pct(unigram, 'masked_lm_accuracy')}), loss "
      f"{before['mlm_loss']:.2f} -> {after['mlm_loss']:.2f} (unigram "
      f"{unigram['mlm_loss']:.2f}); held-out words in the top 5: MLM "
      f"{mlm_hits}/{len(fills)}")
  lines.append(f"   {sec['total']:.0f} s in all: {cost}")
  lines.append(f"   wrote: model {s['model_dir']}, export {s['export']['model']}"
               f", summary {s['summary_path']}")
  print("\n".join(lines), flush=True)


_SUMMARY_METRICS = ("masked_lm_accuracy", "mlm_loss", "sbo_accuracy",
                    "sbo_loss", "masked_tokens", "sbo_targets")


def first_act_summary(*, train_steps, precision, cpu, steps_picked, data,
                      before, unigram, after, fills, sentence, out,
                      candidates, paths, model_dir, png, seconds) -> dict:
  """The summary dict of run_demo (pipeline.py), as summary.json holds it."""
  keys = _SUMMARY_METRICS
  summary = {
      "train_steps": train_steps, "precision": precision, "cpu": cpu,
      "steps_picked": steps_picked,
      "corpus": data.corpus, "records": data.records,
      "before": {k: before[k] for k in keys if k in before},
      "unigram": {k: unigram[k] for k in keys if k in unigram},
      "after": {k: after[k] for k in keys if k in after},
      "heldout_fills": fills, "sentence": sentence,
      "filled": out["filled_text"].numpy()[0].decode(),
      "candidates": candidates, "export": paths, "model_dir": model_dir,
      "loss_curves": png,
      "seconds": {k: round(v, 1) for k, v in seconds.items()},
  }
  summary["eval"] = {k: round(float(after[k]), 4) for k in (
      "mlm_loss", "sbo_loss", "masked_lm_accuracy", "sbo_accuracy")
                     if k in after}
  return summary
