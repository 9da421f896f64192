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

"""Exports a span NER model (spanbert/span_ner, head `span`) for TF Serving.

Writes <export_base>/<version>/ with `extract_entities` (also
`serving_default`) and `encode_spans` of serving/ner_module.py, the run's
tokenizer and windows, and warmup requests in assets.extra/, claiming the
version atomically as serving/export_lib.py does.

Example:
  export_from_params(params, "/runs/ner/best_ckpt", "/models/ner")
"""

from typing import Dict, Optional


from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib
from official_spanbert.serving import ner_module
from official_spanbert.serving import span_encoder_module
from official_spanbert.tasks import span_ner

WARMUP_TEXTS = ("Mr. Bennet walked to the house in Meryton.\nHe smiled.", "")
WARMUP = {
    "extract_entities": {"text": list(WARMUP_TEXTS)},
    "encode_spans": {"text": list(WARMUP_TEXTS),
                     "span_starts": [[0, 4], [-1, -1]],
                     "span_ends": [[10, 10], [-1, -1]]},
    "serving_default": {"text": list(WARMUP_TEXTS)},
}


def load_model(params, checkpoint: Optional[str]):
  """The task's SpanNerModel, restored from `checkpoint` if one is given.

  Raises:
    ValueError: the run's head is `flat` (a BIO tagger has no spans).
  """
  if params.task.model.head != "span":
    raise ValueError(
        f"extract_entities serves the span head; this run's task.model.head "
        f"is {params.task.model.head!r}")
  model = span_ner.SpanNerTask(params.task).build_model()
  if checkpoint:
    checkpoints.restore(model, checkpoint)
  return model


def export_from_params(params, checkpoint: str, export_base: str, *,
                       vocab_file: Optional[str] = None,
                       version: Optional[int] = None,
                       max_wordpieces: int = (
                           span_encoder_module.DEFAULT_MAX_WORDPIECES)
                       ) -> Dict[str, str]:
  """Writes the SavedModel with the tokenizer and windows of the task's
  validation data; returns {"model": its dir}."""
  data = params.task.validation_data
  module = ner_module.SpanNerServingModule(
      load_model(params, checkpoint), export_lib.vocab_of(params, vocab_file),
      lower_case=data.do_lower_case, seq_length=data.seq_length,
      max_wordpieces=max_wordpieces)
  return export_lib.export_module(module, export_base, WARMUP,
                                  version=version, what="span NER model")
