"""Schema text becomes a Python string literal that reads back as the text, quoted as black
quotes it."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from acpgen.model.literals import py_literal
from acpgen.output.formatting import format_python


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from("ab'\"\\\n\t\x00é€😀 {}"), max_size=12) | st.text(max_size=12))
def test_a_string_literal_reads_back_and_is_black_style(text):
    literal = py_literal(text)
    assert ast.literal_eval(literal) == text
    line = f"x = {literal}\n"
    assert format_python(line) == line


def test_plain_text_is_double_quoted_and_quotes_are_escaped_only_where_needed():
    assert py_literal("session/prompt") == '"session/prompt"'
    assert py_literal("it's") == '"it\'s"'
    assert py_literal('say "hi"') == "'say \"hi\"'"
    assert py_literal('a\\b"') == "'a\\\\b\"'"  # more double quotes than single: single-quoted
    assert py_literal('a\\b \'c\' "d"') == '"a\\\\b \'c\' \\"d\\""'  # as many: double, escaped
