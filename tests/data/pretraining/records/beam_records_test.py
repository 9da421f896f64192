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

"""The Apache Beam records pipeline against the single-process tool.

On the same real text both must hold the same multiset of blocks (decoded),
the same stats (timings aside) and the same wordpiece counts, and the loader
must read the Beam shards. Skipped without apache_beam (the `beam` extra).
"""

import glob
import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from official.nlp.data import data_loader_factory
from official_spanbert.data.pretraining.records import beam_records
from official_spanbert.data.pretraining import corpus
from official_spanbert.data.pretraining import pretrain_dataloader
from official_spanbert.data.pretraining.records import pretraining_records as pr
from official_spanbert.data.pretraining.records import record_format
from conftest import TOOLS, data_path, first_lines

pytest.importorskip("apache_beam")

TOOL = os.path.join(TOOLS, "create_pretraining_data.py")
TIMINGS = ("seconds", "mb_per_second", "tokens_per_second",
           "words_per_second")
# Which shard a block lands in is Beam's (see beam_records.py).
SHARD_SPLIT = ("shard_bytes", "shard_records")
SEQ = 64


def untimed(stats_path):
  with open(stats_path) as f:
    return {k: v for k, v in json.load(f).items()
            if k not in TIMINGS + SHARD_SPLIT}


def assert_same_output(single, beam):
  got, want = (record_format.block_multiset(beam),
               record_format.block_multiset(single))
  assert sum(want.values()) > 10
  assert got == want, (sum(got.values()), sum(want.values()))
  stats = untimed(beam + ".stats.json")
  assert stats == untimed(single + ".stats.json")
  with open(beam + ".stats.json") as f:
    sizes = json.load(f)["shard_bytes"]
  assert sizes == {record_format.shard_name(p): os.path.getsize(p)
                   for p in record_format.existing_shards(beam)}
  with open(beam + record_format.COUNTS_SUFFIX) as a, open(
      single + record_format.COUNTS_SUFFIX) as b:
    assert json.load(a) == json.load(b)
  return stats


def test_beam_matches_single_process_and_loads(prose_slice, small_vocab,
                                               tmp_path):
  """DirectRunner (in-process) vs the single-process tool on the Austen
  slice at seq 64 (long lines split), 3 shards; the loader masks the Beam
  records."""
  single, beam = str(tmp_path / "single"), str(tmp_path / "beam")
  pr.create_pretraining_records([prose_slice], small_vocab, single,
                                max_seq_length=SEQ, num_shards=3,
                                progress=False)
  got = beam_records.create_pretraining_records(
      [prose_slice], small_vocab, beam, max_seq_length=SEQ, num_shards=3,
      pipeline_args=["--runner=DirectRunner"])
  stats = assert_same_output(single, beam)
  assert stats["split_lines"] > 0 and stats["shards"] == 3
  assert got.blocks == stats["blocks"]
  assert sorted(glob.glob(beam + "-*")) == record_format.shard_paths(beam, 3)
  assert not glob.glob(str(tmp_path / "beam-temp*"))
  params = pretrain_dataloader.SpanBertPretrainDataConfig(
      input_path=beam + "-*.tfrecord", vocab_file=small_vocab,
      seq_length=SEQ, max_predictions_per_seq=10, global_batch_size=4,
      is_training=False, seed=1)
  batch = next(iter(data_loader_factory.get_data_loader(params).load()))
  assert batch["input_word_ids"].shape == (4, SEQ)
  assert int(tf.reduce_sum(batch["masked_lm_weights"])) > 0


def test_beam_errors_are_the_tools(small_vocab, tmp_path):
  """A decoding error inside a worker comes back as the corpus error, and
  the failed run leaves no shard and (issue 39, fault 9) no beam-temp-*
  folder, neither its own nor that of a killed earlier run."""
  bad = tmp_path / "bad.txt"  # past the head check_heads reads
  bad.write_bytes(b"good line\n" * 7000 + b"\xff\xfe bad\n")
  killed = tmp_path / ("beam-temp-o-" + "0123456789abcdef" * 2)
  killed.mkdir()
  with pytest.raises(corpus.CorpusError, match="bad.txt:7001: invalid UTF-8"):
    beam_records.create_pretraining_records(
        [str(bad)], small_vocab, str(tmp_path / "o"),
        pipeline_args=["--runner=DirectRunner"])
  assert not glob.glob(str(tmp_path / "o-*"))
  assert not glob.glob(str(tmp_path / "beam-temp-*"))


@pytest.mark.parametrize("content,message", [
    (b"", r"empty.txt: file is empty \(no text on any of its 0 lines\)"),
    (b" \n\n", r"empty.txt: file is empty \(no text on any of its 2 lines\)"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00"
     b"\x01\x00\x00\x00\x80\xcc", r"empty.txt:1: invalid UTF-8 \(byte 0x80"),
])
def test_beam_refuses_empty_and_binary_input_before_the_pipeline(
    small_vocab, tmp_path, monkeypatch, content, message):
  """Issue 39, fault 8: found after 208-219 s of runner startup before."""
  path = tmp_path / "empty.txt"
  path.write_bytes(content)
  monkeypatch.setattr(beam_records, "build_pipeline", None)  # not reached
  with pytest.raises(corpus.CorpusError, match=message):
    beam_records.create_pretraining_records(
        [str(path)], small_vocab, str(tmp_path / "o"),
        pipeline_args=["--runner=DirectRunner"])


def test_cli_direct_runner_two_workers(cased_vocab, tmp_path):
  """`spanbert-create-pretraining-data --runner=DirectRunner` with two
  workers on two real corpora == the single-process tool. (Threads: worker
  processes would each start TF, ~10 s; benchmarks/bench_beam_records.py
  checks the multi_processing output the same way.)"""
  files = [first_lines(data_path("corpus", n), 60_000, str(tmp_path / n))
           for n in ("austen.txt", "linux-doc.txt")]
  single, beam = str(tmp_path / "single"), str(tmp_path / "beam")
  pr.create_pretraining_records(files, cased_vocab, single,
                                max_seq_length=SEQ, num_shards=2,
                                progress=False)
  proc = subprocess.run(
      [sys.executable, TOOL, "--runner=DirectRunner",
       "--direct_num_workers=2", "--direct_running_mode=multi_threading",
       f"--input_file={','.join(files)}",
       f"--vocab_file={cased_vocab}", f"--output_prefix={beam}",
       f"--max_seq_length={SEQ}", "--num_shards=2"],
      capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert "wrote " in proc.stdout
  stats = assert_same_output(single, beam)
  assert stats["files"] == 2 and stats["documents"] > 2


def test_nul_bearing_lines_are_whitespace_in_both_pipelines(prose_slice,
                                                            small_vocab,
                                                            tmp_path):
  """NUL bytes inside lines (issue 48's probe): Beam and the single-process
  tool write the same blocks, and those of the text with spaces there."""
  with open(prose_slice, encoding="utf-8") as f:
    lines = f.read().split("\n")
  nul = tmp_path / "nul.txt"
  nul.write_text("\n".join(l.replace(" the ", " the\x00") for l in lines),
                 encoding="utf-8")
  spaced = tmp_path / "spaced.txt"
  spaced.write_text("\n".join(l.replace(" the ", " the ") for l in lines),
                    encoding="utf-8")
  assert nul.read_text(encoding="utf-8").count("\x00") > 20
  out = {}
  for name, path in (("single", nul), ("spaced", spaced)):
    out[name] = str(tmp_path / name)
    pr.create_pretraining_records([str(path)], small_vocab, out[name],
                                  max_seq_length=SEQ, num_shards=2,
                                  progress=False)
  out["beam"] = str(tmp_path / "beam")
  beam_records.create_pretraining_records(
      [str(nul)], small_vocab, out["beam"], max_seq_length=SEQ, num_shards=2,
      pipeline_args=["--runner=DirectRunner"])
  assert_same_output(out["single"], out["beam"])
  assert (record_format.block_multiset(out["single"]) ==
          record_format.block_multiset(out["spaced"]))


def test_invalid_utf8_lines_replaced_alike_in_both_pipelines(prose_slice,
                                                             small_vocab,
                                                             tmp_path):
  """on_decode_error=replace: Beam and the single-process tool substitute
  U+FFFD alike (strict mode's one-line error is test_beam_errors_are_the_tools)."""
  with open(prose_slice, "rb") as f:
    raw = f.read().split(b"\n")
  bad = tmp_path / "bad.txt"
  bad.write_bytes(b"\n".join(l + (b" \xff\xfe here" if i % 5 == 1 else b"")
                             for i, l in enumerate(raw)))
  single, beam = str(tmp_path / "single"), str(tmp_path / "beam")
  pr.create_pretraining_records([str(bad)], small_vocab, single,
                                max_seq_length=SEQ, num_shards=2,
                                progress=False, on_decode_error="replace")
  beam_records.create_pretraining_records(
      [str(bad)], small_vocab, beam, max_seq_length=SEQ, num_shards=2,
      pipeline_args=["--runner=DirectRunner"], on_decode_error="replace")
  assert_same_output(single, beam)
