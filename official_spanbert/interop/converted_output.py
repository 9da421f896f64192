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

  <out>/bert_model.ckpt.*  tf.train.Checkpoint of the model's `items`
  <out>/checkpoint         so that <out> itself is a checkpoint directory
  <out>/params.yaml        the params override (task.model)
  <out>/vocab.txt          a copy of the source's vocab
  <out>/conversion.json    what was converted, from where

  prefix, files = write(model, ["encoder", "masked_lm"], out, params,
                        vocab_src, {"direction": "hf_to_tf", ...}, header)
"""

import json
import os
import shutil
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import tensorflow as tf
import yaml

from official.nlp.configs import encoders
from official_spanbert.interop import hf_files
from official_spanbert.interop import progress as progress_lib
from official_spanbert.interop import weight_map


def params_dict(encoder_config: encoders.EncoderConfig,
                mlm_activation: str, **model) -> Dict[str, Any]:
  """The params override (task.model) for a converted encoder; `model` adds
  other task.model fields (e.g. use_sbo, max_sbo_targets)."""
  return {"task": {"model": {
      "encoder": {"type": encoder_config.type,
                  encoder_config.type: encoder_config.get().as_dict()},
      "mlm_activation": mlm_activation, **model}}}


def write(model, items: Sequence[str], output_dir: str,
          params: Mapping[str, Any], vocab_src: str,
          metadata: Dict[str, Any], header: str,
          report: progress_lib.Progress) -> Tuple[str, List[str]]:
  """Writes the files above; returns (checkpoint prefix, files written).

  `header` is the params.yaml comment naming the source; metadata gets
  "items" and "checkpoint" added.
  """
  os.makedirs(output_dir, exist_ok=True)
  prefix = os.path.join(output_dir, hf_files.CHECKPOINT_NAME)
  report.note(f"writing {prefix}")
  tf.train.Checkpoint(**weight_map.checkpoint_items(model, items)).write(
      prefix)
  with open(os.path.join(output_dir, "checkpoint"), "w", encoding="utf-8") as f:
    f.write(f'model_checkpoint_path: "{hf_files.CHECKPOINT_NAME}"\n'
            f'all_model_checkpoint_paths: "{hf_files.CHECKPOINT_NAME}"\n')
  with open(os.path.join(output_dir, hf_files.PARAMS_FILE), "w",
            encoding="utf-8") as f:
    f.write(f"# {header}: a params override for the\n# SpanBERT experiments. "
            f"Use task.init_checkpoint={prefix}.\n")
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
  return prefix, written
