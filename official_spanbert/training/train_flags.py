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

"""spanbert-train's flags: Model Garden's (official/common/flags.py) and ours.

Apart from train_lib, so that `spanbert-train --help` imports neither
TensorFlow nor Model Garden's tasks.
"""

from absl import flags

from official.common import flags as tfm_flags


def define_flags():
  """Defines the flags of spanbert-train (once per process)."""
  tfm_flags.define_flags()
  flags.DEFINE_bool(
      "enable_async_checkpointing", False,
      "Save checkpoints in the background (Model Garden's async "
      "checkpointing; official/nlp/train.py defaults it to True).")
  flags.DEFINE_integer(
      "pretrain_steps", None,
      "continuous_train_and_eval: the pretraining run's last step; until a "
      "checkpoint of that step was fine-tuned, keep waiting for new ones.")
  flags.DEFINE_string(
      "eval_summary_dir", None,
      "eval, continuous_eval: write the evaluation summaries here instead of "
      "<model_dir>/validation (default: none when model_dir is read-only).")
  flags.mark_flags_as_required(["experiment", "mode", "model_dir"])
