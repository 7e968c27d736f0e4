"""A bound on how deeply a schema document nests, checked before anything recurses into it.

acpgen reads schemas recursively (the meta-schema validation, the type model). A document
nested deeper than :data:`MAX_DEPTH` objects and arrays (the ACP releases nest at most 12) is
refused with the JSON pointer where it goes too deep, instead of failing with a RecursionError.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, error, pointer

MAX_DEPTH = 64


def too_deep(document: Any, limit: int = MAX_DEPTH) -> Diagnostic | None:
    """An error at the first (in document order) container nested more than ``limit`` deep, else None."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        if len(path) >= limit:
            return error(pointer(*path), f"the schema nests more than {limit} objects and arrays deep here"
                                         " (acpgen's limit; the ACP releases nest at most 12)")
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        stack.extend((value, (*path, key)) for key, value in reversed(items))
    return None
