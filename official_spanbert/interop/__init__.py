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

"""Published BERT / SpanBERT checkpoints <-> our BertEncoderV2 + heads.

Modules, by concern:

  hf_files.py          the files: Hugging Face config.json (and Google's
                       bert_config.json), weights (safetensors or PyTorch,
                       sharded or not) and tokenizer files; the names of what
                       we write; ConversionError.
  weight_map.py        which Hugging Face tensor is which of our variables, in
                       which layout; the model those variables belong to
                       (built by modeling/builder.py, as the task does).
  sbo_map.py           the reference's SBO head <-> our SpanBoundaryHead, and
                       its file beside a Hugging Face export.
  fairseq_files.py     the reference's fairseq model.pt, read safely; sizes.
  vocab_check.py       the vocab against the embedding rows.
  converted_output.py  the files every import writes.
  hf_to_tf.py          import: a Hugging Face directory -> our checkpoint.
  fairseq_to_tf.py     import: the reference's SpanBERT with MLM + SBO heads.
  tf1_to_tf.py         import: Google's TF1 BERT, through Model Garden's
                       converter, with MLM + NSP heads.
  tf_to_hf.py          export: our checkpoint -> a Hugging Face directory.
  conversion_report.py progress lines with an ETA, and the one-line summary.
  random_bert.py       a random BERT in Hugging Face's layout (smoke runs).

Import (`hf_to_tf.hf_to_tf`): a Hugging Face BERT directory (config.json,
weights in `model.safetensors` or `pytorch_model.bin`, possibly sharded with
an `*.index.json`, and vocab.txt) in the layout of BertModel (keys without
prefix or with `bert.`), BertForMaskedLM or BertForPreTraining becomes

  <out>/bert_model.ckpt.*   tf.train.Checkpoint(encoder=..., masked_lm=...,
                            next_sentence=...) -- the heads only when the
                            source has them; usable as task.init_checkpoint
                            and by anything that reads `encoder` alone.
  <out>/checkpoint          so that <out> itself works as init_checkpoint.
  <out>/params.yaml         params override: task.model.encoder (bert_v2) and
                            task.model.mlm_activation.
  <out>/vocab.txt           the source's vocab.
  <out>/conversion.json     what was converted (source config, lower_case,
                            items, layers initialised rather than converted).

Export (`tf_to_hf.tf_to_hf`): one of our checkpoints (converted,
encoder-only, pretraining or trainer checkpoint) plus its params becomes a
Hugging Face directory (config.json, model.safetensors, vocab.txt, tokenizer
files) that transformers' BertModel / BertForMaskedLM / BertForPreTraining
load; the SBO head, which has no Hugging Face class, goes beside them in
span_boundary_head.safetensors (sbo_map.py), which hf_to_tf reads back.

The weight layouts are in weight_map.py.

Exactness: Model Garden's "gelu" is the tanh approximation (HF "gelu_new" /
"gelu_pytorch_tanh"); HF's "gelu" is the exact erf form, registered as the
Keras activation `spanbert>gelu_exact` (modeling/activations.py), which the
written params use; the model builder imports that module, so the tasks build
from such params. All of Model Garden's LayerNorms use epsilon 1e-12, the
value of BERT's config; another `layer_norm_eps` is refused unless allowed
explicitly.

Both directions print progress with an ETA over the tensors converted on
stderr, and end with one summary line (directory, tensors, MB, seconds).

Heavy dependencies (safetensors, torch) are imported lazily, only when a
checkpoint in their format is read or written. This package imports
modeling/, configs/spanbert.py and data/tokenization.py, never tasks/.
The package exports the names most callers need:

  from official_spanbert import interop
  interop.hf_to_tf(hf_dir, out_dir)
  params_file = os.path.join(out_dir, interop.PARAMS_FILE)
"""

# pylint: disable=g-importing-member,unused-import
from official_spanbert.interop.hf_files import CHECKPOINT_NAME
from official_spanbert.interop.hf_files import CONVERSION_FILE
from official_spanbert.interop.hf_files import ConversionError
from official_spanbert.interop.hf_files import EXACT_GELU
from official_spanbert.interop.hf_files import HFBertConfig
from official_spanbert.interop.hf_files import PARAMS_FILE
from official_spanbert.interop.hf_files import VOCAB_FILE
from official_spanbert.interop.hf_files import write_safetensors
from official_spanbert.interop.fairseq_to_tf import fairseq_to_tf
from official_spanbert.interop.hf_to_tf import hf_to_tf
from official_spanbert.interop.hf_to_tf import params_dict
from official_spanbert.interop.conversion_report import ConversionResult
from official_spanbert.interop.sbo_map import FILE as SBO_FILE
from official_spanbert.interop.tf1_to_tf import tf1_to_tf
from official_spanbert.interop.tf_to_hf import read_model
from official_spanbert.interop.tf_to_hf import read_params
from official_spanbert.interop.tf_to_hf import tf_to_hf
from official_spanbert.interop.weight_map import build_model
from official_spanbert.interop.weight_map import item_variables
