"""Decision trees: how a generated decoder picks the variant of a union.

By the JSON kind of the value first (:class:`~acpgen.model.types.ByKind`) when the union has
options that are not objects; among object variants by a tag property when they carry ``const``
values for one (:class:`~acpgen.model.types.Dispatch`, the union's ``discriminator`` preferred),
else by trying each variant whose distinguishing required properties are present, most required
properties first (:class:`~acpgen.model.types.TryEach`). Every node that needs a function of its
own gets one, named ``_d_<Union>``, ``_d_<Union>__1``, ... in the order the tree is built.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from .codecs import PY_CLASSES, Codecs
from .decisions import ByKind, Decision, Dispatch, Leaf, TryEach
from .shapes import Shape, UnionParts
from .types import (
    KIND_WORDS,
    AnyValue,
    JsonKind,
    ListOf,
    Literals,
    MapOf,
    Ref,
    Scalar,
    TypeExpr,
)

#: The JSON kind behind each Python class of decoded JSON.
PY_CLASS_KINDS = {
    "NoneType": JsonKind.NULL,
    "bool": JsonKind.BOOLEAN,
    "int": JsonKind.INTEGER,
    "float": JsonKind.NUMBER,
    "str": JsonKind.STRING,
    "list": JsonKind.ARRAY,
    "dict": JsonKind.OBJECT,
}

Node = Dispatch | TryEach | ByKind


def union_decision(u: UnionParts, leaf_name: Callable[[Shape], str], codecs: Codecs) -> tuple[Decision, tuple[Node, ...]]:
    """The union's decision and every node of it that has a function, root first.

    ``leaf_name`` gives the class that decodes an object variant.
    """
    return _Tree(u, leaf_name, codecs).build()


class _Tree:
    def __init__(self, u: UnionParts, leaf_name: Callable[[Shape], str], codecs: Codecs) -> None:
        self.u, self.leaf_name, self.codecs = u, leaf_name, codecs
        self.names = itertools.count()
        self.started = itertools.count()  # a node's place: when its building began
        self.nodes: list[tuple[int, Node]] = []

    def fn_name(self) -> str:
        n = next(self.names)
        return f"_d_{self.u.name}" if n == 0 else f"_d_{self.u.name}__{n}"

    def build(self) -> tuple[Decision, tuple[Node, ...]]:
        u = self.u
        if not u.others:
            root = self.objects(u.shapes, frozenset(), self.fn_name())
            if isinstance(root, Leaf):  # a single variant: still give the union its own decoder
                root = TryEach(f"_d_{u.name}", (root,))
                self.nodes.append((next(self.started), root))
        else:
            root = self.by_kind()
        return root, tuple(node for _, node in sorted(self.nodes, key=lambda entry: entry[0]))

    def by_kind(self) -> ByKind:
        place = next(self.started)
        root_fn = self.fn_name()
        branches: list[tuple[str, Decision]] = []
        for py_class in PY_CLASSES:
            options: list[Decision] = []
            if py_class == "dict" and self.u.shapes:
                options.append(self.objects(self.u.shapes, frozenset(), None))
            ranked = sorted(
                (o for o in self.u.others if py_class in self.codecs.accepts(o)),
                key=lambda o: (3 if len(self.codecs.accepts(o)) == len(PY_CLASSES) else _rank(o, py_class), o.token),
            )
            known = {o.fn for o in options if isinstance(o, Leaf)}
            for o in ranked:  # two options the schema writes alike (two nulls) are tried once
                if o.fn not in known:
                    known.add(o.fn)
                    options.append(Leaf(o.fn, _label(o)))
            if not options:
                continue
            if len(options) == 1:
                branches.append((py_class, options[0]))
            else:
                t = TryEach(self.fn_name(), tuple(options))
                self.nodes.append((next(self.started), t))
                branches.append((py_class, t))
        expected = " or ".join(dict.fromkeys(KIND_WORDS[PY_CLASS_KINDS[k]] for k, _ in branches))
        root = ByKind(root_fn, tuple(branches), expected)
        self.nodes.append((place, root))
        return root

    def objects(self, shapes: list[Shape], used: frozenset[str], fn: str | None) -> Decision:
        """How to pick among object ``shapes`` once the tags in ``used`` are known."""
        if len(shapes) == 1:
            leaf = self.leaf_name(shapes[0])
            return Leaf("_d_" + leaf, leaf)
        tag_key = self.u.tag_key
        keys = sorted({k for s in shapes for k in s.tags} - used, key=lambda k: (k != tag_key, k))
        best = max(keys, key=lambda k: sum(k in s.tags for s in shapes), default=None) if keys else None
        if best is not None and tag_key in keys and sum(tag_key in s.tags for s in shapes) == max(
            sum(k in s.tags for s in shapes) for k in keys
        ):
            best = tag_key
        if best is not None:
            groups: dict[str, list[Shape]] = {}
            untagged = []
            for s in shapes:
                if best in s.tags:
                    groups.setdefault(s.tags[best], []).append(s)
                else:
                    untagged.append(s)
            if len(groups) + (1 if untagged else 0) >= 2 or (groups and not untagged):
                place = next(self.started)
                own = fn or self.fn_name()
                cases = tuple((value, self.objects(group, used | {best}, None)) for value, group in sorted(groups.items()))
                default = self.objects(untagged, used | {best}, None) if untagged else None
                d = Dispatch(own, best, cases, default)
                self.nodes.append((place, d))
                return d
        ordered = sorted(shapes, key=lambda s: (-len(s.required), -len(s.props), self.leaf_name(s)))
        own = fn or self.fn_name()
        shared = frozenset.intersection(*(frozenset(s.required | s.tags.keys()) for s in shapes))
        leaves = tuple(
            Leaf("_d_" + self.leaf_name(s), self.leaf_name(s),
                 tuple(sorted((s.required | s.tags.keys()) - shared)[:2]))  # a necessary condition
            for s in ordered
        )
        t = TryEach(own, leaves, check_object=fn is not None and any(leaf.guard for leaf in leaves))
        self.nodes.append((next(self.started), t))
        return t


def _rank(t: TypeExpr, py_class: str) -> int:
    if isinstance(t, Literals) and not t.open:
        return 0
    if isinstance(t, AnyValue):
        return 3
    if isinstance(t, Scalar) and t.kind is JsonKind.NUMBER and py_class == "int":
        return 2
    return 1


def _label(t: TypeExpr) -> str:
    if isinstance(t, Ref):
        return t.name
    if isinstance(t, Scalar):
        return t.expected
    if isinstance(t, ListOf):
        return "an array"
    if isinstance(t, MapOf):
        return "an object"
    if isinstance(t, Literals):
        return "one of " + ", ".join(repr(v) for v in t.values)
    return "a value"
