"""The names lock: the Python name given to every schema entity, so that a regeneration keeps it.

The manifest of an output records one name per entity under a key that says what the entity is
on the wire, not what it is called in Python:

* ``defs/<Def>``: a ``$def``;
* ``variants/<Union>/<label>[/<label>]``: a union variant class, by its union and the tags,
  titles or refs that identify it (the keys of a names file, under ``variants/``);
* ``inline/<Owner>/<property>``: a type written inline in a property and lifted out;
* ``fields/<class key>#<wire name>``: a field of the class whose key (one of the above) is given.

Built with a lock, a model gives every entity the lock records its recorded name, and new
entities the names the rules give, except that a new entity never takes a name the lock records
for another one: it gets a ``_`` suffix instead (a field: a name recorded for another field of its
class). So a new ``$def`` ``Terminal`` beside a kept variant class ``Terminal`` is ``Terminal_``.
With no lock (a first run, or ``--renew-names``) names are what the rules give.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping


def def_key(name: str) -> str:
    return f"defs/{name}"


def variant_key(union: str, labels: tuple[str, ...]) -> str:
    return "/".join(("variants", union, *labels))


def inline_key(owner: str, hint: str) -> str:
    return f"inline/{owner}/{hint}"


def field_key(class_key: str, wire: str) -> str:
    return f"fields/{class_key}#{wire}"


class NameLock:
    """Recorded names (key -> Python name), as :func:`acpgen.model.typebuild.build_types` uses them."""

    def __init__(self, recorded: Mapping[str, str] | None = None) -> None:
        self.recorded: dict[str, str] = dict(recorded or {})
        self.type_names = frozenset(v for k, v in self.recorded.items() if not k.startswith("fields/"))
        self._fields: dict[str, dict[str, str]] = defaultdict(dict)
        for key, name in self.recorded.items():
            if key.startswith("fields/"):
                class_key, _, wire = key[len("fields/"):].rpartition("#")
                self._fields[class_key][wire] = name

    def type_name(self, key: str, proposed: str) -> str:
        """The recorded name of ``key``; for a new entity, ``proposed`` unless the lock records it."""
        if key in self.recorded:
            return self.recorded[key]
        return self.fresh(proposed)

    def fresh(self, proposed: str) -> str:
        """``proposed``, with ``_`` appended while the lock records it for some entity."""
        while proposed in self.type_names:
            proposed += "_"
        return proposed

    def fields(self, class_key: str) -> dict[str, str]:
        """wire name -> recorded Python name, for the fields of one class."""
        return self._fields.get(class_key, {})


def renamed(old: Mapping[str, str], new: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """key -> (old name, new name) for every entity both records hold under different names."""
    return {k: (old[k], new[k]) for k in sorted(old.keys() & new.keys()) if old[k] != new[k]}
