"""What a schema's draft says about the JSON-RPC wire beyond its messages: whether it defines
batches, and the error it answers an ``initialize`` asking for a version no agent of it speaks.

Both are read from the schema's structure, never from prose:

* **batches**: a top-level message shape that is an array (the v2 drafts of the spec's
  releases since v0.13.7 define ``AgentBatchCall``, ``AgentBatchResponse``, ``ClientBatchCall``
  and ``ClientBatchResponse``; the TypeScript SDK's v2 draft and every v1 schema define none);
* **unsupported version error**: the ``ErrorCode`` variant the schema names "Unsupported protocol
  version" (its ``title``), with its integer ``const`` (the TypeScript SDK's v2 draft: ``-32022``).
  A draft without one negotiates by its text alone: an agent answers the version asked for when
  it speaks it, and otherwise the latest version it speaks.

The generated ``methods.py`` states both as constants (``BATCHES``, ``UNSUPPORTED_VERSION_ERROR``),
which the runtime reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["NO_BATCHES", "WireRules", "wire_rules"]

#: The title of the error code a draft answers an unsupported version with, in lower case.
_UNSUPPORTED_VERSION = "unsupported protocol version"


@dataclass(frozen=True)
class WireRules:
    """The wire rules of a schema's draft (see the module's docstring)."""

    batches: bool = False  # the schema defines batch messages (arrays at the top level)
    unsupported_version_error: int | None = None  # its code for a version no agent speaks


#: A draft without batches or an unsupported-version error of its own (every v1 schema's rules).
NO_BATCHES = WireRules()


def wire_rules(document: Any) -> WireRules:
    """The wire rules of a loaded schema document."""
    if not isinstance(document, Mapping):
        return WireRules()
    return WireRules(batches=_has_batches(document), unsupported_version_error=_unsupported(document))


def _variants(node: Any) -> list[Any]:
    if not isinstance(node, Mapping):
        return []
    return [v for key in ("anyOf", "oneOf") for v in node.get(key) or () if isinstance(v, Mapping)]


def _has_batches(document: Mapping[str, Any]) -> bool:
    return any(variant.get("type") == "array" for variant in _variants(document))


def _unsupported(document: Mapping[str, Any]) -> int | None:
    definitions = document.get("$defs") or document.get("definitions") or {}
    codes = definitions.get("ErrorCode") if isinstance(definitions, Mapping) else None
    for variant in _variants(codes):
        title = variant.get("title")
        const = variant.get("const")
        if (
            isinstance(title, str)
            and re.sub(r"\s+", " ", title.strip().lower()) == _UNSUPPORTED_VERSION
            and type(const) is int
        ):
            return const
    return None
