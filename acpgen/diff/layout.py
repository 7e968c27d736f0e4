"""What regenerating moves for the user's code when a package's protocol versions change.

A package of one version holds that version's API at its root (``myagent.acp``); one of several
holds each under a subpackage (``myagent.acp.v1``, ``myagent.acp.v2``) and, at its root, the API
of its root version (:func:`acpgen.versioned.root_version`), or none for a package of an earlier
acpgen that records no root version. Comparing the layout on disk with the configured one says
which versions come and go, which subpackages appear or vanish, and whether the root's API
changes, each with the edit it asks of code that imports the package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .changes import Change, ordered, severity


@dataclass(frozen=True)
class Layout:
    """A package's protocol versions and the one whose API its root holds."""

    versions: tuple[int, ...]  # ascending
    root: int | None  # None: the root holds no version's API (several versions, an earlier acpgen)

    @property
    def subpackages(self) -> frozenset[int]:
        """The versions with a subpackage ``v<N>`` of their own: every one, when there are several."""
        return frozenset(self.versions) if len(self.versions) > 1 else frozenset()

    def shown(self) -> str:
        """``v1``; ``v1 and v2, root v1``; ``v1 and v2`` (no version's API at the root)."""
        listed = " and ".join(f"v{n}" for n in self.versions)
        return f"{listed}, root v{self.root}" if self.root is not None and len(self.versions) > 1 else listed


def layout_moves(
    package: str, old: Layout, new: Layout, files: Mapping[int, str] | None = None
) -> tuple[Change, ...]:
    """The moves from the layout on disk (``old``) to the configured one (``new``), most severe first;
    ``files``: the schema file of each configured version, as the user named it."""
    found: list[Change] = []

    def add(kind: str, subject: str, detail: str, breaks: str, python: str, python_breaks: bool = False) -> None:
        found.append(Change(kind, subject, detail, breaks, "stable", python, severity(kind, breaks, python_breaks)))

    root_moves = old.root is not None and new.root != old.root
    for number in sorted(set(new.versions) - set(old.versions)):
        where = f"new subpackage {package}.v{number}" if number in new.subpackages else f"the root {package}"
        keeps = f"; the root {package} keeps v{old.root}'s API" if old.root is not None and not root_moves else ""
        source = f" ({files[number]})" if files and number in files else ""
        add("version-added", f"v{number}", f"protocol version {number} added{source}", "nobody",
            f"{where} holds v{number}'s API{keeps}" + ("" if root_moves else "; no import changes"))
    for number in sorted(set(old.versions) - set(new.versions)):
        if number in old.subpackages:
            python = f"imports of {package}.v{number} break"
        else:
            python = f"the root {package} no longer holds v{number}'s API"
        add("version-removed", f"v{number}", f"protocol version {number} removed: a peer that speaks only"
            f" v{number} can no longer connect", "both", python, True)
    for number in sorted((new.subpackages - old.subpackages) & set(old.versions)):
        add("subpackage-added", f"{package}.v{number}", f"v{number}'s API also under {package}.v{number}", "nobody",
            f"{package}.v{number} holds the API the root {package} holds; no import changes")
    for number in sorted((old.subpackages - new.subpackages) & set(new.versions)):
        add("subpackage-removed", f"{package}.v{number}", f"v{number}'s API only at the root {package}", "nobody",
            f"imports of {package}.v{number} break: import from {package} instead"
            f" ({package}.v{number}.models -> {package}.models)", True)
    if root_moves:
        add("root-version-changed", package, f"the root holds v{new.root}'s API (was v{old.root}'s)", "nobody",
            f"imports from {package} now get v{new.root}'s API: port the code that uses them from v{old.root}'s"
            f" API to v{new.root}'s", True)
    elif old.root is None and new.root is not None and len(old.versions) > 1 and found:  # shown with other moves
        add("root-version-changed", package, f"the root holds v{new.root}'s API (held none)", "nobody",
            f"imports from {package} get v{new.root}'s API (new)")
    return ordered(found)
