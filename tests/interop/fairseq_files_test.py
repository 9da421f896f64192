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

"""What the fairseq converter refuses to read, and says why.

A model.pt that would run code when unpickled, NaN weights, a missing
bert_config.json, and files that are no model.pt (a Git LFS pointer, the
release's .tar.gz) are one-line errors naming the file
(interop/fairseq_files.py).
"""

import io
import json
import os
import re
import tarfile

import pytest

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from official_spanbert import interop as hc  # noqa: E402
from fairseq_to_tf_test import _run_tool  # noqa: E402
from fairseq_to_tf_test import reference  # noqa: E402,F401  pylint: disable=unused-import


class _RunsCode:
  def __reduce__(self):
    return (os.getcwd, ())  # harmless, but a call: pickle could run anything


def test_a_file_that_would_run_code_is_refused(reference, small_vocab,
                                               tmp_path):
  d, _, _ = reference
  state = torch.load(d / "model.pt", weights_only=True)
  torch.save({"model": state, "extra": _RunsCode()}, tmp_path / "model.pt")
  with pytest.raises(hc.ConversionError,
                     match=r"model\.pt needs posix\.getcwd to load, which "
                     r"could run code; refused"):
    hc.fairseq_to_tf(str(tmp_path / "model.pt"), str(tmp_path / "out"),
                     hc.ConversionOptions(vocab_file=small_vocab,
                                          progress=False))


def test_nan_weights_are_refused_naming_the_tensor(reference, small_vocab,
                                                  tmp_path):
  """Issue 48 item 6: a model.pt with NaN weights converted silently."""
  d, _, _ = reference
  state = torch.load(d / "model.pt", weights_only=True)
  key = "decoder.bert.encoder.layer.1.attention.self.key.weight"
  state[key] = state[key].clone()
  state[key][3, :2] = float("nan")
  torch.save(state, tmp_path / "model.pt")
  with pytest.raises(hc.ConversionError, match=(
      rf"^{re.escape(str(tmp_path))}/model\.pt: tensor 'decoder\.bert\.encoder"
      r"\.layer\.1\.attention\.self\.key\.weight' holds 2 NaN or infinite "
      r"values \(of 2304\); the checkpoint is corrupt \(or of a diverged "
      r"run\): use another one$")):
    hc.fairseq_to_tf(str(tmp_path / "model.pt"), str(tmp_path / "out"),
                     hc.ConversionOptions(vocab_file=small_vocab,
                                          progress=False),
                     bert_config=str(d / "bert_config.json"))
  assert sorted(os.listdir(tmp_path)) == ["model.pt"]


def test_errors_name_bert_config_json_not_config_json(reference, small_vocab,
                                                    tmp_path):
  """Issue 48 item 11: with --bert_config=bert_config.json the errors said
  `config.json says 3 layers` and `fix it in config.json`."""
  d, _, _ = reference
  with open(d / "bert_config.json") as f:
    config = json.load(f)
  wrong = tmp_path / "bert_config.json"
  for change, message in (
      ({"num_hidden_layers": 3},
       r"model\.pt: missing key 'encoder\.layer\.2\.[\w.]+' and \d+ more "
       rf"\({re.escape(str(wrong))} says 3 layers\)$"),
      ({"hidden_size": "48"},
       rf"^{re.escape(str(wrong))}: hidden_size must be an integer, got "
       r"'48'; fix it in bert_config\.json$")):
    wrong.write_text(json.dumps(dict(config, **change)))
    with pytest.raises(hc.ConversionError, match=message):
      hc.fairseq_to_tf(str(d / "model.pt"), str(tmp_path / "out"),
                       hc.ConversionOptions(vocab_file=small_vocab,
                                            progress=False),
                       bert_config=str(wrong))


_LFS = ("version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d1"
        "7e2393\nsize 1338392315\n")


def _tar_gz(path):
  with tarfile.open(path, "w:gz") as tar:
    info = tarfile.TarInfo("spanbert_large_with_head/model.pt")
    info.size = 4
    tar.addfile(info, io.BytesIO(b"\0\0\0\0"))


@pytest.mark.parametrize("content,what,advice", [
    ("hello world\nthis is text\n",
     r"a text file \(it starts 'hello world'\)", ""),
    ("<!DOCTYPE html>\n<html><head><title>Sign in</title></head></html>\n",
     r"an HTML page \(a download that returned a web page, e\.g\. a sign-in or "
     r"error page\)", "; download the file itself"),
    (_LFS, r"a Git LFS pointer to 1338392315 bytes that were never "
     r"downloaded", r"; run `git lfs pull` in its repository \(or download "
     r"the file itself\)"),
    (_tar_gz, r"a gzip archive \(a \.tar\.gz\?\)",
     r"; unpack it \(tar xzf\) and pass the model\.pt inside"),
    ("", "an empty file", "; copy or download it again"),
], ids=["text", "html", "git_lfs", "tar_gz", "empty"])
def test_a_file_that_is_no_model_pt_says_what_it_is(small_vocab, tmp_path,
                                                    capsys, content, what,
                                                    advice):
  """Issue 48 items 9 and 11: a text file gave 43 lines ending `KeyError:
  101`; an HTML page, a .tar.gz or a Git-LFS pointer was said to need
  objects "which could run code"."""
  path = tmp_path / "model.pt"
  if callable(content):
    content(path)
  else:
    path.write_text(content)
  rc, out = _run_tool(capsys, "--direction=fairseq_to_tf", f"--input={path}",
                      f"--vocab_file={small_vocab}",
                      f"--output={tmp_path / 'out'}")
  assert rc == 1
  assert re.fullmatch(
      rf"convert_checkpoint: error: {re.escape(str(path))} is {what}, not a "
      r"PyTorch checkpoint \(expected the reference's model\.pt, from "
      rf"spanbert_large_with_head\.tar\.gz\){advice}\n", out.err), out.err
  assert sorted(os.listdir(tmp_path)) == ["model.pt"]
