"""``acpgen diff``'s word on a removed ``x-deserialize-*`` annotation against what the generated
decoders do: where diff says the removal breaks old senders, the package generated with the
annotation repairs a bad message that the one generated without it refuses; where it says the
removal breaks nobody, both packages accept it or both refuse it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from support import generate_and_import, mini_schema

from acpgen.diff import diff_schemas
from acpgen.schema.loader import parse_schema

ON_ERROR = "x-deserialize-default-on-error"
ON_NULL = "x-deserialize-default-on-null"
SKIP = "x-deserialize-skip-invalid-items"


def annotated() -> dict[str, Any]:
    """PingRequest with a field for each way an annotation is read, or not."""
    doc = mini_schema()
    ping = doc["$defs"]["PingRequest"]
    ping["properties"].update({
        "note": {"type": "string", ON_ERROR: True},  # optional: a bad value becomes absent
        "tags": {"type": "array", "items": {"type": "string"}, ON_NULL: True},  # required: null reads as []
        "paths": {"type": "array", "items": {"type": "string"}, ON_ERROR: True, SKIP: True},  # both
    })
    ping["properties"]["sessionId"] = {"$ref": "#/$defs/SessionId", ON_ERROR: True}  # required string: idle
    ping["required"] = ["sessionId", "tags"]
    return doc


GOOD = {"sessionId": "s", "tags": ["a"]}

#: (field, annotation, a message only that annotation could repair, who diff says the removal breaks)
CASES = [
    ("note", ON_ERROR, {**GOOD, "note": 5}, "sender"),
    ("tags", ON_NULL, {**GOOD, "tags": None}, "sender"),
    ("sessionId", ON_ERROR, {**GOOD, "sessionId": 5}, "nobody"),  # refused either way
    ("paths", SKIP, {**GOOD, "paths": ["a", 5]}, "nobody"),  # accepted either way: default-on-error drops it whole
]


def _schema(doc: dict[str, Any]):
    return parse_schema(json.dumps(doc).encode(), "schema.json", frozenset())


@pytest.fixture(scope="module")
def with_all(tmp_path_factory):
    return generate_and_import(annotated(), tmp_path_factory.mktemp("annotated"))


def _accepts(package: Any, message: dict[str, Any]) -> bool:
    try:
        package.decode(package.PingRequest, message)
    except package.DecodeError:
        return False
    return True


@pytest.mark.parametrize(("field", "key", "message", "breaks"), CASES, ids=[f"{c[0]}-{c[1][14:]}" for c in CASES])
def test_a_removed_annotation_breaks_where_the_decoder_relied_on_it(with_all, tmp_path, field, key, message, breaks):
    without = copy.deepcopy(annotated())
    del without["$defs"]["PingRequest"]["properties"][field][key]
    (change,) = [c for c in diff_schemas(_schema(annotated()), _schema(without)) if c.kind == "annotation-removed"]
    assert (change.subject, change.breaks) == (f"PingRequest/properties/{field}", breaks)
    assert (change.severity == "breaking") == (breaks == "sender")
    stripped = generate_and_import(without, tmp_path)
    before, after = _accepts(with_all, message), _accepts(stripped, message)
    if breaks == "sender":
        assert (before, after) == (True, False)  # repaired with it, refused without
    else:
        assert before == after
