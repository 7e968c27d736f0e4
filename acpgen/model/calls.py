"""What the generated API lets a user write by hand: keyword parameters, and the variant checks
that keep a message from leaving without its tag.

* A class's keyword parameters (:func:`keyword_parameters`) are its constructor's: the proxy's
  flat call (``await client.session_update(session_id=..., update=...)``) and the builders
  (``update.tool_call(...)``) take exactly these, with the same annotations and defaults, so mypy
  checks a flat call as it checks the constructor. A dataclass constructor also takes ``extra``
  (the properties the class does not define); a pydantic one does not (``extra="allow"`` takes
  each such property as a keyword of its own, and would send ``extra=`` as a property named so).
* A field whose type is a union of classes (or a list or an optional one of them) is checked in
  the constructor (:func:`variant_checks`): a value that is not one of the union's variant
  classes is refused with a ``TypeError`` naming the class to use. The variant that extends the
  value's class (``ToolCallSessionUpdate`` extends ``ToolCall`` with the ``sessionUpdate`` tag) is
  named when there is one (:func:`variant_hints`), else the union's variants are listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .classes import ClassDef
from .literals import py_literal
from .typedefs import DefKind, TypeDef
from .types import AnyValue, ListOf, Literals, MapOf, Nullable, Ref, TypeExpr

#: Black's line length, as the templates lay code out (``acpgen/render/layout.py``).
_LINE_LENGTH = 100

#: The keyword every constructor takes for properties the class does not define.
EXTRA = "extra"
EXTRA_ANNOTATION = "dict[str, Any] | None"
#: The names an annotation may use that come from ``typing``, not from ``models``.
TYPING_NAMES = frozenset({"Any", "Literal"})


@dataclass(frozen=True)
class Parameter:
    """One keyword parameter of a constructor, a flat call or a builder."""

    name: str
    annotation: str
    required: bool
    uses: frozenset[str] = frozenset()  # the names its annotation needs (see annotation_names)

    @property
    def text(self) -> str:
        """The parameter as a ``def`` writes it: ``session_id: SessionId`` or ``meta: ... = None``."""
        return f"{self.name}: {self.annotation}" + ("" if self.required else " = None")


def keyword_parameters(cls: ClassDef, extra: bool = True) -> tuple[Parameter, ...]:
    """The constructor's keyword parameters, in its order, ``extra`` last when the constructor
    takes it (``extra``)."""
    fields = tuple(Parameter(f.py_name, f.annotation, f.required, annotation_names(f.type)) for f in cls.fields)
    return (*fields, Parameter(EXTRA, EXTRA_ANNOTATION, False, frozenset({"Any"}))) if extra else fields


def annotation_names(expr: TypeExpr) -> frozenset[str]:
    """The names an annotation of ``expr`` uses beyond the builtins: model types, ``Any`` for any
    JSON value, and ``Literal`` for an inline set of values (:data:`TYPING_NAMES`)."""
    if isinstance(expr, AnyValue):
        return frozenset({"Any"})
    if isinstance(expr, Ref):
        return frozenset({expr.name})
    if isinstance(expr, ListOf):
        return annotation_names(expr.item)
    if isinstance(expr, MapOf):
        return annotation_names(expr.value)
    if isinstance(expr, Nullable):
        return annotation_names(expr.inner)
    if isinstance(expr, Literals):
        return frozenset({"Literal"})
    return frozenset()


@dataclass(frozen=True)
class VariantCheck:
    """A constructor's check that a union-typed field holds one of the union's variant classes."""

    field: str  # the field's (and parameter's) Python name
    union: str  # the union's name
    items: bool  # the field is a list of the union's values
    optional: bool  # the field may be None

    @property
    def lines(self) -> tuple[str, ...]:
        """The statements, without indentation (the constructor's body is at 8 spaces). A value
        is tested inline (``isinstance`` against the union's tuple of classes: no call on the way
        of a valid value); a list, or a test too long for a line, through ``_check_variant[s]``."""
        union = py_literal(self.union)
        if not self.items:
            test = f"not isinstance({self.field}, _V_{self.union})"
            test = f"{self.field} is not None and {test}" if self.optional else test
            if len(f"{' ' * 8}if {test}:") <= _LINE_LENGTH:
                return (f"if {test}:", f"    raise _not_variant({self.field}, {union})")
        call = f"_check_variant{'s' if self.items else ''}({self.field}, {union})"
        return (f"if {self.field} is not None:", f"    {call}") if self.optional else (call,)


def checked_unions(types: Iterable[TypeDef]) -> dict[str, tuple[str, ...]]:
    """Every union whose members are all classes (maybe through nested unions): its classes."""
    by_name = {t.name: t for t in types}
    variant_classes = {c.name for t in by_name.values() if t.kind is DefKind.UNION for c in t.classes}

    def classes(t: TypeDef, seen: frozenset[str]) -> tuple[str, ...] | None:
        found: list[str] = []
        for option in t.options:
            if isinstance(option, Ref) and option.name in variant_classes:
                found.append(option.name)
                continue
            target = by_name.get(option.name) if isinstance(option, Ref) else None
            if target is None or target.name in seen:
                return None
            if target.kind is DefKind.CLASS:
                found.append(target.name)
            elif target.kind is DefKind.UNION:
                inner = classes(target, seen | {target.name})
                if inner is None:
                    return None
                found.extend(inner)
            else:
                return None
        return tuple(dict.fromkeys(found)) or None

    unions = {}
    for t in by_name.values():
        if t.kind is DefKind.UNION:
            found = classes(t, frozenset({t.name}))
            if found is not None:
                unions[t.name] = found
    return {name: unions[name] for name in sorted(unions)}


def variant_checks(cls: ClassDef, unions: Mapping[str, tuple[str, ...]]) -> tuple[VariantCheck, ...]:
    """The checks ``cls``'s constructor makes, in field order."""
    checks = []
    for f in cls.fields:
        expr: TypeExpr = f.type
        optional = not f.required
        if isinstance(expr, Nullable):
            expr, optional = expr.inner, True
        items = isinstance(expr, ListOf)
        if isinstance(expr, ListOf):
            expr = expr.item
        if isinstance(expr, Ref) and expr.name in unions:
            checks.append(VariantCheck(f.py_name, expr.name, items, optional))
    return tuple(checks)


def variant_hints(document: Mapping[str, Any], types: Iterable[TypeDef]) -> tuple[tuple[str, str, str], ...]:
    """``(union, class, variant)`` for every union variant that extends a class (its one ``$ref``,
    maybe inside ``allOf``): what a refusal of a ``class`` value where ``union`` is expected
    suggests (``ToolCall`` -> ``ToolCallSessionUpdate``; several when several variants extend it)."""
    types = tuple(types)
    class_of_def = {t.pointer: t.name for t in types if t.kind is DefKind.CLASS}
    hints = []
    for t in types:
        if t.kind is not DefKind.UNION:
            continue
        for variant in t.classes:
            ref = _only_ref(_at(document, variant.pointer))
            target = class_of_def.get(ref[1:]) if ref and ref.startswith("#/") else None
            if target is not None and target != variant.name:
                hints.append((t.name, target, variant.name))
    return tuple(sorted(hints))


def table_entries(unions: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """``_VARIANTS``'s entries: ``"SessionUpdate": _V_SessionUpdate``."""
    return tuple(f"{py_literal(name)}: _V_{name}" for name in unions)


def hint_entries(hints: Iterable[tuple[str, str, str]]) -> tuple[str, ...]:
    """``_EXTENDS``'s entries: ``("SessionUpdate", "ToolCall", "ToolCallSessionUpdate")``."""
    return tuple("(" + ", ".join(py_literal(part) for part in hint) + ")" for hint in hints)


def _at(document: Mapping[str, Any], ptr: str) -> Any:
    node: Any = document
    for token in ptr.strip("/").split("/") if ptr.strip("/") else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return None
    return node


def _only_ref(node: Any) -> str | None:
    if not isinstance(node, dict):
        return None
    refs = [node.get("$ref")] + [p.get("$ref") for p in node.get("allOf", []) or [] if isinstance(p, dict)]
    found = [r for r in refs if isinstance(r, str)]
    return found[0] if len(found) == 1 else None
