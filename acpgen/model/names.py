"""Names of generated classes and fields, and the user's names file that pins or overrides them.

The rules (documented in docs/reference/models.md, section "Generated names"):

* A ``$def`` keeps its name.
* A union variant the schema writes inline is named from what identifies it on the wire: its tag
  value, else its ``title``, else the one ``$def`` it extends, in PascalCase
  (``agent_message_chunk`` -> ``AgentMessageChunk``). A variant of a variant joins both
  (``form`` + ``Session`` -> ``FormSession``).
* A variant with none of those is named from the properties it requires that not every object
  variant of its union requires (``{id, result}`` beside ``{id, error}`` -> ``Result``); when it
  has none, or requires exactly what another variant requires, it is an error.
* When that name is taken (by a ``$def``, a name the generated code uses, or another variant),
  every variant wanting it gets the union's name appended (``ToolCall`` -> ``ToolCallSessionUpdate``).
* A ``$def`` keeps its name even then: when the appended name is a type's (or a reserved) name,
  the union's name goes first instead (``String`` in ``MultiSelectItems`` ->
  ``MultiSelectItemsString``, since ``StringMultiSelectItems`` is a ``$def``). A name two types
  still want is an error at their pointers.
* Nothing depends on where a definition or variant sits in the schema.
"""

from __future__ import annotations

import json
import keyword
import re
from collections import defaultdict
from pathlib import Path

from ..diagnostics import DiagnosticError, error, json_error, pointer
from .namelock import NameLock, variant_key
from .naming import python_identifier, snake_case

#: Names the generated modules use themselves; a type or variant never takes one of them.
RESERVED_TYPE_NAMES = frozenset(
    {
        "Any", "Callable", "ClassVar", "Literal", "Optional", "Union", "dataclass", "field", "annotations",
        "DecodeError", "decode", "encode", "str", "int", "float", "bool", "list", "dict", "tuple", "type",
        "object", "set", "frozenset", "len", "isinstance", "classmethod", "staticmethod", "property", "super",
        "Exception", "ValueError", "TypeError", "KeyError", "NoneType", "print", "enumerate", "id", "hash",
    }
)

#: Names the package root and the side modules (agent.py, client.py, ...) bind besides the types:
#: the runtime's classes and functions, the submodules, and what the side modules import. A type
#: never takes one either, so ``from acp_bindings import X`` is always the one thing named X. The
#: names of the sides acpgen knows are here for every schema (a type's name must not depend on
#: ``--side`` or on which sides a schema declares); a side it does not know is checked against
#: the types when its role is built (``roles.py``).
RUNTIME_NAMES = frozenset(
    {
        "METHODS", "PROTOCOL_VERSION", "MethodInfo", "DEFAULT_MAX_MESSAGE_SIZE", "ConnectionClosed", "RequestError",
        "Salvage", "decode_salvaging", "encode_text",
        "Agent", "AgentSideConnection", "AgentProxy", "AGENT_ROUTES", "run_agent",
        "Client", "ClientSideConnection", "ClientProxy", "CLIENT_ROUTES", "spawn_agent", "connect_agent", "asgi_app",
        "Proxy", "ProxySideConnection", "ProxyPeer", "ProxyProxy", "PROXY_ROUTES",
        "in_memory_pair", "models", "methods", "agent", "client", "proxy", "pair", "stub_agent", "stub_client",
        "asyncio", "contextlib", "os", "final", "AsyncIterator", "_rpc", "_codec", "_CODEC",
        "overload", "builders", "session", "MessageState", "SessionState", "ToolCallTracker",
        "dataclasses", "itertools",
        # the runtime's private modules, which importing the package may bind at its root
        "_decode_errors", "_leniency", "_errors", "_framing", "_tracing", "_transports", "_memory", "_sender", "_incoming",
        "_observing", "_batches", "_fast_reader",
        "_connection", "_typed", "_process", "_versions", "_checks", "_session_page", "inspect",
        "_guard", "_http_connection", "_asgi_messages", "_event_stream", "_asgi", "_remote", "versions",
        "_kit_report", "_kit_peer", "_kit_agent", "_kit_features", "_kit_wire", "_kit_checks", "_kit_cli", "conformance",
        "_models_codec", "_runtime",
    }
)
RESERVED_TYPE_NAMES |= RUNTIME_NAMES

#: Field names a class uses itself; a property with one of these names gets a ``_`` suffix.
RESERVED_FIELD_NAMES = frozenset(
    {"extra", "to_json", "from_json", "self", "cls", "_nulls", "Any", "Optional", "Union", "Literal", "ClassVar",
     "str", "int", "float", "bool", "list", "dict", "field", "dataclass", "_codec"}
)


def pascal_case(label: str) -> str:
    """``agent_message_chunk`` -> ``AgentMessageChunk``, ``searchAndReplace`` -> ``SearchAndReplace``."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", label) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts)


def field_name(wire_name: str) -> str:
    """``sessionId`` -> ``session_id``, ``_meta`` -> ``meta``, ``class`` -> ``class_``, ``1st`` -> ``_1st``."""
    stripped = wire_name.lstrip("_") or wire_name
    return python_identifier(snake_case(stripped), RESERVED_FIELD_NAMES)


def type_name(def_name: str) -> str:
    """The Python name of a ``$def``: its name, made an identifier, never a reserved name.

    A name starting with ``__`` (a dunder such as ``__all__``, or a name Python mangles inside a
    class body) gets a ``T`` prefix.
    """
    name = python_identifier(def_name, RESERVED_TYPE_NAMES)
    return python_identifier("T" + name, RESERVED_TYPE_NAMES) if name.startswith("__") else name


def usable_class_name(name: str) -> bool:
    """Whether a names file may give a class this name: one ``type_name`` leaves as it is."""
    return isinstance(name, str) and name.isidentifier() and type_name(name) == name


def unique_field_names(
    wire_names: list[str], taken: frozenset[str] = frozenset(), locked: dict[str, str] | None = None
) -> dict[str, str]:
    """Python names for one class's properties; a clash gets ``_`` suffixes, in wire-name order.

    ``locked``: wire name -> the name a names lock records; such a property keeps it, and a new
    one never takes a name recorded there."""
    locked = locked or {}
    result = {wire: locked[wire] for wire in wire_names if wire in locked}
    used = set(taken) | set(locked.values())
    for wire in sorted(wire_names):
        if wire in result:
            continue
        name = field_name(wire)
        while name in used:
            name += "_"
        used.add(name)
        result[wire] = name
    return result


def load_names_file(path: Path | None) -> dict[str, str]:
    """Read a names file: a JSON object ``{"Union/label": "ClassName"}``. Raises DiagnosticError."""
    if path is None:
        return {}
    source = str(path)  # as given
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DiagnosticError([error(None, f"cannot read names file: {exc.strerror or exc}").in_source(source)]) from None
    except json.JSONDecodeError as exc:
        raise DiagnosticError([json_error(exc, source, "names file is not valid JSON")]) from None
    except UnicodeDecodeError as exc:
        message = f"names file is not UTF-8 text (byte {exc.start})"
        raise DiagnosticError([error(None, message).in_source(source)]) from None
    if not isinstance(data, dict):
        raise DiagnosticError([error("", "names file must be a JSON object of \"Union/label\": \"Name\"").in_source(source)])
    problems = []
    for key, value in data.items():
        if not usable_class_name(value):
            why = _why_unusable(value)
            problems.append(error(pointer(key), f"names file: {key!r} maps to {value!r}, which is not a usable class name"
                                                f" ({why})"))
    if problems:
        raise DiagnosticError([p.in_source(source) for p in problems])
    return dict(data)


def _why_unusable(value: object) -> str:
    if not isinstance(value, str):
        return "not a string"
    if not value.isidentifier():
        return "not a Python identifier"
    if keyword.iskeyword(value) or keyword.issoftkeyword(value):
        return "a Python keyword"
    if value.startswith("__"):
        return "it starts with __"
    return "a name the generated code uses itself"


def variant_names(
    wanted: dict[tuple[str, tuple[str, ...]], str],
    taken: dict[str, str],
    overrides: dict[str, str],
    names_source: str = "names file",
    lock: NameLock | None = None,
) -> dict[tuple[str, tuple[str, ...]], str]:
    """Name every generated variant class.

    ``wanted`` maps (union name, labels) to the variant's JSON pointer; the result maps each to
    its class name. ``taken`` maps the names of the other types (``$def`` and lifted types) to
    their pointers: those names are never given to a variant. A variant the names ``lock``
    records keeps its name (unless the names file pins another); a new one never takes a name
    the lock records.
    """
    keys = sorted(wanted)
    key_text = {k: "/".join((k[0], *k[1])) for k in keys}
    unknown = sorted(set(overrides) - set(key_text.values()))
    if unknown:
        raise DiagnosticError(
            [error(pointer(u), f"names file: {u!r} names no generated class (keys look like 'SessionUpdate/tool_call')")
             .in_source(names_source) for u in unknown]
        )
    pinned = {k: overrides[key_text[k]] for k in keys if key_text[k] in overrides}
    lock = lock or NameLock()
    kept = {k: lock.recorded[variant_key(*k)] for k in keys if k not in pinned and variant_key(*k) in lock.recorded}
    candidates: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
    for k in keys:
        if k not in pinned and k not in kept:
            # not type_name(): a reserved name is not escaped but taken, so it gets the union's name
            candidates[python_identifier(pascal_case("_".join(k[1])) or "Variant")].append(k)
    result = {**pinned, **kept}
    blocked = set(taken) | RESERVED_TYPE_NAMES | set(pinned.values()) | lock.type_names
    for name, owners in sorted(candidates.items()):
        if len(owners) == 1 and name not in blocked:
            result[owners[0]] = name
            continue
        for k in owners:
            # a name a type really has wins: the variant then puts its union's name first instead
            result[k] = lock.fresh(name + k[0] if name + k[0] not in blocked else k[0] + name)
    claims: dict[str, list[tuple[str, str]]] = defaultdict(list)  # name -> (pointer, what)
    for k, name in result.items():
        claims[name].append((wanted[k], f"variant {key_text[k]}"))
    for name, ptr in taken.items():
        claims[name].append((ptr, "type"))
    clashes = sorted((name, sorted(claimed)) for name, claimed in claims.items() if len(claimed) > 1)
    problems = []
    for name, claimed in clashes:
        listed = ", ".join(f"{what} at #{ptr}" for ptr, what in claimed)
        message = f"two types would be named {name!r} ({listed}); pin one in a names file"
        if any(k in pinned and result[k] == name for k in keys):
            problems.append(error("", message).in_source(names_source))
        else:
            problems.append(error(next(ptr for ptr, what in claimed if what != "type"), message))
    if problems:
        raise DiagnosticError(problems)
    return result
