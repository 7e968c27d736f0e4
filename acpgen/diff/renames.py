"""Which removed ``$def`` is an added one under another name: a rename, paired on evidence.

Two definitions of one shape are not one definition renamed: two unrelated string aliases have the
same shape. A removed ``$def`` and an added one pair only when they also stand at the same place
on the wire in their schemas (a :data:`Place`): the same property of the same ``$def`` (its
members' variant of a union, by tag or title, counts as the property's place), the same method's
params or result. A removed ``$def`` whose shape several added ones share pairs with the one that
shares the most places with it; a tie pairs none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..schema.pointers import SCHEMA_MAPS, def_name
from .facts import Facts

#: Where a ``$def`` is used: ``("property", "SessionCapabilities", "close")``, a variant of a union
#: (``("property", "ContentBlock", '|"text"')``, ``("property", "Plan", 'entries|"todo"')``), an
#: alias's target (``("alias", "SessionKey", "")``), ``("method", "session/prompt", "agent", "params")``.
Place = tuple[str, ...]

_VARIANT_LISTS = ("anyOf", "oneOf")


@dataclass(frozen=True)
class Rename:
    old: str  # the removed $def
    new: str  # the added one
    places: tuple[Place, ...]  # where both stand: the evidence

    @property
    def evidence(self) -> str:
        """The places both stand, in words: ``SessionCapabilities.close``, ``session/close (agent) params``,
        ``ClientResponse variant Result.result variant KillTerminalResponse``."""
        return ", ".join(shown(place) for place in self.places)


def shown(place: Place) -> str:
    kind, *rest = place
    if kind == "method":
        wire, side, role = rest
        return f"{wire} ({side}) {role}"
    owner, label = rest
    if kind == "alias":
        return f"the alias {owner}"
    return (owner + ("" if label.startswith("|") else ".") + label).replace("|", " variant ")


def def_renames(old: Facts, new: Facts) -> dict[str, Rename]:
    """old $def name -> its rename, for each removed $def that an added one of its shape stands in for."""
    old_defs, new_defs = old.schema.defs, new.schema.defs
    added: dict[str, list[str]] = {}
    for name in sorted(new_defs.keys() - old_defs.keys()):
        added.setdefault(shape_key(new_defs[name]), []).append(name)
    old_places, new_places = places_of(old), places_of(new)
    found: dict[str, Rename] = {}
    taken: set[str] = set()
    for name in sorted(old_defs.keys() - new_defs.keys()):
        mine = old_places.get(name, frozenset())
        scored = sorted(((len(mine & new_places.get(other, frozenset())), other)
                         for other in added.get(shape_key(old_defs[name]), ()) if other not in taken), reverse=True)
        if not scored or scored[0][0] == 0 or len(scored) > 1 and scored[1][0] == scored[0][0]:
            continue  # no shared place, or two added $defs share as many: no evidence for either
        other = scored[0][1]
        taken.add(other)
        found[name] = Rename(name, other, tuple(sorted(mine & new_places[other])))
    return found


def places_of(facts: Facts) -> dict[str, frozenset[Place]]:
    """Every $def -> the places it stands at: the properties and variants that refer to it, the
    methods whose params or result it is."""
    found: dict[str, set[Place]] = {}
    for owner, node in facts.schema.defs.items():
        for target, place in _refs(node, owner, "", False):
            found.setdefault(target, set()).add(place)
    for py_name, uses in facts.method_types.items():
        name = facts.def_of(py_name)
        if name is not None:
            found.setdefault(name, set()).update(("method", wire, side, role) for (wire, side), role in uses)
    return {name: frozenset(places) for name, places in found.items()}


def _refs(node: Any, owner: str, label: str, named: bool) -> Iterator[tuple[str, Place]]:
    """The $defs ``node`` (part of ``owner``) refers to, each with its place: ``label``, the path
    of properties and variants to it. A variant with neither tag nor title (``*``) is a place only
    when it is the one member of its union that refers to a $def (``X | None``): a union of bare
    refs is told apart by the refs themselves, and so gives no evidence."""
    if isinstance(node, list):
        for item in node:
            yield from _refs(item, owner, label, False)
        return
    if not isinstance(node, dict):
        return
    if named:  # the keys are names: properties
        for key, value in node.items():
            yield from _refs(value, owner, f"{label}.{key}" if label else key, False)
        return
    target = def_name(node.get("$ref"))
    if target is not None and "*" not in label.split("|"):
        yield target, ("property", owner, label) if label else ("alias", owner, "")
    for key, value in node.items():
        if key in _VARIANT_LISTS and isinstance(value, list):
            referring = [item for item in value if next(_refs(item, owner, "x", False), None) is not None]
            for item in value:
                variant = _variant_label(item) if len(referring) > 1 else ""
                yield from _refs(item, owner, f"{label}|{variant}" if variant else label, False)
        elif key in SCHEMA_MAPS and key != "$defs":
            yield from _refs(value, owner, label, True)
        elif key != "$ref":
            yield from _refs(value, owner, label, False)


def _variant_label(item: Any) -> str:
    """A union variant's label: the value of its tag (a property with a ``const``), else its title, else ``*``."""
    if not isinstance(item, dict):
        return "*"
    for value in (item.get("properties") or {}).values():
        if isinstance(value, dict) and "const" in value:
            return json.dumps(value["const"])
    title = item.get("title")
    return title if isinstance(title, str) else "*"


def shape_key(node: Any) -> str:
    """A $def's schema without its descriptions and titles: equal for two names of one shape."""
    def strip(value: Any, named: bool = False) -> Any:
        if isinstance(value, dict):
            if named:  # properties, $defs, ...: the keys are names, not keywords
                return {k: strip(v) for k, v in value.items()}
            return {k: strip(v, k in SCHEMA_MAPS) for k, v in value.items() if k not in ("description", "title")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(node), sort_keys=True)

