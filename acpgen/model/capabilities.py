"""Which capability a method needs: read from the schema's structure, for the inspector's checks.

A side may call a method of the other side only when that side advertised the capability the
method needs, in its half of ``initialize``: the client in the request's ``clientCapabilities``,
the agent in the response's ``agentCapabilities`` (``capabilities`` in protocol v2). Each
capability is written as a JSON pointer into the ``initialize`` exchange:
``/params/clientCapabilities/fs/readTextFile``.

The gates are the leaves of the capabilities type: a boolean property, or an object property
with no gate below it (a marker such as ``SessionCloseCapabilities``, or settings such as
``didChange``'s ``syncKind``: present means supported). An object with gates below it (``fs``,
``sessionCapabilities``) only groups them. A gate
is named after what it gates, as a method is after its wire name, so the two are matched by
their words (``readTextFile`` is read, text, file; a ``...Capabilities`` property drops the
suffix), among the methods of the side that advertises it, in this order:

1. the same words (``fs.readTextFile``: ``fs/read_text_file``; ``loadSession``: ``session/load``);
2. the method's words end the gate's (``auth.logout``: ``logout``;
   ``nes.events.document.didOpen``: ``document/didOpen``);
3. the same namespace, and the method's name ends with the gate's
   (``sessionCapabilities.title``: ``session/set_title``; ``.archive``: ``session/unarchive``);
4. a top-level boolean named like a namespace gates the rest of it (``terminal``: ``terminal/*``).

A method two gates of one rank would claim is left ungated. Descriptions are never read: a
release that rewords them keeps its gates.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, pointer, warning
from ..schema.loader import LoadedSchema
from .naming import snake_case
from .spec import Method, Side

#: Where each side advertises its capabilities: the half of ``initialize``, and the ``$def`` of
#: the property that holds them.
ROOTS = {Side.CLIENT.value: ("params", "ClientCapabilities"), Side.AGENT.value: ("result", "AgentCapabilities")}
_SUFFIX = "Capabilities"
_MAX_DEPTH = 6


@dataclass(frozen=True)
class _Gate:
    path: tuple[str, ...]  # below the capabilities property: ("fs", "readTextFile")
    words: tuple[str, ...]  # ("fs", "read", "text", "file")
    boolean: bool


def build_capabilities(
    schema: LoadedSchema, methods: tuple[Method, ...]
) -> tuple[tuple[tuple[str, str], ...], tuple[Diagnostic, ...]]:
    """``(wire name, JSON pointer)`` for every method a capability gates, sorted, and a warning
    for each side whose capabilities the ``initialize`` exchange does not hold."""
    initialize = next((m for m in methods if m.wire_name == "initialize" and m.is_request), None)
    if initialize is None:
        return (), ()
    found: dict[str, str] = {}
    problems = []
    halves = {"params": initialize.params_type, "result": initialize.result_type}
    for side, (half, def_name) in ROOTS.items():
        message = _resolve(schema, schema.defs.get(halves[half] or ""))
        prop = _property_of_type(schema, message, def_name)
        if prop is None:
            what = f"initialize's {'request' if half == 'params' else 'response'} ({halves[half]})"
            problems.append(warning(
                initialize.pointer,
                f"{what} has no property of type {def_name}: no method is checked against the {side}'s capabilities",
            ))
            continue
        gates = list(_gates(schema, _property(schema, message, prop), ()))
        handled = sorted({m.wire_name for m in methods if m.side == side and m.wire_name != "initialize"})
        for wire_name in handled:
            gate = _gate_of(wire_name, gates)
            if gate is not None:
                found[wire_name] = pointer(half, prop, *gate.path)
    return tuple(sorted(found.items())), tuple(d.in_source(schema.where) for d in problems)


def _gate_of(wire_name: str, gates: list[_Gate]) -> _Gate | None:
    """The one gate of the best rank that claims the method (see the module docstring)."""
    segments = [s for s in wire_name.removeprefix("$/").split("/") if s]
    words = tuple(w for s in segments for w in snake_case(s).split("_") if w)
    if not words:
        return None
    last = snake_case(segments[-1]).replace("_", "")
    def same_words(g: _Gate) -> bool:
        return sorted(g.words) == sorted(words)

    def ends_the_gate(g: _Gate) -> bool:
        return len(g.words) > len(words) and g.words[-len(words) :] == words

    def ends_with_the_gate(g: _Gate) -> bool:
        return (len(segments) > 1 and len(g.words) > 1 and g.words[0] == words[0] and g.words[-1] != last
                and last.endswith(g.words[-1]))

    def gates_the_namespace(g: _Gate) -> bool:
        return g.boolean and len(g.path) == 1 and len(segments) > 1 and g.words == (words[0],)

    for claims in (same_words, ends_the_gate, ends_with_the_gate, gates_the_namespace):
        claimed = [g for g in gates if claims(g)]
        if claimed:
            return claimed[0] if len(claimed) == 1 else None
    return None


def _gates(schema: LoadedSchema, node: Any, path: tuple[str, ...]) -> Iterator[_Gate]:
    """The leaves below ``node``, depth first by name."""
    properties = node.get("properties") if isinstance(node, dict) else None
    if not isinstance(properties, dict) or len(path) >= _MAX_DEPTH:
        return
    for name in sorted(properties):
        if name.startswith("_"):
            continue
        target = _resolve(schema, properties[name])
        if not isinstance(target, dict):
            continue
        here = (*path, name)
        if _is_type(target, "boolean"):
            yield _Gate(here, _words(here), boolean=True)
        elif _is_type(target, "object"):
            below = list(_gates(schema, target, here))
            yield from below or [_Gate(here, _words(here), boolean=False)]


def _words(path: tuple[str, ...]) -> tuple[str, ...]:
    """``("sessionCapabilities", "close")`` -> ``("session", "close")``."""
    names = [n[: -len(_SUFFIX)] if n.endswith(_SUFFIX) and n != _SUFFIX else n for n in path]
    return tuple(w for n in names for w in snake_case(n).split("_") if w)


def _is_type(node: dict[str, Any], name: str) -> bool:
    kind = node.get("type")
    return kind == name or (isinstance(kind, list) and name in kind) or (name == "object" and "properties" in node)


def _property_of_type(schema: LoadedSchema, node: Any, def_name: str) -> str | None:
    """The property of ``node`` whose schema is the ``$def`` ``def_name``."""
    properties = node.get("properties") if isinstance(node, dict) else None
    target = schema.defs.get(def_name)
    if not isinstance(properties, dict) or target is None:
        return None
    return next((name for name in sorted(properties) if _resolve(schema, properties[name]) is target), None)


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
