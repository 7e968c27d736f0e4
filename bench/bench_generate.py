"""Time `acpgen generate` and `acpgen check` against datamodel-code-generator, in one run.

Baseline: datamodel-code-generator producing only the dataclass models for the same schema
(`--output-model-type dataclasses.dataclass`, black formatting). Every command runs as its own
process, the way a user runs it, so interpreter start-up and imports count on both sides. Runs are
interleaved and each figure is the median of --repeat runs. Two rows check packages other than the
bundled schema's: its pydantic flavour, and one of the SDK's v1 and v2. The last row is the library's case:
``generate()`` again in a process that has run it (``PYTHONPATH=<another checkout>`` times that
checkout's acpgen, for a before and after).

    python bench/bench_generate.py [--repeat N] [--schema FILE]      (or: make bench-generate)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "acpgen" / "schema" / "schema.unstable.json"
SDK_PAIR = (ROOT / "tests" / "data" / "sdk-schemas" / "v1-schema.unstable.json",
            ROOT / "tests" / "data" / "sdk-schemas" / "v2-schema.unstable.json")


def timed(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(args)}\n{result.stderr}")
    return elapsed


#: Time ``generate()`` of the schema ``argv[1]`` ``argv[2]`` times, in one process after a first run.
IN_PROCESS = """
import sys, time
from pathlib import Path
from acpgen.pipeline import Options, generate
options = Options(schema=Path(sys.argv[1]))
generate(options)
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    generate(options)
    print(time.perf_counter() - start)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--schema", type=Path, default=BUNDLED)
    args = parser.parse_args()
    schema = args.schema.resolve()
    python = sys.executable
    acpgen = [python, "-m", "acpgen"]
    baseline = [
        python, "-m", "datamodel_code_generator", "--input", str(schema), "--input-file-type", "jsonschema",
        "--output-model-type", "dataclasses.dataclass", "--formatters", "black", "--output", "models.py",
    ]
    times: dict[str, list[float]] = {
        "baseline": [], "cold": [], "first": [], "user": [], "warm": [], "check": [], "change": [], "pydantic": [],
        "versions": [], "library": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # The same document with other bytes: a schema acpgen has not seen, so it is validated afresh.
        user_schema = work / "user-schema.json"
        user_schema.write_bytes(schema.read_bytes() + b"\n")
        # The weekly case: the schema gains one optional field.
        changed = json.loads(schema.read_text())
        changed["$defs"]["PromptRequest"]["properties"]["benchNote"] = {"type": "string"}
        changed_schema = work / schema.name
        changed_schema.write_text(json.dumps(changed, indent=2))
        # Packages checked as they are: the pydantic flavour's, and one of the SDK's two versions.
        pydantic = ["--schema", str(schema), "--models", "pydantic", "--out", str(work / "pydantic")]
        versions = [*(a for s in SDK_PAIR for a in ("--schema", str(s))), "--out", str(work / "versions")]
        timed([*acpgen, "generate", *pydantic], work)
        timed([*acpgen, "generate", *versions], work)
        for i in range(args.repeat):
            times["baseline"].append(timed(baseline, work))
            times["pydantic"].append(timed([*acpgen, "check", *pydantic], work))
            times["versions"].append(timed([*acpgen, "check", *versions], work))
            out = work / f"out{i}"
            user = [*acpgen, "generate", "--schema", str(user_schema), "--out", str(work / f"user{i}")]
            times["user"].append(timed(user, work))
            shutil.rmtree(work / f"user{i}")
            # The very first run on a machine: no compiled templates in the temporary folder yet.
            first_tmp = work / f"tmp{i}"
            first_tmp.mkdir()
            first = [*acpgen, "generate", "--schema", str(schema), "--out", str(work / f"first{i}")]
            times["first"].append(timed(first, work, env={**os.environ, "TMPDIR": str(first_tmp)}))
            shutil.rmtree(work / f"first{i}")
            shutil.rmtree(first_tmp)
            times["cold"].append(timed([*acpgen, "generate", "--schema", str(schema), "--out", str(out)], work))
            times["warm"].append(timed([*acpgen, "generate", "--schema", str(schema), "--out", str(out)], work))
            times["check"].append(timed([*acpgen, "check", "--schema", str(schema), "--out", str(out)], work))
            times["change"].append(timed([*acpgen, "generate", "--schema", str(changed_schema), "--out", str(out)], work))
            shutil.rmtree(out)
        lines = (work / "models.py").read_text().count("\n")
        # A library user's (and the test suite's) case: generate() again in a process that has run it.
        library = subprocess.run([python, "-c", IN_PROCESS, str(user_schema), str(args.repeat)], cwd=work,
                                 capture_output=True, text=True, check=True)
        times["library"] = [float(line) for line in library.stdout.split()]
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["baseline"]
    print(f"schema: {schema.name}; median of {args.repeat} runs each, every run a fresh process")
    print(f"baseline  datamodel-code-generator 0.89 dataclasses + black ({lines} lines)      {base:6.2f} s   1.00x")
    rows = [
        ("cold", "acpgen generate into an empty folder", 0.5),
        ("first", "  the same, no compiled templates cached yet (a first run)", 0.5),
        ("user", "  the same, schema bytes never seen (meta-schema validation)", 0.5),
        ("warm", "acpgen generate over an up-to-date folder", 0.5),
        ("check", "acpgen check on an up-to-date folder", 0.2),
        ("change", "acpgen generate after the schema gained one optional field", None),
        ("pydantic", "acpgen check on an up-to-date folder, --models pydantic", None),
        ("versions", "acpgen check on an up-to-date package of the SDK's v1 and v2", None),
        ("library", "generate() in a process that has run it once (library, tests)", None),
    ]
    for name, label, goal in rows:
        ratio = median[name] / base
        verdict = "" if goal is None else f"   goal <= {goal:.2f}x: {'met' if ratio <= goal else 'NOT met'}"
        print(f"{name:<9} {label:<62}  {median[name]:6.2f} s  {ratio:5.2f}x{verdict}")


if __name__ == "__main__":
    main()
