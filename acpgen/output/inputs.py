"""What a package was made from, as digests: so ``acpgen check`` can tell, without rendering,
whether generating again would be given the same inputs.

The output of ``acpgen generate`` is a function of its options (the recipe, recorded beside this),
the bytes of its inputs and acpgen itself. The manifest records (``inputs``):

* ``acpgen``: the version and a digest of acpgen's own files (its code, built-in templates,
  runtime modules and bundled schema), so a change to any of them, released or not, counts. The
  tools it runs are pinned by that code: black exactly, datamodel-code-generator to one minor
  release whose output for the same input is the same bytes;
* ``schemas``: each schema's sha256 (the bundled one's when none is given), with the ``meta.json``
  beside it that can give its protocol version;
* ``templates``: a digest of the templates folder (each file's path and bytes), or null;
* ``names``: the names file's sha256, or null;
* ``seal``: the sha256 of the manifest's own text with the seal left empty, so an edited manifest
  (its names lock, its file list) is seen as one acpgen did not write.

Equal records mean generating again is given the same inputs, so the files the manifest lists,
each with the recorded sha256, are what it would write. The record is a cache key, never an
output: ``check``, when it renders, compares the manifest without it (acpgen changed, its output
did not: still up to date).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..schema.bundled import bundled_schema
from ..schema.protocol import meta_path
from ..version import __version__

#: acpgen's own files that shape its output (the package folder's, caches aside).
_SHAPING = (".py", ".jinja", ".jinja2", ".json")


@dataclass(frozen=True)
class Inputs:
    acpgen: str  # "0.1.0 <sha256 of acpgen's files>"
    schemas: tuple[str, ...]  # per schema: "<sha256>" or "<sha256> meta <sha256 of its meta.json>"
    templates: str | None = None
    names: str | None = None
    seal: str = ""  # sha256 of the manifest's text with this empty

    def to_json(self) -> dict[str, Any]:
        return {"acpgen": self.acpgen, "schemas": list(self.schemas), "templates": self.templates,
                "names": self.names, "seal": self.seal}

    def unsealed(self) -> Inputs:
        return replace(self, seal="")

    def changed(self, now: Inputs, schema_names: tuple[str, ...]) -> list[str]:
        """What differs from ``now``, in words (``schema_names``: the schemas as the recipe names them)."""
        said = []
        if self.acpgen != now.acpgen:
            mine, theirs = self.acpgen.split(" ")[0], now.acpgen.split(" ")[0]
            said.append(f"acpgen ({mine} -> {theirs})" if mine != theirs else "acpgen's code")
        if len(self.schemas) != len(now.schemas):
            said.append("the schemas")
        else:
            said += [f"the schema {name}" for name, a, b in zip(schema_names, self.schemas, now.schemas) if a != b]
        said += [f"the {what}" for what, a, b in (("templates folder", self.templates, now.templates),
                                                   ("names file", self.names, now.names)) if a != b]
        return said


def inputs_from_json(data: object) -> Inputs:
    """The record a manifest holds; raises ValueError for one acpgen did not write."""
    if not isinstance(data, dict) or set(data) != {"acpgen", "schemas", "templates", "names", "seal"}:
        raise ValueError("bad 'inputs'")
    schemas = data["schemas"]
    texts = [data["acpgen"], data["seal"], *(schemas if isinstance(schemas, list) else [None])]
    optional = [data["templates"], data["names"]]
    if not all(isinstance(t, str) for t in texts) or not all(v is None or isinstance(v, str) for v in optional):
        raise ValueError("bad 'inputs'")
    return Inputs(data["acpgen"], tuple(schemas), data["templates"], data["names"], data["seal"])


def inputs_of(schemas: Iterable[Path | None], templates: Path | None, names: Path | None) -> Inputs:
    """The record of these inputs as they are now (``None`` in ``schemas``: the bundled schema)."""
    return Inputs(
        acpgen=f"{__version__} {acpgen_digest()}",
        schemas=tuple(_schema(path or bundled_schema()) for path in schemas),
        templates=_folder(templates) if templates is not None else None,
        names=_file(names) if names is not None else None,
    )


@functools.lru_cache(maxsize=1)
def acpgen_digest() -> str:
    """The sha256 of acpgen's own files: each one's path below the package and its bytes."""
    here = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(p for p in here.rglob("*") if p.suffix in _SHAPING and "__pycache__" not in p.parts):
        digest.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _schema(path: Path) -> str:
    text = _file(path)
    meta = meta_path(path)
    return f"{text} meta {_file(meta)}" if meta.is_file() else text


def _file(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _folder(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + _file(path).encode() + b"\0")
    return digest.hexdigest()
