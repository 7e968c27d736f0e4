"""Names: wire names to Python names, deterministically."""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Iterable

#: The names :func:`python_identifier` escapes, fixed so the output is the same under every Python
#: that runs acpgen: the keywords of Python 3.10 to 3.14 (the same 35 in each), and the soft
#: keywords ``_``, ``case`` and ``match`` (soft since 3.10). ``type``, a soft keyword only from
#: 3.12 on, is not in it: like every soft keyword it is a legal attribute, parameter and variable
#: name in every version (it is a keyword only at the start of a ``type X = ...`` statement), and
#: escaping it would rename every ``type`` field of the output.
ESCAPED_KEYWORDS = frozenset(
    {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
        "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
        "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
        "_", "case", "match",
    }
)

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """``didOpen`` -> ``did_open``, ``HTTPHeader`` -> ``http_header``, ``read_text_file`` unchanged."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def method_id(wire_name: str) -> str:
    """The upstream meta.json id of a method.

    The wire name without a leading ``$/``, camelCase split into snake_case, ``/`` as ``_``:
    ``document/didOpen`` -> ``document_did_open``, ``$/cancel_request`` -> ``cancel_request``.
    """
    name = wire_name.removeprefix("$/")
    return "_".join(snake_case(part) for part in name.split("/"))


def python_identifier(name: str, reserved: frozenset[str] = frozenset()) -> str:
    """Make ``name`` a safe Python identifier.

    Characters outside ``[A-Za-z0-9_]`` become ``_``; a leading digit gets a ``_`` prefix;
    the names in :data:`ESCAPED_KEYWORDS` and in ``reserved`` get a ``_`` suffix.
    """
    ident = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    while ident in ESCAPED_KEYWORDS or ident in reserved:
        ident += "_"
    return ident


def import_order(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in the order isort (and ruff) lists imported names: case-insensitive, then exact."""
    return tuple(sorted(names, key=lambda name: (name.lower(), name)))


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article, by its first letter: "an agent", "a client", "a union"."""
    return ("an " if noun[:1] in "aeio" else "a ") + noun


#: Top-level names a generated package cannot have: the standard library's modules, which
#: ``import`` finds before any package of the same name. The set is the same on every Python from
#: 3.10 to 3.13: this Python's ``sys.stdlib_module_names`` (new in 3.10) and the names that are in
#: the standard library of some of those versions only (added, like ``tomllib``, or removed, like
#: ``cgi``, which a vendored package may still meet on an older Python).
STDLIB_MODULES = frozenset(sys.stdlib_module_names) | frozenset(
    {
        "_android_support", "_bootsubprocess", "_colorize", "_crypt", "_interpchannels", "_interpqueues",
        "_interpreters", "_ios_support", "_msi", "_opcode_metadata", "_pydatetime", "_pylong", "_pyrepl", "_sha2",
        "_sha256", "_sha512", "_suggestions", "_sysconfig", "_tokenize", "_typing", "_wmi", "aifc", "asynchat",
        "asyncore", "audioop", "binhex", "cgi", "cgitb", "chunk", "crypt", "distutils", "imghdr", "imp", "lib2to3",
        "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes", "smtpd", "sndhdr", "spwd", "sunau",
        "telnetlib", "tomllib", "uu", "xdrlib",
    }
)
_PACKAGE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def package_problem(package: str) -> str:
    """Why ``package`` cannot be the generated package's dotted name, as the rest of a sentence
    that starts with the name; "" when it can."""
    if not _PACKAGE_RE.match(package):
        return "is not a dotted Python name: each part must be a Python identifier (letters, digits, _), joined by dots"
    keywords = [part for part in package.split(".") if keyword.iskeyword(part)]
    if keywords:
        return f"is not a dotted Python name: {keywords[0]!r} is a Python keyword"
    top = package.split(".")[0]
    if top in STDLIB_MODULES:
        return (f"cannot be imported: {top!r} is a module of Python's standard library, which `import {package}`"
                " finds first; choose another top-level name")
    return ""
