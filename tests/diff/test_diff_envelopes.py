"""``acpgen diff`` weighs the JSON-RPC envelopes' changes through the methods: a variant an envelope
gains for a new method is covered by the ``method-added`` record and breaks nobody, one it loses
with a removed method is covered by ``method-removed`` (which breaks), and an envelope rewritten
with no method changed breaks nobody on the wire. The envelopes are found by structure, whatever
they are called; a union that is not an envelope (``SessionUpdate``) still breaks old receivers
when it gains a variant."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import CORPUS

from acpgen.diff import diff_schemas
from acpgen.diff.facts import read_facts
from acpgen.diff.report import fails
from acpgen.schema.loader import LoadedSchema, load_schema


def _ref(name: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": f"#/$defs/{name}"}], "title": name}


def base(request: str = "ClientRequest", response: str = "AgentResponse") -> dict[str, Any]:
    """Three agent methods, a session update union, and the envelopes listing the methods' types
    (named ``request`` and ``response``)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "NewSessionRequest": {"type": "object", "properties": {"cwd": {"type": "string"}},
                                  "x-method": "session/new", "x-side": "agent"},
            "NewSessionResponse": {"type": "object", "properties": {"sessionId": {"type": "string"}},
                                   "x-method": "session/new", "x-side": "agent"},
            "LoadSessionRequest": {"type": "object", "properties": {"sessionId": {"type": "string"}},
                                   "x-method": "session/load", "x-side": "agent"},
            "LoadSessionResponse": {"type": "object", "properties": {}, "x-method": "session/load", "x-side": "agent"},
            "PromptRequest": {"type": "object", "properties": {"text": {"type": "string"}},
                              "x-method": "session/prompt", "x-side": "agent"},
            "PromptResponse": {"type": "object", "properties": {"stop": {"type": "string"}},
                               "x-method": "session/prompt", "x-side": "agent"},
            "SessionNotification": {"type": "object", "properties": {"update": {"$ref": "#/$defs/SessionUpdate"}},
                                    "required": ["update"], "x-method": "session/update", "x-side": "client"},
            "SessionUpdate": {
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "chunk"}, "text": {"type": "string"}},
                     "required": ["kind"]},
                    {"type": "object", "properties": {"kind": {"const": "plan"}}, "required": ["kind"]},
                ],
            },
            request: {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "method": {"type": "string"},
                               "params": {"anyOf": [_ref("NewSessionRequest"), _ref("LoadSessionRequest"),
                                                    _ref("PromptRequest")]}},
                "required": ["id", "method"],
            },
            response: {
                "type": "object",
                "properties": {"id": {"type": "integer"},
                               "result": {"anyOf": [_ref("NewSessionResponse"), _ref("LoadSessionResponse"),
                                                    _ref("PromptResponse")]}},
                "required": ["id", "result"],
            },
            "AgentNotification": {
                "type": "object",
                "properties": {"method": {"type": "string"}, "params": {"anyOf": [_ref("SessionNotification")]}},
                "required": ["method"],
            },
        },
    }


def add_method(doc: dict[str, Any], request: str = "ClientRequest", response: str = "AgentResponse") -> None:
    """``session/close`` appears, with an optional capability field for it."""
    defs = doc["$defs"]
    defs["CloseSessionRequest"] = {"type": "object", "properties": {"sessionId": {"type": "string"}},
                                   "x-method": "session/close", "x-side": "agent"}
    defs["CloseSessionResponse"] = {"type": "object", "properties": {}, "x-method": "session/close",
                                    "x-side": "agent"}
    defs[request]["properties"]["params"]["anyOf"].append(_ref("CloseSessionRequest"))
    defs[response]["properties"]["result"]["anyOf"].append(_ref("CloseSessionResponse"))
    defs["NewSessionResponse"]["properties"]["canClose"] = {"type": "boolean"}


def remove_method(doc: dict[str, Any]) -> None:
    defs = doc["$defs"]
    del defs["PromptRequest"], defs["PromptResponse"]
    defs["ClientRequest"]["properties"]["params"]["anyOf"].pop()
    defs["AgentResponse"]["properties"]["result"]["anyOf"].pop()


def _diff(old: dict[str, Any], new: dict[str, Any]):
    return diff_schemas(LoadedSchema("old.json", "0" * 64, old), LoadedSchema("new.json", "1" * 64, new))


def _changed(mutate, *names: str):
    old = base(*names)
    new = copy.deepcopy(old)
    mutate(new, *names)
    return _diff(old, new)


@pytest.mark.parametrize("names", [("ClientRequest", "AgentResponse"), ("Calls", "Answers")],
                         ids=["upstream-names", "other-names"])
def test_a_release_that_adds_a_method_and_an_optional_field_breaks_nobody(names):
    changes = _changed(add_method, *names)
    records = {(c.kind, c.subject): c for c in changes}
    assert records[("method-added", "session/close (agent)")].breaks == "nobody"
    variant = records[("variant-added", f"{names[0]}.params (inline)/CloseSessionRequest")]
    assert (variant.detail, variant.breaks, variant.severity) == (
        "new variant: covered by method-added session/close (agent)", "nobody", "compatible")
    result = records[("variant-added", f"{names[1]}.result (inline)/CloseSessionResponse")]
    assert (result.breaks, result.severity) == ("nobody", "compatible")
    assert {c.severity for c in changes} == {"compatible"}
    assert not fails(changes, "breaking")


def test_a_removed_method_breaks_and_its_envelope_variants_are_covered_by_it():
    old = base()
    new = copy.deepcopy(old)
    remove_method(new)
    records = {(c.kind, c.subject): c for c in _diff(old, new)}
    removed = records[("method-removed", "session/prompt (agent)")]
    assert (removed.breaks, removed.severity) == ("sender", "breaking")
    variant = records[("variant-removed", "ClientRequest.params (inline)/PromptRequest")]
    assert (variant.detail, variant.breaks) == ("variant removed: covered by method-removed session/prompt (agent)",
                                                "nobody")
    assert fails(list(records.values()), "breaking")


def test_a_new_session_update_variant_still_breaks_old_receivers():
    def add_update(doc: dict[str, Any], *names: str) -> None:
        add_method(doc, *names)
        doc["$defs"]["SessionUpdate"]["oneOf"].append(
            {"type": "object", "properties": {"kind": {"const": "usage"}}, "required": ["kind"]})

    changes = _changed(add_update, "ClientRequest", "AgentResponse")
    assert [(c.kind, c.subject, c.breaks) for c in changes if c.severity == "breaking"] == [
        ("variant-added", "SessionUpdate/usage", "receiver")]
    assert fails(changes, "breaking")


def test_an_envelope_rewritten_with_no_method_changed_breaks_nobody_on_the_wire():
    def unwrap(doc: dict[str, Any], *names: str) -> None:  # the params union becomes the envelope itself
        doc["$defs"]["ClientRequest"] = {"anyOf": [_ref("NewSessionRequest"), _ref("PromptRequest")]}

    changes = _changed(unwrap, "ClientRequest", "AgentResponse")
    kinds = {(c.kind, c.subject): c for c in changes}
    rewritten = kinds[("def-kind-changed", "ClientRequest")]
    assert (rewritten.detail, rewritten.breaks, rewritten.severity) == (
        "class -> union, no method changed", "nobody", "python")
    assert all(c.breaks == "nobody" for c in changes)


def test_the_envelopes_are_the_defs_that_refer_to_method_types_or_to_envelopes():
    facts = read_facts(load_schema(CORPUS / "v0.7.0--schema.json"), None)
    assert facts.envelopes == {"AgentNotification", "AgentRequest", "AgentResponse", "ClientNotification",
                               "ClientRequest", "ClientResponse", "AgentOutgoingMessage", "ClientOutgoingMessage"}
    assert read_facts(LoadedSchema("s.json", "0" * 64, base("Calls", "Answers")), None).envelopes == {
        "Calls", "Answers", "AgentNotification"}
