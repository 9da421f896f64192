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

"""Model Garden's sentence-prediction loader, each batch cut to its longest row.

The records are padded to `seq_length`; with `trim_batch_padding` every batch
is cut to the longest row it holds (columns that are padding in every row
are dropped), so the encoder computes no attention or feed-forward on them.
Outputs at the kept positions are those of the padded batch (padding is
masked either way). SemEval-2010 Task 8 at seq_length 128: a median of 26
wordpieces, so most of a padded batch's columns are padding.

Example:
  config = ClassificationDataConfig(input_path="train.tf_record",
                                    seq_length=128, trim_batch_padding=True)
  dataset = ClassificationDataLoader(config).load()  # [32, <= 128] a batch
"""

import dataclasses
from typing import Optional

import tensorflow as tf

from official.common import dataset_fn
from official.core import input_reader
from official.nlp.data import data_loader_factory
from official.nlp.data import sentence_prediction_dataloader as loader_lib
from official_spanbert.data import batch_trimming


@dataclasses.dataclass
class ClassificationDataConfig(loader_lib.SentencePredictionDataConfig):
  """SentencePredictionDataConfig plus `trim_batch_padding`.

  Attributes:
    trim_batch_padding: cut each batch to its longest row (input_mask).
  """
  trim_batch_padding: bool = False


# The batch's sequence tensors cut to its longest row's length (input_mask).
trim_batch = batch_trimming.trim_batch


@data_loader_factory.register_data_loader_cls(ClassificationDataConfig)
class ClassificationDataLoader(loader_lib.SentencePredictionDataLoader):
  """SentencePredictionDataLoader with ClassificationDataConfig's options."""

  def load(self, input_context: Optional[tf.distribute.InputContext] = None):
    """Returns a tf.data.Dataset of batches (trimmed if so configured)."""
    reader = input_reader.InputReader(
        dataset_fn=dataset_fn.pick_dataset_fn(self._params.file_type),
        params=self._params, decoder_fn=self._decode, parser_fn=self._parse,
        postprocess_fn=(trim_batch if self._params.trim_batch_padding
                        else None))
    return reader.read(input_context)
