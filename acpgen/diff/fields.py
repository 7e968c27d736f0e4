"""A class's changes: its tags, its fields added, removed, made required or optional, and each
field's type (nullability, another type, a renamed one, values of a set gained or lost)."""

from __future__ import annotations

from ..model.classes import ClassDef, Field
from ..model.types import Literals, Nullable, Ref, TypeExpr
from .changes import tier
from .comparison import Comparison, marked_unstable
from .exprs import annotation, strip, widening


def compare_class(c: Comparison, subject: str, oc: ClassDef, nc: ClassDef, t: str) -> None:
    old_tags = {tag.wire_name: tag.value for tag in oc.tags}
    new_tags = {tag.wire_name: tag.value for tag in nc.tags}
    for wire in sorted(old_tags.keys() | new_tags.keys()):
        if old_tags.get(wire) != new_tags.get(wire):
            c.add("tag-changed", f"{subject}.{wire}", f"{old_tags.get(wire)!r} -> {new_tags.get(wire)!r}", "both",
                  t, f"{nc.name} sends {wire}={new_tags.get(wire)!r}", True)
    old_fields = {f.wire_name: f for f in oc.fields}
    new_fields = {f.wire_name: f for f in nc.fields}
    for wire in sorted(old_fields.keys() | new_fields.keys()):
        of, nf = old_fields.get(wire), new_fields.get(wire)
        where = f"{subject}.{wire}"
        if of is None:
            assert nf is not None
            ftier = tier(t == "unstable" or marked_unstable(nf))
            if nf.required:
                c.add("field-added-required", where, f"new required field: {annotation(nf.type)}", "sender",
                      ftier, f"{nc.name}({nf.py_name}=...) is a required keyword", True)
            else:
                c.add("field-added", where, f"new optional field: {annotation(nf.type)}", "nobody", ftier,
                      f"field {nc.name}.{nf.py_name} added")
            continue
        ftier = tier(t == "unstable" or marked_unstable(of))
        if nf is None:
            c.add("field-removed", where, "required field removed" if of.required else "optional field removed",
                  "receiver" if of.required else "nobody", ftier, f"field {oc.name}.{of.py_name} removed", True)
            continue
        _compare_field(c, where, nc, of, nf, ftier)


def _compare_field(c: Comparison, where: str, nc: ClassDef, of: Field, nf: Field, t: str) -> None:
    attr = f"{nc.name}.{nf.py_name}"
    if of.required and not nf.required:
        c.add("field-made-optional", where, "required -> optional", "receiver", t,
              f"{attr} may be absent (its annotation widened)", True)
    elif nf.required and not of.required:
        c.add("field-made-required", where, "optional -> required", "sender", t,
              f"{nc.name}({nf.py_name}=...) became a required keyword", True)
    compare_expr(c, where, attr, of.type, nf.type, t, of.nullable, nf.nullable)


def compare_expr(c: Comparison, where: str, attr: str, o: TypeExpr, n: TypeExpr, t: str,
                 o_null: bool | None = None, n_null: bool | None = None) -> None:
    """A field's or alias's type: ``attr`` names it in Python, ``o_null``/``n_null`` say whether
    it accepts null (default: whether the expression is nullable)."""
    o_null = isinstance(o, Nullable) if o_null is None else o_null
    n_null = isinstance(n, Nullable) if n_null is None else n_null
    oi, ni = strip(o), strip(n)
    if annotation(oi) != annotation(ni):
        ow, nw = strip(c.old.wire(oi)), strip(c.new.wire(ni))
        if annotation(ow) == annotation(nw):
            c.add("type-renamed", where, f"{annotation(oi)} -> {annotation(ni)}, both {annotation(nw)}",
                  "nobody", t, f"annotation of {attr}: {annotation(o)} -> {annotation(n)}")
            oi, ni = ow, nw
        elif not (isinstance(oi, Ref) and isinstance(ni, Ref) and c.same_def(oi.name, ni.name)):
            oi, ni = ow, nw
    if o_null != n_null:
        if n_null:
            c.add("nullability-changed", where, "now accepts null", "receiver", t,
                  f"annotation of {attr} widened to {annotation(n)}", True)
        else:
            c.add("nullability-changed", where, "no longer accepts null", "sender", t,
                  f"annotation of {attr} narrowed to {annotation(n)}", True)
    if annotation(oi) == annotation(ni):
        return
    if isinstance(oi, Literals) and isinstance(ni, Literals) and oi.base == ni.base:
        _compare_literals(c, where, attr, oi, ni, t)
        return
    if isinstance(oi, Ref) and isinstance(ni, Ref) and c.same_def(oi.name, ni.name):
        c.add("type-renamed", where, f"{oi.name} -> {ni.name}, same shape", "nobody", t,
              f"annotation of {attr}: {annotation(o)} -> {annotation(n)}", True)
        return
    how, breaks = widening(oi, ni)
    c.add("type-changed", where, f"{annotation(oi)} -> {annotation(ni)}", breaks, t,
          f"annotation of {attr} {how}: {annotation(o)} -> {annotation(n)}", True)


def _compare_literals(c: Comparison, where: str, attr: str, o: Literals, n: Literals, t: str) -> None:
    for value in sorted(set(n.values) - set(o.values), key=repr):
        c.add("enum-value-added", where, f"value {value!r} added", "nobody" if o.open else "receiver", t,
              f"{attr} accepts {value!r}")
    for value in sorted(set(o.values) - set(n.values), key=repr):
        c.add("enum-value-removed", where, f"value {value!r} removed", "nobody" if n.open else "sender", t,
              f"{attr} no longer lists {value!r}", True)
    if o.open and not n.open:
        c.add("enum-closed", where, "no longer accepts other values", "sender", t,
              f"annotation of {attr} narrowed to {annotation(n)}", True)
    elif n.open and not o.open:
        c.add("enum-opened", where, "now accepts other values too", "receiver", t,
              f"annotation of {attr} widened to {annotation(n)}")
