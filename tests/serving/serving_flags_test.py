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

"""serving/serving_flags.py: --serving_params and the older flags as its
aliases."""

import pytest

from official_spanbert.serving import serving_flags

TABLE = {"precision": ("precision", None),
         "qa_max_context_wordpieces": ("max_context_wordpieces", "answer"),
         "coref_max_wordpieces": ("max_wordpieces", "resolve")}


@pytest.mark.parametrize("text", [
    "max_context_wordpieces=8192,precision=bfloat16",
    '{"max_context_wordpieces": 8192, "precision": "bfloat16"}',
    "max_context_wordpieces: 8192\nprecision: bfloat16",
])
def test_yaml_json_and_key_value_pairs_give_the_same_params(text):
  assert serving_flags.serving_params(text, {}, TABLE, ("answer",)) == {
      "max_context_wordpieces": 8192, "precision": "bfloat16"}


def test_an_alias_flag_sets_its_field():
  assert serving_flags.serving_params(
      None, {"qa_max_context_wordpieces": 40}, TABLE, ("answer",)) == {
          "max_context_wordpieces": 40}
  assert serving_flags.serving_params(
      "max_context_wordpieces=40", {"qa_max_context_wordpieces": 40}, TABLE,
      ("answer",)) == {"max_context_wordpieces": 40}


def test_an_alias_of_another_tasks_export_is_one_line():
  with pytest.raises(ValueError, match=(
      r"^--coref_max_wordpieces is for exports serving resolve; this run's "
      r"serves answer$")):
    serving_flags.serving_params(None, {"coref_max_wordpieces": 9}, TABLE,
                                 ("answer",))


def test_an_alias_and_serving_params_that_disagree_are_refused():
  with pytest.raises(ValueError, match=r"^--precision=float32 and "
                     r"--serving_params precision=bfloat16 disagree"):
    serving_flags.serving_params("precision=bfloat16",
                                 {"precision": "float32"}, TABLE, ("answer",))


@pytest.mark.parametrize("text", ["[1, 2]", "just words"])
def test_serving_params_that_are_no_mapping_are_one_line(text):
  with pytest.raises(ValueError, match=r"^--serving_params .* (is not a "
                     r"mapping|is neither)"):
    serving_flags.serving_params(text, {}, TABLE, ("answer",))
