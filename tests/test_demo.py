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

"""The `make demo` pipeline, end to end, on a short schedule."""

import os

from official_spanbert import demo


def test_demo_runs_end_to_end_and_fills_the_span(tmp_path):
  result = demo.run_demo(str(tmp_path), train_steps=6, vocab_size=3000)
  assert result["corpus"]["documents"] > 100
  assert result["corpus"]["heldout_documents"] >= 5
  # Stage 3 wrote both parts' records (pipeline.prepare_data).
  for part in ("train", "heldout"):
    assert result["records"][part]["blocks"] > 0
  # 19 of every 20 documents are training text.
  assert (result["records"]["train"]["tokens"] >
          5 * result["records"]["heldout"]["tokens"])
  assert os.path.exists(os.path.join(result["export"]["model"],
                                     "saved_model.pb"))
  assert os.path.exists(os.path.join(result["export"]["model"], "assets.extra",
                                     "tf_serving_warmup_requests"))
  # The default sentence has one [MASK]: it gets MLM and SBO top-5.
  assert [c["mask"] for c in result["candidates"]] == [1]
  for c in result["candidates"]:
    assert len(c["mlm_top5"]) == 5 and len(c["sbo_top5"]) == 5
  assert set(result["eval"]) == {"mlm_loss", "sbo_loss",
                                 "masked_lm_accuracy", "sbo_accuracy"}
  # Held-out accuracy is measured on the same masked blocks before and after.
  for metrics in (result["before"], result["after"]):
    assert 0.0 <= metrics["masked_lm_accuracy"] <= 1.0
  assert result["before"]["mlm_loss"] != result["after"]["mlm_loss"]
  assert len(result["heldout_fills"]) == 4
  for fill in result["heldout_fills"]:
    assert fill["masked"].count("[MASK]") == 1
    assert fill["word"] not in fill["masked"].split()
    assert len(fill["mlm_top5"]) == 5
  with open(result["loss_curves"], "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
