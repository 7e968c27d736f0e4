"""Two schemas side by side: what each comparison step (methods, definitions, fields, annotations)
reads, and where it records what it finds.

Entities are matched by what they are on the wire: a method by wire name and side, a ``$def`` by
name (or, when removed and added, by shape and place: a rename, see :mod:`acpgen.diff.renames`), a variant by its union and tag, title or
ref, a field by wire name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..model.method_table import UNSTABLE_MARK
from ..model.typedefs import TypeDef
from .changes import Change, severity, tier
from .facts import Facts, MethodKey
from .renames import def_renames, shape_key


@dataclass(frozen=True)
class Found:
    """A change as a step found it, with what :mod:`acpgen.diff.envelopes` needs to weigh it again."""

    change: Change
    python_breaks: bool  # whether code using the generated package may break
    owner: str | None  # the $def whose part changed (None: a method)
    member: str | None  # a union member gained or lost, by its Python annotation (a variant that is a ref)
    method: MethodKey | None  # the method that changed (None: a type)


class Comparison:
    """The old and the new schema, and the changes found so far."""

    def __init__(self, old: Facts, new: Facts, renewed: Mapping[str, str]) -> None:
        self.old, self.new, self.renewed = old, new, renewed
        self.found: list[Found] = []
        #: the $def the step at work is comparing: every change it adds belongs to it
        self.owner: str | None = None
        #: old $def name -> its rename (same shape, at the same place on the wire)
        self.renamed = def_renames(old, new)
        self.renames = {name: rename.new for name, rename in self.renamed.items()}

    def add(self, kind: str, subject: str, detail: str, breaks: str, tier: str, python: str = "",
            python_breaks: bool = False, member: str | None = None, method: MethodKey | None = None) -> None:
        change = Change(kind, subject, detail, breaks, tier, python, severity(kind, breaks, python_breaks))
        self.found.append(Found(change, python_breaks, self.owner, member, method))

    def tier(self, facts: Facts, t: TypeDef, description: str = "") -> str:
        return tier(t.name in facts.unstable or description.lstrip().startswith(UNSTABLE_MARK))

    def same_shape(self, old_py: str, new_py: str) -> bool:
        """Whether two Python type names are $defs of one shape, descriptions and titles aside."""
        old_def, new_def = self.old.def_of(old_py), self.new.def_of(new_py)
        return (old_def is not None and new_def is not None
                and shape_key(self.old.schema.defs[old_def]) == shape_key(self.new.schema.defs[new_def]))

    def same_def(self, old_py: str, new_py: str) -> bool:
        """Whether two Python type names are one $def, renamed (same shape, another name)."""
        old_def, new_def = self.old.def_of(old_py), self.new.def_of(new_py)
        return old_def is not None and self.renames.get(old_def) == new_def


def marked_unstable(item: Any) -> bool:
    """Whether a class, field or description is marked ``**UNSTABLE**``."""
    description = getattr(item, "description", "") or ""
    return isinstance(description, str) and description.lstrip().startswith(UNSTABLE_MARK)
