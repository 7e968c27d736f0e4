"""The ``x-deserialize-*`` annotations gained and lost: the generated decoders do not read them,
but a peer built from the schema by another generator may."""

from __future__ import annotations

import json
from typing import Any

from .comparison import Comparison


def compare_annotations(c: Comparison) -> None:
    old_defs, new_defs = c.old.schema.defs, c.new.schema.defs
    for name in sorted(old_defs.keys() & new_defs.keys()):
        c.owner = name
        before, after = _annotations(old_defs[name], name), _annotations(new_defs[name], name)
        t = c.new.types.get(f"defs/{name}")
        tier = c.tier(c.new, t) if t is not None else "stable"
        for where, key in sorted(after - before):
            c.add("annotation-added", where, f"{key} added", "nobody", tier,
                  "none: the generated decoders do not read x-deserialize-*")
        for where, key in sorted(before - after):
            c.add("annotation-removed", where, f"{key} removed", "sender", tier,
                  "none: the generated decoders do not read x-deserialize-*")


def _annotations(node: Any, name: str) -> set[tuple[str, str]]:
    """(where, annotation key) for every ``x-deserialize-*`` key inside a $def."""
    found: set[tuple[str, str]] = set()

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.startswith("x-deserialize-"):
                    found.add((path, f"{key}: {json.dumps(item)}"))
                else:
                    walk(item, f"{path}/{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}/{index}")

    walk(node, name)
    return found
