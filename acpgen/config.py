"""Settings from the ``[tool.acpgen]`` table of the nearest ``pyproject.toml``.

The nearest is the first ``pyproject.toml`` found in the working folder or above it. Keys are the
long option names (``schema``, ``out``, ``package``, ``side``, ``stable-only``, ``templates``,
``names``, ``models``, ``protocol-version``), and ``strict`` for ``acpgen check``; paths are relative
to the folder of that ``pyproject.toml``. Flags override the file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

from .render.flavours import FLAVOURS
from .schema.protocol import version_problem

PYPROJECT = "pyproject.toml"
_PATHS = ("schema", "out", "templates", "names")
_STRINGS = ("package", "side", "models")
_BOOLS = ("stable-only",)
_VERSIONS = ("protocol-version",)
_CHECK = ("strict",)  # check's own: not an option of the package
KEYS = (*_PATHS, *_STRINGS, *_BOOLS, *_VERSIONS, *_CHECK)


class ConfigError(Exception):
    """A ``[tool.acpgen]`` table acpgen cannot use. One line."""


@dataclass(frozen=True)
class Config:
    source: Path | None = None  # the pyproject.toml the values came from
    values: dict[str, Any] = field(default_factory=dict)  # key -> str, bool or Path (resolved)
    shown: str = PYPROJECT  # ``source`` as the user names it from the working folder
    written: dict[str, str] = field(default_factory=dict)  # a path key -> its value as the file writes it
    strict: bool = False  # check fails on a file in a package folder acpgen did not write

    def origin(self, key: str) -> str:
        """Where a value of this table came from, for an error: ``pyproject.toml: [tool.acpgen] package``."""
        return f"{self.shown}: [tool.acpgen] {key}"

    def missing(self, overridden: Collection[str] = ()) -> str | None:
        """Why a file or folder this table names cannot be used (its value as written), or None.

        ``schema`` and ``names`` must be files, ``templates`` a folder; keys ``overridden`` (by
        flags) are not looked at."""
        for key, wanted in (("schema", "file"), ("names", "file"), ("templates", "folder")):
            value = None if key in overridden else self.values.get(key)
            for path in value if isinstance(value, tuple) else (value,):
                if path is not None and not (path.is_file() if wanted == "file" else path.is_dir()):
                    shown = path.as_posix() if isinstance(value, tuple) else self.written[key]
                    return f"{self.origin(key)} {shown!r} is not a {wanted}"
        return None


def find_pyproject(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / PYPROJECT
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path) -> Config:
    """The ``[tool.acpgen]`` settings that apply in the absolute folder ``start`` (none without a table).

    Paths come back relative to ``start``.
    """
    path = find_pyproject(start)
    if path is None:
        return Config()
    shown = _shown(path, start)
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown}: not valid TOML: {exc}") from None
    table = document.get("tool", {}).get("acpgen")
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: [tool.acpgen] must be a table")
    values: dict[str, Any] = {}
    written: dict[str, str] = {}
    strict = False
    for key, value in table.items():
        where = f"{shown}: [tool.acpgen] {key}"
        if key not in KEYS:
            raise ConfigError(f"{shown}: [tool.acpgen] has unknown key {key!r} (known: {', '.join(KEYS)})")
        if key in _CHECK:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false, found {value!r}")
            strict = value
        elif key in _BOOLS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false, found {value!r}")
            values[key] = value
        elif key in _VERSIONS:
            numbers = value if isinstance(value, list) else [value]
            if not numbers or any(version_problem(v) for v in numbers):
                raise ConfigError(f"{where} must be {version_problem(None)}, or a list of them (one per schema),"
                                  f" found {value!r}")
            values[key] = tuple(numbers) if len(numbers) > 1 else numbers[0]
        elif key == "schema" and isinstance(value, list):
            if len(value) < 2 or not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"{where} must be a path or a list of two or more, found {value!r}")
            values[key] = tuple(Path(os.path.relpath(path.parent / v, start)) for v in value)
            written[key] = ", ".join(value)
        elif not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be a non-empty string, found {value!r}")
        elif key == "models" and value not in FLAVOURS:
            raise ConfigError(f"{where} must be one of {', '.join(FLAVOURS)}, found {value!r}")
        elif key in _PATHS:
            values[key] = Path(os.path.relpath(path.parent / value, start))
            written[key] = value
        else:
            values[key] = value
    return Config(source=path, values=values, shown=shown, written=written, strict=strict)


def _shown(path: Path, start: Path) -> str:
    """``path`` as the user would name it from ``start``: relative when it is at or above it."""
    try:
        return str(path.relative_to(start))
    except ValueError:
        hops = len(start.parts) - len(path.parent.parts)
        return "/".join([".."] * hops + [PYPROJECT])
