"""The pydantic flavour against the official ACP Python SDK (also pydantic v2), in one run.

* Codec: the cases of bench_codec.py (a ``session/update`` line and a ``session/prompt`` of
  1,000 content blocks), line in, line out: ``floor`` is ``json.dumps(json.loads(line))``;
  ``acpgen`` is ``encode_text(decode(T, json.loads(line)))`` with a pydantic-flavoured package,
  what its runtime writes (pydantic-core writes the text), and on a row of its own
  ``json.dumps(encode(...))``, the way through dicts; ``sdk`` is what ``agent-client-protocol`` does on its wire (``T.model_validate``,
  ``model_dump(mode="json", by_alias=True, exclude_none=True)``). CPU microseconds per line.
* Import: CPU milliseconds of a fresh interpreter (byte-code compiled ahead) above a bare one,
  importing the package against ``import acp``; and the same plus the first decode of a
  ``session/update``, since the flavour builds a class's validator when it is first used.
* Leniency: what the ``x-deserialize-*`` repairs (the ``lenient(...)`` validators) cost valid
  input, decoded and written back as above, with the package of ACP's v2 draft (the bundled
  schema has no such annotations) against the same package with the validators taken out (the
  floor column): an ``agent_message_chunk`` line, a ``tool_call_update`` with five such fields
  set, and a ``session/prompt`` of 1,000 content blocks.
* Generation (unless ``--skip-generate``): ``acpgen generate --models pydantic`` of the bundled
  schema into an empty folder against datamodel-code-generator's own command line making the
  pydantic v2 models alone (black formatting), CPU seconds of each process; the baseline is in
  the floor column (``vs floor`` below 1.00x: acpgen is faster).

Every figure is the median of interleaved rounds with its spread (see _rounds.py).

Run: ``make bench-pydantic`` (or ``.venv/bin/python bench/bench_pydantic.py [--rounds N]``).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import acp  # the baseline SDK
from _rounds import FLOOR, OURS, SDK, Figure, Row, interleave, table
from bench_codec import SMALL, import_cpu, large_prompt, line_pipelines, per_call

from acpgen.pipeline import Options, generate

ROUNDS = 9
BUNDLED = ROOT / "acpgen" / "schema" / "schema.unstable.json"
PACKAGE = "acp_pydantic_bench"


@cache
def folder() -> Path:
    """A temporary folder holding the freshly generated pydantic package, byte-code compiled."""
    path = Path(tempfile.mkdtemp(prefix="bench-pydantic-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    for rel, text in generate(Options(package=PACKAGE, models="pydantic")).files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / PACKAGE)], check=True, env=env)
    return path


def package() -> ModuleType:
    if str(folder()) not in sys.path:
        sys.path.insert(0, str(folder()))
    return __import__(PACKAGE)


def codec_rows(rounds: int = ROUNDS, seconds: float = 0.3) -> list[Row]:
    from acp import schema as sdk

    ours = package()
    cases = [
        ("pydantic codec: one agent_message_chunk line", SMALL, sdk.SessionNotification, ours.SessionNotification),
        ("pydantic codec: session/prompt, 1000 blocks", large_prompt(), sdk.PromptRequest, ours.PromptRequest),
    ]
    rows = []
    for name, data, sdk_type, our_type in cases:
        floor, acpgen, acpgen_dicts, baseline = line_pipelines(ours, our_type, sdk_type, data)
        candidates = {
            FLOOR: per_call(floor, seconds),
            OURS: per_call(acpgen, seconds),
            SDK: per_call(baseline, seconds),
            "dicts": per_call(acpgen_dicts, seconds),
        }
        figures = interleave(candidates, rounds)
        dicts = figures.pop("dicts")
        rows.append(Row(name, "us CPU/line", figures))
        rows.append(Row("  the same, acpgen via encode() + json.dumps", "us CPU/line", {FLOOR: figures[FLOOR], OURS: dicts, SDK: figures[SDK]}))
    return rows


def import_rows(rounds: int = ROUNDS) -> list[Row]:
    """Import cost above a bare interpreter (medians of interleaved rounds, then subtracted)."""
    path = str(folder())
    note = repr(SMALL)
    figures = interleave(
        {
            "bare": import_cpu("pass", None),
            "package": import_cpu(f"import {PACKAGE}", path),
            SDK: import_cpu("import acp", None),
            "package+decode": import_cpu(f"import {PACKAGE} as p; p.decode(p.SessionNotification, {note})", path),
            "sdk+decode": import_cpu(f"import acp; acp.schema.SessionNotification.model_validate({note})", None),
        },
        rounds,
    )
    bare = figures["bare"].median

    def above(figure: Figure) -> Figure:
        return Figure(figure.median - bare, figure.spread * figure.median / (figure.median - bare))

    return [
        Row("import the pydantic package, above bare", "ms CPU", {OURS: above(figures["package"]), SDK: above(figures[SDK])}),
        Row("  the same and a first session/update decode", "ms CPU",
            {OURS: above(figures["package+decode"]), SDK: above(figures["sdk+decode"])}),
    ]


V2_DRAFT = ROOT / "tests" / "data" / "sdk-schemas" / "v2-schema.json"
V2_CHUNK = {"sessionId": "s1", "update": {**SMALL["update"], "messageId": "m1"}}
V2_TOOL_CALL = {"sessionId": "s1", "update": {
    "sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Reading file", "kind": "read",
    "status": "in_progress", "locations": [{"path": "/src/main.py", "line": 3}],
    "content": [{"type": "content", "content": {"type": "text", "text": "hello"}}]}}


def leniency_rows(rounds: int = ROUNDS, seconds: float = 0.3) -> list[Row]:
    """The v2 draft's package against itself without its ``lenient(...)`` validators."""
    names = {OURS: f"{PACKAGE}_v2", FLOOR: f"{PACKAGE}_v2_plain"}
    package()  # the folder on sys.path
    for name in names.values():
        if not (folder() / name).exists():
            files = generate(Options(schema=V2_DRAFT, package=name, models="pydantic", protocol_version=2)).files
            for rel, text in files.items():
                if name == names[FLOOR] and rel.endswith("/models.py"):
                    text = re.sub(r"lenient\([^()]*\)", "Field()", text)  # a marker that does nothing
                (folder() / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder() / rel).write_text(text)
    packages = {who: importlib.import_module(name) for who, name in names.items()}
    cases = [
        ("x-deserialize cost: v2 agent_message_chunk", "UpdateSessionNotification", V2_CHUNK),
        ("x-deserialize cost: v2 tool_call_update", "UpdateSessionNotification", V2_TOOL_CALL),
        ("x-deserialize cost: v2 prompt, 1000 blocks", "PromptRequest", {**large_prompt(), "sessionId": "s1"}),
    ]
    rows = []
    for workload, type_name, data in cases:
        line = json.dumps(data)
        candidates = {}
        for who, p in packages.items():
            tp = getattr(p, type_name)
            assert json.loads(p.encode_text(p.decode(tp, json.loads(line)))) == data
            candidates[who] = per_call(lambda p=p, tp=tp, line=line: p.encode_text(p.decode(tp, json.loads(line))), seconds)
        rows.append(Row(workload, "us CPU/line", interleave(candidates, rounds)))
    return rows


def process_cpu(command: list[str], cwd: Path) -> float:
    """CPU seconds of one run of ``command`` (a fresh process, its children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def generate_rows(rounds: int = ROUNDS) -> list[Row]:
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        baseline = [
            python, "-m", "datamodel_code_generator", "--input", str(BUNDLED), "--input-file-type", "jsonschema",
            "--output-model-type", "pydantic_v2.BaseModel", "--formatters", "black", "--output", "models.py",
        ]
        out = work / "out"

        def ours(_round: int) -> float:
            shutil.rmtree(out, ignore_errors=True)  # into an empty folder, every round
            return process_cpu([python, "-m", "acpgen", "generate", "--models", "pydantic", "--out", str(out)], work)

        def dmcg(_round: int) -> float:
            return process_cpu(baseline, work)

        figures = interleave({OURS: ours, FLOOR: dmcg}, rounds)
    return [Row("generate --models pydantic (floor: dmcg models)", "s CPU", figures)]


def rows(rounds: int = ROUNDS, with_generate: bool = True) -> list[Row]:
    found = codec_rows(rounds) + leniency_rows(rounds) + import_rows(rounds)
    return found + generate_rows(rounds) if with_generate else found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--skip-generate", action="store_true", help="leave out the generation row")
    args = parser.parse_args()
    print(f"the pydantic flavour, median of {args.rounds} interleaved rounds, ± spread (slowest - fastest) / median;"
          f" sdk: agent-client-protocol {getattr(acp, '__version__', '')}")
    print("vs floor: acpgen / floor (lower is better); sdk/ours: sdk / acpgen (higher is better, goal >= 1.00x)")
    print(table(rows(args.rounds, with_generate=not args.skip_generate)))


if __name__ == "__main__":
    main()
