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

r"""How many documents do the loader's training batches mix?

Writes records of a real corpus (in corpus order, as the tool does), maps
every block back to its document (the same tokenization and packing, in
order), then reads the first --batches training batches through
SpanBertPretrainDataLoader for each --buffers shuffle_buffer_size and counts
the distinct documents: per batch (mean) and over all the batches.

  .venv/bin/python -m benchmarks.bench_batch_mixing --work_dir /tmp/mixing \
      --corpus ../shared/data/corpus/linux-doc.txt --buffers 100 10000
  .venv/bin/python -m benchmarks.bench_batch_mixing --smoke   # seconds
"""

import argparse
import json
import os
import statistics
import tempfile

from benchmarks.common import DATA, SMOKE_CORPUS, SMOKE_VOCAB, parse_args
from benchmarks.common import report_rows


def block_documents(corpus: str, vocab_file: str, max_tokens: int):
  """{block ids as a tuple: document index}, packed as the tool packs."""
  from official_spanbert.data import tokenization  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining import corpus as corpus_lib  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import pretraining_records as pr  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import record_blocks  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import record_format  # pylint: disable=g-import-not-at-top
  tokenizer = tokenization.WordpieceTokenizer(vocab_file, lower_case=False)
  owner = {}
  docs = record_blocks.tokenize_documents(corpus_lib.read_documents([corpus]), tokenizer)
  for index, doc in enumerate(docs):
    for ids, _ in record_blocks.single_blocks(doc, max_tokens, record_format.Stats()):
      owner[tuple(int(i) for i in ids)] = index
  return owner


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--work_dir", default=None,
                  help="where the records go (default: a temporary folder)")
  ap.add_argument("--corpus",
                  default=os.path.join(DATA, "corpus", "linux-doc.txt"))
  ap.add_argument("--vocab", default=os.path.join(
      DATA, "vocab", "bert-base-cased-vocab.txt"))
  ap.add_argument("--seq_length", type=int, default=128)
  ap.add_argument("--batch_size", type=int, default=32)
  ap.add_argument("--batches", type=int, default=100)
  ap.add_argument("--num_shards", type=int, default=4)
  ap.add_argument("--buffers", type=int, nargs="+", default=[100, 10000])
  args = parse_args(ap, argv, smoke=dict(
      corpus=SMOKE_CORPUS, vocab=SMOKE_VOCAB, seq_length=64, batch_size=8,
      batches=4, num_shards=2, buffers=[1, 100]))
  with tempfile.TemporaryDirectory(prefix="batch_mixing_") as tmp:
    run(args, args.work_dir or tmp)


def run(args, work_dir):
  """Writes the records into work_dir and prints the rows."""
  import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.data.pretraining import pretrain_dataloader as pdl  # pylint: disable=g-import-not-at-top
  from official_spanbert.data.pretraining.records import pretraining_records as pr  # pylint: disable=g-import-not-at-top

  prefix = os.path.join(work_dir, "records", "train")
  stats = pr.create_pretraining_records(
      [args.corpus], args.vocab, prefix, max_seq_length=args.seq_length,
      num_shards=args.num_shards, progress=False)
  owner = block_documents(args.corpus, args.vocab, args.seq_length - 2)
  rows = []
  for buffer in args.buffers:
    params = pdl.SpanBertPretrainDataConfig(
        input_path=prefix + "-*.tfrecord", vocab_file=args.vocab,
        seq_length=args.seq_length, max_predictions_per_seq=20,
        global_batch_size=args.batch_size, is_training=True, seed=1,
        shuffle_buffer_size=buffer, masking_scheme="token")
    batches = pdl.SpanBertPretrainDataLoader(params).load(diagnostics=True)
    per_batch, seen, missing = [], set(), 0
    for batch in batches.take(args.batches):
      docs = set()
      for ids, mask in zip(batch["original_word_ids"].numpy(),
                           batch["input_mask"].numpy()):
        block = tuple(int(i) for i in ids[1:int(mask.sum()) - 1])
        if block in owner:
          docs.add(owner[block])
        else:
          missing += 1
      per_batch.append(len(docs))
      seen |= docs
    rows.append(dict(shuffle_buffer_size=buffer,
                     mean_documents_per_batch=round(
                         statistics.mean(per_batch), 2),
                     min_documents_per_batch=min(per_batch),
                     documents_in_first_batches=len(seen),
                     blocks_not_mapped=missing))
    print(json.dumps(rows[-1]), flush=True)
  print(json.dumps(dict(corpus=args.corpus, documents=stats.documents,
                        blocks=stats.blocks, shards=args.num_shards,
                        batch_size=args.batch_size, batches=args.batches,
                        rows=rows)))
  report_rows(rows, documents=stats.documents, blocks=stats.blocks,
              batches=args.batches, mapped_blocks=len(owner))


if __name__ == "__main__":
  main()
