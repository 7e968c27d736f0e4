"""Names: wire names to Python names, deterministically."""

from __future__ import annotations

import re
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
