# wiki2bert — make targets for a new user.
#   make demo               set up, then sample dump -> corpus -> vocab -> packed HDF5 -> ModernBERT -> HF model -> did it learn?
#   make test               set up, then the whole test suite (what CI runs, after make lint)
#   make test-fast          the inner loop: the suite without the slow, fault-matrix and Slurm tests
#   make lint               ruff, with the rules in pyproject.toml
#   make corpus LANG=hu     the whole data pipeline for one language (DUMP=path for a local dump, CORPUS_OPTS=...)
#   make pretrain LANG=uk DUMP=path BUDGET=30m   dump -> corpus -> ModernBERT -> export -> scores
#   make pretrain LANG=hu CORPORA=fineweb-2      ... with the language's web text beside Wikipedia
#   make bench              benchmark tables (uses ../shared/data when present)
#
# LANG is also the locale variable: only a LANG given on make's command line names the wiki
# language; the shell's LANG (en_US.UTF-8) never does. Recipes run under a UTF-8 locale and in
# Python's UTF-8 mode, so LANG=hu (an invalid locale) cannot break them.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

ifeq ($(origin LANG),command line)
WIKI_LANG := $(LANG)
else
WIKI_LANG := hu
endif
override LANG := C.UTF-8
export LANG
export LC_ALL := C.UTF-8
export PYTHONUTF8 := 1

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIPELINE := $(VENV)/bin/pipeline
DATA_DIR ?= data
DUMP ?=
WORKERS ?=
DEMO_OPTS ?=
BUDGET ?= 30m
PRETRAIN_OPTS ?=
CORPUS_OPTS ?=
CORPORA ?=
BENCH_OPTS ?=
DUMP_OPT := $(if $(DUMP),--dump $(DUMP),)
WORKERS_OPT := $(if $(WORKERS),--workers $(WORKERS),)
CORPORA_OPT := $(if $(CORPORA),--corpora $(CORPORA),)

.PHONY: setup corpus pretrain demo test test-fast lint bench clean-data

# Installs once; reinstalls when pyproject.toml changes. torch is pinned to 2.13.0 (CPU wheel here).
# pip's and setuptools' output goes to $(VENV)/install.log, shown only if the install fails; the
# one line before it says what it installs and that it takes minutes (it is silent meanwhile).
INSTALL_LOG := $(VENV)/install.log
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing wiki2bert and its dependencies into $(VENV): pip install -e '.[all]' (torch, transformers, DeepSpeed, Dask, datasets, word segmenters; about 2 GB), a few minutes and quiet until done (log: $(INSTALL_LOG))"
	@if ! { $(PY) -m pip install --quiet --upgrade pip && $(PY) -m pip install --quiet -e '.[all]'; } \
	    > $(INSTALL_LOG) 2>&1; then \
	  cat $(INSTALL_LOG) >&2; \
	  echo "make: the install into $(VENV) failed: pip's messages above (also in $(INSTALL_LOG))" >&2; \
	  exit 1; \
	fi
	@touch $@

setup: $(VENV)/.installed

# CORPUS_OPTS: more options of `pipeline run`, e.g. CORPUS_OPTS='--vocab-size 16000 --allow-unknown-lang'.
# WIKI2BERT_VIA_MAKE: the commands' advice names make's variables (DUMP=, CORPUS_OPTS=; common/make_vars.py).
corpus: setup
	WIKI2BERT_VIA_MAKE=corpus $(PIPELINE) --data-dir $(DATA_DIR) --lang $(WIKI_LANG) $(WORKERS_OPT) run $(DUMP_OPT) $(CORPUS_OPTS)

# One command from a dump to an evaluated model (python -m recipes.pretrain --help; installed:
# wiki2bert-pretrain); the run
# goes to runs/$(LANG)_modern. PRETRAIN_OPTS='--device cpu --vocab-size 8000' etc.; PRETRAIN_OPTS=--long:
# the long-context recipe (phases to 2,048 tokens on CPU, 8,192 on GPUs) into runs/$(LANG)_modern_long.
# CORPORA=fineweb-2[=WEIGHT],...: named web corpora of the language beside Wikipedia (--corpora).
pretrain: setup
	WIKI2BERT_VIA_MAKE=pretrain $(PY) -m recipes.pretrain --lang $(WIKI_LANG) --data-dir $(DATA_DIR) --budget $(BUDGET) $(DUMP_OPT) $(WORKERS_OPT) $(CORPORA_OPT) $(PRETRAIN_OPTS)

# The demo's data, runs and exported model go to $(DATA_DIR)/demo; DEMO_OPTS='--steps 100' etc.
# (python -m recipes.demo --help). A rerun skips finished stages and finished training.
demo: setup
	$(PY) -m recipes.demo --data-dir $(DATA_DIR)/demo $(WORKERS_OPT) $(DEMO_OPTS)

# Two pytest workers (pytest-xdist); --dist loadfile keeps a file's tests on one worker, so its
# module fixtures (trained models, encoded shards) are built once. --durations=25: the slowest
# tests, in CI's log too.
test: setup
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=25

# Under 3 minutes on 2 cores: the tests marked slow, faults or slurm are left out (make test runs
# them), the rest on two pytest workers (pytest-xdist).
test-fast: setup
	$(PY) -m pytest -q -n 2 --dist loadfile -m "not slow and not faults and not slurm"

lint: setup
	$(VENV)/bin/ruff check .

# BENCH_OPTS='--only encode model --runs 5' (python bench/run_all.py --help)
bench: setup
	$(PY) bench/run_all.py $(BENCH_OPTS)
