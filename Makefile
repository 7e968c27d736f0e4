# Two commands set everything up on a fresh machine:
#   make generate   -- install acpgen into .venv and generate generated/ from the bundled schema
#   make test       -- install acpgen with its test dependencies and run the whole suite
#   make check      -- fail when generated/ is not exactly what `acpgen generate` would write
#   make bench-generate -- time acpgen generate / check against datamodel-code-generator
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: generate test check clean bench-codec bench-generate bench-rpc bench-pydantic test-pydantic-exhaustive

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

# Codec throughput and import time against the official ACP Python SDK (ratios, same run).
bench-codec: $(STAMP)
	$(BIN)/python bench/bench_codec.py

bench-generate: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/bench_generate.py

# Round trips and streamed updates per second: generated runtime against the official Python SDK.
bench-rpc: $(STAMP)
	$(BIN)/python bench/bench_rpc.py

# The pydantic flavour against the official SDK: codec, import time, generation (ratios, same run).
bench-pydantic: $(STAMP)
	$(BIN)/python bench/bench_pydantic.py

# The pydantic flavour's round trips with ten times more examples per type.
test-pydantic-exhaustive: $(STAMP)
	ACPGEN_EXHAUSTIVE=1 $(BIN)/python -m pytest -q tests/models/test_pydantic_models.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
