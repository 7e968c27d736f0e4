"""What ``acpgen diff`` reports: the kinds of change, who a change breaks, its tier and severity,
and the record (:class:`Change`) that says all of it.

*Who breaks*: a change that makes a message valid under one schema invalid under the other breaks
a side. ``sender``: what an old sender sends is no longer accepted (a new required field, a
narrowed type). ``receiver``: a new sender may send what an old receiver rejects (a new enum value,
a new variant, a removed required field). ``both``, or ``nobody`` (wire-compatible).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Every kind of change ``acpgen diff`` reports, with what it means (documented in docs/reference/cli.md).
KINDS: dict[str, str] = {
    "method-added": "a method appeared",
    "method-removed": "a method is gone",
    "method-kind-changed": "a request became a notification or the other way round",
    "params-type-renamed": "a method's params type has another $def",
    "result-type-renamed": "a method's result type has another $def",
    "method-made-unstable": "a stable method is marked unstable",
    "method-made-stable": "an unstable method is no longer marked unstable",
    "def-added": "a $def appeared",
    "def-removed": "a $def is gone",
    "def-renamed": "a $def is gone and one of the same shape appeared under another name, at the same place",
    "def-kind-changed": "a $def changed between class, union, literals and alias",
    "variant-added": "a union gained a variant (matched by tag, title or ref)",
    "variant-removed": "a union lost a variant",
    "tag-changed": "a class's fixed (tag) property changed",
    "field-added": "a class gained an optional field",
    "field-added-required": "a class gained a required field",
    "field-removed": "a class lost a field",
    "field-made-required": "an optional field became required",
    "field-made-optional": "a required field became optional",
    "nullability-changed": "a field or type started or stopped accepting null",
    "type-changed": "a field's or alias's type changed",
    "type-renamed": "a field's or alias's type is the same shape under another $def",
    "enum-value-added": "a set of values gained one",
    "enum-value-removed": "a set of values lost one",
    "enum-opened": "a closed set of values now also accepts any other value",
    "enum-closed": "an open set of values no longer accepts other values",
    "annotation-added": "an x-deserialize-* annotation appeared",
    "annotation-removed": "an x-deserialize-* annotation is gone",
    "name-renewable": "`acpgen generate --renew-names` would give an entity another Python name",
    "version-added": "the package gains a protocol version",
    "version-removed": "the package loses a protocol version",
    "subpackage-added": "a version's API also appears under a subpackage of its own",
    "subpackage-removed": "a version's subpackage is gone, its API only at the package's root",
    "root-version-changed": "the package's root holds another version's API",
}

#: Severities, most severe first. ``breaking``: breaks a peer on the wire. ``python``:
#: wire-compatible, but code written against the generated package may break. ``compatible``:
#: neither. ``info``: no change unless asked for (``--renew-names``).
SEVERITIES = ("breaking", "python", "compatible", "info")
BREAKS = ("sender", "receiver", "both", "nobody")
TIERS = ("stable", "unstable")


@dataclass(frozen=True)
class Change:
    """One change, as ``acpgen diff --format json`` lists it."""

    kind: str  # one of KINDS
    subject: str  # what changed, by its wire names: "session/prompt (agent)", "ContentBlock/text.uri"
    detail: str  # what changed about it, in words
    breaks: str  # one of BREAKS
    tier: str  # one of TIERS
    python: str  # what it does to the generated Python ("" when nothing)
    severity: str  # one of SEVERITIES

    def as_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "detail": self.detail,
            "breaks": self.breaks,
            "tier": self.tier,
            "python": self.python,
            "severity": self.severity,
        }


def severity(kind: str, breaks: str, python_breaks: bool) -> str:
    """``breaking`` when a side breaks, else ``python`` when code using the package may, else
    ``compatible``; a name only ``--renew-names`` would change is ``info``."""
    if kind == "name-renewable":
        return "info"
    return "breaking" if breaks != "nobody" else "python" if python_breaks else "compatible"


def ordered(changes: Iterable[Change]) -> tuple[Change, ...]:
    """Most severe first; stable before unstable; then by kind and subject."""
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return tuple(sorted(changes, key=lambda c: (order[c.severity], c.tier != "stable", c.kind, c.subject)))


def tier(unstable: bool) -> str:
    return "unstable" if unstable else "stable"
