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

"""Fine-tuning data.

  squad_examples.py     SQuAD v1.1/v2.0 JSON -> validated examples.
  squad.py              SQuAD examples -> features and TFRecords.
  squad_predictions.py  start/end logits -> answer texts (post-processing).
  classification.py     GLUE sentence (pair) readers and encoding.
  tacred.py             TACRED relation records, entity masking.
  classification_records.py  GLUE / TACRED records and their meta JSON.
  coref.py              CoNLL-2012 documents -> coreference segments, records.
  json_file.py          reading JSON input files (SQuAD, TACRED).
"""
