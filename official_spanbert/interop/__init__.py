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

Imports (`hf_to_tf`, `fairseq_to_tf`, `tf1_to_tf`) and the export (`tf_to_hf`),
one module per concern. The formats, outputs and exactness: docs/interop.md.

  from official_spanbert import interop
  interop.hf_to_tf(hf_dir, out_dir)
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
from official_spanbert.interop.converter import ConversionOptions
from official_spanbert.interop.sbo_map import FILE as SBO_FILE
from official_spanbert.interop.tf1_to_tf import tf1_to_tf
from official_spanbert.interop.tf_to_hf import read_model
from official_spanbert.interop.tf_to_hf import read_params
from official_spanbert.interop.tf_to_hf import tf_to_hf
from official_spanbert.interop.weight_map import build_model
from official_spanbert.interop.weight_map import item_variables
