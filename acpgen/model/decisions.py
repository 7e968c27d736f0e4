"""Decisions: how a union's decoder picks the variant (built by :mod:`acpgen.model.unions`)."""

from __future__ import annotations

from dataclasses import dataclass

from .literals import py_literal
from .types import Form, Json


@dataclass(frozen=True)
class Leaf:
    """A decision's outcome: decode with ``fn`` (a class's or a type's decoder)."""

    fn: str
    label: str  # for messages: a type name
    guard: tuple[str, ...] = ()  # wire keys an object must have to be worth trying (in a TryEach)
    form = Form.LEAF

    @property
    def is_null(self) -> bool:
        """The outcome is JSON ``null``: its decoder would only return ``None``."""
        return self.fn == "_d_null"

    def guard_test(self, var: str) -> str:
        return " and ".join(f"{py_literal(key)} in {var}" for key in self.guard)


@dataclass(frozen=True)
class Dispatch:
    """Choose by the value of the tag property ``key``; absent or unknown tags go to ``default``."""

    fn: str  # the generated function that runs this decision
    key: str
    cases: tuple[tuple[Json, Decision], ...]  # sorted by value
    default: Decision | None
    form = Form.DISPATCH

    @property
    def label(self) -> str:
        return "one of its variants"


@dataclass(frozen=True)
class TryEach:
    """Try each option in turn; the first that decodes wins."""

    fn: str
    options: tuple[Decision, ...]
    check_object: bool = False  # first check the value is an object (the options' guards need one)
    form = Form.TRY

    @property
    def guarded(self) -> bool:
        """Some option is tried only when its guard keys are present."""
        return any(isinstance(o, Leaf) and o.guard for o in self.options)

    @property
    def label(self) -> str:
        return " or ".join(o.label for o in self.options)


@dataclass(frozen=True)
class ByKind:
    """Choose by the JSON kind of the value, then by ``decision`` within that kind."""

    fn: str
    branches: tuple[tuple[str, Decision], ...]  # (Python class of the JSON value, decision), in a fixed order
    expected: str
    form = Form.KIND

    @property
    def float_as_int(self) -> Decision | None:
        """The integer branch's decision, for an integer-valued float (``1.0``), when no branch
        takes floats."""
        kinds = dict(self.branches)
        return kinds["int"] if "int" in kinds and "float" not in kinds else None

    @property
    def tests(self) -> tuple[tuple[str, Decision], ...]:
        """Each branch as (the condition on the value ``d``, whose class is ``c``, its decision)."""
        return tuple(("d is None" if k == "NoneType" else f"c is {k}", d) for k, d in self.branches)

    @property
    def label(self) -> str:
        return self.expected


Decision = Leaf | Dispatch | TryEach | ByKind
