"""The method table's changes: methods added, removed, turned between request and notification,
given other params or result types, or moved between the tiers."""

from __future__ import annotations

from functools import partial

from .changes import tier
from .comparison import Comparison


def compare_methods(c: Comparison) -> None:
    old, new = c.old.methods, c.new.methods
    c.owner = None
    for key in sorted(old.keys() | new.keys()):
        o, n = old.get(key), new.get(key)
        subject = f"{key[0]} ({key[1]})"
        add = partial(c.add, method=key)
        if o is None:
            assert n is not None
            add("method-added", subject, f"new {n.kind.value}", "nobody", tier(n.unstable),
                f"{c.new.handlers.get(key, 'method table entry')} added")
            continue
        if n is None:
            add("method-removed", subject, f"{o.kind.value} removed", "sender", tier(o.unstable),
                f"{c.old.handlers.get(key, 'method table entry')} removed", True)
            continue
        t = tier(n.unstable)
        effect = c.new.handlers.get(key, "method table entry")
        if o.kind is not n.kind:
            add("method-kind-changed", subject, f"{o.kind.value} -> {n.kind.value}", "both", t,
                f"{effect} now returns {n.returns} (was {o.returns})", True)
        if o.params_type != n.params_type:
            add("params-type-renamed", subject, f"params {o.params_type} -> {n.params_type}", "nobody", t,
                f"{effect} takes {n.params_type} (was {o.params_type})", True)
        if o.result_type != n.result_type and o.kind is n.kind:
            add("result-type-renamed", subject, f"result {o.result_type} -> {n.result_type}", "nobody", t,
                f"{effect} returns {n.returns} (was {o.returns})", True)
        if o.unstable != n.unstable:
            if n.unstable:
                add("method-made-unstable", subject, "now marked unstable", "nobody", "unstable",
                    f"{effect} left out by --stable-only", True)
            else:
                add("method-made-stable", subject, "no longer marked unstable", "nobody", "stable",
                    f"{effect} kept by --stable-only")
