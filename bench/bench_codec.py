"""Codec benchmark: the typed line pipeline against plain ``json`` and the official SDK, in one run.

Each line of a workload goes line in, line out, three ways:

* ``floor``: ``json.dumps(json.loads(line))``, what the same work costs without types;
* ``acpgen``: ``encode_text(decode(T, json.loads(line)))`` with the generated package, what its
  runtime writes (and, on a row of its own, ``json.dumps(encode(...))``, the way through dicts);
* the floor again, dumping with the prebuilt compact C encoder the runtime writes with;
* ``sdk``: what ``agent-client-protocol`` does with a line on its wire: ``json.loads``,
  ``T.model_validate``, ``model_dump(mode="json", by_alias=True, exclude_none=True)``,
  ``json.dumps``; and, on a row of its own, pydantic's own JSON path
  (``model_validate_json`` / ``model_dump_json``), which the SDK does not use but a user could;
* when orjson is installed, a row of acpgen reading lines with ``orjson.loads`` (what
  ``json_backend="orjson"`` does) against the same floor.

The cost is CPU microseconds per line, median of interleaved rounds (the order rotates each
round) with its spread. Then import cost, in fresh interpreters with byte-code compiled ahead (as
an installed package has): CPU milliseconds above a bare interpreter, for the package, its models
alone, and ``import acp``; and the package and ``import acp`` again with no bytecode to read and
none written (``PYTHONDONTWRITEBYTECODE=1``, copies of both without theirs), as from a read-only
install: what compiling their source costs each run.

Run: ``make bench-codec`` (or ``.venv/bin/python bench/bench_codec.py``); ``make bench`` prints it
with the runtime figures in one table.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GENERATED = ROOT / "generated"
sys.path.insert(0, str(GENERATED))
sys.path.insert(0, str(HERE))

import acp_bindings
from _rounds import FLOOR, OURS, SDK, Figure, Row, interleave, table

ROUNDS = 9

SMALL: dict[str, Any] = {
    "sessionId": "sess_abc123def456",
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "I'll analyze your code for potential issues. Let me examine it..."},
    },
}


def large_prompt(blocks: int = 1000) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for i in range(blocks):
        if i % 4 == 3:
            content.append(
                {
                    "type": "resource",
                    "resource": {"uri": f"file:///home/user/project/src/file{i}.py", "mimeType": "text/x-python",
                                 "text": "def main():\n    print('hello')\n"},
                }
            )
        elif i % 4 == 2:
            content.append({"type": "resource_link", "uri": f"file:///home/user/project/doc{i}.md", "name": f"doc{i}.md"})
        else:
            content.append({"type": "text", "text": f"Paragraph {i}: please look at the function below and explain it."})
    return {"sessionId": "sess_abc123def456", "prompt": content}


def per_call(function: Callable[[], Any], seconds: float) -> Callable[[int], float]:
    """A candidate for :func:`interleave`: CPU microseconds per call of ``function``, timed over
    enough calls to take about ``seconds``."""
    function()
    start = time.process_time()
    calls = 0
    while time.process_time() - start < 0.05:
        function()
        calls += 1
    number = max(1, int(calls * seconds / 0.05))

    def run(_round: int) -> float:
        gc.collect()  # start from no garbage of the candidate before (its collections are its own)
        start = time.process_time()
        for _ in range(number):
            function()
        return (time.process_time() - start) * 1e6 / number

    return run


def import_cpu(code: str, path: str | None, bytecode: bool = True) -> Callable[[int], float]:
    """A candidate for :func:`interleave`: CPU milliseconds of a fresh interpreter running ``code``
    (with ``bytecode=False``, writing no bytecode: what ``path`` holds without it is compiled on
    every run, as for a read-only install)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    if path:
        env["PYTHONPATH"] = path
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    command = [sys.executable, "-c", code]
    subprocess.run(command, env=env, check=True)  # warm caches

    def run(_round: int) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, env=env, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3

    return run


def line_pipelines(package: Any, our_type: Any, sdk_type: Any, data: Any) -> tuple[Callable[[], Any], ...]:
    """A line of ``data``, line in, line out: the floor (``json.dumps(json.loads(line))``),
    ``package``'s way (decode, ``encode_text``), its way through dicts (decode, ``encode``,
    ``json.dumps``) and the SDK's (``model_validate``, ``model_dump``, ``json.dumps``). Each is
    checked to give back ``data`` first."""
    line = json.dumps(data)
    loads, dumps, decode, encode, encode_text = json.loads, json.dumps, package.decode, package.encode, package.encode_text

    def floor() -> Any:
        return dumps(loads(line))

    def ours() -> Any:
        return encode_text(decode(our_type, loads(line)))

    def ours_dicts() -> Any:
        return dumps(encode(decode(our_type, loads(line))))

    def baseline() -> Any:
        return dumps(sdk_type.model_validate(loads(line)).model_dump(mode="json", by_alias=True, exclude_none=True))

    pipelines = floor, ours, ours_dicts, baseline
    assert all(loads(pipeline()) == data for pipeline in pipelines)
    return pipelines


def codec_rows(rounds: int = ROUNDS, seconds: float = 0.3) -> list[Row]:
    from acp import schema as sdk

    try:  # what json_backend="orjson" reads lines with, when installed
        from orjson import loads as orjson_loads
    except ImportError:
        orjson_loads = None

    cases = [
        ("codec: one agent_message_chunk line", SMALL, sdk.SessionNotification, acp_bindings.SessionNotification),
        ("codec: session/prompt, 1000 blocks", large_prompt(), sdk.PromptRequest, acp_bindings.PromptRequest),
    ]
    loads, decode, encode_text = json.loads, acp_bindings.decode, acp_bindings.encode_text
    dump_json = acp_bindings._codec.dump_json
    rows = []
    for name, data, sdk_type, our_type in cases:
        line = json.dumps(data)
        assert json.loads(sdk_type.model_validate_json(line).model_dump_json(by_alias=True, exclude_none=True)) == data
        floor, ours, ours_dicts, baseline = line_pipelines(acp_bindings, our_type, sdk_type, data)

        def compact_floor(line: str = line) -> Any:
            return dump_json(loads(line))

        def pydantic_json(line: str = line, t: Any = sdk_type) -> Any:
            return t.model_validate_json(line).model_dump_json(by_alias=True, exclude_none=True)

        candidates = {
            FLOOR: per_call(floor, seconds),
            OURS: per_call(ours, seconds),
            SDK: per_call(baseline, seconds),
            "compact": per_call(compact_floor, seconds),
            "dicts": per_call(ours_dicts, seconds),
            "pydantic": per_call(pydantic_json, seconds),
        }
        if orjson_loads is not None:

            def ours_orjson(line: bytes = line.encode(), t: Any = our_type) -> Any:
                return encode_text(decode(t, orjson_loads(line)))

            candidates["orjson"] = per_call(ours_orjson, seconds)
        figures = interleave(candidates, rounds)
        compact, dicts, pydantic = figures.pop("compact"), figures.pop("dicts"), figures.pop("pydantic")
        fast = figures.pop("orjson", None)
        rows.append(Row(name, "us CPU/line", figures))
        rows.append(Row("  the same, floor dumping with a prebuilt compact encoder", "us CPU/line", {FLOOR: compact, OURS: figures[OURS]}))
        rows.append(Row("  the same, acpgen via encode() + json.dumps", "us CPU/line", {FLOOR: figures[FLOOR], OURS: dicts, SDK: figures[SDK]}))
        rows.append(Row("  the same, sdk via pydantic's JSON path", "us CPU/line", {OURS: figures[OURS], SDK: pydantic}))
        if fast is not None:
            rows.append(Row("  the same, acpgen reading with orjson", "us CPU/line", {FLOOR: figures[FLOOR], OURS: fast, SDK: figures[SDK]}))
    return rows


def without_bytecode(code: str, into: Path) -> None:
    """Copy into the folder ``into`` the packages outside the standard library that running
    ``code`` imports, without their bytecode: put first on the path, they are what a read-only
    install of them is when no bytecode was compiled ahead."""
    found = subprocess.run(
        [sys.executable, "-c", f"import sys; {code}; print('\\n'.join(sys.modules))"], capture_output=True, text=True, check=True
    ).stdout.split()
    site = {Path(p).resolve() for p in sys.path if p.endswith("site-packages")}
    for top in sorted({name.split(".")[0] for name in found} - set(sys.stdlib_module_names)):
        module = importlib.import_module(top)
        for where in [Path(p) for p in getattr(module, "__path__", [])] or [Path(str(module.__file__))]:
            if where.resolve().parent not in site:
                continue  # the standard library's, or a folder already without bytecode
            if where.is_dir():
                shutil.copytree(where, into / where.name, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
            else:
                shutil.copy2(where, into / where.name)


def import_rows(rounds: int = ROUNDS) -> list[Row]:
    """Import cost above a bare interpreter (medians of interleaved rounds, then subtracted): with
    bytecode compiled ahead, as an installed package has; and with none, as a read-only install or
    a vendored copy where no bytecode may be written (``PYTHONDONTWRITEBYTECODE=1``), the SDK's
    packages copied the same way (the standard library keeps its bytecode in both)."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as plain:
        copy = Path(tmp) / "acp_bindings"
        shutil.copytree(GENERATED / "acp_bindings", copy)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(copy)], check=True, env=env)
        shutil.copytree(GENERATED / "acp_bindings", Path(plain) / "acp_bindings", ignore=shutil.ignore_patterns("__pycache__"))
        without_bytecode("import acp", Path(plain))
        figures = interleave(
            {
                "bare": import_cpu("pass", None),
                "package": import_cpu("import acp_bindings", tmp),
                "models": import_cpu("import acp_bindings.models", tmp),
                SDK: import_cpu("import acp", None),
                "bare, no bytecode": import_cpu("pass", plain, bytecode=False),
                "package, no bytecode": import_cpu("import acp_bindings", plain, bytecode=False),
                "sdk, no bytecode": import_cpu("import acp", plain, bytecode=False),
            },
            rounds,
        )
        assert not list(Path(plain).rglob("__pycache__")), "a run without bytecode wrote some"

    def above(figure: Figure, bare: str = "bare") -> Figure:
        base = figures[bare].median
        return Figure(figure.median - base, figure.spread * figure.median / (figure.median - base))

    plain_bare = "bare, no bytecode"
    return [
        Row("import the package, above a bare interpreter", "ms CPU", {OURS: above(figures["package"]), SDK: above(figures[SDK])}),
        Row("import its models alone, above bare", "ms CPU", {OURS: above(figures["models"]), SDK: above(figures[SDK])}),
        Row(
            "import the package, no bytecode, above bare",
            "ms CPU",
            {OURS: above(figures["package, no bytecode"], plain_bare), SDK: above(figures["sdk, no bytecode"], plain_bare)},
        ),
    ]


def rows(rounds: int = ROUNDS) -> list[Row]:
    return codec_rows(rounds) + import_rows(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    args = parser.parse_args()
    import acp  # the baseline SDK (imported here: bench_codec_ab.py reuses this module without it)

    print(f"codec line pipeline and import, median of {args.rounds} interleaved rounds; sdk: agent-client-protocol {getattr(acp, '__version__', '')}")
    print(table(rows(args.rounds)))


if __name__ == "__main__":
    main()
