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

"""official_spanbert.utils: the helpers every layer shares, one of each.

  atomic_io.py     write to a temporary name, then rename (files and export
                   directories).
  cpu_features.py  what the CPU computes fast (bf16, FMA width, peak
                   FLOPs), from its flags; the cores a process may use.
  cpu_threads.py   TensorFlow's thread pools sized to a CPU quota.
  console.py       how much a console script prints (quiet by default, -v);
                   console.run wraps every command-line tool's main.
  progress.py      the one progress reporter: stage lines, steps with ETA.
  run_lock.py      one run per model_dir or output prefix (a lock file
                   naming its holder).
  write_errors.py  which write errors mean a full disk or a file too large.

Importing this package imports none of them (console.py is read before
TensorFlow is imported).
"""
