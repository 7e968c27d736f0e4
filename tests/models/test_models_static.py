"""The generated package type-checks with mypy --strict (for Python 3.10), is clean under ruff,
and its models module is already in black's style (generate() does not format it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from support import BINDINGS, ROOT, schema_with, write_package
from support.blackstyle import models_sample, unchanged_by_black
from support.typecheck import mypy_strict

from acpgen.output.formatting import format_python
from acpgen.pipeline import Options, generate

PACKAGE = BINDINGS / "acp_bindings"

USER_CODE = '''
from acp_bindings import (
    AgentMessageChunk, ContentBlock, DecodeError, SessionNotification, SessionUpdate, StopReason, Text,
    decode, encode,
)


def build() -> SessionNotification:
    return SessionNotification(session_id="s", update=AgentMessageChunk(content=Text(text="hi")))


def read(data: object) -> str:
    note: SessionNotification = decode(SessionNotification, data)
    update: SessionUpdate = note.update
    if isinstance(update, AgentMessageChunk) and isinstance(update.content, Text):
        return update.content.text
    return note.session_id


def reason(value: StopReason) -> StopReason:
    return value


def blocks(data: list[object]) -> list[ContentBlock]:
    try:
        return [decode(ContentBlock, d) for d in data]
    except DecodeError as error:
        raise ValueError(error.path) from error


wire: dict[str, object] = build().to_json()
encode(build())
reason("end_turn")
'''


def test_mypy_strict_passes_on_the_package_and_its_use(tmp_path):
    (tmp_path / "use_bindings.py").write_text(USER_CODE)
    result = mypy_strict(PACKAGE, tmp_path / "use_bindings.py", cwd=BINDINGS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_rejects_a_wrong_construction(tmp_path):
    (tmp_path / "wrong.py").write_text(textwrap.dedent('''
        from acp_bindings import PromptResponse, Text
        Text(txt="hi")
        PromptResponse(stop_reason="bored")
    '''))
    result = mypy_strict(tmp_path / "wrong.py", cwd=BINDINGS)
    assert result.returncode == 1
    assert 'Unexpected keyword argument "txt"' in result.stdout
    assert "Literal['bored']" in result.stdout


def test_ruff_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310", str(PACKAGE)],
        check=False, capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_py_typed():
    assert (PACKAGE / "py.typed").read_text() == ""


@pytest.mark.parametrize("module", ["models.py", "_models_codec.py"])
def test_models_module_of_the_bundled_schema_is_in_black_style(module):
    """Black leaves every union, alias, helper and table alone, every class, method or decoder
    with a line near the limit, and a deterministic sample of the other (very regular) classes,
    methods and decoders: formatting all 42,000 lines would take half a minute."""
    text = (PACKAGE / module).read_text()
    sample = models_sample(text)
    assert len(sample) > 80 and any(len(line) > 88 for chunk in sample for line in chunk.splitlines())
    assert unchanged_by_black(text, module) == []


def test_models_module_of_a_small_schema_with_every_shape_is_in_black_style(tmp_path):
    defs = {
        "Id": {"type": "string"},
        "Big": {"type": "integer", "format": "uint64", "minimum": 0},
        "Kind": {"oneOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]},
        "Open": {"anyOf": [{"const": "x", "type": "string"}, {"title": "other", "type": "string"}]},
        "Num": {"anyOf": [{"type": "null"}, {"type": "integer", "format": "int64"}, {"type": "string"}]},
        "Leaf": {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}, "n": {"type": ["number", "null"]},
                                                   "raw": {}, "_meta": {"type": ["object", "null"]}},
                 "required": ["id"]},
        "Tagged": {"discriminator": {"propertyName": "type"}, "oneOf": [
            {"allOf": [{"$ref": "#/$defs/Leaf"}], "properties": {"type": {"const": "leaf", "type": "string"}},
             "required": ["type"], "type": "object"},
            {"properties": {"type": {"const": "empty", "type": "string"}}, "required": ["type"], "type": "object"},
        ]},
        "Holder": {"type": "object", "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Tagged"}},
            "map": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Leaf"}},
            "kind": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
            "open": {"$ref": "#/$defs/Open"}, "num": {"$ref": "#/$defs/Num"}, "big": {"$ref": "#/$defs/Big"},
        }, "required": ["items", "num"]},
    }
    files = generate(Options(schema=_write(tmp_path, schema_with(defs)))).files
    text = files["acp_bindings/models.py"]
    assert format_python(text) == text
    write_package(files, tmp_path / "out")
    result = mypy_strict("acp_bindings", cwd=tmp_path / "out", cache="long-names")  # another acp_bindings
    assert result.returncode == 0, result.stdout


def _write(tmp_path, document):
    import json

    path = tmp_path / "schema.json"
    path.write_text(json.dumps(document))
    return path
