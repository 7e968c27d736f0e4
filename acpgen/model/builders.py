"""The builders module: one short constructor per variant of every tagged union, the tag filled in.

Which unions: every union the schema tags (its decoder dispatches on a tag property), so a new
release's new variants and unions get builders with no list to keep. Each union is a namespace
named after it in snake_case (``ContentBlock`` -> ``content_block``); each variant a function
named after its tag value (``content_block.text("hi")``, ``session_update.tool_call(...)``; a
nested variant joins its tags, ``create_elicitation_request.form_session``; the variant without
a tag, after its class with the union's name taken out: ``mcp_server.stdio``). A builder takes
the variant class's constructor keywords (see :mod:`.calls`: ``extra`` only where the constructor
takes it), and its one required field, when it has exactly one, positionally.
"""

from __future__ import annotations

from dataclasses import dataclass

from .calls import TYPING_NAMES, Parameter, keyword_parameters
from .classes import ClassDef
from .decisions import Dispatch
from .naming import import_order, python_identifier, snake_case
from .typedefs import DefKind, TypeDef
from .types import Ref

#: Names a builder cannot take (the namespace class's own attributes).
_RESERVED = frozenset({"mro", "list", "dict", "str", "int", "float", "bool", "type", "object", "staticmethod"})


@dataclass(frozen=True)
class Builder:
    """One constructor of one variant."""

    name: str  # the function's name: the tag value in snake_case
    cls: str  # the variant class it builds
    tags: tuple[tuple[str, str], ...]  # (wire name, value literal) of the tags it fills in
    positional: Parameter | None  # the one required field, taken positionally
    keywords: tuple[Parameter, ...]  # every other constructor keyword, ``extra`` last if it takes it

    @property
    def parameters(self) -> tuple[str, ...]:
        """The ``def``'s parameter list."""
        first = (self.positional.text,) if self.positional else ()
        return (*first, "*", *(p.text for p in self.keywords)) if self.keywords else first

    @property
    def arguments(self) -> tuple[str, ...]:
        """The constructor call's arguments."""
        every = ((self.positional,) if self.positional else ()) + self.keywords
        return tuple(f"{p.name}={p.name}" for p in every)

    @property
    def doc(self) -> str:
        tags = ", ".join(f"``{wire}: {value}``" for wire, value in self.tags)
        return f"A :class:`{self.cls}`" + (f" ({tags})." if tags else ".")

    @property
    def uses(self) -> frozenset[str]:
        every = ((self.positional,) if self.positional else ()) + self.keywords
        return frozenset({self.cls}).union(*(p.uses for p in every))


@dataclass(frozen=True)
class BuilderGroup:
    """The builders of one union: a namespace of static methods."""

    namespace: str  # "content_block"
    union: str  # "ContentBlock"
    builders: tuple[Builder, ...]


def builder_groups(types: tuple[TypeDef, ...], extra: bool = True) -> tuple[BuilderGroup, ...]:
    """One group per tagged union, by union name; ``extra``: the constructors take ``extra``."""
    classes = {c.name: c for t in types for c in t.classes}
    groups = []
    taken: set[str] = set()
    for t in sorted(types, key=lambda t: t.name):
        if t.kind is not DefKind.UNION or not isinstance(t.decision, Dispatch):
            continue
        variants = [c for c in t.classes if c.union == t.name]
        listed = {c.name for c in variants}
        for option in t.options:  # a variant that is a $def of its own (McpServer's stdio)
            if isinstance(option, Ref) and option.name in classes and option.name not in listed:
                variants.append(classes[option.name])
        builders: list[Builder] = []
        names: set[str] = set()
        for cls in variants:
            name = _builder_name(cls, t.name)
            while name in names:
                name += "_"
            names.add(name)
            builders.append(_builder(name, cls, extra))
        namespace = python_identifier(snake_case(t.name))
        while namespace in taken:
            namespace += "_"
        taken.add(namespace)
        if builders:
            groups.append(BuilderGroup(namespace, t.name, tuple(builders)))
    return tuple(groups)


def _builder_name(cls: ClassDef, union: str) -> str:
    if cls.union == union and cls.labels and cls.tags:
        base = "_".join(snake_case(str(label)) for label in cls.labels)
    else:
        base = snake_case(cls.name)
        for part in (snake_case(union) + "_", "_" + snake_case(union)):
            if base.startswith(part) and base != part.strip("_"):
                base = base.removeprefix(part)
            elif base.endswith(part):
                base = base.removesuffix(part)
    return python_identifier(base or snake_case(cls.name), _RESERVED)


def _builder(name: str, cls: ClassDef, extra: bool) -> Builder:
    params = keyword_parameters(cls, extra)
    required = [p for p in params if p.required]
    positional = required[0] if len(required) == 1 else None
    keywords = tuple(p for p in params if p is not positional)
    tags = tuple((t.wire_name, t.value_literal) for t in cls.tags)
    return Builder(name, cls.name, tags, positional, keywords)


def builder_imports(groups: tuple[BuilderGroup, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the builders module imports from ``models``, and from ``typing`` (``Any``, ``Literal``)."""
    uses = frozenset().union(*(h.uses for g in groups for h in g.builders))
    return import_order(uses - TYPING_NAMES), tuple(sorted(uses & TYPING_NAMES))
