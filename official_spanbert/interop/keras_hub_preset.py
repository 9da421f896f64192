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

"""Export: our checkpoint + its params -> a keras-hub BERT preset directory.

Writes the encoder as a Hugging Face directory, then runs keras_hub_writer.py
in a Keras 3 process of its own to save the preset. Encoder and pooler only.
See docs/keras3.md.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Optional, Union

from official_spanbert.interop import hf_files
from official_spanbert.interop import conversion_report
from official_spanbert.interop import converter
from official_spanbert.utils import write_errors
# pylint: disable-next=g-importing-member  (interop/__init__ rebinds the name)
from official_spanbert.interop.tf_to_hf import tf_to_hf

ConversionError = hf_files.ConversionError

WRITER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "keras_hub_writer.py")
# What the writer puts in the preset directory (checked before any work).
PRESET_OUTPUTS = ("config.json", "model.weights.h5", "tokenizer.json",
                  "preprocessor.json", "metadata.json", "assets",
                  hf_files.CONVERSION_FILE)
# The Hugging Face name of Model Garden's (tanh) "gelu", the only GELU
# keras-hub's BertBackbone computes.
KERAS_HUB_ACTIVATION = "gelu_new"
# keras-hub's BERT preprocessors pack at most this many tokens by default.
DEFAULT_MAX_SEQUENCE_LENGTH = 512
INSTALL_HINT = "pip install 'official-spanbert[keras3]'"


def writer_env(backend: Optional[str] = None) -> dict:
  """The environment of a Keras 3 process: ours without TF_USE_LEGACY_KERAS
  (which would turn tf.keras into tf_keras there), KERAS_BACKEND set."""
  env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
  if backend:
    env["KERAS_BACKEND"] = backend
  env.setdefault("KERAS_BACKEND", "tensorflow")
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  return env


def _last_lines(text: str, n: int = 8) -> str:
  return "\n".join(text.strip().splitlines()[-n:])


def check_no_other_files(output_dir: str) -> None:
  """Refuses an output directory that holds files a preset does not have
  (a preset would be mixed into unrelated files, as the TF Hub export
  refuses an existing encoder/)."""
  others = sorted(set(os.listdir(output_dir)) - set(PRESET_OUTPUTS)) if (
      os.path.isdir(output_dir)) else []
  if others:
    raise ConversionError(
        f"output {output_dir} holds {len(others)} file(s) that are not part "
        f"of a keras-hub preset ({', '.join(others[:3])}"
        f"{', ...' if len(others) > 3 else ''}); choose an empty or new "
        "directory")


def _move_into(preset_tmp: str, output_dir: str) -> None:
  """Moves the files of preset_tmp (on another filesystem, /tmp) into
  output_dir: copied beside it first, then renamed into place, so that a
  full disk leaves neither a half-written preset nor a half-replaced one.

  Raises:
    ConversionError: output_dir's filesystem has no room for the preset (the
      copy and a folder this call created are removed).
  """
  created = not os.path.exists(output_dir)
  staged = os.path.join(output_dir, f".tmp-keras-hub-{os.getpid()}")
  try:
    os.makedirs(output_dir, exist_ok=True)
    shutil.copytree(preset_tmp, staged)
  except OSError as e:
    shutil.rmtree(staged, ignore_errors=True)
    if created:
      shutil.rmtree(output_dir, ignore_errors=True)
    reason = write_errors.out_of_space(e)
    if not reason:
      raise
    raise ConversionError(
        f"cannot write the keras-hub preset {output_dir}: {reason}; free "
        f"space there and rerun ("
        + ("nothing was left behind)" if created else
           "the files there are as they were)")) from None
  for name in os.listdir(staged):  # renames: they take no space
    target = os.path.join(output_dir, name)
    if os.path.isdir(target):
      shutil.rmtree(target)
    elif os.path.exists(target):
      os.remove(target)
    os.replace(os.path.join(staged, name), target)
  os.rmdir(staged)


def export_keras_hub_preset(
    checkpoint: str, output_dir: str, *,
    params_file: Optional[str] = None,
    vocab_file: Optional[str] = None,
    lower_case: Optional[bool] = None,
    sequence_length: Optional[int] = None,
    overwrite: bool = False,
    backend: Optional[str] = None,
    timeout: float = 1800,
    progress: Union[bool, conversion_report.ConversionProgress] = True
) -> conversion_report.ConversionResult:
  """Writes a keras-hub preset directory of one of our checkpoints' encoder.

  Args:
    checkpoint, params_file, vocab_file, lower_case: as in tf_to_hf.tf_to_hf
      (a trainer model_dir, a checkpoint prefix or directory; params.yaml and
      the vocab beside it by default).
    output_dir: the preset directory to write.
    sequence_length: the packed length of the preset's
      BertTextClassifierPreprocessor (default: the encoder's
      max_position_embeddings, at most 512).
    overwrite: replace an earlier export in output_dir.
    backend: KERAS_BACKEND of the writing process (default: $KERAS_BACKEND,
      else tensorflow); the files are the same for every backend.
    timeout: seconds the writing process may take.
    progress: as in tf_to_hf.tf_to_hf.

  Returns:
    A ConversionResult (direction "tf_to_keras_hub").

  Raises:
    ConversionError: unusable input, keras-hub missing, or the writer failed
      (the message names the problem).
  """
  report = conversion_report.reporter(progress, "tf_to_keras_hub")
  hf_files.check_output(output_dir, PRESET_OUTPUTS, overwrite)
  check_no_other_files(output_dir)
  with tempfile.TemporaryDirectory(prefix="spanbert_keras_hub_") as tmp:
    hf_dir = os.path.join(tmp, "hf")
    report.note("reading the checkpoint (via the Hugging Face export)")
    # The NSP head is left out: keras-hub's backbone has the encoder's
    # pooler only.
    hf = tf_to_hf(
        checkpoint, hf_dir, converter.ConversionOptions(
            vocab_file=vocab_file, lower_case=lower_case, progress=False),
        params_file=params_file, drop_next_sentence=True)
    config, sequence_length = _preset_config(hf_dir, sequence_length)
    preset_tmp = os.path.join(tmp, "preset")
    written = _run_writer(hf_dir, preset_tmp, sequence_length, backend,
                          timeout, report)
    with open(os.path.join(preset_tmp, hf_files.CONVERSION_FILE), "w",
              encoding="utf-8") as f:
      json.dump({"checkpoint": hf.checkpoint, "items": ["encoder"],
                 "dropped": sorted(set(hf.items + hf.dropped) - {"encoder"}),
                 "lower_case": hf.lower_case,
                 "source_config": config, **written}, f, indent=2)

    _move_into(preset_tmp, output_dir)

  files = [os.path.join(output_dir, f) for f in written["files"]]
  result = conversion_report.ConversionResult(
      output=output_dir, items=["encoder"],
      dropped=sorted(set(hf.items + hf.dropped) - {"encoder"}),
      lower_case=hf.lower_case, checkpoint=hf.checkpoint,
      direction="tf_to_keras_hub", tensors=written["tensors"],
      bytes_written=hf_files.files_size(files))
  return report.finish(result)


def _preset_config(hf_dir, sequence_length):
  """The exported Hugging Face config and the preset's sequence length."""
  with open(os.path.join(hf_dir, hf_files.HF_CONFIG_FILE),
            encoding="utf-8") as f:
    config = json.load(f)
  if config["hidden_act"] != KERAS_HUB_ACTIVATION:
    raise ConversionError(
        f"the encoder's hidden activation is Hugging Face's "
        f"{config['hidden_act']!r}; keras-hub's BertBackbone computes only "
        "the tanh-approximate GELU (Model Garden's 'gelu', Hugging Face's "
        f"{KERAS_HUB_ACTIVATION!r})")
  max_len = config["max_position_embeddings"]
  if sequence_length is None:
    sequence_length = min(max_len, DEFAULT_MAX_SEQUENCE_LENGTH)
  if not 2 <= sequence_length <= max_len:
    raise ConversionError(
        f"sequence_length {sequence_length} must be in [2, {max_len}] "
        "(the encoder's max_position_embeddings)")
  return config, sequence_length


def _run_writer(hf_dir, preset_tmp, sequence_length, backend, timeout, report):
  """Runs keras_hub_writer.py in its own process; returns its summary."""
  report.note(f"writing the keras-hub preset (Keras 3, backend "
              f"{writer_env(backend)['KERAS_BACKEND']}, own process)")
  try:
    proc = subprocess.run(
        [sys.executable, "-P", WRITER, hf_dir, preset_tmp,
         str(sequence_length)],
        capture_output=True, text=True, timeout=timeout,
        env=writer_env(backend), check=False)
  except subprocess.TimeoutExpired:
    raise ConversionError(
        f"the keras-hub preset writer took more than {timeout:.0f} s"
    ) from None
  if proc.returncode != 0:
    if "No module named 'keras_hub'" in proc.stderr:
      raise ConversionError(f"keras-hub is not installed ({INSTALL_HINT})")
    raise ConversionError("the keras-hub preset writer failed:\n" +
                          _last_lines(proc.stderr))
  try:
    written = json.loads(proc.stdout.strip().splitlines()[-1])
  except (IndexError, ValueError):
    raise ConversionError("the keras-hub preset writer printed no summary:"
                          "\n" + _last_lines(proc.stdout + proc.stderr)
                          ) from None
  return written
