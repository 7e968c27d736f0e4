"""Formatting a module piece by piece gives black's output for the whole module."""

from __future__ import annotations

from dataclasses import dataclass

from conftest import mini_schema

from acpgen.formatting import format_python
from acpgen.generate import OUTPUT_MODULES, Options, generate
from acpgen.reuse import Reuse, format_in_pieces, split_pieces


@dataclass(frozen=True)
class CompareWithWholeModule(Reuse):
    """Formats each module whole, and checks the piecewise result against it."""

    seen: list[str] | None = None

    def format(self, rendered: str, path: str) -> str:
        whole = format_python(rendered, path)
        assert format_in_pieces(rendered, path) == whole, path
        assert self.seen is not None
        self.seen.append(path)
        return whole


def test_every_generated_module_formats_the_same_in_pieces(write_schema):
    doc = mini_schema()
    doc["$defs"]["ForkRequest"] = {
        "type": "object", "description": "**UNSTABLE**\n\nFork.\n\nclass Y:\n@decorated\ndef f(): ...",
        "properties": {"mode": {"$ref": "#/$defs/Mode"}}, "x-method": "session/fork", "x-side": "agent",
    }
    doc["$defs"]["Mode"] = {"description": "A mode.\n\nclass X", "oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "b"}, "n": {"type": "integer"}}, "required": ["kind"]},
    ]}
    seen: list[str] = []
    generate(Options(schema=write_schema(doc)), CompareWithWholeModule(seen=seen))
    assert [path.split("/", 1)[1] for path in seen] == list(OUTPUT_MODULES)


def test_cuts_fall_only_where_black_decides_nothing_across_them():
    source = (
        'x = """\n\nclass InAString:\n"""\n\n'  # a string: no cut inside it
        "# a comment above\nclass Commented:\n    pass\n\n\n"  # comment right above: no cut
        "@decorator\n\n\nclass Decorated:\n    pass\n"  # cut before the decorator, not after it
        "def no_blank_line_before(): ...\n\n"  # no blank line above: no cut
        "async def after_blank(): ...\n"
    )
    assert split_pieces(source) == [
        'x = """\n\nclass InAString:\n"""\n\n# a comment above\nclass Commented:\n    pass\n\n\n',
        "@decorator\n\n\nclass Decorated:\n    pass\ndef no_blank_line_before(): ...\n\n",
        "async def after_blank(): ...\n",
    ]
    assert format_in_pieces(source, "x.py") == format_python(source, "x.py")
    assert split_pieces("def broken(:\n") == ["def broken(:\n"]
