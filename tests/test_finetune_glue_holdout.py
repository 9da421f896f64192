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

"""finetune_glue --holdout_train_examples: a recipe is chosen on the last N
training lines, never on the dev set. The split keeps every example once,
in file order, and the task's header in both files."""

import pytest

from official_spanbert.data.finetuning import classification
from experiments import finetune_glue

COLA = ["gj04\t1\t\tThe cat sat.\n", "gj04\t0\t*\tCat the sat.\n",
        "ad03\t1\t\tA dog barked.\n", "ad03\t0\t*\tBarked dog a.\n"]
RTE = ["index\tsentence1\tsentence2\tlabel\n", "0\tA b.\tA.\tentailment\n",
       "1\tC d.\tE.\tnot_entailment\n", "2\tF g.\tF.\tentailment\n"]


@pytest.mark.parametrize("task,lines", [("cola", COLA), ("rte", RTE)])
def test_holdout_split_keeps_every_example_once(tmp_path, task, lines):
  source = tmp_path / "train.tsv"
  source.write_text("".join(lines) + "\n", encoding="utf-8")  # a blank end
  train, held = finetune_glue.holdout_split(task, str(source), 2,
                                            str(tmp_path / "split"))
  train_ex = classification.read_tsv(train, task)
  held_ex = classification.read_tsv(held, task)
  everything = classification.read_tsv(str(source), task)
  assert len(held_ex) == 2
  assert ([(e.text_a, e.label) for e in train_ex + held_ex] ==
          [(e.text_a, e.label) for e in everything])


def test_holdout_split_refuses_a_holdout_as_large_as_the_file(tmp_path):
  source = tmp_path / "train.tsv"
  source.write_text("".join(COLA), encoding="utf-8")
  with pytest.raises(ValueError, match="has 4 examples"):
    finetune_glue.holdout_split("cola", str(source), 4, str(tmp_path / "s"))
