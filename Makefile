# Two commands set everything up on a fresh machine:
#   make generate   -- install acpgen into .venv and generate generated/ from the bundled schema
#   make test       -- install acpgen with its test dependencies and run the whole suite
#   make check      -- fail when generated/ is not exactly what `acpgen generate` would write
#   make bench-generate -- time acpgen generate / check against datamodel-code-generator
#   make bench-diff     -- time acpgen diff of two releases of the bundled schema's size
#   make corpus     -- every spec release: generate, mypy --strict, ruff, route every method; a table
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: generate test check clean corpus bench-codec bench-generate bench-rpc bench-diff bench-inspect bench-build

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

generate: $(STAMP)
	$(BIN)/acpgen generate

# The interop tests' TypeScript peers: the official SDK, pinned by tests/interop/package-lock.json.
INTEROP := tests/interop
NODE_STAMP := $(INTEROP)/node_modules/.installed

$(NODE_STAMP): $(INTEROP)/package.json $(INTEROP)/package-lock.json
	cd $(INTEROP) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

check: $(STAMP)
	$(BIN)/acpgen check

test: check $(NODE_STAMP)
	$(BIN)/python -m pytest -q

# Every release of tests/data/corpus and tests/data/sdk-schemas, one row each (see tests/support/corpus_harness.py).
corpus: $(STAMP)
	$(BIN)/python tests/support/corpus_harness.py

# Codec throughput and import time against the official ACP Python SDK (ratios, same run).
bench-codec: $(STAMP)
	$(BIN)/python bench/bench_codec.py

bench-generate: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/bench_generate.py

# acpgen diff of the bundled schema and the next release, against reading one schema (same run).
bench-diff: $(STAMP)
	$(BIN)/python bench/bench_diff.py

# Round trips and streamed updates per second: generated runtime against the official Python SDK.
bench-rpc: $(STAMP)
	$(BIN)/python bench/bench_rpc.py

# Round trips and streamed updates per second with and without the inspector in between (ratios, same run).
bench-inspect: $(STAMP)
	$(BIN)/python bench/bench_inspect.py

# Building messages with the generated builders against the official Python SDK's helpers (ratios, same run).
bench-build: $(STAMP)
	$(BIN)/python bench/bench_build.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
