"""The recipe: the options a package was generated with, as its project names them.

The manifest records it (``options``) and every file's header shows it as the command that remakes
the package (``acpgen generate --schema schema/acp.json --out src --package myapp._acp --side
agent``), to be run in the project folder: the folder of the ``pyproject.toml`` whose
``[tool.acpgen]`` applies, else the working folder of the run. Its paths are POSIX and relative to
that folder (with ``..`` for one beside it), never absolute, so the text is the same on every
machine that has the project. ``acpgen check`` compares the options it is given with it, and takes
the ones it is not given from it.

Every option is one row of :data:`OPTIONS`: its key (in the manifest and in ``[tool.acpgen]``),
its flag and its kind. The command, the record and the comparison are all read from that table:
a new option is a field of :class:`Recipe` and a row. An option given more than once (a
``--schema`` per protocol version, and a ``--protocol-version`` per ``--schema``) is a tuple that
:meth:`Option.shown` writes as the flag repeated and the manifest as a list; the command writes
each schema's version after its ``--schema``.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

DEFAULT_PACKAGE = "acp_bindings"
DEFAULT_OUT = "generated"


@dataclass(frozen=True)
class Recipe:
    """A package's options. A path is POSIX text relative to the project folder; None: not given."""

    schema: str | tuple[str, ...] | None = None  # None: the bundled schema; several: one per version
    out: str = DEFAULT_OUT
    package: str = DEFAULT_PACKAGE
    side: str = "both"
    stable_only: bool = False
    templates: str | None = None
    names: str | None = None
    models: str = "dataclasses"
    protocol_version: int | tuple[int, ...] | None = None  # None: the one the schema states; several: each schema's

    @property
    def command(self) -> str:
        """The command that remakes the package, run in the project folder; defaults are left out.
        A version given per schema follows its ``--schema``."""
        parts = ["acpgen", "generate"]
        paired = self.versions_by_schema
        for option in OPTIONS:
            value = getattr(self, option.attr)
            if paired and option.key == "schema":
                parts += [f"{option.shown((path,))} {BY_KEY['protocol-version'].shown(number)}" for path, number in paired]
            elif value != option.default and not (paired and option.key == "protocol-version"):
                parts.append(option.shown(value))
        return " ".join(parts)

    @property
    def versions_by_schema(self) -> tuple[tuple[str, int], ...]:
        """Each schema with the protocol version given for it; empty unless versions were given per schema."""
        if isinstance(self.schema, tuple) and isinstance(self.protocol_version, tuple):
            return tuple(zip(self.schema, self.protocol_version))
        return ()

    def to_json(self) -> dict[str, Any]:
        """The manifest's record: every key, a path not given as null."""
        return {option.key: _json(getattr(self, option.attr)) for option in OPTIONS}


@dataclass(frozen=True)
class Option:
    key: str  # in the manifest and in [tool.acpgen]: "stable-only"
    flag: str  # "--stable-only"
    kind: str  # "path" (POSIX text or None), "text", "number" (an int or None), or "switch" (a bool; off_flag turns it off)
    off_flag: str = ""
    unset: str = ""  # how a path that is not given is named: "the bundled schema"

    @property
    def attr(self) -> str:
        return self.key.replace("-", "_")

    @property
    def default(self) -> Any:
        return _DEFAULTS[self.attr]

    def flag_for(self, value: Any) -> str:
        """The flag that gives ``value``: ``--all-methods`` for a switch turned off, else the flag."""
        return self.off_flag if self.kind == "switch" and not value else self.flag

    def shown(self, value: Any) -> str:
        """The value as the command line gives it: ``--side agent``, ``--stable-only``, ``--all-methods``."""
        if self.kind == "switch":
            return self.flag if value else self.off_flag
        if value is None:
            return self.unset or f"no {self.flag}"
        if isinstance(value, tuple):  # a path (or a version) given once per protocol version
            return " ".join(f"{self.flag} {shlex.quote(str(v))}" for v in value)
        return f"{self.flag} {shlex.quote(str(value))}"  # a shell reads it back: a path with a space is quoted


_DEFAULTS = {f.name: f.default for f in fields(Recipe)}

#: The options, in the order the command gives them.
OPTIONS = (
    Option("schema", "--schema", "path", unset="the bundled schema"),
    Option("out", "--out", "path"),
    Option("package", "--package", "text"),
    Option("side", "--side", "text"),
    Option("stable-only", "--stable-only", "switch", off_flag="--all-methods"),
    Option("templates", "--templates", "path"),
    Option("names", "--names", "path"),
    Option("models", "--models", "text"),
    Option("protocol-version", "--protocol-version", "number", unset="the schema's"),
)
BY_KEY = {option.key: option for option in OPTIONS}
#: The options added after the manifest first recorded options: a record may lack them.
LATER_KEYS = frozenset({"protocol-version"})


def recipe_from_json(data: object) -> Recipe:
    """The recipe a manifest records; raises ValueError for a record acpgen did not write."""
    # a record from before an option was added has no key for it: that option's default
    if not isinstance(data, dict) or not set(BY_KEY) - LATER_KEYS <= set(data) <= set(BY_KEY):
        raise ValueError(f"'options' must have exactly the keys {', '.join(BY_KEY)}")
    values = {}
    for key, value in data.items():
        option = BY_KEY[key]
        if key == "schema" and isinstance(value, list) and len(value) > 1:
            ok = all(isinstance(v, str) and v for v in value)
            value = tuple(value)
        elif option.kind == "number" and isinstance(value, list) and len(value) > 1:  # one per schema
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            value = tuple(value)
        elif option.kind == "number":
            ok = value is None or isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = (isinstance(value, bool) if option.kind == "switch"
                  else isinstance(value, str) and bool(value) or (option.kind == "path" and value is None))
        if not ok:
            raise ValueError(f"bad option {key!r}: {value!r}")
        values[option.attr] = value
    return replace(Recipe(), **values)


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def project_path(path: Path, project: Path) -> str:
    """``path`` as the recipe writes it: POSIX, relative to ``project``, with ``..`` for a path
    beside the project (``../specs/acp.json``). A path that shares no folder with the project but
    the file system's root (``/tmp/acp.json`` for a project in ``/home``) is shown by its name only:
    a relative path climbing to the root would be an absolute path written another way."""
    where, base = os.path.abspath(path), os.path.abspath(project)
    try:
        common = Path(os.path.commonpath([where, base]))
    except ValueError:  # another drive (Windows)
        return path.name
    if common == Path(common.anchor):
        return path.name
    return Path(os.path.relpath(where, base)).as_posix()


def local_path(text: str, project: Path) -> Path:
    """A recipe's path as a path to open from the working folder."""
    return Path(os.path.relpath(os.path.join(os.path.abspath(project), text)))


def differences(recorded: Recipe, here: Recipe, given: Mapping[str, str]) -> list[str]:
    """One line per option ``given`` (key -> where it came from: its flag, or a ``[tool.acpgen]``
    key) whose value ``here`` is not the ``recorded`` one."""
    lines = []
    for option in OPTIONS:
        if option.key not in given:
            continue
        mine, theirs = getattr(here, option.attr), getattr(recorded, option.attr)
        if mine == theirs:
            continue
        where = given[option.key]
        source = "" if where in (option.flag, option.off_flag) else f" ({where})"
        if option.kind == "switch":
            said = f"{option.shown(mine)} is given here{source}"
        elif mine is None:
            said = f"{option.flag} is {option.unset or 'not given'} here{source}"
        elif isinstance(mine, tuple):  # a list, as it was written: in pyproject.toml, or as flags
            said = f"{option.flag} is {json.dumps(list(mine))} here{source}" if source else f"{option.shown(mine)} is given here"
        else:
            said = f"{option.flag} is {mine!r} here{source}"
        lines.append(f"{said} but the package was generated with {option.shown(theirs)}")
    return lines
