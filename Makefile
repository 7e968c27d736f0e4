# Two commands set everything up on a fresh machine (Python 3.10+, make; Node.js 20+ and npm for
# the tests):
#   make generate   -- install acpgen alone into .venv and generate generated/ from the bundled schema
#   make test       -- install acpgen with its test dependencies (and Debian's chromium) and run the whole suite
#   make docs       -- build the documentation site (docs/) into site/ with mkdocs build --strict
#   make check      -- fail when generated/ is not exactly what `acpgen generate` would write
#   make lint       -- ruff over acpgen/ and tests/, mypy --strict over acpgen/ (the suite runs both)
#   make fuzz-schemas -- generate from many mutated corpus schemas and print what went wrong
#   make bench-generate -- time acpgen generate / check against datamodel-code-generator
#   make bench-diff     -- time acpgen diff of two releases of the bundled schema's size
#   make corpus     -- every spec release: generate, mypy --strict, ruff, route every method; a table
#   make corpus-noblack -- every spec release generated with and without black: the same bytes?
#   make test-exhaustive -- the models' round trips with more examples, and every release's models
#   make transitions -- every move between protocol versions, for each pair, flavour and side; a table
#   make fuzz       -- fuzz both sides of the generated runtime, 100,000 lines each
#   make bench      -- runtime, codec and import against the hand-written floor and the SDK; one table
#   make bench-codec-ab BEFORE=REV -- the generated codec against generated/ at REV, round by round
#   make bench-prompt-ab BEFORE=REV -- the prompt turn against generated/ at REV and the SDK, round by round
#   make bench-prompt-instructions BEFORE=REV -- the same in instructions per turn (callgrind)
#   make bench-receive -- a client's receive path per update line: stdlib, fast, a msgspec client
#   make bench-send -- an agent's send path per update line: stdlib, fast, a msgspec writer
#   make bench-memory -- peak memory taking in a 100 MB message, as a multiple of its size
#   make bench-stub-history -- the stub agent's memory after 20,000 turns of one session, bounded and not
#   make scale      -- the stub agent's app in 4 workers behind HAProxy: 200 sessions, a worker killed
#   make bench-remote -- server CPU per update and memory per idle connection, our ASGI app vs the SDK's
#   make conformance -- the agent kit's whole matrix (each sloppy break alone, every stub over every
#                      transport), and both kits on every version of our stubs and routers
#   make conformance-client -- the client kit against the sloppy client breaking each requirement alone
#   make conformance-real -- both kits against real agents and clients from npm and PyPI, offline; a table
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: conformance conformance-client conformance-real scale bench-remote bench-receive bench-receive-instructions bench-send generate test check lint browser docs clean corpus corpus-noblack fuzz fuzz-schemas bench bench-memory bench-codec bench-generate bench-rpc bench-prompt bench-diff bench-inspect bench-shutdown bench-pydantic test-exhaustive transitions bench-stub-history bench-build bench-codec-ab bench-prompt-ab bench-prompt-instructions

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What generation needs: acpgen and its dependencies, nothing else.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# What the tests need besides: the test extra. uv installs it, the same versions as pip would, in
# about 2 s where pip takes 20; where uv cannot be installed or fails, pip installs it.
$(TEST_STAMP): pyproject.toml | $(BIN)/python
	($(BIN)/python -m pip install --quiet uv && $(BIN)/python -m uv pip install --quiet --python $(BIN)/python -e '.[test,docs]') \
		|| $(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(STAMP) $(TEST_STAMP)

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

# acpgen's own code, held to what it holds the output to (tests/test_code_health.py runs the same).
lint: $(TEST_STAMP)
	$(BIN)/python -m ruff check acpgen tests
	$(BIN)/python -m mypy --strict acpgen

# The browser the session page's tests render it in: Debian's chromium, installed once.
BROWSER_STAMP := $(VENV)/.installed-chromium

$(BROWSER_STAMP): | $(BIN)/python
	command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)
	touch $(BROWSER_STAMP)

browser: $(BROWSER_STAMP)

# The suite in parallel workers, one per core and one more (at most 4; tests/conftest.py says why):
# each test module is one unit of work, the longest first.
test: $(TEST_STAMP) check $(NODE_STAMP) $(BROWSER_STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder

# Every release of tests/data/corpus and tests/data/sdk-schemas, one row each (see tests/support/corpus_harness.py).
corpus: $(STAMP)
	$(BIN)/python tests/support/corpus_harness.py

# Every release generated where black cannot be imported and where it can: "N of 99 identical".
# NOBLACK_ARGS=--black also checks that black leaves every module unchanged (slow).
NOBLACK_ARGS ?=
corpus-noblack: $(TEST_STAMP)
	$(BIN)/python tests/support/noblack.py $(NOBLACK_ARGS)

# The schema fuzzer's long run: FUZZ_COUNT mutations of corpus schemas from seed FUZZ_SEED.
FUZZ_COUNT ?= 500
FUZZ_SEED ?= 1
fuzz-schemas: $(TEST_STAMP)
	$(BIN)/python tests/support/fuzz_schemas.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED)

# Runtime, codec and import against the hand-written floor and the official SDK: one table of ratios.
bench: $(TEST_STAMP)
	$(BIN)/python bench/bench_all.py

# Peak memory taking in one 100 MB message, as a multiple of its size (goal: at most 3x).
bench-memory: $(STAMP)
	$(BIN)/python bench/bench_memory.py

# The resident memory of one session of 20,000 turns in the stub agent: its kept history bounded
# (the default) and unbounded, each in a fresh process.
bench-stub-history: $(STAMP)
	$(BIN)/python bench/bench_stub_history.py

# Codec line pipeline and import time against plain json and the official ACP Python SDK (same run).
bench-codec: $(TEST_STAMP)
	$(BIN)/python bench/bench_codec.py

# BENCH_PYTHON: the interpreter measured (the comparison needs only the standard library)
BEFORE ?= HEAD~1
BENCH_PYTHON ?= $(BIN)/python
bench-codec-ab: $(STAMP)
	$(BENCH_PYTHON) bench/bench_codec_ab.py --before $(BEFORE)

bench-generate: $(TEST_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/bench_generate.py

# acpgen diff of the bundled schema and the next release, against reading one schema (same run).
bench-diff: $(STAMP)
	$(BIN)/python bench/bench_diff.py

# Remote ACP: server CPU per streamed update (WebSocket, Streamable HTTP) and memory per idle
# connection, the generated ASGI app against the official SDK's under the same uvicorn.
bench-remote: $(TEST_STAMP)
	$(BIN)/python bench/bench_remote.py

# A client's receive path, CPU per streamed update line: the stdlib path, the fast path (msgspec,
# else orjson) and a hand-written msgspec client, interleaved in one run.
bench-receive: $(TEST_STAMP)
	$(BIN)/python bench/bench_receive.py

# The same clients in instructions per line under callgrind (needs valgrind): steady where CPU time
# on a shared machine is not.
bench-receive-instructions: $(TEST_STAMP)
	$(BIN)/python bench/bench_receive_instructions.py

# An agent's send path, CPU per streamed update line: the stdlib path, the fast path (the same
# writer) and a hand-written msgspec writer, interleaved in one run.
bench-send: $(TEST_STAMP)
	$(BIN)/python bench/bench_send.py

# CPU per message over OS pipes: generated runtime against a hand-written floor and the official SDK.
bench-rpc: $(TEST_STAMP)
	$(BIN)/python bench/bench_rpc.py

# CPU per prompt turn (one streamed update each): generated client and stub agent against the SDK's.
bench-prompt: $(TEST_STAMP)
	$(BIN)/python bench/bench_prompt.py

# The prompt turn of generated/ at BEFORE against the working tree's, the SDK's beside them.
bench-prompt-ab: $(TEST_STAMP)
	$(BIN)/python bench/bench_prompt_ab.py --before $(BEFORE)

# The same in instructions per turn, client and agent (needs valgrind; minutes).
bench-prompt-instructions: $(TEST_STAMP)
	$(BIN)/python bench/bench_prompt_instructions.py --rev $(BEFORE) --package generated/acp_bindings --sdk

# Round trips and streamed updates per second with and without the inspector in between (ratios, same run).
bench-inspect: $(STAMP)
	$(BIN)/python bench/bench_inspect.py

# Time to answer everything and exit once stdin closes, N against 2N requests (ratio 2: linear).
bench-shutdown: $(STAMP)
	$(BIN)/python bench/bench_shutdown.py

# Fuzz both sides of the runtime over real pipes, 100,000 lines each; prints what went wrong.
fuzz: $(STAMP)
	$(BIN)/python tests/support/wire_fuzz.py --lines 100000

# The pydantic flavour against the official SDK: codec, import time, generation (ratios, same run).
bench-pydantic: $(TEST_STAMP)
	$(BIN)/python bench/bench_pydantic.py

# The models' round trips with more examples per type (both flavours), and every corpus release's
# models generated (the suite takes a spread of them).
test-exhaustive: $(TEST_STAMP)
	ACPGEN_EXHAUSTIVE=1 $(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile tests/models

# Every move between protocol versions (bundled -> v1 -> v1 + v2 -> unstable -> v2 alone) for the
# TypeScript SDK's pairs and the spec's v1.7.0 pairs, in both flavours and for both sides, acpgen run
# as a plain install runs it; prints the table of moves (the suite plays a part of it).
transitions: $(TEST_STAMP)
	ACPGEN_TRANSITIONS=1 $(BIN)/python -m pytest -q -s -p no:xdist tests/workflow/test_version_moves.py

# The agent kit's whole matrix: each break of the sloppy agent alone (the kit fails just the
# requirement it breaks), the stub agent of every kind of package over stdio, WebSocket and
# Streamable HTTP (nothing fails); and both kits on every version of our stubs and routers, for
# the bundled schema and each pair of two versions; the default suite runs a subset covering each once.
conformance: $(TEST_STAMP)
	ACPGEN_CONFORMANCE=1 $(BIN)/python -m pytest -q -n 2 tests/kit/test_agent_kit_matrix.py tests/kit/test_versions_kits_matrix.py

# The client kit (stub_agent --check) against the sloppy client breaking each requirement in turn
# (the suite tries two of them), and against the clients that keep them all.
conformance-client: $(TEST_STAMP) $(NODE_STAMP)
	ACPGEN_CLIENT_KIT_ALL=1 $(BIN)/python -m pytest -q -n 2 tests/kit/test_client_kit.py

# Both kits against real products (tests/real/): the agents and clients pinned by its package-lock.json
# and requirements files (venvs of their own: fast-agent needs Python 3.12+), each agent's model a
# local fake of its API on 127.0.0.1, the run in a network namespace of its own where unshare
# can make one. Prints the verdict table and writes it to tests/real/out/verdicts.md;
# REAL_ARGS=--docs also puts it into docs/guides/conformance.md, REAL_ARGS="--only NAME" runs one.
REAL := tests/real
# The first Python 3.12+ found: on PATH, else pyenv's.
REAL_PYTHON ?= $(shell for p in python3.13 python3.12 "$$(pyenv prefix 3.13.0 2>/dev/null)/bin/python3.13" \
	"$$(pyenv prefix 3.12.1 2>/dev/null)/bin/python3.12"; do "$$p" -c 'import sys; assert sys.version_info >= (3, 12)' \
	2>/dev/null && { echo "$$p"; break; }; done)
REAL_NODE_STAMP := $(REAL)/node_modules/.installed
REAL_PY_STAMP := $(REAL)/.venv/.installed

# npm install, not npm ci: the lock lacks the other platforms' optional packages (their metadata
# is not all on the registry), which npm ci refuses; --no-save installs the locked tree as it is.
$(REAL_NODE_STAMP): $(REAL)/package.json $(REAL)/package-lock.json
	cd $(REAL) && npm install --no-save --no-audit --no-fund --loglevel=error
	touch $(REAL_NODE_STAMP)

$(REAL_PY_STAMP): $(REAL)/requirements.txt | $(TEST_STAMP)
	@test -n "$(REAL_PYTHON)" || { echo "conformance-real: no Python 3.12+ found; set REAL_PYTHON=..." >&2; exit 1; }
	rm -rf $(REAL)/.venv
	$(REAL_PYTHON) -m venv $(REAL)/.venv
	$(BIN)/python -m uv pip install --quiet --python $(REAL)/.venv/bin/python -r $(REAL)/requirements.txt \
		|| $(REAL)/.venv/bin/python -m pip install --quiet -r $(REAL)/requirements.txt
	touch $(REAL_PY_STAMP)

# acpc needs an older official Python SDK than fast-agent pins: a venv of its own.
REAL_ACPC_STAMP := $(REAL)/.venv-acpc/.installed
$(REAL_ACPC_STAMP): $(REAL)/requirements-acpc.txt | $(TEST_STAMP)
	@test -n "$(REAL_PYTHON)" || { echo "conformance-real: no Python 3.12+ found; set REAL_PYTHON=..." >&2; exit 1; }
	rm -rf $(REAL)/.venv-acpc
	$(REAL_PYTHON) -m venv $(REAL)/.venv-acpc
	$(BIN)/python -m uv pip install --quiet --python $(REAL)/.venv-acpc/bin/python -r $(REAL)/requirements-acpc.txt \
		|| $(REAL)/.venv-acpc/bin/python -m pip install --quiet -r $(REAL)/requirements-acpc.txt
	touch $(REAL_ACPC_STAMP)

conformance-real: $(TEST_STAMP) $(REAL_NODE_STAMP) $(REAL_PY_STAMP) $(REAL_ACPC_STAMP)
	$(BIN)/python $(REAL)/run.py $(REAL_ARGS)

# Building messages with the generated builders against the official Python SDK's helpers (ratios, same run).
bench-build: $(STAMP)
	$(BIN)/python bench/bench_build.py

# The documentation site (docs/, mkdocs.yml) into site/; any warning fails the build.
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The stub agent's ASGI app in 4 uvicorn workers behind HAProxy (installed here from Debian when
# missing): 200 concurrent sessions over both profiles, then one worker killed mid-turn.
scale: $(TEST_STAMP)
	command -v haproxy >/dev/null || (apt-get update && apt-get install -y haproxy)
	$(BIN)/python tests/support/scale.py

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache
