"""``acpgen check`` of an up-to-date package imports only what a clean check uses: the pre-commit
hook runs it on every commit. Neither the schema validator (the manifest says the schema was
validated), nor the pydantic flavour's renderer, the layout pass (every render is reused), the
diff engine or the other commands. Jinja is imported: a check renders every template to compare
renders with the manifest's record."""

from __future__ import annotations

import subprocess
import sys

from support import ROOT

#: What a clean check of a dataclasses package must not import (modules, or packages by prefix).
NOT_USED = (
    "jsonschema", "referencing", "black", "datamodel_code_generator", "difflib",
    "acpgen.render.pydantic_models", "acpgen.render.pydantic_job", "acpgen.render.pydantic_layout",
    "acpgen.render.longlines", "acpgen.render.relocate", "acpgen.render.errors",
    "acpgen.diff", "acpgen.validate", "acpgen.cli.diffing", "acpgen.cli.validating",
)
CHECK = f"""
import sys
from acpgen.cli import main
try:
    main(["check"])
except SystemExit as exit:
    print(exit.code)
print(sorted(m for m in sys.modules if m in {NOT_USED!r} or m.startswith({tuple(f"{n}." for n in NOT_USED)!r})))
"""


def test_a_clean_check_imports_only_what_it_uses() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    status, imported = done.stdout.splitlines()
    assert status == "0", f"generated/ is not up to date: {done.stderr}"
    assert imported == "[]", imported
