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

r"""Writes the built-in demo corpus: Python standard library docstrings.

Needs no network and no data: it parses (never imports) the .py files of the
running interpreter's standard library and writes their docstring prose in
BERT corpus format, one module per document (see
official_spanbert.demo.corpus).

  spanbert-build-demo-corpus --output=demo_out/corpus.txt
"""

import sys

from absl import flags

from official_spanbert.utils import console
from official_spanbert.demo import corpus as demo_corpus

FLAGS = flags.FLAGS

flags.DEFINE_string("output", None, "Corpus file to write.")
flags.DEFINE_integer("max_documents", None,
                     "Stop after this many documents (default: all).")
flags.DEFINE_integer("max_bytes", None,
                     "Keep the file within this many bytes (default: no "
                     "limit).")
flags.DEFINE_string("stdlib_dir", None,
                    "Standard library to read (default: this interpreter's).")

flags.mark_flags_as_required(["output"])


def main(argv):
  if console.unexpected_arguments("build_demo_corpus", argv):
    return 2
  try:
    stats = demo_corpus.build_demo_corpus(
        FLAGS.output, max_documents=FLAGS.max_documents,
        max_bytes=FLAGS.max_bytes, stdlib_dir=FLAGS.stdlib_dir)
  except (ValueError, OSError) as e:
    sys.stderr.write(f"build_demo_corpus: error: {e}\n")
    return 1
  print(f"wrote {stats['documents']} documents, {stats['lines']} lines, "
        f"{stats['bytes'] / 1e6:.2f} MB to {stats['output']} from "
        f"{stats['files']} files of {stats['stdlib_dir']} in "
        f"{stats['seconds']:.1f} s")
  return 0


def run():
  console.run(main, tensorflow=False)


if __name__ == "__main__":
  run()
