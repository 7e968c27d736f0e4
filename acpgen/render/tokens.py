"""The tokens of one line of Python, with their bracket depth, and the priorities black gives
the delimiters a line inside brackets is split at: what :mod:`.layout` splits lines by."""

from __future__ import annotations

import io
import tokenize
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


def line_tokens(text: str) -> list[Token]:
    """``text``'s tokens with their bracket depth; :class:`Unfitted` when it does not tokenize."""
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


def delimiter_priorities(tokens: list[Token]) -> dict[int, int]:
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
