"""Build the method table from a schema's ``x-method`` / ``x-side`` annotations.

A ``$def`` carrying ``x-method`` is the params type of a request or notification, or the
result type of a request. Which one is read from the JSON-RPC envelopes that reference it
(``AgentRequest.params``, ``ClientResponse.result``, ...): under ``params`` of an object that
has an ``id`` it is a request, without ``id`` a notification, under ``result`` a result.
Types no envelope references are classified by their name's suffix (``...Request``,
``...Response``, ``...Notification``), as in the earliest releases.

A method's ``id`` is the upstream one (the release's meta.json id), shared by a request and a
notification of one wire name. Its ``py_name`` (the handler's name) is unique per side: when one
side handles a wire name both as a request and as a notification, the notification's is the id
plus ``_notification`` (``mcp_message`` / ``mcp_message_notification``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, Severity, error, pointer, warning
from ..schema.loader import LoadedSchema
from ..schema.pointers import def_name
from .names import type_name
from .naming import method_id, python_identifier
from .spec import BOTH, HANDLER_RESERVED, KNOWN_SIDES, Kind, Method, Side

UNSTABLE_MARK = "**UNSTABLE**"
#: A method one side handles both as a request and as a notification (``mcp/message``): the request
#: keeps the method id as its Python name, the notification's Python name (its handler's) adds this.
NOTIFICATION_SUFFIX = "_notification"

_PARAMS = "params"
_RESULT = "result"


@dataclass(frozen=True)
class _Annotated:
    name: str
    wire_name: str
    sides: tuple[str, ...]
    role: str  # "request", "notification" or "result"
    description: str


def build_method_table(schema: LoadedSchema) -> tuple[tuple[Method, ...], tuple[Diagnostic, ...]]:
    """Return the sorted method table and the warnings found.

    Raises :class:`DiagnosticError` (with the warnings too) when there are errors.
    """
    diagnostics: list[Diagnostic] = []
    roles, envelope_descriptions = _scan_envelopes(schema.document)
    annotated = []
    for name in sorted(schema.defs):
        entry = _read_annotation(name, schema.defs[name], roles, diagnostics)
        if entry is not None:
            annotated.append(entry)

    params: dict[tuple[str, str, Kind], list[_Annotated]] = defaultdict(list)
    results: dict[tuple[str, str], list[_Annotated]] = defaultdict(list)
    for entry in annotated:
        for side in entry.sides:
            if entry.role == _RESULT:
                results[(entry.wire_name, side)].append(entry)
            else:
                params[(entry.wire_name, side, Kind(entry.role))].append(entry)

    for (wire_name, side), found in sorted(results.items()):
        if len(found) > 1:
            diagnostics.append(_conflict(found, f"result types for {wire_name!r} on side {side!r}"))

    methods = []
    doubled = {(w, s) for (w, s, k) in params if k is Kind.NOTIFICATION and (w, s, Kind.REQUEST) in params}
    for (wire_name, side, kind), found in sorted(params.items(), key=lambda i: _sort_key(*i[0])):
        if len(found) > 1:
            diagnostics.append(_conflict(found, f"params types for {kind.value} {wire_name!r} on side {side!r}"))
            continue
        entry = found[0]
        result = results.get((wire_name, side), []) if kind is Kind.REQUEST else []
        descriptions = [*envelope_descriptions.get(entry.name, ()), entry.description]
        suffix = NOTIFICATION_SUFFIX if kind is Kind.NOTIFICATION and (wire_name, side) in doubled else ""
        methods.append(
            Method(
                wire_name=wire_name,
                id=method_id(wire_name),
                py_name=handler_name(method_id(wire_name) + suffix),
                side=side,
                kind=kind,
                params_type=type_name(entry.name),  # the Python names models.py gives them
                result_type=type_name(result[0].name) if result else None,
                unstable=any(d.lstrip().startswith(UNSTABLE_MARK) for d in descriptions),
                summary=summarize(next((d for d in descriptions if summarize(d)), "")),
                pointer=pointer("$defs", entry.name),
            )
        )

    diagnostics.extend(_id_clashes(methods))
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise DiagnosticError(_ordered(diagnostics, schema.where))
    return tuple(methods), tuple(_ordered(diagnostics, schema.where))


def _id_clashes(methods: list[Method]) -> list[Diagnostic]:
    """Two methods of one side with the same Python name (``doc/didOpen`` and ``doc/did_open``) would
    need one handler: an error at the second one's params type."""
    seen: dict[tuple[str, str], Method] = {}
    problems = []
    for m in methods:
        first = seen.setdefault((m.side, m.py_name), m)
        if first is not m:
            problems.append(
                error(m.pointer + "/x-method", f"methods {first.wire_name!r} ({first.kind.value}) and {m.wire_name!r}"
                      f" ({m.kind.value}) of side {m.side!r} would both have the Python name {m.py_name!r}")
            )
    return problems


def handler_name(unique_id: str) -> str:
    """The handler's (and proxy method's) Python name: the id, made safe against our own attributes.

    An id starting with ``_`` gets an ``on`` prefix: names starting with ``_`` belong to the
    generated classes (``_request``, ``_notify``, ``__init__``, ``__slots__``, ...), and
    Python mangles ``__x`` inside a class.
    """
    name = python_identifier(unique_id, HANDLER_RESERVED)
    return python_identifier("on" + name, HANDLER_RESERVED) if name.startswith("_") else name


def summarize(description: str) -> str:
    """The first sentence of a description, skipping the ``**UNSTABLE**`` boilerplate."""
    for paragraph in description.split("\n\n"):
        text = " ".join(paragraph.split())
        if not text or text.startswith((UNSTABLE_MARK, "This capability is not part of the spec")):
            continue
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]
    return ""


def _sort_key(wire_name: str, side: str, kind: Kind) -> tuple[str, str, str]:
    return (side, wire_name, kind.value)


def _read_annotation(
    name: str, node: Any, roles: dict[str, set[str]], diagnostics: list[Diagnostic]
) -> _Annotated | None:
    if not isinstance(node, dict) or "x-method" not in node:
        return None
    where = pointer("$defs", name)
    wire_name, side = node.get("x-method"), node.get("x-side")
    if not isinstance(wire_name, str) or not wire_name:
        diagnostics.append(error(where + "/x-method", f"x-method must be a non-empty string, found {wire_name!r}"))
        return None
    if not isinstance(side, str) or not side:
        diagnostics.append(error(where + "/x-side", f"x-method {wire_name!r} needs an x-side string, found {side!r}"))
        return None
    if side == BOTH:
        sides: tuple[str, ...] = (Side.AGENT.value, Side.CLIENT.value)
    else:
        sides = (side,)
        if side not in KNOWN_SIDES:
            diagnostics.append(
                warning(where + "/x-side", f"unknown x-side {side!r}; method {wire_name!r} is listed with side {side!r}")
            )
    role = _role(name, roles.get(name, set()))
    if role is None:
        diagnostics.append(
            error(where, f"cannot tell whether {name} is a request, a notification or a result of {wire_name!r}")
        )
        return None
    description = node.get("description")
    return _Annotated(name, wire_name, sides, role, description if isinstance(description, str) else "")


def _role(name: str, roles: set[str]) -> str | None:
    if len(roles) == 1:
        return next(iter(roles))
    for suffix, role in (("Response", _RESULT), ("Notification", "notification"), ("Request", "request")):
        if name.endswith(suffix) and (not roles or role in roles):
            return role
    return None


def _scan_envelopes(document: dict[str, Any]) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """Find the JSON-RPC envelopes: which defs are params/results, and their entries' descriptions."""
    roles: dict[str, set[str]] = defaultdict(set)
    descriptions: dict[str, list[str]] = defaultdict(list)

    def record_entries(node: Any, role: str | None) -> None:
        for wrapper in _walk(node):
            target = _wrapped_ref(wrapper)
            if target is None:
                continue
            if role is not None:
                roles[target].add(role)
            description = wrapper.get("description")
            if isinstance(description, str):
                descriptions[target].append(description)

    def visit(node: Any) -> None:
        for obj in _walk(node):
            props = obj.get("properties")
            if not isinstance(props, dict):
                continue
            if _PARAMS in props:
                record_entries(props[_PARAMS], "request" if "id" in props else "notification")
            if _RESULT in props:
                record_entries(props[_RESULT], _RESULT)

    defs = document.get("$defs", {})
    for name in sorted(defs) if isinstance(defs, dict) else ():
        if isinstance(defs[name], dict) and "x-method" not in defs[name]:
            visit(defs[name])
    top = {k: v for k, v in document.items() if k != "$defs"}
    visit(top)
    record_entries(top, None)  # entries listed at the top level, e.g. $/cancel_request
    return roles, descriptions


def _wrapped_ref(node: dict[str, Any]) -> str | None:
    """The $def a node refers to, as ``{"$ref": ...}`` or ``{"allOf": [{"$ref": ...}]}``."""
    ref = node.get("$ref")
    all_of = node.get("allOf")
    if ref is None and isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        ref = all_of[0].get("$ref")
    return def_name(ref)


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _conflict(found: list[_Annotated], what: str) -> Diagnostic:
    names = ", ".join(e.name for e in found)
    return error(pointer("$defs", found[1].name, "x-method"), f"conflicting {what}: {names}")


def _ordered(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    ordered = sorted(diagnostics, key=lambda d: (d.severity is not Severity.ERROR, d.pointer, d.message))
    return [d.in_source(source) for d in ordered]
