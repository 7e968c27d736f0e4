"""What each type accepts on the wire and how its values are encoded.

A decoder that dispatches on the JSON kind of a value needs to know which kinds each option
accepts (:meth:`Codecs.accepts`, as the Python classes of decoded JSON); a class's ``to_json``
needs to know how each field's value becomes JSON (:meth:`Codecs.encoding`). Both follow named
types through aliases and unions, and a cycle of names contributes nothing more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .shapes import UnionParts
from .types import (
    AnyValue,
    Encoding,
    ListOf,
    Literals,
    MapOf,
    Nullable,
    Ref,
    Scalar,
    TypeExpr,
)

#: Python classes of decoded JSON values, in the order a kind-dispatching decoder tests them.
PY_CLASSES = ("dict", "str", "int", "float", "bool", "list", "NoneType")


class Codecs:
    """Answers for the named types of one schema: its classes (every generated class name), its
    unions and its aliases (a name -> the expression it stands for)."""

    def __init__(self, classes: Collection[str], unions: Mapping[str, UnionParts], aliases: Mapping[str, TypeExpr]) -> None:
        self.classes = classes
        self.unions = unions
        self.aliases = aliases
        self._accepts: dict[str, frozenset[str]] = {}
        self._encoding: dict[str, Encoding] = {}

    def accepts(self, t: TypeExpr) -> frozenset[str]:
        """The Python classes of JSON values a type accepts."""
        if isinstance(t, Scalar):
            return frozenset(t.classes)
        if isinstance(t, Literals):
            return frozenset(t.base.classes)
        if isinstance(t, AnyValue):
            return frozenset(PY_CLASSES)
        if isinstance(t, ListOf):
            return frozenset({"list"})
        if isinstance(t, MapOf):
            return frozenset({"dict"})
        if isinstance(t, Nullable):
            return self.accepts(t.inner) | {"NoneType"}
        name = t.name
        if name in self._accepts:
            return self._accepts[name]
        self._accepts[name] = frozenset()  # a cycle accepts nothing more
        if name in self.classes:
            found = frozenset({"dict"})
        elif name in self.unions:
            u = self.unions[name]
            found = frozenset({"dict"} if u.shapes else set()).union(*(self.accepts(o) for o in u.others))
        else:
            found = self.accepts(self.aliases[name])
        self._accepts[name] = found
        return found

    def encoding(self, t: TypeExpr) -> Encoding:
        """How a value of the type becomes JSON."""
        if isinstance(t, (Scalar, Literals, AnyValue)):
            return Encoding.AS_IS
        if isinstance(t, ListOf):
            inner = self.encoding(t.item)
            return {Encoding.AS_IS: Encoding.AS_IS, Encoding.METHOD: Encoding.LIST}.get(inner, Encoding.GENERIC)
        if isinstance(t, MapOf):
            inner = self.encoding(t.value)
            return {Encoding.AS_IS: Encoding.AS_IS, Encoding.METHOD: Encoding.MAP}.get(inner, Encoding.GENERIC)
        if isinstance(t, Nullable):
            return Encoding.AS_IS if self.encoding(t.inner) is Encoding.AS_IS else Encoding.GENERIC
        name = t.name
        if name in self._encoding:
            return self._encoding[name]
        self._encoding[name] = Encoding.METHOD
        if name in self.classes:
            found = Encoding.METHOD
        elif name in self.unions:
            u = self.unions[name]
            kinds = {self.encoding(o) for o in u.others} | ({Encoding.METHOD} if u.shapes else set())
            found = kinds.pop() if len(kinds) == 1 and kinds <= {Encoding.AS_IS, Encoding.METHOD} else Encoding.GENERIC
        else:
            found = self.encoding(self.aliases[name])
        self._encoding[name] = found
        return found

    def resolve_scalar(self, t: TypeExpr) -> TypeExpr:
        """A Ref to an alias of a scalar is decoded as that scalar, inline."""
        original = t
        seen = set()
        while isinstance(t, Ref) and t.name in self.aliases and t.name not in seen:
            seen.add(t.name)
            target = self.aliases[t.name]
            if not isinstance(target, (Scalar, Ref)):
                break
            t = target
        return t if isinstance(t, Scalar) else original
