"""Compare two schemas: every change to methods, types, variants, fields and values, with who it
breaks, its stability tier and what it does to the generated Python.

Both schemas are read into the method table and the type model the generator uses. The new one is
built with the names the old one's output has (its names lock), as regenerating would build it, so
the Python effects are what the user will see.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model.namelock import renamed
from ..model.typebuild import build_types
from ..schema.loader import LoadedSchema
from .changes import Change, ordered
from .comparison import Comparison
from .defs import compare_defs
from .deserialize import compare_annotations
from .envelopes import through_methods
from .facts import read_facts
from .methods import compare_methods


def diff_schemas(old: LoadedSchema, new: LoadedSchema, old_names: Mapping[str, str] | None = None) -> tuple[Change, ...]:
    """Every change from ``old`` to ``new``, most severe first.

    ``old_names``: the names lock of the output generated from ``old`` (None: the rules' names).
    Raises :class:`~acpgen.diagnostics.DiagnosticError` when either schema cannot be generated from.
    """
    before = read_facts(old, old_names)
    after = read_facts(new, before.model.names)
    c = Comparison(before, after, build_types(new).names)
    compare_methods(c)
    compare_defs(c)
    compare_annotations(c)
    c.owner = None
    for key, (kept, fresh) in renamed(after.model.names, c.renewed).items():
        c.add("name-renewable", key, f"recorded name {kept}, the rules give {fresh}", "nobody", "stable",
              f"{kept} would be renamed to {fresh} by `acpgen generate --renew-names`")
    return ordered(through_methods(c))
