"""The commands acpgen suggests, written so that they run verbatim where the user is.

A hint starts with acpgen as the user ran it (``acpgen`` when that is what their shell finds,
else the path they ran, such as ``.venv/bin/acpgen``, or ``python -m acpgen``), gives every option
a bare command would not (so ``generate`` writes the package that was checked, not a new
``generated/``), and, when those options are relative to a project folder other than the working
one, changes to it first (``cd sub && acpgen generate ...``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from ..output.recipe import OPTIONS
from .generating import Run, resolve


def program(folder: Path | None = None) -> str:
    """acpgen as the user ran it, to be run from ``folder`` (default: the working folder)."""
    ran = Path(sys.argv[0] if sys.argv else "")
    if ran.name == "__main__.py" and ran.parent.name == "acpgen":  # python -m acpgen
        return f"{_as_run(sys.executable, Path(sys.executable).name, folder)} -m acpgen"
    if ran.stem != "acpgen":  # called in-process (a test, a library): the command's own name
        return "acpgen"
    return _as_run(str(ran), "acpgen", folder)


def _as_run(path: str, name: str, folder: Path | None) -> str:
    """``name`` when the shell finds ``path`` by it; else ``path``, relative to ``folder`` when it is
    inside the working folder, else absolute."""
    found = shutil.which(name)
    where = os.path.abspath(path)
    if found is not None and os.path.abspath(found) == where:
        return name
    inside = not os.path.relpath(where).startswith("..")
    shown = os.path.relpath(where, folder or ".") if inside else where
    return shlex.quote(shown if os.sep in shown else f".{os.sep}{shown}")


def regenerate(run: Run) -> str:
    """The command that writes what ``check`` checked for ``run``: ``generate`` with each option
    that differs from what a bare ``generate`` here would use (``[tool.acpgen]``, else the
    defaults), run in the project folder when those options, or the defaults, are its."""
    bare = resolve({}, checked=False).recipe
    recipe = run.recipe
    extra = []
    for option in OPTIONS:
        if getattr(recipe, option.attr) == getattr(bare, option.attr):
            continue
        value = run.out if option.key == "out" else getattr(run.options, option.attr)
        if option.key == "schema" and run.options.schemas:
            value = run.options.schemas
        if option.key == "protocol-version" and run.options.protocol_versions:  # one per --schema, in order
            value = run.options.protocol_versions
        if option.kind == "path" and value is not None:
            value = tuple(_path(v, run.project) for v in value) if isinstance(value, tuple) else _path(value, run.project)
        extra.append(option.shown(value))
    # a bare generate reads [tool.acpgen] from any folder of the project
    return in_project(run.project, ["generate", *extra], needed=not (run.configured and not extra))


def _path(path: Path, project: Path) -> str:
    """A path of the working folder as the project folder reaches it: relative, unless they share
    nothing but the file system's root (where the header's command shows only its name)."""
    where, base = os.path.abspath(path), os.path.abspath(project)
    common = os.path.commonpath([where, base])
    if os.path.dirname(common) == common:  # the root alone
        return Path(where).as_posix()
    return Path(os.path.relpath(where, base)).as_posix()


def in_project(project: Path, args: list[str], *, needed: bool = True) -> str:
    """``acpgen ARGS`` run in ``project``: prefixed with a change of folder when it is not here."""
    here = os.path.abspath(".")
    there = os.path.abspath(project)
    if not needed or there == here:
        return " ".join([program(), *args])
    return f"cd {shlex.quote(os.path.relpath(there))} && " + " ".join([program(project), *args])


def diff(run: Run) -> str:
    """``diff`` of the package ``run`` checks against the schemas ``run`` gives: a bare ``diff``
    where ``[tool.acpgen]`` gives every option (it reads them as ``check`` did, from any folder of
    the project), else ``--out`` the package's folder with a ``--schema`` (and ``--protocol-version``)
    per schema, as ``generate`` takes them."""
    if run.configured and not any(where.startswith("--") for where in run.given.values()):
        return in_project(run.project, ["diff"], needed=False)
    folder = run.out / run.options.package.replace(".", "/")
    args = ["diff", "--out", shlex.quote(folder.as_posix())]
    schemas = run.options.schemas or ((run.options.schema,) if run.options.schema is not None else ())
    versions = run.options.protocol_versions or (
        (run.options.protocol_version,) if run.options.protocol_version is not None else ())
    for index, schema in enumerate(schemas):
        args += ["--schema", shlex.quote(schema.as_posix())]
        if index < len(versions):
            args += ["--protocol-version", str(versions[index])]
    return " ".join([program(), *args])
