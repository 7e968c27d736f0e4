"""The documentation's code blocks (``README.md`` and ``docs/**/*.md``), for the tests that run them.

Every fenced block must be run (or, for the output it shows, compared) by some test: a test
module claims the blocks it runs with :func:`blocks` at import time, and
``tests/docs/test_docs_blocks.py`` imports every module that uses this one and fails on a block
no test claimed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from support import ROOT

DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)

#: (page, line) of every block a test has claimed so far.
CLAIMED: set[tuple[str, int]] = set()


@dataclass(frozen=True)
class Block:
    page: str  # "README.md" or a path under docs/, such as "guides/ci.md"
    line: int  # the line of its opening fence
    language: str  # "" when the fence names none
    section: str  # the heading it is under
    text: str


def pages() -> list[str]:
    return ["README.md", *sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))]


def read(page: str) -> str:
    return (ROOT / page if page == "README.md" else DOCS / page).read_text(encoding="utf-8")


def _headings(text: str) -> list[re.Match[str]]:
    """The headings of ``text``, without the lines inside code blocks that look like one."""
    fences = [m.span() for m in _FENCE.finditer(text)]
    return [m for m in _HEADING.finditer(text) if not any(a <= m.start() < b for a, b in fences)]


def all_blocks(page: str) -> list[Block]:
    text = read(page)
    headings = [(m.start(), m.group(2)) for m in _headings(text)]
    found = []
    for match in _FENCE.finditer(text):
        inside = [title for at, title in headings if at < match.start()]
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, match.group(1), inside[-1] if inside else "", match.group(2)))
    return found


def blocks(page: str, language: str | None = None, section: str | None = None) -> list[Block]:
    """The blocks of ``page`` (in a ``language``, under a heading ``section``), claimed as run."""
    chosen = [
        b for b in all_blocks(page)
        if (language is None or b.language == language) and (section is None or b.section == section)
    ]
    assert chosen, f"{page}: no {language or ''} block under {section!r}"
    CLAIMED.update((b.page, b.line) for b in chosen)
    return chosen


def section(page: str, heading: str) -> str:
    """The text of ``page`` from the heading ``heading`` to the next heading of its level or above."""
    text = read(page)
    headings = _headings(text)
    for i, match in enumerate(headings):
        if match.group(2) == heading:
            level = len(match.group(1))
            after = [m for m in headings[i + 1:] if len(m.group(1)) <= level]
            return text[match.end(): after[0].start() if after else len(text)]
    raise AssertionError(f"{page}: no heading {heading!r}")
