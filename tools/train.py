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

r"""SpanBERT training binary (spanbert-train): registers the experiments and
runs official_spanbert.training.train_lib.main, as Model Garden's
official/projects/teams/train.py runs official/nlp/train.py's.

  spanbert-train --experiment=spanbert/pretraining \
    --config_file=models/base.yaml \
    --params_override='task.train_data.input_path=/data/train-*.tfrecord,...' \
    --mode=train --model_dir=/tmp/spanbert

What a run does around Model Garden's runner (the model_dir lock, checkpoint
recovery, the divergence bound, one-line errors) is told in
docs/pretraining.md, "Running".
"""

import sys

from official_spanbert.training import release
from official_spanbert.training import train_flags
from official_spanbert.utils import console


def main(argv):
  # Imported once the flags are parsed: --help does not load TensorFlow.
  # The binary registers the experiments, as Model Garden's train.py does.
  # pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert import registry_imports  # noqa: F401
  from official_spanbert.training import train_lib
  # pylint: enable=g-import-not-at-top,unused-import
  return train_lib.main(argv)


def run():
  """The console script: flags, then train_lib.main with one-line errors.
  Once TensorFlow has run, the process then ends with main's exit status
  and without the interpreter's teardown (training/release.py's exit_now:
  everything is written by then; the teardown would take 5-20 s and can
  abort inside TensorFlow's threads)."""
  train_flags.define_flags()
  try:
    console.run(main)
  except SystemExit as done:  # absl's app.run ends with sys.exit
    if "tensorflow" not in sys.modules:  # --help, a flag error: no teardown
      raise
    release.exit_now(done.code)


if __name__ == "__main__":
  run()
