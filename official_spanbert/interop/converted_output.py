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

"""What every import writes: our checkpoint, params, vocab and metadata.

`bert_model.ckpt.*`, `checkpoint`, `params.yaml`, `vocab.txt` and
`conversion.json` (docs/interop.md).
"""

import json
import os
import shutil
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import tensorflow as tf
import yaml

from official.nlp.configs import encoders
from official_spanbert.interop import hf_files
from official_spanbert.interop import output_dir as output_dir_lib
from official_spanbert.interop import conversion_report
from official_spanbert.interop import sbo_map
from official_spanbert.interop import weight_map


def params_dict(encoder_config: encoders.EncoderConfig,
                mlm_activation: str, **model) -> Dict[str, Any]:
  """The params override (task.model) for a converted encoder; `model` adds
  other task.model fields (e.g. use_sbo, max_sbo_targets)."""
  return {"task": {"model": {
      "encoder": {"type": encoder_config.type,
                  encoder_config.type: encoder_config.get().as_dict()},
      "mlm_activation": mlm_activation, **model}}}


def write(model, items: Sequence[str], out: output_dir_lib.Output,
          params: Mapping[str, Any], vocab_src: str,
          metadata: Dict[str, Any], header: str,
          report: conversion_report.ConversionProgress
          ) -> Tuple[str, List[str]]:
  """Writes the files above into out.staging; returns (the checkpoint prefix
  in the output, the files written into out.staging).

  `header` is the params.yaml comment naming the source; metadata gets
  "items" and "checkpoint" added.
  """
  output_dir = out.staging
  final = os.path.join(out.path, hf_files.CHECKPOINT_NAME)
  prefix = os.path.join(output_dir, hf_files.CHECKPOINT_NAME)
  report.note(f"writing {final}")
  tf.train.Checkpoint(**weight_map.checkpoint_items(model, items)).write(
      prefix)
  with open(os.path.join(output_dir, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(f'model_checkpoint_path: "{hf_files.CHECKPOINT_NAME}"\n'
            f'all_model_checkpoint_paths: "{hf_files.CHECKPOINT_NAME}"\n')
  with open(os.path.join(output_dir, hf_files.PARAMS_FILE), "w",
            encoding="utf-8") as f:
    f.write(f"# {header}: a params override for the\n# SpanBERT experiments. "
            f"Use task.init_checkpoint={final}.\n")
    yaml.safe_dump(dict(params), f, sort_keys=False)
  vocab_dst = os.path.join(output_dir, hf_files.VOCAB_FILE)
  if os.path.abspath(vocab_src) != os.path.abspath(vocab_dst):
    shutil.copyfile(vocab_src, vocab_dst)
  with open(os.path.join(output_dir, hf_files.CONVERSION_FILE), "w",
            encoding="utf-8") as f:
    json.dump({**metadata, "items": list(items),
               "checkpoint": hf_files.CHECKPOINT_NAME}, f, indent=2)
  written = tf.io.gfile.glob(prefix + ".*") + [
      os.path.join(output_dir, name) for name in (
          "checkpoint", hf_files.PARAMS_FILE, hf_files.VOCAB_FILE,
          hf_files.CONVERSION_FILE)]
  return final, written


def result(direction: str, output_dir: str, items: Sequence[str],
           num_layers: int, with_sbo: bool, written: Sequence[str],
           **fields) -> conversion_report.ConversionResult:
  """The ConversionResult of an import through weight_map (and sbo_map, if
  `with_sbo`): its tensors counted, the size of the files `written`."""
  return conversion_report.ConversionResult(
      output=output_dir, items=list(items), direction=direction,
      tensors=len([e for e in weight_map.weight_map(num_layers)
                   if e.item in items]) + (
                       len(sbo_map.ENTRIES) if with_sbo else 0),
      bytes_written=hf_files.files_size(written), **fields)
