"""Compare two schemas: every change to methods, types, variants, fields and values, with who it
breaks, its stability tier and what it does to the generated Python.

Both schemas are read into the method table and the type model the generator uses. The new one is
built with the names the old one's output has (its names lock), as regenerating would build it, so
the Python effects are what the user will see. Entities are matched by what they are on the wire:
a method by wire name and side, a ``$def`` by name (or, when removed and added, by shape: a
rename), a variant by its union and tag, title or ref, a field by wire name.

*Who breaks*: a change that makes a message valid under one schema invalid under the other breaks
a side. ``sender``: what an old sender sends is no longer accepted (a new required field, a
narrowed type). ``receiver``: a new sender may send what an old receiver rejects (a new enum value,
a new variant, a removed required field). ``both``, or ``nobody`` (wire-compatible).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model.classes import ClassDef, Field
from ..model.method_table import UNSTABLE_MARK, build_method_table
from ..model.namelock import renamed
from ..model.naming import with_article
from ..model.roles import build_roles
from ..model.selection import select_types
from ..model.spec import Method
from ..model.typebuild import build_types
from ..model.typedefs import DefKind, TypeDef, TypeModel
from ..model.types import (
    AnyValue,
    JsonKind,
    ListOf,
    Literals,
    MapOf,
    Nullable,
    Ref,
    Scalar,
    TypeExpr,
)
from ..schema.loader import LoadedSchema
from ..schema.pointers import SCHEMA_MAPS

#: Every kind of change ``acpgen diff`` reports, with what it means (documented in README.md).
KINDS: dict[str, str] = {
    "method-added": "a method appeared",
    "method-removed": "a method is gone",
    "method-kind-changed": "a request became a notification or the other way round",
    "params-type-renamed": "a method's params type has another $def",
    "result-type-renamed": "a method's result type has another $def",
    "method-made-unstable": "a stable method is marked unstable",
    "method-made-stable": "an unstable method is no longer marked unstable",
    "def-added": "a $def appeared",
    "def-removed": "a $def is gone",
    "def-renamed": "a $def is gone and one of the same shape appeared under another name",
    "def-kind-changed": "a $def changed between class, union, literals and alias",
    "variant-added": "a union gained a variant (matched by tag, title or ref)",
    "variant-removed": "a union lost a variant",
    "tag-changed": "a class's fixed (tag) property changed",
    "field-added": "a class gained an optional field",
    "field-added-required": "a class gained a required field",
    "field-removed": "a class lost a field",
    "field-made-required": "an optional field became required",
    "field-made-optional": "a required field became optional",
    "nullability-changed": "a field or type started or stopped accepting null",
    "type-changed": "a field's or alias's type changed",
    "type-renamed": "a field's or alias's type is the same shape under another $def",
    "enum-value-added": "a set of values gained one",
    "enum-value-removed": "a set of values lost one",
    "enum-opened": "a closed set of values now also accepts any other value",
    "enum-closed": "an open set of values no longer accepts other values",
    "annotation-added": "an x-deserialize-* annotation appeared",
    "annotation-removed": "an x-deserialize-* annotation is gone",
    "name-renewable": "`acpgen generate --renew-names` would give an entity another Python name",
}

#: Severities, most severe first. ``breaking``: breaks a peer on the wire. ``python``:
#: wire-compatible, but code written against the generated package may break. ``compatible``:
#: neither. ``info``: no change unless asked for (``--renew-names``).
SEVERITIES = ("breaking", "python", "compatible", "info")
BREAKS = ("sender", "receiver", "both", "nobody")
TIERS = ("stable", "unstable")


@dataclass(frozen=True)
class Change:
    """One change, as ``acpgen diff --format json`` lists it."""

    kind: str  # one of KINDS
    subject: str  # what changed, by its wire names: "session/prompt (agent)", "ContentBlock/text.uri"
    detail: str  # what changed about it, in words
    breaks: str  # one of BREAKS
    tier: str  # one of TIERS
    python: str  # what it does to the generated Python ("" when nothing)
    severity: str  # one of SEVERITIES

    def as_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "detail": self.detail,
            "breaks": self.breaks,
            "tier": self.tier,
            "python": self.python,
            "severity": self.severity,
        }


@dataclass
class _Facts:
    """One schema as the diff sees it."""

    schema: LoadedSchema
    methods: dict[tuple[str, str], Method]
    model: TypeModel
    types: dict[str, TypeDef]  # entity key ("defs/X", "inline/Owner/prop") -> type
    subjects: dict[str, str]  # entity key -> how a change names it
    unstable: frozenset[str]  # Python names of the types that only unstable methods use
    handlers: dict[tuple[str, str], str]  # (wire name, side) -> "Agent.session_prompt and ClientProxy..."
    by_name: dict[str, TypeDef]  # Python name -> type

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


def _facts(schema: LoadedSchema, locked: Mapping[str, str] | None) -> _Facts:
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
    handlers: dict[tuple[str, str], str] = {}
    roles = build_roles(methods, "both")
    for m, what in [*((m, f"handler {r.base_class}") for r in roles for m in r.handles),
                    *((m, f"proxy {r.proxy_class}") for r in roles for m in r.calls)]:
        entry = (m.wire_name, m.side)
        handlers[entry] = (handlers[entry] + " and " if entry in handlers else "") + f"{what}.{m.handler_name}"
    return _Facts(
        schema=schema,
        methods={(m.wire_name, m.side): m for m in methods},
        model=model,
        types=types,
        subjects=subjects,
        unstable=frozenset(t.name for t in model.types) - kept,
        handlers=handlers,
        by_name=by_name,
    )


def diff_schemas(old: LoadedSchema, new: LoadedSchema, old_names: Mapping[str, str] | None = None) -> tuple[Change, ...]:
    """Every change from ``old`` to ``new``, most severe first.

    ``old_names``: the names lock of the output generated from ``old`` (None: the rules' names).
    Raises :class:`~acpgen.diagnostics.DiagnosticError` when either schema cannot be generated from.
    """
    before = _facts(old, old_names)
    after = _facts(new, before.model.names)
    renewed = build_types(new).names
    return _Differ(before, after, renewed).changes()


class _Differ:
    def __init__(self, old: _Facts, new: _Facts, renewed: Mapping[str, str]) -> None:
        self.old, self.new, self.renewed = old, new, renewed
        self.found: list[Change] = []
        self.renames = self._def_renames()

    def add(self, kind: str, subject: str, detail: str, breaks: str, tier: str, python: str = "",
            python_breaks: bool = False) -> None:
        severity = "breaking" if breaks != "nobody" else "python" if python_breaks else "compatible"
        if kind == "name-renewable":
            severity = "info"
        self.found.append(Change(kind, subject, detail, breaks, tier, python, severity))

    def changes(self) -> tuple[Change, ...]:
        self.methods()
        self.types()
        self.annotations()
        for key, (kept, fresh) in renamed(self.new.model.names, self.renewed).items():
            self.add("name-renewable", key, f"recorded name {kept}, the rules give {fresh}", "nobody", "stable",
                     f"{kept} would be renamed to {fresh} by `acpgen generate --renew-names`")
        order = {s: i for i, s in enumerate(SEVERITIES)}
        return tuple(sorted(self.found, key=lambda c: (order[c.severity], c.tier != "stable", c.kind, c.subject)))

    # -- methods ---------------------------------------------------------------------------------

    def methods(self) -> None:
        old, new = self.old.methods, self.new.methods
        for key in sorted(old.keys() | new.keys()):
            o, n = old.get(key), new.get(key)
            subject = f"{key[0]} ({key[1]})"
            if o is None:
                assert n is not None
                self.add("method-added", subject, f"new {n.kind.value}", "nobody", _tier(n.unstable),
                         f"{self.new.handlers.get(key, 'method table entry')} added")
                continue
            if n is None:
                self.add("method-removed", subject, f"{o.kind.value} removed", "sender", _tier(o.unstable),
                         f"{self.old.handlers.get(key, 'method table entry')} removed", True)
                continue
            tier = _tier(n.unstable)
            effect = self.new.handlers.get(key, "method table entry")
            if o.kind is not n.kind:
                self.add("method-kind-changed", subject, f"{o.kind.value} -> {n.kind.value}", "both", tier,
                         f"{effect} now returns {n.returns} (was {o.returns})", True)
            if o.params_type != n.params_type:
                self.add("params-type-renamed", subject, f"params {o.params_type} -> {n.params_type}", "nobody", tier,
                         f"{effect} takes {n.params_type} (was {o.params_type})", True)
            if o.result_type != n.result_type and o.kind is n.kind:
                self.add("result-type-renamed", subject, f"result {o.result_type} -> {n.result_type}", "nobody", tier,
                         f"{effect} returns {n.returns} (was {o.returns})", True)
            if o.unstable != n.unstable:
                if n.unstable:
                    self.add("method-made-unstable", subject, "now marked unstable", "nobody", "unstable",
                             f"{effect} left out by --stable-only", True)
                else:
                    self.add("method-made-stable", subject, "no longer marked unstable", "nobody", "stable",
                             f"{effect} kept by --stable-only")

    # -- types -----------------------------------------------------------------------------------

    def _def_renames(self) -> dict[str, str]:
        """old $def name -> new $def name, for each removed $def whose shape a new one has."""
        old_defs, new_defs = self.old.schema.defs, self.new.schema.defs
        added: dict[str, list[str]] = {}
        for name in sorted(new_defs.keys() - old_defs.keys()):
            added.setdefault(_shape_key(new_defs[name]), []).append(name)
        found = {}
        for name in sorted(old_defs.keys() - new_defs.keys()):
            candidates = added.get(_shape_key(old_defs[name]))
            if candidates:
                found[name] = candidates.pop(0)
        return found

    def tier(self, facts: _Facts, t: TypeDef, description: str = "") -> str:
        return _tier(t.name in facts.unstable or description.lstrip().startswith(UNSTABLE_MARK))

    def types(self) -> None:
        old, new = self.old.types, self.new.types
        renamed_to = {f"defs/{a}": f"defs/{b}" for a, b in self.renames.items()}
        renamed_from = {b: a for a, b in renamed_to.items()}
        for key in sorted(old.keys() | new.keys()):
            o, n = old.get(key), new.get(key)
            if key.startswith("inline/") and (o is None or n is None):
                continue  # the field that holds it changed type: reported there
            if o is None:
                assert n is not None
                if key not in renamed_from:
                    self.add("def-added", self.new.subjects[key], f"new {n.kind.value}", "nobody", self.tier(self.new, n),
                             f"{_what(n)} {n.name} added")
                continue
            if n is None:
                if key in renamed_to:
                    target = new[renamed_to[key]]
                    self.add("def-renamed", self.old.subjects[key], f"now {self.new.subjects[renamed_to[key]]}, same shape",
                             "nobody", self.tier(self.new, target), f"{_what(o)} {o.name} renamed to {target.name}", True)
                else:
                    self.add("def-removed", self.old.subjects[key], f"{o.kind.value} removed", "both",
                             self.tier(self.old, o), f"{_what(o)} {o.name} removed", True)
                continue
            self.typedef(self.new.subjects[key], o, n)

    def typedef(self, subject: str, o: TypeDef, n: TypeDef) -> None:
        tier = self.tier(self.new, n)
        if o.kind is not n.kind:
            self.add("def-kind-changed", subject, f"{o.kind.value} -> {n.kind.value}", "both", tier,
                     f"{n.name} is {with_article(_what(n))} (was {with_article(_what(o))})", True)
        elif n.kind is DefKind.CLASS:
            self.klass(subject, o.classes[0], n.classes[0], tier)
        elif n.kind is DefKind.UNION:
            self.union(subject, o, n, tier)
        else:
            assert o.target is not None and n.target is not None
            self.expr(subject, n.name, o.target, n.target, tier)

    def union(self, subject: str, o: TypeDef, n: TypeDef, tier: str) -> None:
        old_members, new_members = _members(o), _members(n)
        for label in sorted(old_members.keys() | new_members.keys()):
            oc, nc = old_members.get(label), new_members.get(label)
            where = f"{subject}/{label}"
            if oc is None:
                vtier = _tier(tier == "unstable" or _unstable(nc))
                effect = f"variant class {nc.name} added" if isinstance(nc, ClassDef) else f"{n.name} also accepts {label}"
                self.add("variant-added", where, "new variant", "receiver", vtier, effect)
            elif nc is None:
                vtier = _tier(tier == "unstable" or _unstable(oc))
                effect = (f"variant class {oc.name} removed" if isinstance(oc, ClassDef)
                          else f"{n.name} no longer accepts {label}")
                self.add("variant-removed", where, "variant removed", "sender", vtier, effect, True)
            elif isinstance(oc, ClassDef) and isinstance(nc, ClassDef):
                self.klass(where, oc, nc, _tier(tier == "unstable" or _unstable(nc)))

    def klass(self, subject: str, oc: ClassDef, nc: ClassDef, tier: str) -> None:
        old_tags = {t.wire_name: t.value for t in oc.tags}
        new_tags = {t.wire_name: t.value for t in nc.tags}
        for wire in sorted(old_tags.keys() | new_tags.keys()):
            if old_tags.get(wire) != new_tags.get(wire):
                self.add("tag-changed", f"{subject}.{wire}", f"{old_tags.get(wire)!r} -> {new_tags.get(wire)!r}", "both",
                         tier, f"{nc.name} sends {wire}={new_tags.get(wire)!r}", True)
        old_fields = {f.wire_name: f for f in oc.fields}
        new_fields = {f.wire_name: f for f in nc.fields}
        for wire in sorted(old_fields.keys() | new_fields.keys()):
            of, nf = old_fields.get(wire), new_fields.get(wire)
            where = f"{subject}.{wire}"
            if of is None:
                assert nf is not None
                ftier = _tier(tier == "unstable" or _unstable(nf))
                if nf.required:
                    self.add("field-added-required", where, f"new required field: {_annotation(nf.type)}", "sender",
                             ftier, f"{nc.name}({nf.py_name}=...) is a required keyword", True)
                else:
                    self.add("field-added", where, f"new optional field: {_annotation(nf.type)}", "nobody", ftier,
                             f"field {nc.name}.{nf.py_name} added")
                continue
            ftier = _tier(tier == "unstable" or _unstable(of))
            if nf is None:
                self.add("field-removed", where, "required field removed" if of.required else "optional field removed",
                         "receiver" if of.required else "nobody", ftier, f"field {oc.name}.{of.py_name} removed", True)
                continue
            self.field(where, nc, of, nf, ftier)

    def field(self, where: str, nc: ClassDef, of: Field, nf: Field, tier: str) -> None:
        attr = f"{nc.name}.{nf.py_name}"
        if of.required and not nf.required:
            self.add("field-made-optional", where, "required -> optional", "receiver", tier,
                     f"{attr} may be absent (its annotation widened)", True)
        elif nf.required and not of.required:
            self.add("field-made-required", where, "optional -> required", "sender", tier,
                     f"{nc.name}({nf.py_name}=...) became a required keyword", True)
        self.expr(where, attr, of.type, nf.type, tier, of.nullable, nf.nullable)

    def expr(self, where: str, attr: str, o: TypeExpr, n: TypeExpr, tier: str,
             o_null: bool | None = None, n_null: bool | None = None) -> None:
        o_null = isinstance(o, Nullable) if o_null is None else o_null
        n_null = isinstance(n, Nullable) if n_null is None else n_null
        oi, ni = _strip(o), _strip(n)
        if _annotation(oi) != _annotation(ni):
            ow, nw = _strip(self.old.wire(oi)), _strip(self.new.wire(ni))
            if _annotation(ow) == _annotation(nw):
                self.add("type-renamed", where, f"{_annotation(oi)} -> {_annotation(ni)}, both {_annotation(nw)}",
                         "nobody", tier, f"annotation of {attr}: {_annotation(o)} -> {_annotation(n)}")
                oi, ni = ow, nw
            elif not (isinstance(oi, Ref) and isinstance(ni, Ref) and self._same_def(oi.name, ni.name)):
                oi, ni = ow, nw
        if o_null != n_null:
            if n_null:
                self.add("nullability-changed", where, "now accepts null", "receiver", tier,
                         f"annotation of {attr} widened to {_annotation(n)}", True)
            else:
                self.add("nullability-changed", where, "no longer accepts null", "sender", tier,
                         f"annotation of {attr} narrowed to {_annotation(n)}", True)
        if _annotation(oi) == _annotation(ni):
            return
        if isinstance(oi, Literals) and isinstance(ni, Literals) and oi.base == ni.base:
            self.literals(where, attr, oi, ni, tier)
            return
        if isinstance(oi, Ref) and isinstance(ni, Ref) and self._same_def(oi.name, ni.name):
            self.add("type-renamed", where, f"{oi.name} -> {ni.name}, same shape", "nobody", tier,
                     f"annotation of {attr}: {_annotation(o)} -> {_annotation(n)}", True)
            return
        how, breaks = _widening(oi, ni)
        self.add("type-changed", where, f"{_annotation(oi)} -> {_annotation(ni)}", breaks, tier,
                 f"annotation of {attr} {how}: {_annotation(o)} -> {_annotation(n)}", True)

    def literals(self, where: str, attr: str, o: Literals, n: Literals, tier: str) -> None:
        for value in sorted(set(n.values) - set(o.values), key=repr):
            self.add("enum-value-added", where, f"value {value!r} added", "nobody" if o.open else "receiver", tier,
                     f"{attr} accepts {value!r}")
        for value in sorted(set(o.values) - set(n.values), key=repr):
            self.add("enum-value-removed", where, f"value {value!r} removed", "nobody" if n.open else "sender", tier,
                     f"{attr} no longer lists {value!r}", True)
        if o.open and not n.open:
            self.add("enum-closed", where, "no longer accepts other values", "sender", tier,
                     f"annotation of {attr} narrowed to {_annotation(n)}", True)
        elif n.open and not o.open:
            self.add("enum-opened", where, "now accepts other values too", "receiver", tier,
                     f"annotation of {attr} widened to {_annotation(n)}")

    def _same_def(self, old_py: str, new_py: str) -> bool:
        old_def = next((k[5:] for k, v in self.old.model.names.items() if v == old_py and k.startswith("defs/")), None)
        new_def = next((k[5:] for k, v in self.new.model.names.items() if v == new_py and k.startswith("defs/")), None)
        return old_def is not None and self.renames.get(old_def) == new_def

    # -- x-deserialize-* annotations -------------------------------------------------------------

    def annotations(self) -> None:
        old_defs, new_defs = self.old.schema.defs, self.new.schema.defs
        for name in sorted(old_defs.keys() & new_defs.keys()):
            before, after = _annotations(old_defs[name], name), _annotations(new_defs[name], name)
            t = self.new.types.get(f"defs/{name}")
            tier = self.tier(self.new, t) if t is not None else "stable"
            for where, key in sorted(after - before):
                self.add("annotation-added", where, f"{key} added", "nobody", tier,
                         "none: the generated decoders do not read x-deserialize-*")
            for where, key in sorted(before - after):
                self.add("annotation-removed", where, f"{key} removed", "sender", tier,
                         "none: the generated decoders do not read x-deserialize-*")


def _tier(unstable: bool) -> str:
    return "unstable" if unstable else "stable"


def _unstable(item: ClassDef | Field | str | None) -> bool:
    description = getattr(item, "description", "") or ""
    return description.lstrip().startswith(UNSTABLE_MARK)


def _what(t: TypeDef) -> str:
    return {DefKind.CLASS: "class", DefKind.UNION: "union", DefKind.LITERALS: "literal type"}.get(t.kind, "alias")


def _members(t: TypeDef) -> dict[str, ClassDef | str]:
    """A union's variants: its variant classes by label, its other members by annotation."""
    own = {c.name for c in t.classes}
    members: dict[str, ClassDef | str] = {"/".join(c.labels): c for c in t.classes}
    for option in t.options:
        if not (isinstance(option, Ref) and option.name in own):
            members[_annotation(option)] = _annotation(option)
    return members


def _strip(t: TypeExpr) -> TypeExpr:
    return t.inner if isinstance(t, Nullable) else t


def _annotation(t: TypeExpr) -> str:
    """The Python annotation a type expression stands for, as a diff shows it."""
    if isinstance(t, Nullable):
        return f"{_annotation(t.inner)} | None"
    if isinstance(t, Ref):
        return t.name
    if isinstance(t, ListOf):
        return f"list[{_annotation(t.item)}]"
    if isinstance(t, MapOf):
        return f"dict[str, {_annotation(t.value)}]"
    if isinstance(t, Literals):
        listed = f"Literal[{', '.join(repr(v) for v in t.values)}]"
        return f"{listed} | {t.base.annotation}" if t.open else listed
    if isinstance(t, Scalar):
        bounds = f" ({t.expected})" if t.bounded else ""
        return t.annotation + bounds
    assert isinstance(t, AnyValue)
    return "Any"


def _widening(o: TypeExpr, n: TypeExpr) -> tuple[str, str]:
    """("widened", "receiver"), ("narrowed", "sender") or ("changed", "both")."""
    if isinstance(n, AnyValue) or (_is_kind(o, JsonKind.INTEGER) and _is_kind(n, JsonKind.NUMBER)):
        return "widened", "receiver"
    if isinstance(o, AnyValue) or (_is_kind(o, JsonKind.NUMBER) and _is_kind(n, JsonKind.INTEGER)):
        return "narrowed", "sender"
    if isinstance(o, Literals) and _is_kind(n, o.base.kind):
        return "widened", "receiver"
    if isinstance(n, Literals) and _is_kind(o, n.base.kind):
        return "narrowed", "sender"
    return "changed", "both"


def _is_kind(t: TypeExpr, kind: JsonKind) -> bool:
    return isinstance(t, Scalar) and t.kind is kind and not t.bounded


def _shape_key(node: Any) -> str:
    """A $def's schema without its descriptions and titles: equal for two names of one shape."""
    def strip(value: Any, named: bool = False) -> Any:
        if isinstance(value, dict):
            if named:  # properties, $defs, ...: the keys are names, not keywords
                return {k: strip(v) for k, v in value.items()}
            return {k: strip(v, k in SCHEMA_MAPS) for k, v in value.items() if k not in ("description", "title")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(node), sort_keys=True)


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
