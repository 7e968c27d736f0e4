"""The layout's tokens: one regular expression reads the lines it can, :mod:`tokenize` the rest,
and both give the same tokens (text, offsets, bracket depth) for every line they both read."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from support import CORPUS, ROOT
from support.run_cache import generated_files

from acpgen.pipeline import Options, generate
from acpgen.render import tokens as tokens_module
from acpgen.render.tokens import Unfitted, _simple_tokens, _tokenized, line_tokens

#: Lines where the expression must give way to tokenize, or agree with it on an edge.
EDGES = [
    'x = f"{a}" + "b"', "x = rf'{a}'", 'x = """doc"""', "x = '''doc'''", "call(a, b", "a)", "x = (1, 2))",
    "x = 007", "x = 0x1F + 1", "x = 1_000.5e-3j", "x = 1.real", "x = 1if y else 2", 'x = "a" "b"', 'x = "a""b"',
    'x = b"\\x00" + rb"\\d" + u"\\u00e9"', "x = ur'a'", "x = 'it\\'s' + \"say \\\"hi\\\"\"", "x = 'open",
    "x = a²", "x = café(1)", "x = a $ b", "x = a ! b", "x = a @= b; y **= 2; z //= 3; w >>= 1; v <<= 2",
    "x = [*a, **b] if a := c else ...", "def f(a, /, *, b) -> None: pass  # a comment (with brackets",
    "x = 1  ", "\tx = {1: 2}", "    return (yield)", "x = a.b.c(d)[e]{f}", "x = -1 + ~2 ^ 3 | 4 & 5 % 6",
    "x = 1 \\", "", "# only a comment", "x = 'a' # trailing",
]


def worth_reading(line: str) -> bool:
    """A line like those the layout reads: long, with more than names and operators in it (a
    bracket, a string, a number)."""
    return len(line.strip()) >= 30 and any(c in line for c in "([{'\"#0123456789")


@functools.cache
def generated_lines() -> tuple[str, ...]:
    """Every line (stripped, as the layout reads it) of a spread of generated packages."""
    lines: set[str] = set()
    for options in (Options(), Options(models="pydantic"), Options(schema=CORPUS / "v0.0.33--schema.json"),
                    Options(schema=CORPUS / "v1.7.0--v2-schema.unstable.json")):
        for path, text in generated_files(options).items():
            if path.endswith(".py"):
                lines.update(line.strip() for line in text.split("\n") if worth_reading(line))
    return tuple(sorted(lines))


def source_lines() -> list[str]:
    """Every line of acpgen's and the tests' own Python, as it is (indented)."""
    files = sorted([*(ROOT / "acpgen").rglob("*.py"), *(ROOT / "tests").rglob("*.py")])
    return sorted({line for f in files for line in Path(f).read_text(encoding="utf-8").split("\n") if worth_reading(line)})


def tokens_or_error(read, line: str):  # type: ignore[no-untyped-def]
    try:
        return list(read(line))
    except Unfitted:
        return "Unfitted"


@pytest.mark.parametrize("lines", [EDGES, "generated", "source"])
def test_the_expression_gives_tokenizes_tokens(lines):
    lines = {"generated": generated_lines, "source": source_lines}[lines]() if isinstance(lines, str) else lines
    differ = [line for line in lines if tokens_or_error(line_tokens, line) != tokens_or_error(_tokenized, line)]
    assert differ == []


def test_the_expression_reads_most_lines_the_layout_reads(monkeypatch):
    read, given_way = [], []

    def simple(line: str):  # type: ignore[no-untyped-def]
        tokens = _simple_tokens(line)
        (read if tokens is not None else given_way).append(line)
        return tokens

    monkeypatch.setattr(tokens_module, "_simple_tokens", simple)
    line_tokens.cache_clear()  # each line is read once, then kept
    generate(Options())
    monkeypatch.undo()
    assert len(read) > 500 and len(read) > 0.9 * (len(read) + len(given_way))
    lines = read + given_way
    assert [tokens_or_error(line_tokens, line) for line in lines] == [tokens_or_error(_tokenized, line) for line in lines]
    assert set(EDGES) - {line for line in EDGES if _simple_tokens(line) is not None} >= {
        'x = f"{a}" + "b"', 'x = """doc"""', "call(a, b", "a)", "x = 007", "x = a²", "x = 1  "}
