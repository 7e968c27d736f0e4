"""Time `acpgen diff` of two releases of the bundled schema's size, against reading one schema.

The pair: the bundled schema (ACP v0.12.2, unstable, 291 KB) and the next release of its lineage
(v0.13.0, unstable), from tests/data/corpus. Baseline: `acpgen methods --schema NEW`, which starts
the interpreter, reads and validates one schema and builds its method table. Every command runs as
its own process, the way a user runs it; runs are interleaved round by round and each figure is the
median of --repeat rounds. The in-process figure is `diff_schemas` alone, on loaded schemas.

    python bench/bench_diff.py [--repeat N]      (or: make bench-diff)
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD = ROOT / "acpgen" / "schema" / "schema.unstable.json"
NEW = ROOT / "tests" / "data" / "corpus" / "v0.13.0--schema.unstable.json"


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system) of one run of ``args`` as a process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(args)}\n{result.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process() -> tuple[float, float]:
    from acpgen.diff import diff_schemas
    from acpgen.schema.loader import load_schema

    old, new = load_schema(OLD), load_schema(NEW)
    start, cpu = time.perf_counter(), time.process_time()
    diff_schemas(old, new)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    acpgen = [sys.executable, "-m", "acpgen"]
    times: dict[str, list[tuple[float, float]]] = {"baseline": [], "files": [], "out": [], "in-process": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([*acpgen, "generate", "--schema", str(OLD), "--out", "out"], cwd=work, check=True,
                       capture_output=True)
        for _ in range(args.repeat):
            times["baseline"].append(timed([*acpgen, "methods", "--schema", str(NEW)], work))
            times["files"].append(timed([*acpgen, "diff", str(OLD), str(NEW)], work))
            times["out"].append(timed([*acpgen, "diff", "--out", "out", str(NEW)], work))
            times["in-process"].append(in_process())
    wall = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    print(f"acpgen diff {OLD.name} (v0.12.2) -> {NEW.name}, median of {args.repeat} interleaved rounds")
    print("                                         wall s   cpu s   wall / baseline")
    for name, label in (("baseline", "baseline: acpgen methods --schema NEW"), ("files", "acpgen diff OLD NEW"),
                        ("out", "acpgen diff --out DIR NEW"), ("in-process", "diff_schemas in process")):
        print(f"  {label:<38} {wall[name]:6.3f}  {cpu[name]:6.3f}   {wall[name] / wall['baseline']:.2f}x")


if __name__ == "__main__":
    main()
