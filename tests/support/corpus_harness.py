"""The release harness: each schema release generates a package that imports, passes ``mypy --strict``
and ``ruff check``, and routes every method of every side.

For each release the harness generates the whole package (every side), imports it, and routes
every method of the method table: a recorder overrides every handler of the side's handler base,
the method is called through the peer's typed proxy with a minimal valid params object (built
from the release's own schema and checked by jsonschema: the oracle is the schema, not the
models), and the handler must receive exactly those params and its minimal valid result must
come back exactly. Agent and client are paired in memory (``in_memory_pair``); another side
(``proxy``) is served by two of its connections over an in-memory pipe.

``python tests/support/corpus_harness.py [FILE ...]`` (``make corpus``) runs it over every release of
``tests/data/corpus`` and the schemas of ``tests/data/sdk-schemas`` (or the named files), prints one
row per release and exits 1 if any row fails; ``tests/test_releases_corpus.py`` runs it over one
release of each lineage.
"""

from __future__ import annotations

import asyncio
import copy
import csv
import hashlib
import importlib
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from acpgen.model.names import pascal_case, type_name
from acpgen.output.reuse import Reuse
from acpgen.pipeline import Options, generate

HERE = Path(__file__).resolve().parent.parent  # tests/
DATA = HERE / "data"
CORPUS = DATA / "corpus"
SDK_SCHEMAS = DATA / "sdk-schemas"


def all_releases() -> list[Path]:
    """Every corpus release (INDEX order), then the four schemas the TypeScript SDK bundles."""
    with open(CORPUS / "INDEX.tsv", newline="") as handle:
        files = [CORPUS / row["file"] for row in csv.DictReader(handle, delimiter="\t")]
    return files + sorted(SDK_SCHEMAS.glob("*.json"))


@dataclass
class Result:
    release: str  # the schema's file name, "sdk-" prefixed for the SDK's
    error: str = ""  # why it did not generate or import; empty when it did
    mypy: list[str] = field(default_factory=list)  # mypy's error lines
    ruff: list[str] = field(default_factory=list)  # ruff's findings
    methods: int = 0  # methods to route (every side's, not $/cancel_request, which the runtime handles)
    routed: int = 0
    routing: list[str] = field(default_factory=list)  # one line per method that did not route

    @property
    def ok(self) -> bool:
        return not (self.error or self.mypy or self.ruff or self.routing) and self.routed == self.methods

    def row(self) -> tuple[str, str, str, str]:
        if self.error:
            return (self.release, "-", "-", f"- ({self.error})")
        mypy = "ok" if not self.mypy else f"FAIL ({len(self.mypy)})"
        ruff = "ok" if not self.ruff else f"FAIL ({len(self.ruff)})"
        return (self.release, mypy, ruff, f"{self.routed}/{self.methods}")


def release_name(schema: Path) -> str:
    return ("sdk-" if schema.parent == SDK_SCHEMAS else "") + schema.name


def package_name(schema: Path) -> str:
    return "rel_" + re.sub(r"\W", "_", release_name(schema).removesuffix(".json"))


def check_releases(schemas: list[Path], out: Path, progress: bool = False, mypy_cache: Path | None = None) -> list[Result]:
    """Generate each release's package below ``out``, type-check, lint and route it (mypy's cache in
    ``mypy_cache``, by default in ``out``)."""
    results = {schema: Result(release_name(schema)) for schema in schemas}
    packages: dict[str, Path] = {}
    for schema in schemas:
        package = package_name(schema)
        # the meta-schema validation is the loader's concern (test_method_table checks every release)
        reuse = Reuse(validated_schemas=frozenset({hashlib.sha256(schema.read_bytes()).hexdigest()}))
        try:
            files = generate(Options(schema=schema, package=package), reuse).files
        except Exception as exc:  # noqa: BLE001 - reported in the table
            results[schema].error = f"generate: {_one_line(exc)}"
            continue
        for rel, text in files.items():
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        packages[package] = schema
    if progress:
        print(f"generated {len(packages)} packages; running mypy --strict and ruff ...", file=sys.stderr, flush=True)
    for package, lines in _findings(_mypy(out, sorted(packages), mypy_cache or out / ".mypy_cache"), packages).items():
        results[packages[package]].mypy = lines
    for package, lines in _findings(_ruff(out, sorted(packages)), packages).items():
        results[packages[package]].ruff = lines
    sys.path.insert(0, str(out))
    try:
        for package, schema in packages.items():
            result = results[schema]
            try:
                acp = importlib.import_module(package)
                names = list(acp.__all__)
                twice = sorted({name for name in names if names.count(name) > 1})
                missing = sorted(name for name in names if not hasattr(acp, name))
                if twice or missing:
                    raise ImportError(f"__all__ lists {twice} twice and {missing}, which the package lacks")
            except Exception as exc:  # noqa: BLE001
                result.error = f"import: {_one_line(exc)}"
                continue
            examples = Examples(json.loads(schema.read_text()))
            result.methods, result.routed, result.routing = asyncio.run(route_every_method(acp, examples))
            if progress:
                print(" ".join(result.row()), file=sys.stderr, flush=True)
    finally:
        sys.path.remove(str(out))
    return [results[schema] for schema in schemas]


def _mypy(out: Path, packages: list[str], cache: Path) -> list[str]:
    if not packages:
        return []
    args = [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--no-error-summary",
            "--cache-dir", str(cache)]
    for package in packages:
        args += ["-p", package]
    result = subprocess.run(args, capture_output=True, text=True, cwd=out, check=False)
    if result.returncode not in (0, 1):
        return [f"{p}/: mypy failed: {_one_line(result.stderr or result.stdout)}" for p in packages]
    return result.stdout.splitlines()


def _ruff(out: Path, packages: list[str]) -> list[str]:
    if not packages:
        return []
    args = [sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310",
            "--output-format", "concise", "--quiet", *packages]
    return subprocess.run(args, capture_output=True, text=True, cwd=out, check=False).stdout.splitlines()


def _findings(lines: list[str], packages: dict[str, Path]) -> dict[str, list[str]]:
    """Lines like ``pkg/models.py:3: error: ...`` by package; notes and summaries are dropped."""
    found: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        package = line.split("/", 1)[0].split("\\", 1)[0]
        if package in packages and ": note:" not in line:
            found[package].append(line)
    return dict(found)


def _one_line(exc: object) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:197] + "..."


# -- routing ----------------------------------------------------------------------------------------


async def route_every_method(acp: Any, examples: Examples) -> tuple[int, int, list[str]]:
    """Call every method of ``acp.METHODS`` through a typed proxy; returns (methods, routed, failures)."""
    sides = sorted({m.side for m in acp.METHODS} - {"protocol"})
    total, routed, failures = 0, 0, []
    for side in sides:
        methods = [m for m in acp.METHODS if m.side == side]
        total += len(methods)
        try:
            done, problems = await asyncio.wait_for(_route_side(acp, examples, side, methods), 120)
        except Exception as exc:  # noqa: BLE001 - a side that cannot even be set up
            done, problems = 0, [f"{side}: {type(exc).__name__}: {_one_line(exc)}"]
        routed += done
        failures += problems
    return total, routed, failures


async def _route_side(acp: Any, examples: Examples, side: str, methods: list[Any]) -> tuple[int, list[str]]:
    calls: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    results: dict[str, Any] = {}

    def handler(method: Any) -> Any:
        async def handle(self: Any, params: Any) -> Any:
            calls.put_nowait((method.py_name, acp.encode(params)))
            return results.get(method.py_name)

        return handle

    routed, failures = 0, []
    if side in ("agent", "client"):
        base = acp.Agent if side == "agent" else acp.Client
        handlers = {m.py_name: handler(m) for m in methods}
        # the example params name sessions never opened: routing, not the Agent base's session check, is tested
        handlers["session_known"] = lambda self, session_id: True
        recorder = type(f"Recording{base.__name__}", (base,), handlers)()
        agent, client = (recorder, acp.Client()) if side == "agent" else (acp.Agent(), recorder)
        context = acp.in_memory_pair(agent, client)
    else:
        base = getattr(acp, pascal_case(side))
        recorder = type(f"Recording{base.__name__}", (base,), {m.py_name: handler(m) for m in methods})()
        context = _SidePair(acp, side, base(), recorder)
    async with context as (agent_side, client_side):
        proxy = {"agent": lambda: client_side.agent, "client": lambda: agent_side.client}.get(
            side, lambda: agent_side.peer)()
        for method in methods:
            try:
                await _route_one(acp, examples, proxy, method, calls, results)
            except Exception as exc:  # noqa: BLE001 - one line per method in the report
                failures.append(f"{side} {method.method} ({method.kind}): {type(exc).__name__}: {_one_line(exc)}")
            else:
                routed += 1
    return routed, failures


async def _route_one(acp: Any, examples: Examples, proxy: Any, method: Any, calls: asyncio.Queue[Any],
                     results: dict[str, Any]) -> None:
    models = acp.models
    params_json = examples.minimal(method.params)
    # initialize asks for the version the package speaks and is answered with it: the handler sees
    # the version negotiated, and a client refuses an answer of a version it did not ask for
    speaks = {"protocolVersion": acp.PROTOCOL_VERSION} if method.method == "initialize" else {}
    params_json = {**params_json, **speaks} if "protocolVersion" in params_json else params_json
    params = acp.decode(getattr(models, type_name(method.params)), params_json)
    expected: Any = None
    if method.kind == "request":
        if method.result is None:
            expected = results[method.py_name] = {"untyped": "result"}
        else:
            expected = examples.minimal(method.result)
            expected = {**expected, **speaks} if "protocolVersion" in expected else expected
            results[method.py_name] = acp.decode(getattr(models, type_name(method.result)), expected)
    returned = await getattr(proxy, method.py_name)(params)
    received = await asyncio.wait_for(calls.get(), 30)  # a notification is handled in the background
    if received != (method.py_name, params_json):
        raise AssertionError(f"the handler got {received!r}, not {(method.py_name, params_json)!r}")
    if method.kind == "request":
        got = returned if method.result is None else acp.encode(returned)
        if got != expected:
            raise AssertionError(f"the result came back as {got!r}, not {expected!r}")
    elif returned is not None:
        raise AssertionError(f"a notification returned {returned!r}")


class _SidePair:
    """Two connections of one side over an in-memory pipe: ``(calling end, recording end)``."""

    def __init__(self, acp: Any, side: str, caller: Any, recorder: Any) -> None:
        self.connection = getattr(acp, pascal_case(side) + "SideConnection")
        self.pipe = acp._rpc.memory_pipe()
        self.handlers = (caller, recorder)

    async def __aenter__(self) -> tuple[Any, Any]:
        (a_in, a_out), (b_in, b_out) = self.pipe
        self.ends = (self.connection(self.handlers[0], a_in, a_out), self.connection(self.handlers[1], b_in, b_out))
        return self.ends

    async def __aexit__(self, *exc: object) -> None:
        for end in self.ends:
            await end.close()


# -- minimal instances, from the release's own schema ---------------------------------------------------


class Examples:
    """Minimal valid JSON instances of a schema's ``$defs``, each checked by jsonschema."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.defs: dict[str, Any] = document.get("$defs", {})

    def validator(self, node: dict[str, Any]) -> Any:
        return jsonschema.Draft202012Validator({"$defs": self.defs, **node})

    def minimal(self, name: str) -> Any:
        instance = self._build(self.defs[name], 0)
        errors = list(self.validator({"$ref": f"#/$defs/{name}"}).iter_errors(instance))
        if errors:
            raise ValueError(f"no minimal {name} found: {errors[0].message}")
        return copy.deepcopy(instance)

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node and len(node) <= 2:
            node = self.defs[node["$ref"].split("/")[-1]]
        return node

    def _build(self, node: Any, depth: int) -> Any:
        if depth > 30:
            raise RecursionError("schema too deep for a minimal instance")
        if not isinstance(node, dict):
            return {}
        if "$ref" in node:
            base = self._build(self.defs[node["$ref"].split("/")[-1]], depth + 1)
            rest = {k: v for k, v in node.items() if k not in ("$ref", "description")}
            if rest and isinstance(base, dict):
                extra = self._build(rest, depth + 1)
                if isinstance(extra, dict):
                    return {**base, **extra}
            return base
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return node["enum"][0]
        for key in ("oneOf", "anyOf"):
            if key in node:
                shared = {k: v for k, v in node.items() if k not in (key, "description", "discriminator")}
                for option in node[key]:
                    option = self._resolve(option) if isinstance(option, dict) else option
                    if isinstance(option, dict) and option.get("type") == "null":
                        continue
                    candidate = self._build(option, depth + 1)
                    if shared.get("properties") or shared.get("required"):
                        base = self._build({**shared, "type": "object"}, depth + 1)
                        if isinstance(candidate, dict):
                            candidate = {**base, **candidate}
                    if self.validator(node).is_valid(candidate):
                        return candidate
                return None
        if "allOf" in node:
            values = [self._build(part, depth + 1) for part in node["allOf"]]
            if not all(isinstance(v, dict) for v in values):
                return values[-1]
            merged: dict[str, Any] = {}
            for value in values:
                merged.update(value)
            own = {k: v for k, v in node.items() if k != "allOf"}
            if own.get("properties") or own.get("required"):
                merged.update(self._build(own, depth + 1))
            return merged
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or "properties" in node:
            props = node.get("properties", {})
            return {key: self._build(props.get(key, {}), depth + 1) for key in node.get("required", [])}
        if kind == "array":
            return [self._build(node.get("items", {}), depth + 1) for _ in range(node.get("minItems", 0))]
        if kind == "string":
            return "x" * max(1, node.get("minLength", 1))
        if kind in ("integer", "number"):
            return max(0, node.get("minimum", 0))
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return {}


# -- the table ----------------------------------------------------------------------------------------


def table(results: list[Result]) -> str:
    rows = [("release", "mypy --strict", "ruff", "methods routed"), *(r.row() for r in results)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    ok = sum(r.ok for r in results)
    lines.append(f"{ok} of {len(results)} releases pass every check")
    return "\n".join(lines)


def details(results: list[Result], per_release: int = 5) -> str:
    """The first findings of each failing release, for the reader of the table."""
    lines = []
    for r in results:
        if r.ok:
            continue
        found = [*(["error: " + r.error] if r.error else []), *r.mypy, *r.ruff, *r.routing]
        lines.append(f"{r.release}: {len(found)} finding(s)")
        lines += [f"    {line}" for line in found[:per_release]]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    schemas = [Path(a).resolve() for a in argv] or all_releases()
    with tempfile.TemporaryDirectory(prefix="acpgen-corpus-") as out:
        results = check_releases(schemas, Path(out), progress=True)
    print(table(results))
    failing = details(results)
    if failing:
        print("\n" + failing)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
