"""The protocol version a schema is for: the number a generated package's ``initialize`` asks for.

The first found wins: a ``--protocol-version`` given by the user (one per ``--schema`` for a
package of several); a ``const`` (or ``default``) on the schema's ``ProtocolVersion``; the
``version`` of the release's ``meta.json`` beside the schema (``schema.json`` -> ``meta.json``,
``schema.unstable.json`` -> ``meta.unstable.json``, ``v1.7.0--v2-schema.json`` ->
``v1.7.0--v2-meta.json``); the version of the protocol's documentation the schema's descriptions
link to (``https://agentclientprotocol.com/protocol/v2/initialization``), when they all link to
one. ACP's early v1 schemas state none of them: their version is 1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..diagnostics import DiagnosticError, error

#: The range of ``ProtocolVersion`` (``uint16``).
LOWEST, HIGHEST = 0, 0xFFFF
#: The version of a schema that states none.
DEFAULT = 1


def version_problem(value: Any) -> str:
    """Why ``value`` is not a protocol version; "" when it is."""
    if isinstance(value, bool) or not isinstance(value, int) or not LOWEST <= value <= HIGHEST:
        return f"an integer from {LOWEST} to {HIGHEST}"
    return ""


def meta_path(schema: Path) -> Path:
    """Where the release's ``meta.json`` of ``schema`` lies: its name with the last ``schema``
    replaced by ``meta``."""
    head, found, tail = schema.name.rpartition("schema")
    return schema.with_name(f"{head}meta{tail}" if found else "meta.json")


def meta_version(schema: Path) -> int | None:
    """The ``version`` of the ``meta.json`` beside ``schema``; None without one (or without a
    ``version``). Raises :class:`DiagnosticError` for one that cannot be read or whose version is
    not one."""
    path = meta_path(schema)
    if not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        message = f"cannot read the release's meta file: {exc}"
        raise DiagnosticError([error(None, message).in_source(path.name)]) from None
    value = document.get("version") if isinstance(document, dict) else None
    if value is None:
        return None
    problem = version_problem(value)
    if problem:
        message = f"version {value!r} is not a protocol version: {problem}"
        raise DiagnosticError([error("/version", message).in_source(path.name)])
    return int(value)


def stated_version(document: dict[str, Any]) -> int | None:
    """The version the schema itself states: a ``const`` or ``default`` on ``ProtocolVersion``."""
    defs = document.get("$defs")
    node = defs.get("ProtocolVersion") if isinstance(defs, dict) else None
    if isinstance(node, dict):
        for key in ("const", "default"):
            value = node.get(key)
            if isinstance(value, int) and not version_problem(value):
                return value
    return None


#: A link to a page of the protocol's documentation of one version.
_DOCS_LINK = re.compile(r"agentclientprotocol\.com/protocol/v(\d+)/")


def linked_version(document: dict[str, Any]) -> int | None:
    """The version of the protocol's documentation the schema's descriptions link to, when they
    link to pages of one version only; None when they link to none, or to several."""
    found = {int(number) for text in _descriptions(document) for number in _DOCS_LINK.findall(text)}
    number = found.pop() if len(found) == 1 else None
    return number if number is not None and not version_problem(number) else None


def _descriptions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _descriptions(item)


def how_stated(document: dict[str, Any], schema: Path | None) -> tuple[int, str]:
    """The protocol version the schema states and how (``"its meta.json"``); ``(1, "")`` for a
    schema that states none."""
    stated = stated_version(document)
    if stated is not None:
        return stated, "its ProtocolVersion's const"
    meta = meta_version(schema) if schema is not None else None
    if meta is not None:
        return meta, f"its {meta_path(schema).name}" if schema is not None else "its meta file"
    linked = linked_version(document)
    if linked is not None:
        return linked, f"its links to the protocol's v{linked} documentation"
    return DEFAULT, ""


def protocol_version(document: dict[str, Any], schema: Path | None, override: int | None = None) -> int:
    """The protocol version of the schema ``document`` read from ``schema`` (None: the bundled
    one, which has no meta file)."""
    if override is not None:
        return override
    return how_stated(document, schema)[0]
