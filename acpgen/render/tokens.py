"""The tokens of one line of Python, with their bracket depth, and the priorities black gives
the delimiters a line inside brackets is split at: what :mod:`.layout` splits lines by."""

from __future__ import annotations

import functools
import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass


class Unfitted(Exception):
    """A line ``fit`` cannot lay out exactly as black would."""


#: black's priorities of the delimiters a line inside brackets is split at (``black.brackets``).
COMMA, TERNARY, LOGIC, COMPARATOR, DOT = 18, 16, 14, 10, 1
OPERATORS = {"|": 9, "^": 8, "&": 7, "<<": 6, ">>": 6, "+": 5, "-": 5, "*": 4, "/": 4, "//": 4, "%": 4, "@": 4, "**": 2}
COMPARATORS = {"==", "!=", "<", ">", "<=", ">=", "is", "in", "not"}
OPEN, CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offset in the line
    end: int
    depth: int  # brackets open before it (an opening bracket counts itself out)


@functools.lru_cache(maxsize=4096)
def line_tokens(text: str) -> tuple[Token, ...]:
    """``text``'s tokens with their bracket depth; :class:`Unfitted` when it does not tokenize.
    The layout reads many a line twice (a whole line, then its bracket's body): each is read once.

    A line of names, numbers, plain strings, operators and brackets (all but a few of the lines
    the layout reads) is read by one regular expression; any other (an f-string, a triple quote,
    a bracket left open or closed too often, a character the expression does not know) by
    :mod:`tokenize`, which the expression gives the same tokens as where it reads a line at all
    (``tests/render/test_tokens.py`` holds them to it). ``tokenize`` is pure Python: it was a third
    of generating a package."""
    tokens = _simple_tokens(text)
    return tuple(tokens if tokens is not None else _tokenized(text))


#: One token of a simple line, after its spaces: a comment, a plain string (no f-string, no
#: triple quote), a number, a name or an operator.
_SIMPLE = re.compile(
    r"""[ \t\f]*(?:
      (?P<comment>\#[^\r\n]*)
    | (?P<string>(?:[rRbBuU]|[rR][bB]|[bB][rR])?(?:"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"|'[^'\\\n\r]*(?:\\.[^'\\\n\r]*)*'))
    | (?P<number>(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][-+]?\d(?:_?\d)*)?[jJ]?)
    | (?P<name>\w+)
    | (?P<op>\*\*=|//=|>>=|<<=|\.\.\.|->|:=|!=|%=|&=|\*\*|\*=|\+=|-=|//|/=|<<|<=|==|>=|>>|@=|\^=|\|=|[-+*/%&|^~<>=.,:;@()\[\]{}])
    )""",
    re.VERBOSE,
)


def _simple_tokens(text: str) -> list[Token] | None:
    """The tokens of ``text`` by :data:`_SIMPLE`; None where :func:`_tokenized` must read it."""
    if '"""' in text or "'''" in text or text != text.rstrip():
        return None
    tokens: list[Token] = []
    depth, at = 0, 0
    while at < len(text):
        match = _SIMPLE.match(text, at)
        if match is None or match.lastgroup is None:
            return None  # a character no token starts with: tokenize's error, or its business
        kind, word, start, at = match.lastgroup, match.group(match.lastgroup), match.start(match.lastgroup), match.end()
        after = text[at : at + 1]
        if kind == "name" and (not word.isidentifier() or after in ("'", '"')):
            return None  # a name a digit starts, or a string's prefix (f"...")
        if kind in ("number", "string") and (after.isalnum() or after in ("_", ".", "'", '"')):
            return None  # ``1if``, ``1.real``, ``"a""b"``
        if kind == "number" and word[0] == "0" and word[1:2] not in ("", ".", "e", "E", "j", "J"):
            return None  # ``007``: no Python 3 integer
        if word in CLOSE:
            depth -= 1
            if depth < 0:
                return None
        tokens.append(Token(word, start, at, depth))
        if word in OPEN:
            depth += 1
    return tokens if depth == 0 else None


def _tokenized(text: str) -> list[Token]:
    """``text``'s tokens with their bracket depth, as :mod:`tokenize` reads them."""
    try:
        found = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.string and t.type not in SKIP]
    except (tokenize.TokenError, SyntaxError) as exc:
        raise Unfitted(text) from exc
    tokens, depth = [], 0
    for t in found:
        if t.string in CLOSE:
            depth -= 1
        tokens.append(Token(t.string, t.start[1], t.end[1], depth))
        if t.string in OPEN:
            depth += 1
    return tokens


SKIP = {tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}


def delimiter_priorities(tokens: Sequence[Token]) -> dict[int, int]:
    """The priority of each top-level delimiter, keyed by the index of the token a line ends
    after (a comma; for the others, the token before them), as black's BracketTracker does."""
    found: dict[int, int] = {}
    in_for = False
    for index, token in enumerate(tokens):
        if token.depth:
            continue
        previous = tokens[index - 1] if index else None
        if token.text == ",":
            if not in_for:  # black reads a loop's targets (``for k, v in``) as nested: no delimiter
                found[index] = COMMA
            continue
        in_for = in_for or token.text == "for"  # a line may start with its ``for``: ``in`` is not a comparison then
        if previous is None or previous.depth:
            continue
        before = previous.text
        if token.text == "for":
            in_for, priority = True, 20
        elif token.text == "if" and in_for:
            priority = 20
        elif token.text in ("if", "else"):
            priority = TERNARY
        elif token.text in ("and", "or"):
            priority = LOGIC
        elif token.text == "in" and in_for:
            in_for, priority = False, 0
        elif token.text in COMPARATORS and not (token.text == "in" and before == "not") and not (
            token.text == "not" and (before == "is" or tokens[index + 1 : index + 2] == [] or tokens[index + 1].text != "in")
        ):
            priority = COMPARATOR
        elif token.text in OPERATORS and not (before in OPERATORS or before in ("(", ",", "=", ":") or before in COMPARATORS):
            priority = OPERATORS[token.text] if token.text not in ("*", "**") or index > 0 else 0
        elif token.text == "." and before in CLOSE:
            priority = DOT
        else:
            priority = 0
        if priority:
            found[index - 1] = max(found.get(index - 1, 0), priority)
    return found
