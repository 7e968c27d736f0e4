"""Names: wire names to Python names, deterministically."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``didOpen`` -> ``did_open``, ``HTTPHeader`` -> ``http_header``, ``read_text_file`` unchanged."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def method_id(wire_name: str) -> str:
    """The upstream meta.json id of a method.

    The wire name without a leading ``$/``, camelCase split into snake_case, ``/`` as ``_``:
    ``document/didOpen`` -> ``document_did_open``, ``$/cancel_request`` -> ``cancel_request``.
    """
    name = wire_name.removeprefix("$/")
    return "_".join(snake_case(part) for part in name.split("/"))


def python_identifier(name: str, reserved: frozenset[str] = frozenset()) -> str:
    """Make ``name`` a safe Python identifier.

    Characters outside ``[A-Za-z0-9_]`` become ``_``; a leading digit gets a ``_`` prefix;
    keywords, soft keywords and names in ``reserved`` get a ``_`` suffix.
    """
    ident = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    while keyword.iskeyword(ident) or keyword.issoftkeyword(ident) or ident in reserved:
        ident += "_"
    return ident


def import_order(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in the order isort (and ruff) lists imported names: case-insensitive, then exact."""
    return tuple(sorted(names, key=lambda name: (name.lower(), name)))
