"""Type expressions as the diff shows and weighs them: the Python annotation a type stands for, and
whether a change of type widens it (breaks old receivers) or narrows it (breaks old senders)."""

from __future__ import annotations

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


def strip(t: TypeExpr) -> TypeExpr:
    """``t`` without its ``| None``."""
    return t.inner if isinstance(t, Nullable) else t


def annotation(t: TypeExpr) -> str:
    """The Python annotation a type expression stands for, as a diff shows it."""
    if isinstance(t, Nullable):
        return f"{annotation(t.inner)} | None"
    if isinstance(t, Ref):
        return t.name
    if isinstance(t, ListOf):
        return f"list[{annotation(t.item)}]"
    if isinstance(t, MapOf):
        return f"dict[str, {annotation(t.value)}]"
    if isinstance(t, Literals):
        listed = f"Literal[{', '.join(repr(v) for v in t.values)}]"
        return f"{listed} | {t.base.annotation}" if t.open else listed
    if isinstance(t, Scalar):
        bounds = f" ({t.expected})" if t.bounded else ""
        return t.annotation + bounds
    assert isinstance(t, AnyValue)
    return "Any"


def widening(o: TypeExpr, n: TypeExpr) -> tuple[str, str]:
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
