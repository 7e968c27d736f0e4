"""An MkDocs hook: the docstrings' Sphinx roles (``:class:`Agent```) shown as their code alone.

mkdocstrings renders ``:class:`Agent``` as the text ``:class:`` before ``<code>Agent</code>``;
the role is markup for Sphinx, not for a reader, so it is dropped (``~`` too, which shortens a
dotted name to its last part in Sphinx).
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj|const):<code>(~?)([^<]*)</code>")


def _shown(match: re.Match[str]) -> str:
    short, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if short else name}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    return _ROLE.sub(_shown, html)
