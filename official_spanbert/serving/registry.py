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


"""The one export registry: task config class -> how its runs are served.

`spanbert-export-savedmodel` finds the run's experiment (its params.yaml, or
--experiment), looks its task config class up here and calls the entry's
exporter with the entry's own options (an ExportOptions subclass, as Model
Garden gives each serving module its own params). A new task adds one
`register(...)` call; the experiments an entry serves are the registered
ones of its task config class.

Example:
  params, name = registry.load_run("/runs/squad")   # -> spanbert/squad_v1
  registry.export(params, name, registry.QAExportOptions(
      export_base="/models/squad", model_dir="/runs/squad"))
"""

import dataclasses
import functools
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Type

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import experiment_names
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import export_lib
from official_spanbert.serving import export_precision
from official_spanbert.serving import limits
from official_spanbert.serving import pretraining_export
from official_spanbert.tasks import classification
from official_spanbert.tasks import coreference
from official_spanbert.tasks import pretraining
from official_spanbert.tasks import question_answering
from official_spanbert.tasks import span_ner


@dataclasses.dataclass
class ExportOptions:
  """What the command line says about any export (None: from the run).

  The options of one task's export are a subclass (its Entry.options); the
  classifiers take these alone.
  """
  export_base: str
  model_dir: Optional[str] = None
  checkpoint_path: Optional[str] = None
  vocab_file: Optional[str] = None
  version: Optional[int] = None
  lower_case: bool = False
  seq_length: int = limits.SEQ_LENGTH
  precision: str = "float32"  # export_precision.PRECISIONS

  @property
  def checkpoint(self) -> str:
    checkpoint = self.checkpoint_path or self.model_dir
    if not checkpoint:
      raise ValueError("give --model_dir or --checkpoint_path")
    return checkpoint


@dataclasses.dataclass
class PretrainingExportOptions(ExportOptions):
  """The pretrainer's export: fill_spans and the preprocessing model."""
  top_k: int = limits.FILL_SPANS_TOP_K
  max_masks: int = limits.FILL_SPANS_MAX_MASKS
  preprocessing_export_base: Optional[str] = None


@dataclasses.dataclass
class CorefExportOptions(ExportOptions):
  """The coreference export: resolve refuses longer texts (0: no limit)."""
  max_wordpieces: int = limits.COREF_MAX_WORDPIECES


@dataclasses.dataclass
class QAExportOptions(ExportOptions):
  """The SQuAD export: answer's no-answer threshold and context limit."""
  null_score_diff_threshold: Optional[float] = None
  max_context_wordpieces: int = limits.QA_MAX_CONTEXT_WORDPIECES


@dataclasses.dataclass
class SpanNerExportOptions(ExportOptions):
  """The span NER export: extract_entities refuses longer texts."""
  max_wordpieces: int = limits.NER_MAX_WORDPIECES


@dataclasses.dataclass(frozen=True)
class Entry:
  """How runs of one task config class are exported.

  Attributes:
    config_class: the task config class (params.task).
    signatures: what the export serves (for messages and docs).
    export: (params, options) -> {"model": dir, ...}.
    options: the ExportOptions (sub)class `export` takes.
  """
  config_class: type
  signatures: Tuple[str, ...]
  export: Callable[..., Dict[str, str]]
  options: Type[ExportOptions] = ExportOptions

  @property
  def experiments(self) -> Tuple[str, ...]:
    """The registered experiments whose task this entry exports."""
    return tuple(name for name, cls in _task_classes().items()
                 if _entry_of_class(cls) is self)


_ENTRIES: List[Entry] = []


def register(entry: Entry) -> Entry:
  _ENTRIES.append(entry)
  return entry


def entries() -> Tuple[Entry, ...]:
  return tuple(_ENTRIES)


@functools.lru_cache(maxsize=None)
def _task_classes_of(names: Tuple[str, ...]) -> Dict[str, type]:
  return {name: type(exp_factory.get_exp_config(name).task) for name in names}


def _task_classes() -> Dict[str, type]:
  """{experiment: its task config class} of the registered experiments but
  the deprecated names (whose configs log a warning when built)."""
  return _task_classes_of(tuple(
      name for name in experiment_names.registered()
      if name not in experiment_names.DEPRECATED))


def _entry_of_class(config_class: type) -> Optional[Entry]:
  for cls in config_class.__mro__:
    for entry in _ENTRIES:
      if entry.config_class is cls:
        return entry
  return None


def entry_for(params) -> Entry:
  """The entry of params.task's class (or its nearest registered base).

  Raises:
    ValueError: no entry serves that task.
  """
  entry = _entry_of_class(type(params.task))
  if entry is None:
    names = ", ".join(e for entry in _ENTRIES for e in entry.experiments)
    raise ValueError(f"no export for task {type(params.task).__name__}; the "
                     f"export serves the experiments {names}")
  return entry


def _leaves(d: Dict, prefix: str = "") -> Dict[str, object]:
  out = {}
  for key, value in d.items():
    if isinstance(value, dict):
      out.update(_leaves(value, f"{prefix}{key}."))
    else:
      out[prefix + key] = value
  return out


def experiment_of_run(params_yaml: str) -> Optional[str]:
  """The registered experiment a run's params.yaml belongs to (None if no
  config takes it strictly).

  squad_v1 and squad_v2 (classification and tacred) share a config class,
  so each takes the other's params.yaml: the one whose defaults the run
  changed least is the run's (a v2 run keeps version_2_with_negative).
  """
  best = None
  for entry in _ENTRIES:
    for name in entry.experiments:
      try:
        loaded = params_dict.override_params_dict(
            exp_factory.get_exp_config(name), params_yaml, is_strict=True)
      except (KeyError, ValueError, TypeError, AttributeError):
        continue
      before = _leaves(exp_factory.get_exp_config(name).as_dict())
      changed = sum(before.get(k) != v
                    for k, v in _leaves(loaded.as_dict()).items())
      if best is None or changed < best[0]:
        best = (changed, name)
  return best and best[1]


def load_run(model_dir: Optional[str] = None,
             experiment: Optional[str] = None,
             config_files: Sequence[str] = (),
             params_override: str = ""):
  """(params, experiment name): `experiment`, else the one model_dir's
  params.yaml belongs to, else spanbert/pretraining."""
  yaml = model_dir and os.path.join(model_dir, "params.yaml")
  if not experiment and yaml and os.path.exists(yaml):
    experiment = experiment_of_run(yaml)
    if not experiment:
      raise ValueError(
          f"{yaml} fits none of the exported experiments; pass --experiment")
  if (not experiment and yaml and not config_files and not params_override
      and os.path.isdir(model_dir)):
    # Else the pretraining default would ask for --vocab_file first.
    raise ValueError(
        f"{model_dir} has no params.yaml, so the run's experiment and model "
        "sizes are unknown: pass --model_dir of the directory training or a "
        "conversion wrote, or --experiment (e.g. spanbert/squad_v1) with the "
        "run's --config_file")
  experiment = experiment or "spanbert/pretraining"
  return export_lib.load_params(experiment, model_dir, config_files,
                                params_override), experiment


def _export_pretrainer(params, options: PretrainingExportOptions) -> Dict[str, str]:
  model, vocab = pretraining_export.load_for_export(
      params, options.model_dir, options.checkpoint_path, options.vocab_file)
  return pretraining_export.export(
      model, vocab, options.export_base, lower_case=options.lower_case,
      seq_length=options.seq_length, top_k=options.top_k,
      max_masks=options.max_masks, version=options.version,
      preprocessing_export_base=options.preprocessing_export_base)


def _export_coref(params, options: CorefExportOptions) -> Dict[str, str]:
  from official_spanbert.serving import coref_export  # pylint: disable=g-import-not-at-top
  return coref_export.export_from_params(
      params, options.checkpoint, options.export_base, options.vocab_file,
      options.version, max_wordpieces=options.max_wordpieces)


def _export_qa(params, options: QAExportOptions) -> Dict[str, str]:
  from official_spanbert.serving import qa_export  # pylint: disable=g-import-not-at-top
  return qa_export.export_from_params(
      params, options.checkpoint, options.export_base,
      model_dir=options.model_dir, vocab_file=options.vocab_file,
      null_score_diff_threshold=options.null_score_diff_threshold,
      version=options.version,
      max_context_wordpieces=options.max_context_wordpieces)


def _export_classifier(params, options: ExportOptions) -> Dict[str, str]:
  from official_spanbert.serving import classify_export  # pylint: disable=g-import-not-at-top
  return classify_export.export_from_params(
      params, options.checkpoint, options.export_base,
      vocab_file=options.vocab_file, version=options.version)


def _export_span_ner(params, options: SpanNerExportOptions) -> Dict[str, str]:
  from official_spanbert.serving import ner_export  # pylint: disable=g-import-not-at-top
  return ner_export.export_from_params(
      params, options.checkpoint, options.export_base,
      vocab_file=options.vocab_file, version=options.version,
      max_wordpieces=options.max_wordpieces)


register(Entry(pretraining.SpanBertPretrainTaskConfig,
               ("serving_default", "encode_pair", "encode_ids", "fill_spans",
                "encode_spans"),
               _export_pretrainer, PretrainingExportOptions))
register(Entry(coreference.CorefTaskConfig,
               ("resolve", "resolve_with_speakers"), _export_coref,
               CorefExportOptions))
register(Entry(question_answering.SpanBertQAConfig, ("answer",), _export_qa,
               QAExportOptions))
register(Entry(classification.SpanBertClassificationConfig,
               ("classify", "classify_relation"), _export_classifier))
register(Entry(span_ner.SpanNerTaskConfig,
               ("extract_entities", "encode_spans"), _export_span_ner,
               SpanNerExportOptions))


def _run_dir_params(checkpoint: str) -> Optional[str]:
  """params.yaml of the run a checkpoint belongs to (its dir or the parent,
  for best_ckpt/), if there is one."""
  path = checkpoint if os.path.isdir(checkpoint) else os.path.dirname(
      checkpoint)
  for d in (path, os.path.dirname(path.rstrip("/"))):
    yaml = os.path.join(d, "params.yaml")
    if d and os.path.exists(yaml):
      return yaml
  return None


def export(params, experiment: str, options: ExportOptions
           ) -> Dict[str, str]:
  """Exports with the entry of params.task's class.

  `options` of another class than the entry's give their shared fields, and
  the entry's own options keep their defaults.

  Raises:
    ValueError: no entry, or (one line) the checkpoint is of another
      experiment's model than `experiment`'s, naming both.
  """
  entry = entry_for(params)
  if not isinstance(options, entry.options):
    options = entry.options(**{f.name: getattr(options, f.name)
                               for f in dataclasses.fields(ExportOptions)})
  try:
    with export_precision.scope(options.precision):
      return entry.export(params, options)
  except checkpoints.CheckpointMismatchError as e:
    yaml = _run_dir_params(e.path)
    found = yaml and experiment_of_run(yaml)
    if found and entry_for(export_lib.load_params(found)) is not entry:
      raise ValueError(
          f"checkpoint {e.path} is from a {found} run ({yaml}), not the "
          f"{experiment} model the export was asked for; pass "
          f"--experiment={found}, or --model_dir of the run without "
          "--experiment") from None
    raise

