"""The merged draft 2020-12 meta-schema judges schemas exactly as the official one does."""

from __future__ import annotations

import copy
import json
import random

import jsonschema
import pytest
from support import BUNDLED, CORPUS

from acpgen.schema import metaschema
from acpgen.schema.loader import validate_meta_schema

OFFICIAL = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
MERGED = jsonschema.Draft202012Validator(metaschema.meta_schema())

#: Values that break one keyword or another wherever they land.
BAD_VALUES = [5, -1, 1.5, "x", "#/nowhere", [], ["a", 1], {}, {"a": 1}, None, True]
KEYWORDS = [
    "type", "required", "properties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "$ref",
    "enum", "const", "minimum", "maxItems", "minLength", "pattern", "uniqueItems", "multipleOf", "format",
    "description", "title", "default", "examples", "deprecated", "additionalProperties",
    "unevaluatedProperties", "$defs", "$schema", "$id", "$anchor", "$dynamicRef", "if", "then", "else",
    "dependentRequired", "dependentSchemas", "contentMediaType", "contentSchema", "propertyNames",
]


def problems(validator, document) -> set[tuple[tuple[str, ...], str]]:
    return {(tuple(map(str, e.absolute_path)), e.message) for e in validator.iter_errors(document)}


def test_the_merged_meta_schema_has_no_dynamic_reference_left():
    merged = metaschema.meta_schema()
    text = json.dumps(merged)
    assert '"$dynamicRef": "' not in text and '"$dynamicAnchor": "' not in text and "allOf" not in merged
    # Every keyword of every vocabulary is there: core, applicator, validation, content, ...
    assert {"$ref", "properties", "unevaluatedProperties", "minimum", "contentSchema", "deprecated"} <= set(
        merged["properties"]
    )
    assert merged is not jsonschema.Draft202012Validator.META_SCHEMA


@pytest.mark.parametrize("release", ["v0.0.33--schema.json", "v0.9.1--schema.json", "v1.7.0--v2-schema.json"])
def test_both_accept_real_releases(release):
    document = json.loads((CORPUS / release).read_text())
    assert problems(OFFICIAL, document) == problems(MERGED, document) == set()


def test_both_reject_broken_documents_with_the_same_messages_at_the_same_places():
    release = json.loads((CORPUS / "v0.0.33--schema.json").read_text())
    # A dozen of its types keep each validation short ($refs do not matter to the meta-schema).
    base = {**release, "$defs": dict(sorted(release["$defs"].items())[:12])}
    objects = []

    def collect(node, path):
        if isinstance(node, dict):
            objects.append(path)
            for key, value in node.items():
                collect(value, (*path, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                collect(value, (*path, index))

    collect(base, ())
    rng = random.Random(2020_12)
    rejected = 0
    for _ in range(150):
        document = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            node = document
            for step in rng.choice(objects):
                node = node[step] if isinstance(node, (dict, list)) and _has(node, step) else None
            if isinstance(node, dict):  # not cut off by an earlier change
                node[rng.choice(KEYWORDS)] = rng.choice(BAD_VALUES)
        official = problems(OFFICIAL, document)
        assert problems(MERGED, document) == official
        rejected += bool(official)
    assert rejected > 100  # the comparison is not between two empty sets


@pytest.mark.parametrize(
    "document",
    [
        {"dependencies": {"left-pad": "^1.3.0", "ok": ["a"], "also": {"type": "string"}}},  # a package.json's
        {"$recursiveAnchor": True, "$recursiveRef": "#"},
        {"$recursiveAnchor": "x", "$recursiveRef": 3},
    ],
)
def test_keywords_whose_meta_schema_points_into_a_vocabulary_are_judged_the_same(document):
    """The official meta-schema judges ``dependencies``, ``$recursiveAnchor`` and ``$recursiveRef``
    through a vocabulary's ``$defs`` (``meta/validation#/$defs/stringArray``)."""
    assert problems(MERGED, document) == problems(OFFICIAL, document) != set()
    assert '"meta/' not in json.dumps(metaschema.meta_schema())


def _has(node, step) -> bool:
    return step in node if isinstance(node, dict) else isinstance(step, int) and step < len(node)


def test_the_bundled_schema_broken_in_one_place_is_reported_once_at_its_pointer():
    document = json.loads(BUNDLED.read_text())
    document["$defs"]["PromptRequest"]["required"] = "sessionId"
    found = validate_meta_schema(document)
    assert [(d.pointer, d.message) for d in found] == [
        ("/$defs/PromptRequest/required", "meta-schema: 'sessionId' is not of type 'array'")
    ]
    assert {(tuple(map(str, e.absolute_path)), e.message) for e in OFFICIAL.iter_errors(document)} == {
        (("$defs", "PromptRequest", "required"), "'sessionId' is not of type 'array'")
    }


def test_a_meta_schema_of_an_unknown_shape_is_used_as_it_is(monkeypatch):
    official = {"$schema": "s", "$id": "https://example.org/meta/schema", "allOf": [{"$ref": "meta/a"}]}
    vocabulary = {"properties": {"x": {"$dynamicRef": "#elsewhere"}}}
    with pytest.raises(metaschema._Unexpected):
        metaschema.merged_meta_schema(official, {"https://example.org/meta/meta/a": vocabulary}.__getitem__)
    clash = {"properties": {"x": {"type": "string"}}}
    official["allOf"].append({"$ref": "meta/b"})
    known = {"https://example.org/meta/meta/a": {"properties": {"x": {}}}, "https://example.org/meta/meta/b": clash}
    with pytest.raises(metaschema._Unexpected):
        metaschema.merged_meta_schema(official, known.__getitem__)
    monkeypatch.setattr(metaschema, "merged_meta_schema", lambda *a: (_ for _ in ()).throw(metaschema._Unexpected()))
    metaschema.meta_schema.cache_clear()
    try:
        assert metaschema.meta_schema() is jsonschema.Draft202012Validator.META_SCHEMA
    finally:
        metaschema.meta_schema.cache_clear()
