"""The named types of the generated models: classes, unions, literal sets and aliases."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from .classes import ClassDef
from .decisions import ByKind, Decision, Dispatch, TryEach
from .types import AnyValue, Encoding, ListOf, MapOf, Nullable, Ref, Scalar, TypeExpr


class DefKind(str, enum.Enum):
    CLASS = "class"  # an object with properties: one dataclass
    UNION = "union"  # a choice between classes and other types
    LITERALS = "literals"  # a closed or open set of const values
    ALIAS = "alias"  # another name for a type expression


@dataclass(frozen=True)
class TypeDef:
    """One named type of the generated models: a ``$def``, or an inline union lifted out."""

    name: str  # the $def name (also the Python name)
    kind: DefKind
    description: str
    pointer: str
    refs: tuple[str, ...]  # every $def name referenced anywhere inside it, sorted
    classes: tuple[ClassDef, ...] = ()  # CLASS: the one class; UNION: its variant classes
    target: TypeExpr | None = None  # ALIAS / LITERALS: the type; UNION: None
    options: tuple[TypeExpr, ...] = ()  # UNION: the member types, for the annotation
    decision: Decision | None = None  # UNION: how a decoder picks the variant
    helpers: tuple[Dispatch | TryEach | ByKind, ...] = ()  # UNION: every decision node, root first
    encoding: Encoding = Encoding.AS_IS  # how a value of this type is encoded


@dataclass(frozen=True)
class TypeModel:
    """Every type of a schema, ordered by name."""

    types: tuple[TypeDef, ...]
    names: Mapping[str, str] = field(default_factory=dict)  # the names lock's record (acpgen.model.namelock)

    @property
    def helpers(self) -> tuple[TypeExpr, ...]:
        return type_helpers(self.types)


def type_helpers(types: tuple[TypeDef, ...]) -> tuple[TypeExpr, ...]:
    """The helper decoders (lists, maps, optional values, scalars, inline literals) ``types`` use,
    sorted by function name."""
    found: dict[str, TypeExpr] = {}

    def use(t: TypeExpr | None) -> None:
        if t is None or isinstance(t, (Ref, AnyValue)):
            return
        found[t.fn] = t
        if isinstance(t, ListOf):
            use(t.item)
        elif isinstance(t, MapOf):
            use(t.value)
        elif isinstance(t, Nullable):
            use(t.inner)

    for t in types:
        for cls in t.classes:
            for f in cls.fields:
                if not isinstance(f.codec, Scalar) or f.codec.constrained:
                    use(f.codec)
        for o in t.options:
            use(o)
        if t.kind is DefKind.ALIAS:
            use(t.target)
    return tuple(found[k] for k in sorted(found))


def type_classes(types: tuple[TypeDef, ...]) -> tuple[ClassDef, ...]:
    """Every class, sorted by name."""
    return tuple(sorted((c for t in types for c in t.classes), key=lambda c: c.name))


def type_aliases(types: tuple[TypeDef, ...]) -> tuple[TypeDef, ...]:
    """Unions, literals and aliases in an order where each comes after the aliases it names."""
    by_name = {t.name: t for t in types if t.kind is not DefKind.CLASS}
    done: list[TypeDef] = []
    seen: set[str] = set()

    def visit(t: TypeDef) -> None:
        if t.name in seen:
            return
        seen.add(t.name)
        for name in t.refs:
            if name in by_name:
                visit(by_name[name])
        done.append(t)

    for name in sorted(by_name):
        visit(by_name[name])
    return tuple(done)
