"""The ``$defs``' changes: definitions added, removed, renamed (same shape under another name, at the
same place on the wire: :mod:`acpgen.diff.renames`) or
turned into another kind, and each union's variants gained and lost; a class's own changes are
:mod:`acpgen.diff.fields`'."""

from __future__ import annotations

from ..model.classes import ClassDef
from ..model.naming import with_article
from ..model.typedefs import DefKind, TypeDef
from ..model.types import Ref
from .changes import tier
from .comparison import Comparison, marked_unstable
from .exprs import annotation
from .fields import compare_class, compare_expr


def compare_defs(c: Comparison) -> None:
    old, new = c.old.types, c.new.types
    renamed_to = {f"defs/{a}": f"defs/{b}" for a, b in c.renames.items()}
    renamed_from = {b: a for a, b in renamed_to.items()}
    for key in sorted(old.keys() | new.keys()):
        o, n = old.get(key), new.get(key)
        c.owner = owner(key)
        if key.startswith("inline/") and (o is None or n is None):
            continue  # the field that holds it changed type: reported there
        if o is None:
            assert n is not None
            if key not in renamed_from:
                c.add("def-added", c.new.subjects[key], f"new {n.kind.value}", "nobody", c.tier(c.new, n),
                      f"{what(n)} {n.name} added")
            continue
        if n is None:
            if key in renamed_to:
                target = new[renamed_to[key]]
                evidence = c.renamed[owner(key)].evidence
                c.add("def-renamed", c.old.subjects[key],
                      f"now {c.new.subjects[renamed_to[key]]}, same shape, at the same place ({evidence})",
                      "nobody", c.tier(c.new, target), f"{what(o)} {o.name} renamed to {target.name}: an import"
                      f" of {o.name} fails; import {target.name} instead", True)
            else:
                c.add("def-removed", c.old.subjects[key], f"{o.kind.value} removed", "both",
                      c.tier(c.old, o), f"{what(o)} {o.name} removed", True)
            continue
        _compare_def(c, c.new.subjects[key], o, n)


def owner(key: str) -> str:
    """The $def an entity key belongs to: ``defs/X`` and ``inline/X/prop`` -> ``X``."""
    return key.split("/")[1]


def what(t: TypeDef) -> str:
    return {DefKind.CLASS: "class", DefKind.UNION: "union", DefKind.LITERALS: "literal type"}.get(t.kind, "alias")


def _compare_def(c: Comparison, subject: str, o: TypeDef, n: TypeDef) -> None:
    t = c.tier(c.new, n)
    if o.kind is not n.kind and n.kind is DefKind.ALIAS and isinstance(n.target, Ref) and c.same_shape(
            o.name, n.target.name):  # the class moved into a $def of its own, the old name stays as an alias
        c.add("def-kind-changed", subject, f"{o.kind.value} -> alias of {n.target.name}, same shape", "nobody", t,
              f"{n.name} is an alias of {n.target.name} (was {with_article(what(o))})", True)
    elif o.kind is not n.kind:
        c.add("def-kind-changed", subject, f"{o.kind.value} -> {n.kind.value}", "both", t,
              f"{n.name} is {with_article(what(n))} (was {with_article(what(o))})", True)
    elif n.kind is DefKind.CLASS:
        compare_class(c, subject, o.classes[0], n.classes[0], t)
    elif n.kind is DefKind.UNION:
        _compare_union(c, subject, o, n, t)
    else:
        assert o.target is not None and n.target is not None
        compare_expr(c, subject, n.name, o.target, n.target, t)


def _compare_union(c: Comparison, subject: str, o: TypeDef, n: TypeDef, t: str) -> None:
    old_members, new_members = _members(o), _members(n)
    for label in sorted(old_members.keys() | new_members.keys()):
        oc, nc = old_members.get(label), new_members.get(label)
        where = f"{subject}/{label}"
        if oc is None:
            assert nc is not None
            vtier = tier(t == "unstable" or marked_unstable(nc))
            if isinstance(nc, ClassDef):
                c.add("variant-added", where, "new variant", "receiver", vtier, f"variant class {nc.name} added")
            else:
                c.add("variant-added", where, "new variant", "receiver", vtier, f"{n.name} also accepts {label}",
                      member=nc)
        elif nc is None:
            vtier = tier(t == "unstable" or marked_unstable(oc))
            if isinstance(oc, ClassDef):
                c.add("variant-removed", where, "variant removed", "sender", vtier,
                      f"variant class {oc.name} removed", True)
            else:
                c.add("variant-removed", where, "variant removed", "sender", vtier,
                      f"{n.name} no longer accepts {label}", True, member=oc)
        elif isinstance(oc, ClassDef) and isinstance(nc, ClassDef):
            compare_class(c, where, oc, nc, tier(t == "unstable" or marked_unstable(nc)))


def _members(t: TypeDef) -> dict[str, ClassDef | str]:
    """A union's variants: its variant classes by label, its other members by annotation."""
    own = {cls.name for cls in t.classes}
    members: dict[str, ClassDef | str] = {"/".join(cls.labels): cls for cls in t.classes}
    for option in t.options:
        if not (isinstance(option, Ref) and option.name in own):
            members[annotation(option)] = annotation(option)
    return members
