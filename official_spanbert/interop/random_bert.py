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

"""A random BERT in Hugging Face's layout, for smoke runs and tests."""

import os
import shutil
from typing import Optional

import tensorflow as tf
import yaml

from official_spanbert.data import tokenization
from official_spanbert import interop
from official_spanbert.modeling import span_bert_pretrainer


def write(work: str, vocab: str, seed: int, *, hidden_size: int = 32,
          heads: bool = True, lower_case: Optional[bool] = None) -> str:
  """A random 1-layer BERT (hidden `hidden_size`) with `vocab`, in
  <work>/tiny_bert; heads=False leaves out the MLM head (a sentence
  encoder's layout). Returns the directory."""
  config = interop.HFBertConfig(
      vocab_size=tokenization.load_vocab(vocab).size, hidden_size=hidden_size,
      num_hidden_layers=1, num_attention_heads=2,
      intermediate_size=2 * hidden_size)
  encoder, activation = config.encoder_config(), config.tf_activation
  tf.keras.utils.set_random_seed(seed)
  model = interop.build_model(encoder, activation, use_next_sentence=False)
  model(span_bert_pretrainer.dummy_inputs(1, 8, 4))
  src = os.path.join(work, "tiny_tf")
  os.makedirs(src, exist_ok=True)
  items = (model.checkpoint_items if heads
           else {"encoder": model.encoder_network})
  prefix = tf.train.Checkpoint(**items).write(os.path.join(src, "ckpt"))
  with open(os.path.join(src, interop.PARAMS_FILE), "w",
            encoding="utf-8") as f:
    yaml.safe_dump(interop.params_dict(encoder, activation), f)
  shutil.copyfile(vocab, os.path.join(src, interop.VOCAB_FILE))
  out = os.path.join(work, "tiny_bert")
  interop.tf_to_hf(prefix, out, interop.ConversionOptions(
      lower_case=lower_case, overwrite=True, progress=False))
  return out
