"""One schema as the diff sees it: its method table, its type model (built with the names the other
side's output has), who uses each type, and which ``$defs`` are the JSON-RPC envelopes.

The envelopes are found by structure, not by name: a ``$def`` that is not itself a method's type
(no ``x-method``) but refers, in its own subschemas, to one that is (``AgentRequest``'s
``params``, ``ClientResponse``'s ``result``, ``ProtocolLevelNotification``, ...) or to another
envelope. Their unions list the method table's types, so a change to them is a change of the
method table, which :mod:`acpgen.diff.envelopes` reads them through.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..model.method_table import build_method_table
from ..model.names import type_name
from ..model.roles import build_roles
from ..model.selection import select_types
from ..model.spec import Method
from ..model.typebuild import build_types
from ..model.typedefs import DefKind, TypeDef, TypeModel
from ..model.types import ListOf, MapOf, Nullable, Ref, TypeExpr
from ..schema.loader import LoadedSchema
from ..schema.pointers import def_name

#: A method as the diff names it: (wire name, side).
MethodKey = tuple[str, str]


@dataclass(frozen=True)
class Facts:
    """One schema as the diff sees it."""

    schema: LoadedSchema
    methods: dict[MethodKey, Method]
    model: TypeModel
    types: dict[str, TypeDef]  # entity key ("defs/X", "inline/Owner/prop") -> type
    subjects: dict[str, str]  # entity key -> how a change names it
    unstable: frozenset[str]  # Python names of the types that only unstable methods use
    handlers: dict[MethodKey, str]  # (wire name, side) -> "Agent.session_prompt and ClientProxy..."
    by_name: dict[str, TypeDef]  # Python name -> type
    envelopes: frozenset[str]  # the $defs that are JSON-RPC envelopes
    #: Python name of a method's params or result type -> (method, "params" or "result") for each use
    method_types: dict[str, tuple[tuple[MethodKey, str], ...]]

    def wire(self, t: TypeExpr, seen: frozenset[str] = frozenset()) -> TypeExpr:
        """``t`` with every alias (and named set of values) replaced by what it stands for."""
        if isinstance(t, Nullable):
            return Nullable(self.wire(t.inner, seen))
        if isinstance(t, ListOf):
            return ListOf(self.wire(t.item, seen))
        if isinstance(t, MapOf):
            return MapOf(self.wire(t.value, seen))
        if isinstance(t, Ref) and t.name not in seen:
            target = self.by_name.get(t.name)
            if target is not None and target.kind in (DefKind.ALIAS, DefKind.LITERALS) and target.target is not None:
                return self.wire(target.target, seen | {t.name})
        return t

    def def_of(self, py_name: str) -> str | None:
        """The ``$def`` a Python type name stands for (None: a variant class or an inline type)."""
        return next((k[5:] for k, v in self.model.names.items() if v == py_name and k.startswith("defs/")), None)


def read_facts(schema: LoadedSchema, locked: Mapping[str, str] | None) -> Facts:
    methods, _ = build_method_table(schema)
    model = build_types(schema, locked=locked)
    by_name = {t.name: t for t in model.types}
    types, subjects = {}, {}
    for key, name in model.names.items():
        if key.startswith(("defs/", "inline/")) and name in by_name:
            types[key] = by_name[name]
            kind, _, rest = key.partition("/")
            subjects[key] = rest if kind == "defs" else rest.replace("/", ".", 1) + " (inline)"
    stable = tuple(m for m in methods if not m.unstable)
    kept = {t.name for t in select_types(model.types, kept=stable, dropped=tuple(m for m in methods if m.unstable))}
    handlers: dict[MethodKey, str] = {}
    roles = build_roles(methods, "both")
    for m, what in [*((m, f"handler {r.base_class}") for r in roles for m in r.handles),
                    *((m, f"proxy {r.proxy_class}") for r in roles for m in r.calls)]:
        entry = (m.wire_name, m.side)
        handlers[entry] = (handlers[entry] + " and " if entry in handlers else "") + f"{what}.{m.py_name}"
    method_defs = frozenset(name for name, node in schema.defs.items() if isinstance(node, dict) and "x-method" in node)
    return Facts(
        schema=schema,
        methods={(m.wire_name, m.side): m for m in methods},
        model=model,
        types=types,
        subjects=subjects,
        unstable=frozenset(t.name for t in model.types) - kept,
        handlers=handlers,
        by_name=by_name,
        envelopes=_envelopes(schema.defs, method_defs),
        method_types=_method_types(methods, method_defs, model.names),
    )


def _envelopes(defs: Mapping[str, Any], method_defs: frozenset[str]) -> frozenset[str]:
    """The $defs without ``x-method`` that refer to a method's type or to an envelope (the framing
    around a params union: ``AgentOutgoingMessage`` in the releases up to v0.7.0)."""
    refs = {name: set(_refs(node)) for name, node in defs.items() if name not in method_defs}
    found: set[str] = set()
    while True:
        more = {name for name, targets in refs.items() if name not in found and targets & (method_defs | found)}
        if not more:
            return frozenset(found)
        found |= more


def _method_types(methods: tuple[Method, ...], method_defs: frozenset[str],
                  names: Mapping[str, str]) -> dict[str, tuple[tuple[MethodKey, str], ...]]:
    """The Python name the model gives each method type -> the methods whose params or result it is."""
    def_by_rule = {type_name(d): d for d in sorted(method_defs)}  # the method table names them by the rules
    found: dict[str, list[tuple[MethodKey, str]]] = {}
    for m in methods:
        for role, rule_name in (("params", m.params_type), ("result", m.result_type)):
            d = def_by_rule.get(rule_name or "")
            if d is not None:
                found.setdefault(names.get(f"defs/{d}", type_name(d)), []).append(((m.wire_name, m.side), role))
    return {name: tuple(keys) for name, keys in found.items()}


def _refs(node: Any) -> Iterator[str]:
    """The $defs a schema node refers to, in its own subschemas (not through the $defs it refers to)."""
    if isinstance(node, dict):
        target = def_name(node.get("$ref"))
        if target is not None:
            yield target
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
