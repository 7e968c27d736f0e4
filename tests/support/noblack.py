"""Generating where black cannot be imported, as on a plain ``pip install .``, against generating
where it can: the same bytes, or the error acpgen gives without black.

``python tests/support/noblack.py [--black] [FILE ...]`` (``make corpus-noblack``) does it for every
release of ``tests/data/corpus`` and ``tests/data/sdk-schemas`` (or the named files): it prints one
row per release that differs and a last line "N of M identical" with the time it took, and exits 1
unless all are identical. ``--black`` also checks that black (pinned, in acpgen's mode) leaves every
generated module unchanged (slow: black takes seconds on each ``models.py``).
``tests/render/test_no_black.py`` runs :func:`without_black` over a spread of releases.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from acpgen.diagnostics import DiagnosticError
from acpgen.output.formatting import FormattingError, format_python
from acpgen.pipeline import Options, generate
from support.corpus_harness import all_releases, release_name

#: Run in a fresh interpreter: ``import black`` fails there, then each schema named on the
#: command line is generated and its files' sha256 (or the error) printed as one JSON object.
_BLOCKED = """
import hashlib, json, sys
sys.modules["black"] = None  # import black raises ImportError, as where it is not installed
from pathlib import Path
from acpgen.diagnostics import DiagnosticError
from acpgen.output.formatting import FormattingError
from acpgen.pipeline import Options, generate
out = {}
for name in sys.argv[1:]:
    try:
        files = generate(Options(schema=Path(name))).files
    except (FormattingError, DiagnosticError) as exc:
        out[name] = str(exc)
    else:
        out[name] = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in files.items()}
print(json.dumps(out))
"""


def without_black(schemas: list[Path]) -> dict[str, dict[str, str] | str]:
    """Each schema's files (path -> sha256), or acpgen's error, generated in a process where
    ``import black`` fails."""
    run = subprocess.run([sys.executable, "-c", _BLOCKED, *map(str, schemas)], capture_output=True, text=True, check=False)
    if run.returncode:
        raise RuntimeError(run.stderr)
    return json.loads(run.stdout)


def with_black(schema: Path) -> dict[str, str]:
    """The schema's files (path -> text), generated here, where black can be imported."""
    return generate(Options(schema=schema)).files


def differences(schema: Path, blocked: dict[str, str] | str, check_black: bool = False) -> list[str]:
    """What differs between the two runs (empty: identical), and with ``check_black`` each module
    black would change."""
    try:
        files = with_black(schema)
    except (FormattingError, DiagnosticError) as exc:
        return [f"with black: {exc}"]
    if isinstance(blocked, str):
        return [f"without black: {blocked}"]
    digests = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in files.items()}
    found = [f"{path}: differs" for path in sorted(set(digests) | set(blocked)) if digests.get(path) != blocked.get(path)]
    if check_black:
        found += [f"{path}: black changes it" for path, text in files.items()
                  if path.endswith(".py") and format_python(text, path) != text]
    return found


def main(argv: list[str]) -> int:
    check_black = "--black" in argv
    schemas = [Path(a) for a in argv if a != "--black"] or all_releases()
    start = time.perf_counter()
    blocked = without_black(schemas)
    same = 0
    for schema in schemas:
        found = differences(schema, blocked[str(schema)], check_black)
        if found:
            print(f"{release_name(schema)}: " + "; ".join(found), flush=True)
        else:
            same += 1
    what = "identical with and without black" + (", and unchanged by black" if check_black else "")
    print(f"{same} of {len(schemas)} {what} ({time.perf_counter() - start:.0f} s)")
    return 0 if same == len(schemas) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
