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

"""Exports a SpanBERT pretrainer: the serving and preprocessing SavedModels.

The serving model's signatures are pretraining_module.py's; the directory
protocol (versions, warmup requests, clean-up) is export_lib.py's.
"""

import os
from typing import Dict, Optional

import tensorflow as tf

from official_spanbert.utils import atomic_io
from official_spanbert.utils import progress as progress_lib
from official_spanbert.configs import spanbert as spanbert_configs
from official_spanbert.modeling import builder
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib
from official_spanbert.serving import limits
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import text_preprocessor as tp

WARMUP_TEXTS = (
    "SpanBERT predicts [MASK] [MASK] from the tokens around them.",
    "The quick brown fox jumps over the lazy dog.",
)


def load_for_export(params, model_dir: Optional[str] = None,
                    checkpoint_path: Optional[str] = None,
                    vocab_file: Optional[str] = None):
  """(model restored from the checkpoint, vocab file) for the export tools.

  Raises:
    ValueError: no checkpoint or no vocab given.
  """
  checkpoint = checkpoint_path or model_dir
  if not checkpoint:
    raise ValueError("give --model_dir or --checkpoint_path")
  vocab = vocab_file or params.task.train_data.vocab_file
  beside = os.path.join(model_dir or "", "vocab.txt")
  if not vocab and model_dir and tf.io.gfile.exists(beside):
    vocab = beside  # a converted checkpoint's dir (spanbert-convert-checkpoint)
  if not vocab:
    raise ValueError("give --vocab_file (params have no vocab_file)")
  return build_model(params, checkpoint), vocab


def build_model(params, checkpoint_path: Optional[str] = None):
  """The pretrainer of `params.task.model` (modeling/builder.py), restored
  from a training/encoder checkpoint if one is given.

  Raises:
    ValueError: params of an experiment that is not pretraining.
  """
  if not isinstance(params.task.model,
                    spanbert_configs.SpanBertPretrainerConfig):
    raise ValueError(
        "the export takes a pretraining experiment (task.model a "
        f"SpanBertPretrainerConfig), not one with "
        f"{type(params.task.model).__name__}")
  model = builder.build_pretrainer(params.task.model)
  if checkpoint_path:
    checkpoints.restore(model, checkpoint_path)
  return model


def export(model, vocab_file: str, export_base: str, *,
           lower_case: bool = False, seq_length: int = limits.SEQ_LENGTH,
           top_k: int = limits.FILL_SPANS_TOP_K,
           max_masks: int = limits.FILL_SPANS_MAX_MASKS,
           version: Optional[int] = None,
           preprocessing_export_base: Optional[str] = None) -> Dict[str, str]:
  """Exports the serving and preprocessing SavedModels.

  Args:
    model: a SpanBertPretrainer with weights.
    vocab_file: its WordPiece vocab.
    export_base: TF Serving model base path; the model goes to
      <export_base>/<version>.
    lower_case: uncased tokenization.
    seq_length: packed length (longer text is truncated).
    top_k: candidates per masked position in fill_spans.
    max_masks: [MASK] tokens predicted per text.
    version: integer version of both models (default: the next one free in
      both bases, >= the current time). Claimed atomically, so concurrent
      exports to one base get different versions.
    preprocessing_export_base: base path of the preprocessing model (default
      <export_base>_preprocessing).

  Returns:
    {"model": dir, "preprocessing": dir}.

  Raises:
    export_lib.VersionTakenError: `version` exists or another export is
      writing it.
    export_lib.ExportOutputError: the disk is full (nothing is left behind).
  """
  pre_base = preprocessing_export_base or export_base.rstrip("/") + (
      "_preprocessing")
  if os.path.normpath(pre_base) == os.path.normpath(export_base):
    raise ValueError("the preprocessing model needs its own export base")
  report = progress_lib.Progress("export")
  preprocessor = tp.TextPreprocessor(vocab_file, lower_case, seq_length)
  module = pretraining_module.SpanBertServingModule(model, preprocessor,
                                                    top_k, max_masks)
  pre = pretraining_module.PreprocessingModule(preprocessor)
  texts = list(WARMUP_TEXTS)
  ids = preprocessor(tf.constant(texts))
  with export_lib.written_whole(export_base,
                                [export_base, pre_base]) as writing:
    version, tmps = export_lib.claim_version([export_base, pre_base], version)
    dirs = [os.path.join(base, str(version))
            for base in (export_base, pre_base)]
    writing.target = dirs[0]
    renamed = []
    try:
      report.note(f"tracing and saving the model (version {version}, "
                  "5 signatures, warmup requests)")
      export_lib.save_with_warmup(module, tmps[0], {
          "serving_default": {"text": texts},
          "encode_pair": {"text": texts, "text_pair": texts[::-1]},
          "encode_ids": {k: ids[k].numpy() for k in ids},
          "fill_spans": {"text": texts},
          "encode_spans": {"text": texts, "span_starts": [[0, 9], [0, 4]],
                           "span_ends": [[8, 17], [3, 9]]},
      })
      report.note("saving the preprocessing model")
      writing.target = dirs[1]
      export_lib.save_with_warmup(pre, tmps[1], {
          "serving_default": {"text": texts},
          "encode_pair": {"text": texts, "text_pair": texts[::-1]},
      })
      # Preprocessing first: a model version that TF Serving sees has its
      # own.
      for tmp, export_dir in zip(tmps[::-1], dirs[::-1]):
        atomic_io.move_into_place(tmp, export_dir, overwrite=False)
        renamed.append(export_dir)
    except BaseException:
      # Only this export's own dirs: the claim makes them nobody else's.
      for path in tmps + renamed:
        atomic_io.remove_tree(path)
      raise
  report.done(f"export: wrote the model to {dirs[0]} and the preprocessing "
              f"to {dirs[1]} in {report.elapsed():.1f} s")
  return {"model": dirs[0], "preprocessing": dirs[1]}
