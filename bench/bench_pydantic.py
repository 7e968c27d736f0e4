"""The pydantic flavour against the official ACP Python SDK (also pydantic v2), in one run.

Codec: decode + encode of a ``session/update`` and of a ``session/prompt`` with 1,000 content
blocks (the cases of bench_codec.py), interleaved round by round; ratio = ours / SDK's calls per
second (higher is better). Import: median time to import each package in a fresh interpreter
(lower is better), and the same plus the first decode, since the pydantic flavour builds a
class's validator when it is first used. Generation: ``acpgen generate --models pydantic`` of
the bundled schema into an empty folder against datamodel-code-generator's own CLI making the
pydantic v2 models alone (black formatting), each a fresh process, interleaved; ratio = ours /
baseline seconds (lower is better).

    python bench/bench_pydantic.py [--seconds S] [--runs N]      (or: make bench-pydantic)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_codec import SMALL, import_time, large_prompt, throughputs

from acpgen.pipeline import Options, generate

BUNDLED = ROOT / "acpgen" / "schema" / "schema.unstable.json"
PACKAGE = "acp_pydantic_bench"


def first_use_time(module: str, path: str, code: str, runs: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = path
    script = f"import time; t = time.perf_counter(); import {module}; {code}; print(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True)
        times.append(float(out.stdout))
    return statistics.median(times)


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per throughput measurement")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per import / generate figure")
    parser.add_argument("--skip-generate", action="store_true", help="leave out the generation figure")
    args = parser.parse_args()
    import acp
    from acp import schema as sdk

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for rel, text in generate(Options(package=PACKAGE, models="pydantic")).files.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text)
        sys.path.insert(0, str(work))
        ours = __import__(PACKAGE)

        print(f"baseline: agent-client-protocol {getattr(acp, '__version__', '0.12.1')} (pydantic v2)")
        print(f"{'case':40} {'SDK/s':>12} {'pydantic flavour/s':>19} {'ratio':>7}")
        cases = [
            ("session/update agent_message_chunk", SMALL, sdk.SessionNotification, ours.SessionNotification),
            ("session/prompt, 1000 content blocks", large_prompt(), sdk.PromptRequest, ours.PromptRequest),
        ]
        for name, data, sdk_type, our_type in cases:
            assert ours.encode(ours.decode(our_type, data)) == data
            assert sdk_type.model_validate(data).model_dump(by_alias=True, exclude_none=True) == data

            def baseline(d: Any = data, t: Any = sdk_type) -> Any:
                return t.model_validate(d).model_dump(by_alias=True, exclude_none=True)

            def candidate(d: Any = data, t: Any = our_type) -> Any:
                return ours.encode(ours.decode(t, d))

            base, mine = throughputs(baseline, candidate, args.seconds)
            print(f"{name:40} {base:12.0f} {mine:19.0f} {mine / base:6.2f}x")

        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(work / PACKAGE)], check=True, env=env)
        base_import = import_time("acp", None, args.runs)
        our_import = import_time(PACKAGE, tmp, args.runs)
        print(f"{'import time (median, s)':40} {base_import:12.4f} {our_import:19.4f} {our_import / base_import:6.3f}x"
              " (lower is better)")
        note = repr(SMALL)
        base_first = first_use_time("acp", tmp, f"acp.schema.SessionNotification.model_validate({note})", args.runs)
        our_first = first_use_time(PACKAGE, tmp, f"{PACKAGE}.decode({PACKAGE}.SessionNotification, {note})", args.runs)
        print(f"{'import + first decode (median, s)':40} {base_first:12.4f} {our_first:19.4f} "
              f"{our_first / base_first:6.3f}x (lower is better)")

        if args.skip_generate:
            return
        python = sys.executable
        baseline_cmd = [python, "-m", "datamodel_code_generator", "--input", str(BUNDLED), "--input-file-type",
                        "jsonschema", "--output-model-type", "pydantic_v2.BaseModel", "--formatters", "black",
                        "--output", str(work / "dmcg_models.py")]
        times: dict[str, list[float]] = {"baseline": [], "acpgen": []}
        for i in range(args.runs):
            times["baseline"].append(timed(baseline_cmd, work))
            out = work / f"out{i}"
            times["acpgen"].append(timed([python, "-m", "acpgen", "generate", "--models", "pydantic", "--out", str(out)],
                                         work))
        base_gen, our_gen = statistics.median(times["baseline"]), statistics.median(times["acpgen"])
        print(f"{'generate (median, s)':40} {base_gen:12.2f} {our_gen:19.2f} {our_gen / base_gen:6.2f}x"
              " (baseline: datamodel-code-generator, models alone; lower is better)")


if __name__ == "__main__":
    main()
