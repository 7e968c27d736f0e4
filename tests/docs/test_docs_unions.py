"""The API page lists each union of the bundled schema's models with its variant classes, so that
the class to construct or to test with ``isinstance`` (a text content block: ``models.Text``) is
found by name. The table is made from the type model; ``ACPGEN_UPDATE_GOLDEN=1`` rewrites it."""

from __future__ import annotations

import os

from support import ROOT

from acpgen import Options
from acpgen.model.typedefs import DefKind
from acpgen.model.types import Ref
from acpgen.pipeline import build_spec

PAGE = ROOT / "docs" / "reference" / "package-api.md"
START, END = "<!-- unions: made by tests/docs/test_docs_unions.py -->", "<!-- end of unions -->"


def union_table() -> str:
    """A row per union of the models: its name, then each member's annotation and, for a variant
    class, the tag value that picks it."""
    spec, _ = build_spec(Options())
    rows = ["| union | its members (the tag value that picks each) |", "| --- | --- |"]
    for union in (t for t in spec.types if t.kind is DefKind.UNION):
        variants = {c.name: c for c in union.classes}
        members = []
        for option in union.options:
            cls = variants.get(option.name) if isinstance(option, Ref) else None
            tag = f' (`"{cls.tags[0].wire_name}": {_json(cls.tags[0].value)}`)' if cls and cls.tags else ""
            members.append(f"`{option.annotation}`{tag}")
        rows.append(f"| `{union.name}` | {', '.join(members)} |")
    return "\n".join(rows)


def _json(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value).lower()


def test_the_api_page_lists_every_union_with_its_variant_classes():
    text = PAGE.read_text()
    assert START in text and END in text, f"{PAGE.name}: no {START} ... {END} section"
    head, rest = text.split(START)
    _, tail = rest.split(END)
    expected = f"{head}{START}\n{union_table()}\n{END}{tail}"
    if os.environ.get("ACPGEN_UPDATE_GOLDEN") == "1":
        PAGE.write_text(expected)
    assert text == expected, "the unions on the API page are not the models': ACPGEN_UPDATE_GOLDEN=1 rewrites them"
    assert '`Text` (`"type": "text"`)' in text  # the class of a text content block
