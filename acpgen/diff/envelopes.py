"""The JSON-RPC envelopes' changes, weighed through the methods.

An envelope (``ClientRequest``, ``AgentResponse``, ... : see :mod:`acpgen.diff.facts` for how they
are found) is the JSON-RPC framing, and its unions list the method table's params and result
types. What reaches the wire is the method table: the generated connection frames messages itself
and decodes each params or result by its method. So a change to an envelope breaks nobody by
itself:

* a variant for a method that was added, removed or given another type is covered by that
  method's record (``method-added`` breaks nobody, ``method-removed`` breaks old senders): it is
  ``compatible`` and says which record covers it;
* any other change (the envelope rewritten as a class, a variant relabelled) breaks nobody on
  the wire either: it says "no method changed" (or, when some did, to see their records), and
  stays ``python`` when code using the envelope's Python types may break.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from .changes import Change, severity
from .comparison import Comparison, Found
from .facts import MethodKey

#: The method records that say what a change of the envelopes' members does on the wire, and the
#: roles (a member that is the method's params or result type) each covers.
_COVERS = {
    "method-added": ("params", "result"),
    "method-removed": ("params", "result"),
    "method-kind-changed": ("params", "result"),
    "params-type-renamed": ("params",),
    "result-type-renamed": ("result",),
}


def through_methods(c: Comparison) -> Iterator[Change]:
    """Every change found, those of the envelopes weighed through the methods' records."""
    methods: dict[MethodKey, list[Change]] = {}
    for f in c.found:
        if f.method is not None and f.change.kind in _COVERS:
            methods.setdefault(f.method, []).append(f.change)
    envelopes = c.old.envelopes | c.new.envelopes
    for f in c.found:
        yield _weighed(c, f, methods) if f.owner in envelopes else f.change


def _weighed(c: Comparison, f: Found, methods: dict[MethodKey, list[Change]]) -> Change:
    change = f.change
    facts = c.old if change.kind == "variant-removed" else c.new
    covering = [m for key, role in facts.method_types.get(f.member or "", ())
                for m in methods.get(key, ()) if role in _COVERS[m.kind]]
    if covering:
        covered = ", ".join(f"{m.kind} {m.subject}" for m in covering)
        return replace(change, detail=f"{change.detail}: covered by {covered}", breaks="nobody",
                       severity=severity(change.kind, "nobody", False))
    if change.breaks == "nobody":
        return change
    why = "see the methods' records" if methods else "no method changed"
    return replace(change, detail=f"{change.detail}, {why}", breaks="nobody",
                   severity=severity(change.kind, "nobody", f.python_breaks))
