"""A change to the generated codec, before against after: two packages in one process, round by round.

``before`` is the committed ``generated/acp_bindings`` at a git revision (``--before REV``),
``after`` the working tree's ``generated/acp_bindings`` (or ``--after FOLDER``, a package
folder). Both are copied under names of their own into one temporary folder and imported side
by side, so that every round times each workload with each package, in an order that rotates
from round to round (a machine busy with something else slows both alike):

* the codec rows of ``make bench-codec``: a line in, a line out (``json.loads``, ``decode``,
  ``encode_text``) for one ``agent_message_chunk`` notification and a ``session/prompt`` request
  of 1,000 content blocks, and the same through dicts (``encode`` + ``json.dumps``);
* ``from_json`` + ``to_json`` of the same two, and building the notification with constructors
  and writing its text;
* importing the models, then the package, in fresh interpreters (byte-code compiled ahead):
  CPU milliseconds above a bare interpreter; and the package again with no bytecode to read and
  none written (``PYTHONDONTWRITEBYTECODE=1``), as from a read-only install: its compiling.

It prints each figure's median and spread, and after / before (1.00x: no change).

Run: ``python bench/bench_codec_ab.py --before HEAD~1`` once the change is regenerated into
``generated/`` (``make bench-codec-ab BEFORE=REV BENCH_PYTHON=python3.12``); it needs only the
standard library.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _rounds import Figure, interleave
from bench_codec import SMALL, import_cpu, large_prompt, per_call

PACKAGE = "acp_bindings"
SIDES = ("before", "after")


def committed_package(rev: str, into: Path) -> None:
    """``generated/acp_bindings`` as committed at ``rev``, written to the folder ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, f"generated/{PACKAGE}"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar, tempfile.TemporaryDirectory() as tmp:
        tar.extractall(tmp, filter="data")
        shutil.copytree(Path(tmp) / "generated" / PACKAGE, into)


def workloads(package: Any) -> dict[str, Callable[[], Any]]:
    """Each workload of ``package``, checked to give the data back first."""
    models = importlib.import_module(f"{package.__name__}.models")
    loads, dumps = json.loads, json.dumps
    decode, encode, encode_text = package.decode, package.encode, package.encode_text
    found: dict[str, Callable[[], Any]] = {}
    for label, short, data, tp in (
        ("one agent_message_chunk line", "chunk", SMALL, models.SessionNotification),
        ("session/prompt, 1000 blocks", "prompt", large_prompt(), models.PromptRequest),
    ):
        line = dumps(data)

        def text(line: str = line, tp: Any = tp) -> Any:
            return encode_text(decode(tp, loads(line)))

        def dicts(line: str = line, tp: Any = tp) -> Any:
            return dumps(encode(decode(tp, loads(line))))

        def methods(data: Any = data, tp: Any = tp) -> Any:
            return tp.from_json(data).to_json()

        assert loads(text()) == data and loads(dicts()) == data and methods() == data
        found[f"codec: {label}"] = text
        found[f"  {short}: via encode() + json.dumps"] = dicts
        found[f"  {short}: from_json + to_json"] = methods
    chunk = models.SessionNotification
    update, block = models.AgentMessageChunk, models.Text

    def build() -> Any:
        return encode_text(chunk(session_id="sess_abc123def456", update=update(content=block(text="Hello, world"))))

    assert loads(build())["update"]["content"]["text"] == "Hello, world"
    found["constructors + encode_text, one chunk"] = build
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, metavar="REV", help="the git revision whose generated/ is the baseline")
    parser.add_argument("--after", type=Path, default=ROOT / "generated" / PACKAGE, metavar="FOLDER",
                        help="the package folder to compare (default: the working tree's generated/%(default)s)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=0.3, help="CPU seconds a workload runs each round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as plain:
        committed_package(args.before, Path(tmp) / "before")
        shutil.copytree(args.after, Path(tmp) / "after")
        for side in SIDES:
            shutil.copytree(Path(tmp) / side, Path(plain) / side, ignore=shutil.ignore_patterns("__pycache__"))
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tmp) / side)], check=True)
        sys.path.insert(0, tmp)
        packages = {side: importlib.import_module(side) for side in SIDES}
        runs = {side: workloads(package) for side, package in packages.items()}
        rows: list[tuple[str, str, dict[str, Figure]]] = []
        for name in runs["before"]:
            candidates = {side: per_call(runs[side][name], args.seconds) for side in SIDES}
            rows.append((name, "us CPU", interleave(candidates, args.rounds)))
        imports = interleave(
            {
                "bare": import_cpu("pass", None),
                **{f"models {side}": import_cpu(f"import {side}.models", tmp) for side in SIDES},
                **{f"package {side}": import_cpu(f"import {side}", tmp) for side in SIDES},
                "bare, no bytecode": import_cpu("pass", plain, bytecode=False),
                **{f"no bytecode {side}": import_cpu(f"import {side}", plain, bytecode=False) for side in SIDES},
            },
            args.rounds,
        )
        assert not list(Path(plain).rglob("__pycache__")), "a run without bytecode wrote some"
    for what, label in (
        ("models", "import the models, above a bare interpreter"),
        ("package", "import the package, above a bare interpreter"),
        ("no bytecode", "import the package, no bytecode, above bare"),
    ):
        bare = imports["bare, no bytecode" if what == "no bytecode" else "bare"].median
        figures = {side: imports[f"{what} {side}"] for side in SIDES}
        above = {s: Figure(f.median - bare, f.spread * f.median / (f.median - bare)) for s, f in figures.items()}
        rows.append((label, "ms CPU", above))
    print(f"before: generated/ at {args.before}; after: {args.after}; median of {args.rounds} interleaved rounds, "
          f"Python {sys.version.split()[0]}")
    print(f"{'workload':<48} {'unit':<7} {'before':>15} {'after':>15} {'after/before':>13}")
    for name, unit, figures in rows:
        cells = " ".join(f"{figures[s].median:>8.4g} ±{figures[s].spread * 100:>3.0f}%" for s in SIDES)
        print(f"{name:<48} {unit:<7} {cells} {figures['after'].median / figures['before'].median:>12.3f}x")


if __name__ == "__main__":
    main()
