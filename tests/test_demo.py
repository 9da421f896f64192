"""The `make demo` pipeline, end to end, on a short schedule."""

import os

from official_spanbert import demo


def test_demo_runs_end_to_end_and_fills_the_span(tmp_path):
  result = demo.run_demo(str(tmp_path), train_steps=6, vocab_size=3000)
  assert result["corpus"]["documents"] > 100
  assert os.path.exists(os.path.join(result["export"]["model"],
                                     "saved_model.pb"))
  assert os.path.exists(os.path.join(result["export"]["model"], "assets.extra",
                                     "tf_serving_warmup_requests"))
  # The default sentence has a two-token span: both get MLM and SBO top-5.
  assert [c["mask"] for c in result["candidates"]] == [1, 2]
  for c in result["candidates"]:
    assert len(c["mlm_top5"]) == 5 and len(c["sbo_top5"]) == 5
  assert set(result["eval"]) == {"mlm_loss", "sbo_loss",
                                 "masked_lm_accuracy", "sbo_accuracy"}
