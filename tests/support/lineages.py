"""The corpus's lineages: each schema file's releases, oldest first.

``schema.json`` (the stable protocol) and ``schema.unstable.json`` run from the first release;
from v0.13.7 the ``v1-`` files continue them and the ``v2-`` files (a draft of protocol version 2)
start two lineages of their own.
"""

from __future__ import annotations

import re
from itertools import pairwise

from support import corpus_index


def release_order(tag: str) -> tuple[int, int, int, int, int]:
    """``v0.2.0-alpha.3`` -> (0, 2, 0, 0, 3); a release sorts after its pre-releases."""
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)(?:-alpha\.(\d+))?", tag)
    assert match, tag
    major, minor, patch, alpha = match.groups()
    return int(major), int(minor), int(patch), 0 if alpha is not None else 1, int(alpha or 0)


def lineages() -> dict[str, list[str]]:
    """lineage name (``schema.json``, ``schema.unstable.json``, ``v2-schema.json``, ...) -> files."""
    found: dict[str, list[tuple[tuple[int, ...], str]]] = {}
    for row in corpus_index():
        name = row["file"].split("--", 1)[1].removeprefix("v1-")
        found.setdefault(name, []).append((release_order(row["release_tag"]), row["file"]))
    return {name: [file for _, file in sorted(rows)] for name, rows in sorted(found.items())}


def consecutive_pairs() -> list[tuple[str, str]]:
    """Every (older, newer) pair of consecutive releases of one lineage."""
    return [(a, b) for files in lineages().values() for a, b in pairwise(files)]
