"""The Jinja environment: built-in templates, optionally overridden by a user's folder."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import jinja2.meta

from ..model.literals import py_literal
from ..model.typedefs import DefKind
from ..model.types import DecodeStep, Form, JsonKind
from .layout import fit, fit_import
from .unsplit import one_line

#: The built-in templates, one per generated module (``models.py.jinja``); ``_*.jinja`` are shared.
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The runtime modules, plain Python copied into the package (see ``acpgen/runtime``).
RUNTIME = Path(__file__).resolve().parent.parent / "runtime"

#: The model's closed sets, for templates to compare with ``==`` (a misspelt member is an error).
MODEL_ENUMS = {e.__name__: e for e in (DecodeStep, DefKind, Form, JsonKind)}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def docstring(text: str, indent: str = "") -> str:
    """A triple-quoted docstring literal holding ``text`` exactly."""
    body = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", body)
    if body.endswith('"'):
        body += " "
    if "\n" not in body:
        return f'"""{body}"""'
    lines = [(indent + line) if line.strip() else "" for line in body.split("\n")]
    return '"""' + "\n".join(lines).lstrip() + "\n" + indent + '"""'


def comment(text: str) -> str:
    """Text safe to put after ``#`` on one line."""
    return " ".join(text.split())


def make_environment(user_templates: Path | None = None, *, black_style: bool = True) -> jinja2.Environment:
    """Templates from ``user_templates`` first, then the built-in ones.

    ``black_style``: the ``fit`` helper lays lines out as black would; without it, it writes each
    on one line, for output that black formats anyway.
    """
    loaders: list[jinja2.BaseLoader] = []
    if user_templates is not None:
        loaders.append(jinja2.FileSystemLoader(str(user_templates)))
    loaders.append(jinja2.FileSystemLoader(str(TEMPLATES)))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["py"] = py_literal
    env.filters["docstring"] = docstring
    env.filters["comment"] = comment
    env.globals["fit"] = fit if black_style else one_line
    env.globals["fit_import"] = fit_import  # isort's layout, which black keeps
    env.globals.update(MODEL_ENUMS)
    return env


def runtime_source(name: str) -> str:
    """The source of a runtime module (``_rpc.py``), copied into every generated package."""
    return (RUNTIME / name).read_text(encoding="utf-8")


def reads_user_templates(env: jinja2.Environment, name: str, user_templates: Path | None) -> str | None:
    """The first template of the user's folder that rendering template ``name`` reads: the
    template itself, or one it imports, includes or extends (a name computed at render time
    counts: then ``name``); ``None`` when it reads none."""
    if user_templates is None:
        return None
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if (user_templates / current).is_file():
            return current
        source, _, _ = env.loader.get_source(env, current)  # type: ignore[union-attr]
        for referenced in jinja2.meta.find_referenced_templates(env.parse(source)):
            if referenced is None:
                return current
            todo.append(referenced)
    return None


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Jinja's cache of compiled templates, in the system's temporary folder.

    Compiling the templates is a third of an up-to-date ``acpgen check``. The cache is keyed by
    each template's name and source checksum, so it changes speed only, never the output.
    """
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no usable temporary folder: compile every time
        return None
