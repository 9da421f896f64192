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

"""Which serving module serves a run, and the one export function.

`SERVING_MODULES` maps a task config class to its serving module class, as
Model Garden's export_savedmodel.SERVING_MODULES does; `export` builds the
module's own `Params` from a mapping of serving params, applies `precision`
and writes the module. A new task adds its module (serving_module.py says
what it has) and one entry here. The experiments that need registering are
registered by the binary (official_spanbert.registry_imports).

Example:
  run = registry.load_run("/runs/squad")            # a spanbert/squad_v1 run
  registry.export(run, {"max_context_wordpieces": 8192}, "/models/squad")
"""

import dataclasses
import functools
import os
from typing import Dict, Mapping, Optional, Sequence, Type, Union

from official.core import exp_factory
from official.modeling.hyperparams import params_dict
from official_spanbert.configs import experiment_names
from official_spanbert.modeling import attention_layout
from official_spanbert.modeling import checkpoints
from official_spanbert.serving import classify_module
from official_spanbert.serving import coref_module
from official_spanbert.serving import export_lib
from official_spanbert.serving import export_precision
from official_spanbert.serving import ner_module
from official_spanbert.serving import pretraining_module
from official_spanbert.serving import qa_module
from official_spanbert.serving import quantization
from official_spanbert.serving import serving_module
from official_spanbert.tasks import classification
from official_spanbert.tasks import coreference
from official_spanbert.tasks import pretraining
from official_spanbert.tasks import question_answering
from official_spanbert.tasks import span_ner

Run = serving_module.Run
ModuleClass = Type[serving_module.ServingModule]

SERVING_MODULES: Dict[type, ModuleClass] = {
    pretraining.SpanBertPretrainTaskConfig:
        pretraining_module.SpanBertServingModule,
    coreference.CorefTaskConfig: coref_module.CorefServingModule,
    question_answering.SpanBertQAConfig: qa_module.QuestionAnsweringModule,
    classification.SpanBertClassificationConfig: classify_module.ClassifyModule,
    span_ner.SpanNerTaskConfig: ner_module.SpanNerServingModule,
}


def module_for(task_config) -> Optional[ModuleClass]:
  """The serving module of `task_config`'s class (or its nearest base)."""
  return _module_of_class(type(task_config))


def _module_of_class(config_class: type) -> Optional[ModuleClass]:
  for cls in config_class.__mro__:
    if cls in SERVING_MODULES:
      return SERVING_MODULES[cls]
  return None


def make_params(module_cls: ModuleClass,
                values: Union[None, serving_module.Params, Mapping] = None
                ) -> serving_module.Params:
  """module_cls.Params from `values` (a mapping of its field names).

  Raises:
    ValueError: (one line) a key that is not one of the Params' fields,
      naming them.
  """
  if isinstance(values, module_cls.Params):
    return values
  values = dict(values or {})
  fields = [f.name for f in dataclasses.fields(module_cls.Params)]
  unknown = sorted(set(values) - set(fields))
  if unknown:
    raise ValueError(
        f"serving params {', '.join(unknown)} are not options of "
        f"{module_cls.__name__} (serving {', '.join(module_cls.SIGNATURES)});"
        f" its options: {', '.join(fields)}")
  return module_cls.Params(**values)


@functools.lru_cache(maxsize=None)
def _task_classes_of(names: Sequence[str]) -> Dict[str, type]:
  return {name: type(exp_factory.get_exp_config(name).task) for name in names}


def served_experiments() -> Dict[str, ModuleClass]:
  """{experiment: its serving module class} of the registered experiments
  (but the deprecated names, whose configs warn when built)."""
  names = tuple(name for name in experiment_names.registered()
                if name not in experiment_names.DEPRECATED)
  out = {}
  for name, cls in _task_classes_of(names).items():
    module_cls = _module_of_class(cls)
    if module_cls is not None:
      out[name] = module_cls
  return out


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
  for name in served_experiments():
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
             params_override: str = "",
             checkpoint_path: Optional[str] = None) -> Run:
  """The run to export: `experiment`, else the one model_dir's params.yaml
  belongs to, else spanbert/pretraining; then params.yaml, config files and
  overrides (export_lib.load_params)."""
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
  params = export_lib.load_params(experiment, model_dir, config_files,
                                  params_override)
  return Run(params, experiment, model_dir, checkpoint_path)


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


def export(run: Run,
           serving_params: Union[None, serving_module.Params, Mapping],
           export_base: str, *, version: Optional[int] = None,
           module_cls: Optional[ModuleClass] = None) -> Dict[str, str]:
  """Exports `run` with its task's serving module (or `module_cls`).

  Args:
    run: what to export (load_run, or a Run of params and a checkpoint).
    serving_params: the module's options, a mapping of its Params' fields
      (or the Params); `precision` is applied here, for every module
      (int8: what the built module's `encoder_part` names is quantized,
      calibrated on the run's training data; serving/quantization.py).
    export_base: TF Serving's model base path (the module may write more,
      e.g. the pretraining export's <export_base>_preprocessing).
    version: the version to write (None: the next free one).
    module_cls: a module class other than SERVING_MODULES' (TF Hub's).

  Returns:
    {"model": dir, ...}: what the module wrote.

  Raises:
    ValueError: no module serves the task; unknown serving params; no
      checkpoint; (one line) a checkpoint of another experiment's model
      than run.experiment's, naming both; int8 for a module it does not
      take yet, or without neural-compressor-tf.
  """
  module_cls = module_cls or module_for(run.params.task)
  if module_cls is None:
    raise ValueError(
        f"no export for task {type(run.params.task).__name__}; the export "
        f"serves the experiments {', '.join(served_experiments())}")
  params = make_params(module_cls, serving_params)
  if not run.checkpoint:
    raise ValueError("give --model_dir or --checkpoint_path")
  int8 = params.precision == "int8"
  if int8:
    export_precision.check(params.precision)
    quantization.check_supported(module_cls)
  try:
    # The Keras layers are built when write() traces the signatures: in
    # the scope too.
    with export_precision.scope(params.precision):
      module = module_cls.from_run(run, params)
      if int8:
        quantization.quantize_module(module, run)
      elif serving_module.has_encoder_part(module_cls):
        # Matmul attention, MatMul + BiasAdd + GELU that oneDNN fuses.
        attention_layout.serving_layout(module.encoder_part(run).model)
      return module.write(export_base, version)
  except checkpoints.CheckpointMismatchError as e:
    yaml = _run_dir_params(e.path)
    found = yaml and experiment_of_run(yaml)
    if found and module_for(export_lib.load_params(found).task) is not (
        module_cls):
      raise ValueError(
          f"checkpoint {e.path} is from a {found} run ({yaml}), not the "
          f"{run.experiment} model the export was asked for; pass "
          f"--experiment={found}, or --model_dir of the run without "
          "--experiment") from None
    raise
