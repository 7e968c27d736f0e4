"""Lines a template wrote whole that are too long, laid out as black lays them out.

The built-in templates print each logical line whole (``class X(Model):``, ``async def
session_prompt(self, params: X) -> Y:``, an annotation, ``out = a + b``, ``return X(...)``), which
fits only while the names in it are short; a few collection displays black explodes one item a
line (``frozenset({...})``, ``Literal[...]``) go through :mod:`.layout`'s ``fit``. :func:`relayout` is the one pass over a rendered module that lays out each such line too
long as black would: it tells the statement's kind from its tokens (a ``def``: split at its first
bracket, the parameters one a line when they do not fit together; a value black puts in
invisible parentheses, after ``return``, ``=``, an annotation's ``:`` or before an ``if``'s
``:``: :func:`.layout.statement`; an expression, a class's bases or an item inside brackets:
black's split at the last bracket pair, again while too long). A line it cannot tell is left as
it is, and :func:`overlong_line` then leaves the module to black.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

from .layout import (
    LINE_LENGTH,
    _split_head,
    _split_last_bracket,
    closing_lines,
    inside,
    statement,
)
from .tokens import CLOSE, OPEN, Token, Unfitted, line_tokens


def overlong_line(text: str) -> tuple[int, str] | None:
    """The first line of the module ``text`` (its number and text) that is too long and has a
    bracket black could split it at; ``None`` when every line too long is one black leaves so (a
    comment, a docstring's line, a string, a name). Only such lines are tokenized."""
    quotes = 0  # the triple quotes before the line: odd inside a docstring (the only ones templates write)
    for number, line in enumerate(text.split("\n"), 1):
        inside_string = quotes % 2 == 1
        quotes += line.count('"""')
        if len(line) <= LINE_LENGTH or inside_string or not any(c in line for c in OPEN):
            continue
        tokens = [t for t in _lineline_tokens(line.strip()) if t.string.strip()]
        # a split line's first closing and last opening bracket are not ones black could split at
        tokens = tokens[1:] if tokens and tokens[0].string in CLOSE else tokens
        if _has_bracket(tokens[:-1] if tokens and tokens[-1].string in OPEN else tokens):
            return number, line
    return None


def _lineline_tokens(line: str) -> list[tokenize.TokenInfo]:
    """The tokens of one physical line, which may open brackets it does not close."""
    tokens: list[tokenize.TokenInfo] = []
    try:
        tokens.extend(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, SyntaxError):
        pass  # the line ends inside brackets: the tokens so far are enough
    return tokens


def _has_bracket(tokens: list[tokenize.TokenInfo]) -> bool:
    """Whether an opening bracket black could split at is among ``tokens``: not inside an f-string
    (which Python 3.12 tokenizes), and not closed at once (black splits no empty brackets)."""
    strings = 0
    for token, after in zip(tokens, [*tokens[1:], None]):
        kind = tokenize.tok_name[token.type]
        strings += (kind == "FSTRING_START") - (kind == "FSTRING_END")
        empty = after is not None and after.string == CLOSE[OPEN.index(token.string)] if token.string in OPEN else False
        if not strings and token.type == tokenize.OP and token.string in OPEN and not empty:
            return True
    return False


def relayout(text: str) -> str:
    """``text`` (a module) with each line too long that has a bracket, outside a docstring, laid
    out as black lays it out; a line this cannot tell stays as it is."""
    out: list[str] = []
    quotes = 0
    for line in text.split("\n"):
        in_string = quotes % 2 == 1
        quotes += line.count('"""')
        stripped = line.lstrip()
        if len(line) <= LINE_LENGTH or in_string or '"""' in line or stripped.startswith("#"):
            out.append(line)
            continue
        try:
            out.extend(logical_line(len(line) - len(stripped), stripped))
        except Unfitted:
            out.append(line)
    return "\n".join(out)


def logical_line(indent: int, text: str) -> list[str]:
    """The lines black makes of the whole logical line ``text`` at ``indent`` spaces. Raises
    :class:`Unfitted` for one whose kind this does not know."""
    if text.endswith(tuple(OPEN)) and len(_split_head(indent, " " * indent + text)) > 1:
        return _split_head(indent, " " * indent + text)  # the first line of brackets the template split
    tokens = line_tokens(text)
    if any(t.depth < 0 for t in tokens) or tokens[-1].depth != 0 or tokens[-1].text in OPEN:
        raise Unfitted(text)  # part of a bracket the template split: not a whole line
    first = tokens[0].text
    if text.endswith(","):
        return inside(indent, text)  # an item inside brackets the template split
    if first in ("def", "async"):
        return _def(indent, text, tokens)
    if first in ("if", "elif", "while") and text.endswith(":"):
        head = first + " "
        return statement(indent, head, text[len(head) : -1], ":")
    if first in ("return", "raise"):
        return statement(indent, first + " ", text[len(first) + 1 :])
    if first in ("class", "with", "for", "lambda", "assert", "del", "import", "from"):
        if first == "class":
            return _split_last_bracket(indent, text, tokens)
        raise Unfitted(text)
    equals = _top_level(tokens, lambda t: t.text in ("=", "+=", "-=", "|="))
    if equals is not None:
        at = tokens[equals]
        if not text[: at.start].endswith(" "):  # ``name=value, ...``: arguments inside brackets the template split
            return inside(indent, text)
        return statement(indent, text[: at.end] + " ", text[at.end :].strip())
    colon = _top_level(tokens, lambda t: t.text == ":")
    if colon is not None and tokens[0].text.isidentifier() and colon == 1:
        at = tokens[colon]
        return statement(indent, text[: at.end] + " ", text[at.end :].strip())
    return _split_last_bracket(indent, text, tokens)


def _top_level(tokens: Sequence[Token], wanted) -> int | None:  # type: ignore[no-untyped-def]
    return next((i for i, t in enumerate(tokens) if t.depth == 0 and wanted(t)), None)


def _def(indent: int, text: str, tokens: Sequence[Token]) -> list[str]:
    """black's left-hand split of a ``def``: at its first bracket; the parameters together on a
    line when they fit, else one a line with a trailing comma."""
    open_ = next(i for i, t in enumerate(tokens) if t.text == "(")
    close = next(i for i in range(open_ + 1, len(tokens)) if tokens[i].text == ")" and tokens[i].depth == 0)
    pad, inner = " " * indent, " " * (indent + 4)
    head, body, tail = text[: tokens[open_].end], text[tokens[open_].end : tokens[close].start].strip(), text[tokens[close].start :]
    if not body:
        raise Unfitted(text)
    lone = all(not (t.text == "," and t.depth == 1) for t in tokens[open_ + 1 : close])
    if len(inner + body) + lone <= LINE_LENGTH:
        lines = [inner + body + ("," if lone else "")]
    else:
        items, begin = [], 0
        body_tokens = line_tokens(body)
        for t in body_tokens:
            if t.text == "," and t.depth == 0:
                items.append(body[begin : t.start].strip())
                begin = t.end
        if body[begin:].strip():
            items.append(body[begin:].strip())
        lines = [line for item in items for line in logical_line(indent + 4, item + ",")]
    return [pad + head, *lines, *closing_lines(indent, tail)]
