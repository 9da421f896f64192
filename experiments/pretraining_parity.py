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


r"""Pretraining parity with Hugging Face: one command, a module per mode.

  --mode=lockstep        experiments/pretraining_lockstep.py: the package's
                         step and HF's on the same batches and weights
  --mode=curves, report  experiments/pretraining_curves.py: learning curves of
                         each side as its users run it, and their table
  --mode=speed           experiments/pretraining_speed.py: step times side by
                         side (package float32 / bf16 / XLA, HF, Model Garden)
  --mode=profile         experiments/pretraining_profile.py: where the bf16
                         step's CPU time goes (TF profiler / torch.profiler)

The shared data and params are in pretraining_common.py, the PyTorch side in
pretraining_torch.py. Every other flag goes to the mode's module:

  .venv/bin/python -m experiments.pretraining_parity --mode=lockstep \
      --work_dir /work/runs/pp --steps 300 --output_json /tmp/lockstep.json
  .venv/bin/python -m experiments.pretraining_parity --mode=speed \
      --sizes demo base --threads 1
"""

import argparse
import importlib
import sys

MODES = {"lockstep": "experiments.pretraining_lockstep",
         "curves": "experiments.pretraining_curves",
         "report": "experiments.pretraining_curves",
         "speed": "experiments.pretraining_speed",
         "profile": "experiments.pretraining_profile"}


def main(argv=None):
  # A binary registers the experiments (library modules do not).
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  argv = sys.argv[1:] if argv is None else argv
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                               add_help=False)
  ap.add_argument("--mode", choices=list(MODES), required=True)
  args, _ = ap.parse_known_args(argv)
  importlib.import_module(MODES[args.mode]).main(argv)


if __name__ == "__main__":
  main()
