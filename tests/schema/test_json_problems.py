"""What a JSON text's problem is said to be: the same words and place on every Python 3.10-3.13
(3.13's json names a trailing comma itself, at the comma; earlier versions do not)."""

from __future__ import annotations

import json

import pytest

from acpgen.diagnostics import json_problem


def problem(text: str) -> str:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return json_problem(caught.value)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": [1,]}', "a trailing comma before ']' at line 1 column 9"),
        ('{"a": [1 ,\n  ]}', "a trailing comma before ']' at line 1 column 10"),
        ('{"$defs": {\n  "A": {"type": "string",}\n}}', "a trailing comma before '}' at line 2 column 25"),
        ('{"a": 1,}', "a trailing comma before '}' at line 1 column 8"),
        ('{"a" 1}', "Expecting ':' delimiter at line 1 column 6"),
        ("{not json", "Expecting property name enclosed in double quotes at line 1 column 2"),
        ('{"a": 1}x', "Extra data at line 1 column 9"),
        ("", "Expecting value at line 1 column 1"),
        ("[,]", "Expecting value at line 1 column 2"),  # a comma with nothing before it is not trailing
        # Python's "Unterminated string starting at", "Invalid control character at": no "at at"
        ('{"a": "abc', "Unterminated string at line 1 column 7"),
        ('{"a": "a\tb"}', "Invalid control character at line 1 column 9"),
    ],
)
def test_the_problem_and_its_place(text, said):
    assert problem(text) == said
