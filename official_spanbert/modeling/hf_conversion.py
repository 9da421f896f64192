"""Deprecated: Hugging Face conversion moved to `official_spanbert.interop`.

This module only re-exports the names it used to define, so that existing
imports (`from official_spanbert.modeling import hf_conversion`) keep
working. New code imports the interop modules by concern:

  interop.hf_files    Hugging Face files (config, weights, tokenizer);
                      ConversionError; the names of what we write.
  interop.weight_map  Hugging Face tensor <-> our variable; build_model.
  interop.hf_to_tf    hf_to_tf (import).
  interop.tf_to_hf    tf_to_hf, read_params (export).
  interop.progress    ConversionResult, progress lines and the summary.

It is the one import from modeling/ up to interop/; it goes when its last
users (tasks that import it for the exact GeLU, which
modeling/activations.py registers on its own) have moved.
"""

# pylint: disable=unused-import,g-importing-member
from official_spanbert.interop.hf_files import CHECKPOINT_NAME
from official_spanbert.interop.hf_files import CONVERSION_FILE
from official_spanbert.interop.hf_files import ConversionError
from official_spanbert.interop.hf_files import EXACT_GELU
from official_spanbert.interop.hf_files import HF_TO_TF_ACTIVATION as _HF_TO_TF_ACTIVATION  # noqa: E501
from official_spanbert.interop.hf_files import HF_TO_TF_OUTPUTS as _HF_TO_TF_OUTPUTS  # noqa: E501
from official_spanbert.interop.hf_files import HFBertConfig
from official_spanbert.interop.hf_files import MODEL_GARDEN_LAYER_NORM_EPS
from official_spanbert.interop.hf_files import PARAMS_FILE
from official_spanbert.interop.hf_files import TF_TO_HF_ACTIVATION as _TF_TO_HF_ACTIVATION  # noqa: E501
from official_spanbert.interop.hf_files import TF_TO_HF_OUTPUTS as _TF_TO_HF_OUTPUTS  # noqa: E501
from official_spanbert.interop.hf_files import VOCAB_FILE
from official_spanbert.interop.hf_files import _read_safetensors
from official_spanbert.interop.hf_files import _read_torch
from official_spanbert.interop.hf_files import _weight_files
from official_spanbert.interop.hf_files import check_output as _check_output
from official_spanbert.interop.hf_files import hf_config_dict
from official_spanbert.interop.hf_files import read_hf_config
from official_spanbert.interop.hf_files import read_hf_state_dict
from official_spanbert.interop.hf_files import read_lower_case as _read_lower_case  # noqa: E501
from official_spanbert.interop.hf_files import write_safetensors
from official_spanbert.interop.hf_to_tf import hf_to_tf
from official_spanbert.interop.hf_to_tf import params_dict
from official_spanbert.interop.progress import ConversionResult
from official_spanbert.interop.tf_to_hf import read_params
from official_spanbert.interop.tf_to_hf import resolve_checkpoint as _resolve_checkpoint  # noqa: E501
from official_spanbert.interop.tf_to_hf import tf_to_hf
from official_spanbert.interop.weight_map import DECODER_BIAS
from official_spanbert.interop.weight_map import DECODER_WEIGHT
from official_spanbert.interop.weight_map import Entry as _Entry
from official_spanbert.interop.weight_map import IGNORED_KEYS
from official_spanbert.interop.weight_map import MLM_BIAS
from official_spanbert.interop.weight_map import POOLER_KEYS
from official_spanbert.interop.weight_map import TRANSFORMS as _TRANSFORMS
from official_spanbert.interop.weight_map import _copy
from official_spanbert.interop.weight_map import _Fwd
from official_spanbert.interop.weight_map import _transpose
from official_spanbert.interop.weight_map import assign_hf_weights
from official_spanbert.interop.weight_map import build_model
from official_spanbert.interop.weight_map import canonical_state
from official_spanbert.interop.weight_map import check_tied as _check_tied
from official_spanbert.interop.weight_map import checkpoint_items
from official_spanbert.interop.weight_map import export_hf_state
from official_spanbert.interop.weight_map import heads_in as _heads_in
from official_spanbert.interop.weight_map import inverse as _inverse
from official_spanbert.interop.weight_map import item_variables as _item_variables  # noqa: E501
from official_spanbert.interop.weight_map import weight_map as _weight_map
