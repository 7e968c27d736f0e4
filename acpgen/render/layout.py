"""Lay out a bracketed line the way black does, so the built-in templates emit black's style.

Formatting the generated runtime with black costs seconds on every cold run, so the built-in
templates emit black's output directly: the lines a template writes whole go through
:func:`.longlines.relayout`, and the few collection displays black explodes one item a line
through :func:`fit`. Black's rules for them: a statement whose value sits in
invisible parentheses (:func:`statement`) splits at the value's last bracket pair, at a bracket
pair of its left side, or in those parentheses; a line inside brackets (:func:`inside`) splits at
its delimiters of the highest priority, else at its last bracket pair (or an earlier one, when
the line before the last is too long: black's omitted trailers); an annotated parameter's or
target's annotation goes in parentheses; each line so made, its first one included, is split
again while too long, and one black cannot split stays too long. What these helpers cannot lay
out raises :class:`Unfitted`, and the module is formatted by black instead. Tests hold the
helpers to black's output at every length around the limit, and every built-in module to being
unchanged by black, for the releases and for names of 80 characters.
"""
from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence

from .tokens import (
    CLOSE,
    COMMA,
    DOT,
    OPEN,
    Token,
    Unfitted,
    delimiter_priorities,
    line_tokens,
)

#: black's line length in the mode :mod:`acpgen.output.formatting` uses too.
LINE_LENGTH = 100
#: The length isort (ruff's I001, with its default settings) keeps a ``from`` import to.
IMPORT_LINE_LENGTH = 88


def fit(
    indent: int,
    head: str,
    items: Sequence[str],
    tail: str,
    *,
    collection: bool = False,
    one_tuple: bool = False,
    inner: tuple[str, str] = ("", ""),
) -> str:
    """``head + ", ".join(items) + tail`` at ``indent`` spaces, as black lays it out.

    ``head`` ends with the opening bracket and ``tail`` starts with the closing one; no item holds
    a trailing comma. One line when it fits. Else, for a call or a ``def``, the items together on
    a line of their own when that fits; else (and always for a ``collection`` literal) one item
    a line, each with a trailing comma.

    ``one_tuple``: the brackets are a tuple display, so a lone item keeps its comma (``(x,)``).
    ``inner``: a collection display inside a call's brackets (``frozenset({...})``): split, each
    inner bracket gets a line of its own and the items go one level deeper.
    """
    pad, inner_pad = " " * indent, " " * (indent + 4)
    joined = ", ".join(items) + ("," if one_tuple and len(items) == 1 else "")
    line = f"{pad}{head}{inner[0]}{joined}{inner[1]}{tail}"
    if len(line) <= LINE_LENGTH:
        return line
    if not items:
        raise Unfitted(line)
    target, equals, _ = head.partition(" = ")
    if head.startswith("return "):
        target, equals = "return", " "
    if len(pad + head) > LINE_LENGTH and equals and not collection and inner == ("", ""):
        return "\n".join(statement(indent, target + equals, line[len(pad + target + equals) :]))  # black decides as for any value
    first = "\n".join(_split_head(indent, pad + head))
    if len(first) > LINE_LENGTH and "\n" not in first and equals and not any(c in target for c in OPEN):
        return "\n".join(statement(indent, target + equals, line[len(pad + target + equals) :]))  # no bracket in the head
    last = "\n".join(closing_lines(indent, tail))
    if inner != ("", ""):
        body = _one_a_line(indent + 8, items, line)
        return f"{first}\n{inner_pad}{inner[0]}\n{body}\n{inner_pad}{inner[1]}\n{last}"
    lone_parameter = len(items) == 1 and head.lstrip().startswith(("def ", "async def "))
    if not collection and len(inner_pad + joined) <= LINE_LENGTH:
        body = inner_pad + joined + ("," if lone_parameter else "")
    elif not collection and len(items) == 1 and not lone_parameter:
        body = "\n".join(inside(indent + 4, items[0]))  # black adds no comma: there is none to split at
    else:
        body = _one_a_line(indent + 4, items, line)
    return f"{first}\n{body}\n{last}"


def fit_import(indent: int, module: str, names: Sequence[str]) -> str:
    """``from module import names`` at ``indent`` as isort lays it out: one line up to
    :data:`IMPORT_LINE_LENGTH`, else a name a line with a trailing comma (which black keeps)."""
    pad = " " * indent
    line = f"{pad}from {module} import {', '.join(names)}"
    if len(line) <= IMPORT_LINE_LENGTH:
        return line
    return f"{pad}from {module} import (\n" + "".join(f"{pad}    {name},\n" for name in names) + f"{pad})"


def closing_lines(indent: int, tail: str) -> list[str]:
    """The line that closes a split bracket (``)``, ``) -> T:``), as black lays it out: a return
    annotation too long goes in parentheses (:func:`statement`)."""
    if tail.startswith(") -> ") and tail.endswith((":", ": ...")):  # ``: ...``: a protocol's method
        annotation, colon, body = tail[len(") -> ") :].rpartition(":")
        return statement(indent, ") -> ", annotation, colon + body)
    return inside(indent, tail)


def _one_a_line(indent: int, items: Sequence[str], line: str) -> str:
    """``items`` one a line at ``indent``, each with a trailing comma; an item too long still is
    split further, as black splits it (:func:`inside`)."""
    return "\n".join(text for item in items for text in inside(indent, f"{item},"))


# -- inside brackets: black's delimiter split, then its split at the last bracket pair ----------

def inside(indent: int, text: str) -> list[str]:
    """The lines black makes of ``text`` on a line of its own inside brackets at ``indent``
    spaces: as it is when it fits; else split at its top-level delimiters of the highest priority
    (after a comma, before an operator; a trailing comma added after the last of a split at
    commas); else at its last bracket pair, the content going one level deeper. Each line is
    split again the same way while too long; an unsplittable one stays too long, as in black."""
    line = " " * indent + text
    if len(line) <= LINE_LENGTH:
        return [line]
    tokens = line_tokens(text)
    if _is_parameter(tokens):
        return _parameter(indent, text, tokens)
    value = _ternary_value(tokens)
    if value is not None:  # black puts the value in invisible parentheses
        end = len(text) - 1 if text.endswith(",") else len(text)
        return statement(indent, text[: tokens[value].start], text[tokens[value].start : end], text[end:])
    delimiters = delimiter_priorities(tokens)
    if delimiters:
        top = max(delimiters.values())
        cuts = [index for index, priority in delimiters.items() if priority == top]
        if not (top == DOT and len(cuts) == 1):
            pieces, begin = [], 0
            for index in sorted(cuts):
                pieces.append(text[begin : tokens[index].end].strip())
                begin = tokens[index].end
            pieces.append(text[begin:].strip())
            pieces = [piece for piece in pieces if piece]
            if top == COMMA and not pieces[-1].endswith(",") and not pieces[-1].startswith("*"):
                pieces[-1] += ","
            if pieces != [text]:
                return [out for piece in pieces for out in inside(indent, piece)]
    return _split_last_bracket(indent, text, tokens)


def _is_parameter(tokens: Sequence[Token]) -> bool:
    """Whether the tokens are a parameter with an annotation (``name: T = default,``), not a
    dict comprehension's ``key: value for ...``."""
    return (len(tokens) > 2 and tokens[0].text.isidentifier() and not keyword.iskeyword(tokens[0].text)
            and tokens[1].text == ":" and not any(t.text == "for" and not t.depth for t in tokens))


def _ternary_value(tokens: Sequence[Token]) -> int | None:
    """Where a one-item line's conditional expression starts when it is a dict entry's value or a
    keyword argument's (``"key": a if b else c,``): black wraps such a value in invisible
    parentheses. None for any other line."""
    top = [(i, t) for i, t in enumerate(tokens) if not t.depth]
    commas = [i for i, t in top if t.text == ","]
    if commas and commas != [len(tokens) - 1] or any(t.text in ("for", "lambda") for _, t in top):
        return None
    start = next((i + 1 for i, t in top if t.text in (":", "=")), None)
    if start is None or not any(t.text == "if" for i, t in top if i > start):
        return None
    return start if any(t.text == "else" for i, t in top if i > start) else None


def _parameter(indent: int, text: str, tokens: Sequence[Token]) -> list[str]:
    """``name: annotation = default,`` on a line of its own: black puts the annotation in
    invisible parentheses (:func:`statement`)."""
    equals = next((i for i, t in enumerate(tokens) if t.depth == 0 and t.text == "="), None)
    end = tokens[equals].start if equals is not None else len(text.rstrip(","))
    tail = text[end:] if equals is None else " " + text[end:]
    return statement(indent, text[: tokens[1].end] + " ", text[tokens[1].end : end].strip(), tail)


def _split_last_bracket(indent: int, text: str, tokens: Sequence[Token]) -> list[str]:
    """black's right-hand split of a line inside brackets: at its last bracket pair, unless the
    line before it is too long and an earlier bracket pair (one of the trailers black tries to
    omit, see :func:`_trailer_pairs`) leaves a first line that fits; else at the last pair, its
    first line split again."""
    pairs = _trailer_pairs(indent, text, tokens)
    if not pairs:
        return [" " * indent + text]  # nothing to split at: black leaves it too long
    pad = " " * indent
    for open_, close in pairs:
        if len(pad + text[: tokens[open_].end]) <= LINE_LENGTH and text[tokens[open_].end : tokens[close].start].strip():
            return _split_at(indent, text, tokens, open_, close, [pad + text[: tokens[open_].end]])
    open_, close = pairs[0]
    if not text[tokens[open_].end : tokens[close].start].strip():
        return [pad + text]  # black does not split empty brackets: it leaves the line too long
    return _split_at(indent, text, tokens, open_, close, _split_head(indent, pad + text[: tokens[open_].end]))


def _split_at(indent: int, text: str, tokens: Sequence[Token], open_: int, close: int, first: list[str]) -> list[str]:
    body, tail = text[tokens[open_].end : tokens[close].start], text[tokens[close].start :]
    lines = list(first)
    lines += _bracket_body(indent + 4, body.strip(), collection=tokens[open_].text != "(" and _is_display(tokens, open_))
    lines += inside(indent, tail)
    return lines


def _trailer_pairs(indent: int, text: str, tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """The top-level bracket pairs black's right-hand split tries, last first (its
    ``generate_trailers_to_omit``): the last pair, then each earlier non-empty one while the text
    from it to the end fits on a line, up to one after a trailing comma."""
    pairs: list[tuple[int, int]] = []
    for close in range(len(tokens) - 1, -1, -1):
        token = tokens[close]
        if token.text not in CLOSE or token.depth != 0:
            continue
        open_ = _opening(tokens, close)
        if open_ == close - 1 and pairs:
            continue  # empty brackets: black glues them to the pair before
        if pairs and indent + len(text) - token.start > LINE_LENGTH:
            break
        pairs.append((open_, close))
        if close and tokens[close - 1].text == ",":
            break  # black never omits a pair with a trailing comma
    return pairs


def _is_display(tokens: Sequence[Token], open_: int) -> bool:
    """Whether the bracket at ``open_`` starts a list, set or dict display, not a subscript."""
    if open_ == 0:
        return True
    before = tokens[open_ - 1].text
    return not (before.isidentifier() or before in CLOSE) or before in ("in", "and", "or", "not", "if", "else", "return")


def _bracket_body(indent: int, body: str, *, collection: bool = False) -> list[str]:
    """The content of a bracket pair black has split, at ``indent``: a collection display with
    more than one item goes one item a line (black's magic of an added trailing comma)."""
    tokens = line_tokens(body)
    if collection and max(delimiter_priorities(tokens).values(), default=0) == COMMA:  # a comprehension's ``for`` ranks above
        return _one_a_line(indent, _top_level_items(body, tokens), body).split("\n")
    return inside(indent, body)


def _top_level_items(text: str, tokens: Sequence[Token]) -> list[str]:
    items, begin = [], 0
    for token in tokens:
        if token.text == "," and token.depth == 0:
            items.append(text[begin : token.start].strip())
            begin = token.end
    rest = text[begin:].strip()
    return [*items, rest] if rest else items


def statement(indent: int, head: str, value: str, tail: str = "") -> list[str]:
    """The lines black makes of the statement ``head + value + tail`` whose ``value`` black puts
    in invisible parentheses (an assignment's value, a ``return``'s, an ``if``'s condition).

    One line when it fits. Else black splits at the last bracket pair of ``value`` instead of
    those parentheses when ``value`` has a single delimiter and ends in that bracket pair (or has
    none), the first line fits and the left side does not argue against it; else the parentheses
    become real, ``value`` inside them (:func:`inside`). When the first line is too long still,
    black takes the parentheses if every line then fits.
    """
    pad = " " * indent
    line = f"{pad}{head}{value}{tail}"
    if len(line) <= LINE_LENGTH:
        return [line]
    try:
        wrapped: list[str] | None = [f"{pad}{head}(", *inside(indent + 4, value), f"{pad}){tail}"]
    except Unfitted:
        wrapped = None  # no layout inside the parentheses
    tokens = line_tokens(value)
    if not _can_omit_parentheses(indent, tokens, delimiter_priorities(tokens)):
        if wrapped is None:
            raise Unfitted(line)
        return wrapped
    close = next((i for i in range(len(tokens) - 1, -1, -1) if tokens[i].text in CLOSE and tokens[i].depth == 0), None)
    if close is None:  # nothing to split at but the parentheses (or the left side's brackets)
        name, colon, annotation = head.partition(": ")
        if colon and name.isidentifier() and head.endswith(" = ") and len(pad + head) > LINE_LENGTH - 1:
            return statement(indent, name + colon, annotation[: -len(" = ")], " = " + value + tail)  # black splits the annotation
        if _assigns_to_brackets(head) and len(pad + head) > LINE_LENGTH - 1 and _bracket_pair(head) is not None:
            return _split_head(indent, f"{pad}{head}", lambda rest: statement(indent, rest, value, tail), force=True)
        if wrapped is None or (len(tokens) == 1 and len(pad + "    " + value) > LINE_LENGTH):
            return [line]  # a lone name too long: black leaves the line so
        return wrapped
    open_ = max(i for i in range(close) if tokens[i].text in OPEN and tokens[i].depth == 0)
    first = f"{pad}{head}{value[: tokens[open_].end]}"
    body = value[tokens[open_].end : tokens[close].start].strip()
    if not body and len(value[tokens[close].start :].strip()) < 3:  # black does not split empty brackets
        if _assigns_to_brackets(head) and len(pad + head) > LINE_LENGTH - 1 and _bracket_pair(head) is not None:
            return _split_head(indent, pad + head, lambda rest: statement(indent, rest, value, tail), force=True)
        if wrapped is not None:
            return wrapped
    split = _omitting_value(indent, head + value + tail) if len(first) > LINE_LENGTH and any(c in head for c in OPEN) else None
    if split is None:
        split = [
            *_split_head(indent, first),
            *_bracket_body(indent + 4, body, collection=_is_display(tokens, open_)),
            *inside(indent, value[tokens[close].start :] + tail),
        ]
    if _assigns_to_brackets(head) and (len(pad + head) > LINE_LENGTH - 1 or len(first) > LINE_LENGTH):
        return wrapped if len(pad + head) <= LINE_LENGTH - 1 and wrapped is not None else split
    if len(first) > LINE_LENGTH and wrapped is not None and all(len(text) <= LINE_LENGTH for text in wrapped):
        return wrapped
    return split


def _omitting_value(indent: int, whole: str) -> list[str] | None:
    """The statement ``whole`` split at a bracket pair before its value's last one, as black's
    right-hand split tries when the line before the value's brackets is too long; ``None`` when no
    such split has a first line that fits."""
    tokens = line_tokens(whole)
    for at, end in _trailer_pairs(indent, whole, tokens)[1:]:
        if len(" " * indent + whole[: tokens[at].end]) <= LINE_LENGTH:
            return _split_at(indent, whole, tokens, at, end, [" " * indent + whole[: tokens[at].end]])
    return None


def _bracket_pair(text: str) -> tuple[int, int] | None:
    """The offsets of the last top-level bracket pair of ``text`` (which may end in an opening
    bracket or an ``=``): its opening bracket's end and its closing bracket's start."""
    cut = text.rstrip()
    cut = cut[:-1] if cut.endswith((*OPEN, "=")) else cut
    try:
        tokens = line_tokens(cut.strip())
    except Unfitted:
        return None
    offset = len(cut) - len(cut.lstrip())
    close = next((i for i in range(len(tokens) - 1, -1, -1) if tokens[i].text in CLOSE and tokens[i].depth == 0), None)
    if close is None:
        return None
    open_ = _opening(tokens, close)
    return offset + tokens[open_].end, offset + tokens[close].start


def _split_head(indent: int, first: str, rest: Callable[[str], list[str]] | None = None, force: bool = False) -> list[str]:
    """The first line of a split, ``first`` (it ends in an opening bracket, or is an assignment's
    left side), as black splits it again when too long (or ``force``): an annotated target's
    annotation as a value in invisible parentheses (:func:`statement`); else at its last bracket
    pair, the part after it laid out by ``rest`` (as it is by default)."""
    if len(first) <= LINE_LENGTH and not force:
        return [first]
    name, colon, annotation = first.lstrip().partition(": ")
    annotation, equals, after = annotation.partition(" = ")
    if colon and equals and name.isidentifier() and rest is None:
        return statement(indent, name + colon, annotation, equals + after)
    pair = _bracket_pair(first)
    if pair is None:
        return [first]
    start, end = pair
    inner = first[start:end].strip()
    tokens = line_tokens(first[: start].strip() + inner + first[end:end + 1])
    after = first[end:]
    body = _bracket_body(indent + 4, inner, collection=_is_display(tokens, _opening(tokens, len(tokens) - 1)))
    return [first[:start], *body, *(rest(after) if rest else [" " * indent + after])]


def _assigns_to_brackets(head: str) -> bool:
    """Whether ``head`` is an assignment's left side that holds brackets, as black counts them: an
    annotation has invisible ones."""
    if not head.endswith(" = "):
        return False
    target = head[:-3]
    return any(c in target for c in "([{") or ":" in target


def _can_omit_parentheses(indent: int, tokens: Sequence[Token], delimiters: dict[int, int]) -> bool:
    """black's ``can_omit_invisible_parens`` for a value alone: no delimiter, a single dot, or one
    delimiter and a last bracket pair whose opening fits (or that follows other brackets)."""
    if not delimiters:
        return True
    top = max(delimiters.values())
    if sum(1 for priority in delimiters.values() if priority == top) > 1:
        return False
    if top == DOT:
        return True
    last = tokens[-1]
    if last.text not in ")}" and not (last.text == "]" and _is_display(tokens, _opening(tokens, len(tokens) - 1))):
        return False
    open_ = _opening(tokens, len(tokens) - 1)
    if open_ == len(tokens) - 2:
        return False  # empty brackets do not help
    if any(t.text in OPEN for t in tokens[:open_]):
        return True
    return 4 * (indent // 4 + 1) + tokens[open_].end <= LINE_LENGTH


def _opening(tokens: Sequence[Token], close: int) -> int:
    depth = tokens[close].depth
    return max(i for i in range(close) if tokens[i].text in OPEN and tokens[i].depth == depth)
