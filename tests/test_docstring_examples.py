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

"""The `Example:` blocks of the classes a user builds with, run.

A block is the lines indented under `Example:` in the docstring (3-6 lines,
Model Garden's and keras-hub's form). Each runs in a copy of its module's
namespace plus `tf`, `np`, `os`, `exp_factory`, `task_factory` and the
placeholders the examples name for a user's files: `vocab_file` (the
committed vocab excerpt), `records` (pretraining records written from the
committed prose slice), `hf_dir` (a one-layer Hugging Face BERT folder) and
`out_dir` (an empty folder).

  pytest tests/test_docstring_examples.py
"""

import importlib
import inspect
import json
import os
import re
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from official.core import exp_factory
from official.core import task_factory
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.data.pretraining.records import pretraining_records
from official_spanbert.interop import weight_map
from conftest import FIXTURES

OBJECTS = (
    "official_spanbert.modeling.span_boundary_head.SpanBoundaryHead",
    "official_spanbert.modeling.span_bert_pretrainer.SpanBertPretrainer",
    "official_spanbert.modeling.bits_dropout.BitsDropout",
    "official_spanbert.serving.text_preprocessor.TextPreprocessor",
    "official_spanbert.data.pretraining.masking.masking_config.MaskingConfig",
    "official_spanbert.data.pretraining.masking.masking.mask_batch",
    ("official_spanbert.data.pretraining.pretrain_dataloader."
     "SpanBertPretrainDataLoader"),
    "official_spanbert.interop.hf_to_tf.hf_to_tf",
    "official_spanbert.tasks.span_ner.SpanNerTask",
)
VOCAB = os.path.join(FIXTURES, "vocab_excerpt.txt")
_EXAMPLE = re.compile(r"^(\s*)Example:\s*$")


def example(obj) -> str:
  """The code under the `Example:` line of obj's docstring, dedented."""
  lines = inspect.getdoc(obj).splitlines()
  start = next(i for i, line in enumerate(lines) if _EXAMPLE.match(line))
  indent = len(_EXAMPLE.match(lines[start]).group(1))
  block = []
  for line in lines[start + 1:]:
    if line.strip() and len(line) - len(line.lstrip()) <= indent:
      break
    block.append(line)
  return textwrap.dedent("\n".join(block)).strip("\n")


def _resolve(dotted: str):
  module, _, name = dotted.rpartition(".")
  module = importlib.import_module(module)
  return module, getattr(module, name)


def _hf_dir(path) -> str:
  """A one-layer BERT as Hugging Face saves it (config, vocab, weights)."""
  from safetensors import numpy as st  # pylint: disable=g-import-not-at-top
  with open(VOCAB, encoding="utf-8") as f:
    vocab = sum(1 for _ in f)
  hidden, ffn, positions = 8, 16, 32
  config = dict(model_type="bert", architectures=["BertModel"],
                vocab_size=vocab, hidden_size=hidden, num_hidden_layers=1,
                num_attention_heads=2, intermediate_size=ffn,
                hidden_act="gelu", max_position_embeddings=positions,
                type_vocab_size=2, layer_norm_eps=1e-12)
  rows = {"word_embeddings": vocab, "position_embeddings": positions,
          "token_type_embeddings": 2, "intermediate": ffn}
  rng = np.random.default_rng(0)
  state = {}
  for e in weight_map.weight_map(1):
    if e.item != "encoder":
      continue
    key = e.hf_key
    out = next((n for part, n in rows.items() if part in key), hidden)
    if key.endswith("embeddings.weight"):
      shape = (out, hidden)
    elif key.endswith(".weight") and "LayerNorm" not in key:
      fan_in = ffn if key.endswith("output.dense.weight") and (
          "attention" not in key) else hidden
      shape = (out, fan_in)
    else:
      shape = (out,)
    state[key] = rng.normal(0, 0.02, shape).astype(np.float32)
  os.makedirs(path)
  st.save_file(state, os.path.join(path, "model.safetensors"))
  with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as f:
    json.dump(config, f)
  with open(VOCAB, encoding="utf-8") as src, open(
      os.path.join(path, "vocab.txt"), "w", encoding="utf-8") as dst:
    dst.write(src.read())
  return path


@pytest.fixture(scope="module")
def placeholders(tmp_path_factory):
  root = tmp_path_factory.mktemp("examples")
  prefix = str(root / "records")
  pretraining_records.create_pretraining_records(
      [os.path.join(FIXTURES, "austen_slice.txt")], VOCAB, prefix,
      max_seq_length=64, progress=False)
  return dict(vocab_file=VOCAB, records=prefix + "-*.tfrecord",
              hf_dir=_hf_dir(str(root / "hf")))


def test_the_extractor_takes_the_indented_block():
  def f():
    """Does f.

    Example:
      x = 1

      y = x + 1
    Returns:
      nothing.
    """
  assert example(f) == "x = 1\n\ny = x + 1"


@pytest.mark.unit
@pytest.mark.parametrize("dotted", OBJECTS, ids=lambda d: d.split(".")[-1])
def test_example_runs(dotted, placeholders, tmp_path):
  module, obj = _resolve(dotted)
  code = example(obj)
  assert 3 <= len([l for l in code.splitlines() if l.strip()]) <= 6, code
  namespace = dict(vars(module), tf=tf, np=np, os=os, exp_factory=exp_factory,
                   task_factory=task_factory, out_dir=str(tmp_path / "out"),
                   **placeholders)
  exec(compile(code, f"<{dotted} Example>", "exec"), namespace)  # pylint: disable=exec-used
