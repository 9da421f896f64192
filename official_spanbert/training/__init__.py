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

"""official_spanbert.training: the runtime behind `spanbert-train`.

  train_lib.py            run(): Model Garden's experiment runner for every
                          mode, with the model_dir guard (lock, checkpoint
                          recovery, params.yaml), the divergence bound and the
                          eval-summary choice; main() and the flags of the
                          binary (tools/train.py).
  trainer.py              SpanBertTrainer: examples/s, progress with ETA,
                          typed divergence (TrainingDivergedError).
  checkpoint_recovery.py  resume from the newest intact ckpt-N; broken ones
                          moved aside, partial saves removed.
  best_checkpoint.py      the best checkpoint and its info.json kept a pair
                          when their export is interrupted.
  config_check.py         config values and types checked before a run; which
                          errors are configuration errors (one-line exits).
  device_check.py         logs the devices; refuses GPUs that are not there.
  precision_check.py      warns when runtime.mixed_precision_dtype has no
                          fast path on the devices (bf16 on an AVX2 CPU).

The helpers it shares with the data writers, the exporters and the tools
(run_lock, progress, console, write_errors) are in official_spanbert/utils/.
"""
