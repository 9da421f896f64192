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

"""The served signatures' default input limits, one place (no TensorFlow:
the tools' --help reads them)."""

# The packed length of the pretraining and TF Hub exports' preprocessing
# (longer text is truncated).
SEQ_LENGTH = 128
# fill_spans: candidates per masked position, and [MASK] tokens predicted per
# text.
FILL_SPANS_TOP_K = 5
FILL_SPANS_MAX_MASKS = 20
# resolve: longer texts are refused. 24,000 words of technical prose are
# ~36,000 wordpieces; memory is linear in the length: a base-size model took
# +2,104 MB at 32,768 (benchmarks/bench_coref_memory.py, 2026-12-04).
COREF_MAX_WORDPIECES = 65536
# What resolve's memory grows by per 1,000 wordpieces, base size (the error
# message says what a larger limit costs).
COREF_MB_PER_1000_WORDPIECES_BASE = 64
# answer: a longer context is refused (~250,000 characters of English).
QA_MAX_CONTEXT_WORDPIECES = 65536
# extract_entities, encode_spans: a longer text is refused. Memory is linear
# in the length (the model reads MODEL_BATCH_WINDOWS windows at a time).
NER_MAX_WORDPIECES = 65536
# encode_spans of a pretrained encoder (no span task to say it): the widest
# span, in wordpieces (coreference's max_span_width).
SPAN_MAX_WIDTH = 30
