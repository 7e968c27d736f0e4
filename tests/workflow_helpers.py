"""Helpers shared by the tests/test_workflow_*.py files."""

from __future__ import annotations

from pathlib import Path


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones too) with its bytes: compare before and after a run."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def one_error_line(result) -> str:
    """The run failed with exit status 2 and said so on exactly one line, with no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    return lines[0]
