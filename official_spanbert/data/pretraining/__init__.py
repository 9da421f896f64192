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

"""Pretraining data, in the order it flows.

  corpus.py               reads the text corpus (one sentence a line, blank
                          line between documents).
  vocab_builder.py        learns a WordPiece vocab from the corpus.
  span_tagging.py         named-entity / noun-phrase span tags (optional).
  packing.py              packs sentences into fixed-length blocks.
  records/                the records, written once, masked later:
    record_format.py        the records' features, shard names, stats files.
    record_blocks.py        tokenized documents -> single blocks / NSP pairs.
    records_output.py       the writers' filesystem and SIGTERM safety.
    pretraining_records.py  corpus -> unmasked TFRecord shards + metadata.
    beam_records.py         the same records on Apache Beam.
    records_check.py        records against the data config (vocab, layout,
                            length, unigram counts, shard count).
  masking/                masking the records on the fly:
    masking_config.py       the masking settings and their validation.
    span_sampler.py         which tokens to mask (the span sampling loop).
    masking.py              span masking (geometric / word / entity / phrase).
  pretrain_dataloader.py  the data config and the Model Garden data loader
                          that masks records on the fly.
  dummy_inputs.py         synthetic masked batches for `input_path: dummy`.
"""
