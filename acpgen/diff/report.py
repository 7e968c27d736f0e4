"""The three forms of ``acpgen diff``'s report: lines (the default), JSON and Markdown."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .changes import SEVERITIES, Change

FORMATS = ("text", "json", "markdown")
FAIL_ON = ("breaking", "unstable-breaking", "any")

_HEADINGS = {
    "breaking": "Breaking on the wire",
    "python": "Wire-compatible, but the generated Python changes incompatibly",
    "compatible": "Compatible",
    "info": "Names `acpgen generate --renew-names` would change",
}


def fails(changes: Sequence[Change], fail_on: str | None) -> bool:
    """Whether ``--fail-on`` makes these changes exit 1.

    ``breaking``: a stable change that breaks a peer or code using the generated package;
    ``unstable-breaking``: such a change in either tier; ``any``: any change at all (names that
    only ``--renew-names`` would change do not count)."""
    if fail_on is None:
        return False
    if fail_on == "any":
        return any(c.severity != "info" for c in changes)
    harmful = [c for c in changes if c.severity in ("breaking", "python")]
    return any(c.tier == "stable" for c in harmful) if fail_on == "breaking" else bool(harmful)


def summary(changes: Sequence[Change]) -> str:
    counts = [f"{sum(c.severity == s for c in changes)} {s}" for s in SEVERITIES if any(c.severity == s for c in changes)]
    listed = len([c for c in changes if c.severity != "info"])
    return f"{listed} change(s)" + (f" ({', '.join(counts)})" if counts else "")


def as_text(changes: Sequence[Change]) -> str:
    """One line per change, grouped by severity."""
    lines = []
    for severity in SEVERITIES:
        group = [c for c in changes if c.severity == severity]
        if not group:
            continue
        lines.append(f"{severity} ({len(group)}):")
        for c in group:
            effect = f"; python: {c.python}" if c.python else ""
            wire = " on the wire" if c.severity == "python" else ""  # the Python breaks: never "breaks nobody" alone
            lines.append(f"  {c.kind} [{c.tier}] {c.subject}: {c.detail} (breaks {c.breaks}{wire}){effect}")
    return "".join(line + "\n" for line in lines)


def as_json(changes: Sequence[Change]) -> str:
    return json.dumps([c.as_json() for c in changes], indent=2) + "\n"


def as_markdown(changes: Sequence[Change], old: str, new: str) -> str:
    """A report ready to paste into a pull-request comment."""
    lines = [f"### acpgen diff: `{old}` -> `{new}`", "", f"**{summary(changes)}**"]
    for severity in SEVERITIES:
        group = [c for c in changes if c.severity == severity]
        if not group:
            continue
        lines += ["", f"#### {_HEADINGS[severity]} ({len(group)})", "",
                  "| Change | Subject | Breaks | Tier | Detail | Generated Python |", "|---|---|---|---|---|---|"]
        for c in group:
            cells = (c.kind, f"`{c.subject}`", c.breaks, c.tier, c.detail, c.python or "-")
            lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
