"""Every real schema release in the corpus generates models; the kinds of release whose names once
stopped generation (untitled JSON-RPC envelopes, inline objects, a variant name that a $def has)
import and round-trip."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import sys
from typing import Any

import jsonschema
import pytest
from support import CORPUS, corpus_index, write_package
from support.lineages import lineages

from acpgen.model.names import type_name
from acpgen.output.reuse import Reuse
from acpgen.pipeline import Options, generate
from acpgen.render.modules import Layer, module_names

FILES = [row["file"] for row in corpus_index()]

#: test_method_table loads every corpus schema with meta-schema validation (``load_corpus``); here
#: that validation would be most of the run, so the corpus digests count as validated.
VALIDATED = Reuse(validated_schemas=frozenset(hashlib.sha256((CORPUS / f).read_bytes()).hexdigest() for f in FILES))

_TOP_LEVEL = re.compile(r"^(?:class (\w+)\(|(\w+) = )", re.MULTILINE)


def _defs(file: str) -> dict[str, Any]:
    return json.loads((CORPUS / file).read_text())["$defs"]




def _spread() -> list[str]:
    """The first and the newest release of each lineage, and the newest of each minor version."""
    newest = {re.match(r"v\d+\.\d+\.", file)[0]: file for file in lineages()["schema.json"]}  # type: ignore[index]
    return sorted({*newest.values(), *(f for files in lineages().values() for f in (files[0], files[-1]))})


#: Every release under ``ACPGEN_EXHAUSTIVE=1`` (``make test-exhaustive``; ``make corpus`` generates
#: each release whole); otherwise the spread of :func:`_spread`.
SAMPLED = FILES if os.environ.get("ACPGEN_EXHAUSTIVE") else _spread()


@pytest.mark.parametrize("file", SAMPLED)
def test_every_corpus_release_generates_models(file: str) -> None:
    models = generate(Options(schema=CORPUS / file), VALIDATED, only={"models.py"}).files["acp_bindings/models.py"]
    defined = {a or b for a, b in _TOP_LEVEL.findall(models)}
    missing = sorted(name for name in map(type_name, _defs(file)) if name not in defined)
    assert missing == []


_ERROR = {"code": -32601, "message": "Method not found"}
_STRING_ITEMS = {"type": "string", "enum": ["a", "b"]}

#: release -> (type, a JSON value of it, the class it decodes to, and of its field, if one is named)
ROUND_TRIPS: dict[str, list[tuple[str, Any, str, tuple[str, str] | None]]] = {
    # untitled result / error envelopes, named by the property only each requires
    "v0.9.1--schema.json": [
        ("AgentResponse", {"id": 1, "error": _ERROR}, "ErrorAgentResponse", ("error", "Error")),
        ("ClientResponse", {"id": "r", "result": {"outcome": {"outcome": "cancelled"}}}, "ResultClientResponse",
         None),
    ],
    # a request {id, method} beside a response {id} + result / error and a notification {method}
    "v0.7.0--schema.json": [
        ("ClientOutgoingMessage", {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": None},
         "IdMethodClientOutgoingMessage", None),
        ("ClientOutgoingMessage", {"jsonrpc": "2.0", "id": None, "error": _ERROR}, "IdErrorClientOutgoingMessage",
         None),
        ("ClientOutgoingMessage", {"jsonrpc": "2.0", "method": "session/update"}, "MethodClientOutgoingMessage",
         None),
    ],
    # an inline object in a property
    "v0.6.3--schema.json": [
        ("RequestPermissionRequest",
         {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": [{"optionId": "o", "name": "Allow",
                                                                         "kind": "allow_once"}]},
         "RequestPermissionRequest", ("tool_call", "RequestPermissionRequestToolCall")),
    ],
    # the newest release: MultiSelectItems' string variant, as StringMultiSelectItems is a $def
    "v1.7.0--v1-schema.json": [
        ("MultiSelectItems", _STRING_ITEMS, "MultiSelectItemsString", None),
        ("ElicitationPropertySchema", {"type": "array", "items": _STRING_ITEMS}, "Array",
         ("items", "MultiSelectItemsString")),
    ],
    "v1.7.0--v2-schema.json": [
        ("MultiSelectItems", _STRING_ITEMS, "MultiSelectItemsString", None),
        ("ElicitationPropertySchema", {"type": "array", "items": _STRING_ITEMS, "minItems": 1}, "Array",
         ("items", "MultiSelectItemsString")),
    ],
}


@pytest.mark.parametrize("file", sorted(ROUND_TRIPS))
def test_releases_that_once_failed_import_and_round_trip(file: str, tmp_path) -> None:
    defs = _defs(file)
    package = "corpus_" + re.sub(r"\W", "_", file.removesuffix(".json"))
    files = generate(Options(schema=CORPUS / file, package=package), VALIDATED, only={"models.py", *module_names(layer=Layer.CODEC)}).files
    write_package({**files, f"{package}/__init__.py": ""}, tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        models = importlib.import_module(f"{package}.models")
        codec = importlib.import_module(f"{package}._runtime.wire._codec")
    finally:
        sys.path.remove(str(tmp_path))
    for type_, value, class_name, field in ROUND_TRIPS[file]:
        jsonschema.Draft202012Validator({"$ref": f"#/$defs/{type_}", "$defs": defs}).validate(value)
        decoded = codec.decode(getattr(models, type_), value)
        assert type(decoded).__name__ == class_name
        if field is not None:
            assert type(getattr(decoded, field[0])).__name__ == field[1]
        assert codec.encode(decoded) == value
        assert codec.decode(getattr(models, type_), json.loads(json.dumps(codec.encode(decoded)))) == decoded
