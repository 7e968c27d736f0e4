"""What users read first: `--help` of every command and `--version`, compared with snapshots.

After an intended change: `ACPGEN_UPDATE_SNAPSHOTS=1 make test`, then review and commit the diff
under tests/data/snapshots/.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from support import DATA

from acpgen import __version__
from acpgen.cli import main

SNAPSHOTS = DATA / "snapshots"


@pytest.mark.parametrize("command", [(), ("methods",), ("generate",), ("check",)], ids=lambda c: "-".join(c) or "acpgen")
def test_help_matches_snapshot(command):
    result = CliRunner().invoke(main, [*command, "--help"], prog_name="acpgen", terminal_width=100)
    assert result.exit_code == 0
    snapshot = SNAPSHOTS / f"help-{'-'.join(command) or 'acpgen'}.txt"
    if os.environ.get("ACPGEN_UPDATE_SNAPSHOTS"):
        snapshot.write_text(result.output)
    assert result.output == snapshot.read_text()


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert (result.exit_code, result.output) == (0, f"acpgen, version {__version__}\n")
