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

"""Exports a coreference model (spanbert/coref) for TF Serving.

Writes <export_base>/<version>/ with the `resolve` signature (also
`serving_default`) and `resolve_with_speakers` of serving/coref_module.py
and warmup requests in assets.extra/, claiming the version atomically as
serving/export_lib.py does.
"""

from typing import Dict, Optional

from official_spanbert.modeling import checkpoints
from official_spanbert.serving import coref_module
from official_spanbert.serving import export_lib
from official_spanbert.tasks import coreference

WARMUP_TEXTS = (
    "Elizabeth walked to the house of her sister. She found Jane reading.",
    "",
)


def load_model(params, checkpoint: str):
  """The task's CorefModel restored from a training checkpoint."""
  model = coreference.build_model(params.task.model)
  checkpoints.restore(model, checkpoint)
  return model


def export(model, vocab_file: str, export_base: str, *,
           lower_case: bool = False, max_segment_len: int = 384,
           predict_singletons: bool = False,
           max_wordpieces: int = coref_module.DEFAULT_MAX_WORDPIECES,
           max_num_speakers: int = 0,
           version: Optional[int] = None) -> Dict[str, str]:
  """Writes the coreference SavedModel; returns {"model": its dir}.

  Raises:
    export_lib.VersionTakenError: `version` exists or another export writes it.
  """
  module = coref_module.CorefServingModule(
      model, vocab_file, lower_case=lower_case,
      max_segment_len=max_segment_len, predict_singletons=predict_singletons,
      max_wordpieces=max_wordpieces, max_num_speakers=max_num_speakers)
  return export_lib.export_module(module, export_base, {
      "resolve": {"text": WARMUP_TEXTS[0]},
      "resolve_with_speakers": {"text": WARMUP_TEXTS[0], "genre": "bc",
                                "line_speakers": ["Elizabeth"]},
      "serving_default": {"text": WARMUP_TEXTS[1]},
  }, version=version, what="coreference model")


def export_from_params(params, checkpoint: str, export_base: str,
                       vocab_file: Optional[str] = None,
                       version: Optional[int] = None,
                       max_wordpieces: int = coref_module.DEFAULT_MAX_WORDPIECES
                       ) -> Dict[str, str]:
  """export() with the tokenizer, segment length and speaker ids of the task
  config."""
  data = params.task.validation_data
  vocab = export_lib.vocab_of(params, vocab_file)
  return export(load_model(params, checkpoint), vocab, export_base,
                lower_case=data.do_lower_case,
                max_segment_len=data.max_segment_len,
                max_num_speakers=data.max_num_speakers,
                predict_singletons=params.task.predict_singletons,
                max_wordpieces=max_wordpieces, version=version)
