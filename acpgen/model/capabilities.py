"""Which capability a method needs: read from the schema, for the inspector's checks.

A side may call a method of the other side only when that side advertised the capability the
method needs, in its half of ``initialize``: the client in the request's ``clientCapabilities``,
the agent in the response's ``agentCapabilities``. The schema says which capability a method
needs in two places, both read here:

* the description of a capability property: a sentence starting "Whether" whose first name in
  backticks is a method (``Whether the Client supports `fs/read_text_file` requests.``; a name
  ending in ``/*`` names every method below it: ``all `terminal/*` methods``);
* the description of a method's params type: ``Only available if the Client supports the
  `fs.readTextFile` capability.``, when that dotted path exists in the capabilities type.

What the descriptions do not say is in :data:`KNOWN`, keyed by wire names. An entry whose method
or capability property the schema lacks is left out. Each capability is written as a JSON
pointer into the ``initialize`` exchange: ``/params/clientCapabilities/fs/readTextFile``.
"""

from __future__ import annotations

import re
from typing import Any

from ..diagnostics import pointer
from ..schema.loader import LoadedSchema
from .spec import Method, Side

#: Where each side advertises its capabilities: the half of ``initialize``, and the ``$def`` of
#: the property that holds them (``clientCapabilities``; ``capabilities`` in protocol v2).
ROOTS = {Side.CLIENT.value: ("params", "ClientCapabilities"), Side.AGENT.value: ("result", "AgentCapabilities")}
#: Capabilities the schema's descriptions do not tie to their method: wire name -> path in the
#: handling side's capabilities.
KNOWN: dict[str, tuple[str, ...]] = {"logout": ("auth", "logout")}

_TICKED = re.compile(r"`([^`\s]+)`")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_ONLY_IF = re.compile(r"Only available if the \w+ supports? the `([A-Za-z0-9_.]+)` capability", re.IGNORECASE)
_MAX_DEPTH = 6


def build_capabilities(schema: LoadedSchema, methods: tuple[Method, ...]) -> tuple[tuple[str, str], ...]:
    """``(wire name, JSON pointer)`` for every method the schema ties to a capability, sorted."""
    found: dict[str, str] = {}
    initialize = next((m for m in methods if m.wire_name == "initialize" and m.is_request), None)
    if initialize is None:
        return ()
    halves = {"params": initialize.params_type, "result": initialize.result_type}
    for side, (half, def_name) in ROOTS.items():
        message = _resolve(schema, schema.defs.get(halves[half] or ""))
        prop = _property_of_type(schema, message, def_name)
        root = _property(schema, message, prop) if prop else None
        if root is None:
            continue
        handled = sorted(m.wire_name for m in methods if m.side == side)
        for path, description in _walk(schema, root, ()):
            for wire_name in _named_methods(description, handled):
                found.setdefault(wire_name, pointer(half, prop, *path))
        for m in methods:
            if m.side != side or m.wire_name in found:
                continue
            match = _ONLY_IF.search(str(schema.defs.get(m.params_type, {}).get("description", "")))
            needed = tuple(match.group(1).split(".")) if match else KNOWN.get(m.wire_name)
            if needed and _at(schema, root, needed):
                found[m.wire_name] = pointer(half, prop, *needed)
    return tuple(sorted(found.items()))


def _named_methods(description: str, handled: list[str]) -> list[str]:
    """The methods a "Whether ..." sentence of ``description`` names."""
    names: list[str] = []
    for sentence in _SENTENCE.split(description):
        if not sentence.strip().startswith("Whether"):
            continue
        first = _TICKED.search(sentence)  # the thing the sentence is about
        token = first.group(1) if first else ""
        if token.endswith("/*"):
            names += [w for w in handled if w.startswith(token[:-1])]
        elif token in handled:
            names.append(token)
    return names


def _walk(schema: LoadedSchema, node: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """Every property below ``node`` (depth first, by name) with its description."""
    out: list[tuple[tuple[str, ...], str]] = []
    if len(path) >= _MAX_DEPTH:
        return out
    properties = node.get("properties") if isinstance(node, dict) else None
    if not isinstance(properties, dict):
        return out
    for name in sorted(properties):
        if name.startswith("_"):
            continue
        raw = properties[name]
        target = _resolve(schema, raw)
        description = " ".join(str(n.get("description", "")) for n in (raw, target) if isinstance(n, dict))
        out.append(((*path, name), description))
        out += _walk(schema, target, (*path, name))
    return out


def _property_of_type(schema: LoadedSchema, node: Any, def_name: str) -> str | None:
    """The property of ``node`` whose schema is the ``$def`` ``def_name``."""
    properties = node.get("properties") if isinstance(node, dict) else None
    target = schema.defs.get(def_name)
    if not isinstance(properties, dict) or target is None:
        return None
    return next((name for name in sorted(properties) if _resolve(schema, properties[name]) is target), None)


def _at(schema: LoadedSchema, node: Any, path: tuple[str, ...]) -> bool:
    for name in path:
        node = _property(schema, node, name)
        if node is None:
            return False
    return True


def _property(schema: LoadedSchema, node: Any, name: str) -> Any:
    properties = node.get("properties") if isinstance(node, dict) else None
    if not isinstance(properties, dict) or name not in properties:
        return None
    return _resolve(schema, properties[name])


def _resolve(schema: LoadedSchema, node: Any, depth: int = 0) -> Any:
    """Follow ``$ref`` and one-schema ``allOf`` / nullable ``anyOf`` to the object schema."""
    if not isinstance(node, dict) or depth > 16:
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _resolve(schema, schema.defs.get(ref[len("#/$defs/") :]), depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        options = [o for o in node.get(key) or () if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(options) == 1:
            return _resolve(schema, options[0], depth + 1)
    return node
