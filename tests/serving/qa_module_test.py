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

"""serving/qa_module.py: `answer` of a request with no question (issue 55,
item 7): TensorFlow's `strided_slice … slice index 0 of dimension 1 out of
bounds` instead of an answer of no rows. Through a saved and loaded
SavedModel, as a server runs it.
"""

import os

import pytest
import tensorflow as tf

from official_spanbert import registry_imports  # noqa: F401
from test_qa_export import shared_qa_export

_NO_TEXT = tf.constant([], tf.string)


@pytest.fixture(scope="module")
def answer(small_vocab, tmp_path_factory):
  """`answer` of test_qa_export.py's export (QuestionAnsweringModule of a
  random squad_v2 model, written once a run), loaded."""
  path = os.path.join(shared_qa_export(tmp_path_factory, small_vocab),
                      "export", "1")
  return tf.saved_model.load(path).signatures["answer"]


def test_answer_of_no_question_is_an_empty_answer(answer):
  out = answer(question=_NO_TEXT, context=_NO_TEXT)
  assert sorted(out) == ["answer_end", "answer_start", "answer_text",
                         "has_answer", "score"]
  assert all(v.shape == [0] for v in out.values()), out
  assert out["answer_start"].dtype == tf.int32
  one = answer(question=tf.constant(["Who smiled?"]),
               context=tf.constant(["Mr. Bennet smiled."]))
  assert one["answer_text"].shape == [1]
