"""The validation keywords the spec's releases use: minLength, minItems and pattern are enforced
on decode; contentEncoding and formats other than integer widths are annotations (docs/reference/models.md)."""

from __future__ import annotations

import json

import pytest
from support import TESTS, generate_and_import

SCHEMA = TESTS / "golden" / "cases" / "validation_keywords" / "schema.json"


@pytest.fixture(scope="module")
def acp(tmp_path_factory):
    return generate_and_import(json.loads(SCHEMA.read_text()), tmp_path_factory.mktemp("keywords"))


@pytest.mark.parametrize(
    ("notice", "path", "message"),
    [
        ({"title": "", "options": ["a"]}, "/title", "expected a string of at least 1 character, got the string ''"),
        ({"title": "t", "options": []}, "/options", "expected an array of at least 1 item, got an array"),
        ({"title": "t", "options": ["a"], "currency": "euro"}, "/currency",
         "expected a string matching '^[A-Z]{3}$', got the string 'euro'"),
    ],
)
def test_a_value_that_breaks_a_keyword_is_refused_with_its_pointer(acp, notice, path, message):
    with pytest.raises(acp.DecodeError) as refused:
        acp.decode(acp.Notice, notice)
    assert (refused.value.path, refused.value.message) == (path, message)


def test_annotations_are_not_assertions(acp):
    notice = {"title": "t", "options": ["a"], "image": "not base64!", "link": "not a uri"}
    assert acp.encode(acp.decode(acp.Notice, notice)) == notice


def test_not_in_an_extensible_union_is_met_by_the_tagged_dispatch(tmp_path):
    """v2's SessionUpdate: a catch-all variant ``not`` any known tag. A known tag with a bad payload
    is an error; only an unknown tag reaches the catch-all."""
    from support import CORPUS

    acp = generate_and_import(json.loads((CORPUS / "v1.7.0--v2-schema.json").read_text()), tmp_path)
    with pytest.raises(acp.DecodeError):
        acp.decode(acp.SessionUpdate, {"sessionUpdate": "agent_message_chunk", "content": 5})
    custom = {"sessionUpdate": "my_custom_update", "x": 1}
    value = acp.decode(acp.SessionUpdate, custom)
    assert type(value).__name__ == "OtherSessionUpdate" and acp.encode(value) == custom
