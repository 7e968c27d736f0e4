"""``acpgen diff`` on small hand-made schema pairs: one per kind of change, each with the record
it must give (kind, subject, who it breaks, tier, effect on the generated Python)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_diff_layout import COVERED as LAYOUT_KINDS

from acpgen.diff import KINDS, diff_schemas
from acpgen.schema.loader import LoadedSchema

UNSTABLE = "**UNSTABLE**\n\nThis capability is not part of the spec yet."


def base() -> dict[str, Any]:
    """An agent request with a union and an enum, its response, a client notification, and an
    unstable agent request."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "PingRequest": {
                "type": "object",
                "description": "Ping the agent.",
                "properties": {
                    "sessionId": {"$ref": "#/$defs/SessionId"},
                    "level": {"type": "string", "enum": ["low", "high"]},
                    "content": {"$ref": "#/$defs/ContentBlock"},
                    "note": {"type": "string"},
                },
                "required": ["sessionId", "content"],
                "x-method": "ping",
                "x-side": "agent",
            },
            "PingResponse": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "x-method": "ping",
                             "x-side": "agent"},
            "LogNotification": {
                "type": "object",
                "description": "Log a line.",
                "properties": {"line": {"type": "string"}, "mode": {"$ref": "#/$defs/Mode"}},
                "required": ["line"],
                "x-method": "log/line",
                "x-side": "client",
            },
            "DebugRequest": {
                "type": "object",
                "description": UNSTABLE,
                "properties": {"depth": {"type": "integer"}},
                "x-method": "debug",
                "x-side": "agent",
            },
            "SessionId": {"type": "string"},
            "Mode": {"oneOf": [{"const": "fast"}, {"const": "slow"}]},
            "ContentBlock": {
                "oneOf": [
                    {"type": "object", "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                     "required": ["type", "text"]},
                    {"type": "object", "properties": {"type": {"const": "image"}, "data": {"type": "string"}},
                     "required": ["type", "data"]},
                ],
                "discriminator": {"propertyName": "type"},
            },
        },
    }


def defs(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["$defs"]


def ping(doc: dict[str, Any]) -> dict[str, Any]:
    return defs(doc)["PingRequest"]


Mutation = Callable[[dict[str, Any]], None]


def records(mutate: Mutation, prepare: Mutation | None = None) -> list[tuple[str, str, str, str, str]]:
    """The records of the change ``mutate`` makes to the base schema (first changed by ``prepare``)."""
    old = base()
    if prepare is not None:
        prepare(old)
    new = copy.deepcopy(old)
    mutate(new)
    changes = diff_schemas(LoadedSchema("old.json", "0" * 64, old), LoadedSchema("new.json", "1" * 64, new))
    return [(c.kind, c.subject, c.breaks, c.tier, c.python) for c in changes]


def add_method(doc: dict[str, Any]) -> None:
    defs(doc)["StatusRequest"] = {"type": "object", "properties": {}, "x-method": "status", "x-side": "agent"}


def remove_method(doc: dict[str, Any]) -> None:
    del defs(doc)["LogNotification"]


def request_to_notification(doc: dict[str, Any]) -> None:
    del defs(doc)["PingResponse"]
    defs(doc)["PingNotification"] = defs(doc).pop("PingRequest")


def rename_params(doc: dict[str, Any]) -> None:
    defs(doc)["LogLineNotification"] = defs(doc).pop("LogNotification")


def make_unstable(doc: dict[str, Any]) -> None:
    ping(doc)["description"] = UNSTABLE


def make_stable(doc: dict[str, Any]) -> None:
    defs(doc)["DebugRequest"]["description"] = "Debug."


def add_def(doc: dict[str, Any]) -> None:
    defs(doc)["Extra"] = {"type": "object", "properties": {"x": {"type": "string"}}}


def remove_def(doc: dict[str, Any]) -> None:
    del defs(doc)["Mode"]
    del defs(doc)["LogNotification"]["properties"]["mode"]


def rename_def(doc: dict[str, Any]) -> None:
    defs(doc)["SessionKey"] = defs(doc).pop("SessionId")
    ping(doc)["properties"]["sessionId"] = {"$ref": "#/$defs/SessionKey"}


def swap_alias(doc: dict[str, Any]) -> None:
    """SessionId goes with the property that used it; an unrelated string alias comes, used elsewhere."""
    defs(doc).pop("SessionId")
    ping(doc)["properties"]["sessionId"] = {"type": "string"}
    defs(doc)["LineId"] = {"type": "string"}
    defs(doc)["LogNotification"]["properties"]["lineId"] = {"$ref": "#/$defs/LineId"}


def test_two_defs_of_one_shape_at_no_common_place_are_no_rename():
    """Two string aliases are one shape; SessionId and LineId stand nowhere alike, so SessionId is
    removed (the import of it fails: breaking) and LineId added, never "renamed, breaks nobody"."""
    found = {(kind, subject): (breaks, python) for kind, subject, breaks, _, python in records(swap_alias)}
    assert found[("def-removed", "SessionId")] == ("both", "alias SessionId removed")
    assert found[("def-added", "LineId")] == ("nobody", "alias LineId added")
    assert not [key for key in found if key[0] == "def-renamed"]


def def_kind(doc: dict[str, Any]) -> None:
    defs(doc)["SessionId"] = {"type": "object", "properties": {"value": {"type": "string"}}}


def add_variant(doc: dict[str, Any]) -> None:
    defs(doc)["ContentBlock"]["oneOf"].append(
        {"type": "object", "properties": {"type": {"const": "audio"}, "data": {"type": "string"}},
         "required": ["type", "data"]})


def remove_variant(doc: dict[str, Any]) -> None:
    defs(doc)["ContentBlock"]["oneOf"].pop()


def add_optional_field(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["cwd"] = {"type": "string"}


def add_required_field(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["cwd"] = {"type": "string"}
    ping(doc)["required"].append("cwd")


def remove_required_field(doc: dict[str, Any]) -> None:
    del ping(doc)["properties"]["content"]
    ping(doc)["required"].remove("content")


def remove_optional_field(doc: dict[str, Any]) -> None:
    del ping(doc)["properties"]["note"]


def make_required(doc: dict[str, Any]) -> None:
    ping(doc)["required"].append("note")


def make_optional(doc: dict[str, Any]) -> None:
    ping(doc)["required"].remove("content")


def change_type(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["note"] = {"type": "integer"}


def make_nullable(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["note"] = {"type": ["string", "null"]}


def variant_field_type(doc: dict[str, Any]) -> None:
    defs(doc)["ContentBlock"]["oneOf"][0]["properties"]["text"] = {"type": "array", "items": {"type": "string"}}


def add_enum_value(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["level"]["enum"].append("max")


def remove_enum_value(doc: dict[str, Any]) -> None:
    defs(doc)["Mode"]["oneOf"].pop()


def open_enum(doc: dict[str, Any]) -> None:
    defs(doc)["Mode"]["oneOf"].append({"type": "string"})


def add_annotation(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["note"]["x-deserialize-default-on-error"] = True


def add_idle_annotation(doc: dict[str, Any]) -> None:
    """On a required string: the generated decoder cannot repair it, so it does nothing there."""
    ping(doc)["properties"]["sessionId"]["x-deserialize-default-on-error"] = True


CASES: list[tuple[Callable[[dict[str, Any]], None], tuple[str, str, str, str, str]]] = [
    (add_method, ("method-added", "status (agent)", "nobody", "stable",
                  "handler Agent.status and proxy AgentProxy.status added")),
    (remove_method, ("method-removed", "log/line (client)", "sender", "stable",
                     "handler Client.log_line and proxy ClientProxy.log_line removed")),
    (request_to_notification, ("method-kind-changed", "ping (agent)", "both", "stable",
                               "handler Agent.ping and proxy AgentProxy.ping now returns None (was PingResponse)")),
    (rename_params, ("params-type-renamed", "log/line (client)", "nobody", "stable",
                     ("handler Client.log_line and proxy ClientProxy.log_line takes LogLineNotification "
                      "(was LogNotification)"))),
    (make_unstable, ("method-made-unstable", "ping (agent)", "nobody", "unstable",
                     "handler Agent.ping and proxy AgentProxy.ping left out by --stable-only")),
    (make_stable, ("method-made-stable", "debug (agent)", "nobody", "stable",
                   "handler Agent.debug and proxy AgentProxy.debug kept by --stable-only")),
    (add_def, ("def-added", "Extra", "nobody", "stable", "class Extra added")),
    (remove_def, ("def-removed", "Mode", "both", "stable", "literal type Mode removed")),
    (rename_def, ("def-renamed", "SessionId", "nobody", "stable",
                  "alias SessionId renamed to SessionKey: an import of SessionId fails; import SessionKey instead")),
    (rename_def, ("type-renamed", "PingRequest.sessionId", "nobody", "stable",
                  "annotation of PingRequest.session_id: SessionId -> SessionKey")),
    (def_kind, ("def-kind-changed", "SessionId", "both", "stable", "SessionId is a class (was an alias)")),
    (add_variant, ("variant-added", "ContentBlock/audio", "receiver", "stable", "variant class Audio added")),
    (remove_variant, ("variant-removed", "ContentBlock/image", "sender", "stable", "variant class Image removed")),
    (add_optional_field, ("field-added", "PingRequest.cwd", "nobody", "stable", "field PingRequest.cwd added")),
    (add_required_field, ("field-added-required", "PingRequest.cwd", "sender", "stable",
                          "PingRequest(cwd=...) is a required keyword")),
    (remove_required_field, ("field-removed", "PingRequest.content", "receiver", "stable",
                             "field PingRequest.content removed")),
    (remove_optional_field, ("field-removed", "PingRequest.note", "nobody", "stable",
                             "field PingRequest.note removed")),
    (make_required, ("field-made-required", "PingRequest.note", "sender", "stable",
                     "PingRequest(note=...) became a required keyword")),
    (make_optional, ("field-made-optional", "PingRequest.content", "receiver", "stable",
                     "PingRequest.content may be absent (its annotation widened)")),
    (change_type, ("type-changed", "PingRequest.note", "both", "stable",
                   "annotation of PingRequest.note changed: str -> int")),
    (make_nullable, ("nullability-changed", "PingRequest.note", "receiver", "stable",
                     "annotation of PingRequest.note widened to str | None")),
    (variant_field_type, ("type-changed", "ContentBlock/text.text", "both", "stable",
                          "annotation of Text.text changed: str -> list[str]")),
    (add_enum_value, ("enum-value-added", "PingRequest.level", "receiver", "stable", "PingRequest.level accepts 'max'")),
    (remove_enum_value, ("enum-value-removed", "Mode", "sender", "stable", "Mode no longer lists 'slow'")),
    (open_enum, ("enum-opened", "Mode", "receiver", "stable",
                 "annotation of Mode widened to Literal['fast', 'slow'] | str")),
    (add_annotation, ("annotation-added", "PingRequest/properties/note", "nobody", "stable",
                      "PingRequest.note: a bad value becomes absent")),
    (add_idle_annotation, ("annotation-added", "PingRequest/properties/sessionId", "nobody", "stable",
                           ("none: the generated decoder keeps PingRequest.session_id an error when bad"
                           " (a required value, not an array or map)"))),
]


@pytest.mark.parametrize(("mutate", "expected"), CASES, ids=[f"{m.__name__}-{e[0]}" for m, e in CASES])
def test_each_kind_of_change_gives_its_record(mutate, expected):
    assert expected in records(mutate)


def add_tag(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["version"] = {"const": "1"}
    ping(doc)["required"].append("version")


def change_tag(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["version"] = {"const": "2"}


def rename_result(doc: dict[str, Any]) -> None:
    defs(doc)["PingResultResponse"] = defs(doc).pop("PingResponse")


def close_enum(doc: dict[str, Any]) -> None:
    defs(doc)["Mode"]["oneOf"].pop()


def remove_annotation(doc: dict[str, Any]) -> None:
    del ping(doc)["properties"]["note"]["x-deserialize-default-on-error"]


def remove_idle_annotation(doc: dict[str, Any]) -> None:
    del ping(doc)["properties"]["sessionId"]["x-deserialize-default-on-error"]


def add_nested_skip(doc: dict[str, Any]) -> None:
    ping(doc)["properties"]["grid"] = {"type": "array", "items": {
        "type": "array", "items": {"type": "string"}, "x-deserialize-skip-invalid-items": True}}


def remove_nested_skip(doc: dict[str, Any]) -> None:
    del ping(doc)["properties"]["grid"]["items"]["x-deserialize-skip-invalid-items"]


#: The reverse moves, and changes to something the base schema lacks: (prepare, mutate, record).
REVERSE_CASES: list[tuple[Mutation | None, Mutation, tuple[str, str, str, str, str]]] = [
    (None, rename_result, ("result-type-renamed", "ping (agent)", "nobody", "stable",
                           "handler Agent.ping and proxy AgentProxy.ping returns PingResultResponse (was PingResponse)")),
    (add_tag, change_tag, ("tag-changed", "PingRequest.version", "both", "stable", "PingRequest sends version='2'")),
    (open_enum, close_enum, ("enum-closed", "Mode", "sender", "stable",
                             "annotation of Mode narrowed to Literal['fast', 'slow']")),
    # the decoder relied on it: a bad note it dropped now fails the decode
    (add_annotation, remove_annotation, ("annotation-removed", "PingRequest/properties/note", "sender", "stable",
                                         ("PingRequest.note: the decoder refuses what it repaired"
                                         " (was: a bad value becomes absent)"))),
    # on an array nested in a field: taken to break old senders
    (add_nested_skip, remove_nested_skip, ("annotation-removed", "PingRequest/properties/grid/items", "sender",
                                           "stable", ("the generated decoder dropped a bad item of the array"
                                           " there; it refuses it now"))),
    # it did nothing there: breaks nobody
    (add_idle_annotation, remove_idle_annotation, ("annotation-removed", "PingRequest/properties/sessionId",
                                                   "nobody", "stable",
                                                   ("none: the generated decoder keeps PingRequest.session_id an"
                                                   " error when bad (a required value, not an array or map)"))),
]


@pytest.mark.parametrize(("prepare", "mutate", "expected"), REVERSE_CASES, ids=[e[0] for _, _, e in REVERSE_CASES])
def test_each_reverse_kind_of_change_gives_its_record(prepare, mutate, expected):
    assert expected in records(mutate, prepare)


def test_a_name_the_lock_keeps_is_one_renew_names_would_change():
    def clash(doc: dict[str, Any]) -> None:  # a $def takes the variant's name: the rules rename the variant
        defs(doc)["Text"] = {"type": "object", "properties": {"body": {"type": "string"}}}

    assert ("name-renewable", "variants/ContentBlock/text", "nobody", "stable",
            "Text would be renamed to TextContentBlock by `acpgen generate --renew-names`") in records(clash)
    assert ("def-added", "Text", "nobody", "stable", "class Text_ added") in records(clash)


def test_an_unstable_method_s_types_are_in_the_unstable_tier():
    def deepen(doc: dict[str, Any]) -> None:
        defs(doc)["DebugRequest"]["properties"]["depth"] = {"type": "string"}

    assert records(deepen) == [("type-changed", "DebugRequest.depth", "both", "unstable",
                                "annotation of DebugRequest.depth changed: int -> str")]


def test_the_same_schema_gives_no_change():
    assert records(lambda doc: None) == []


def test_every_kind_the_diff_can_report_is_covered_here():
    covered = {e[0] for _, e in CASES} | {e[0] for _, _, e in REVERSE_CASES} | {"name-renewable"} | LAYOUT_KINDS
    assert covered == set(KINDS)


def test_a_class_moved_into_a_def_of_its_own_behind_an_alias_breaks_nobody():
    def move(doc: dict[str, Any]) -> None:  # v0.11.0's AuthMethod: its fields moved to AuthMethodAgent
        defs(doc)["ExtraBody"] = defs(doc)["Extra"]
        defs(doc)["Extra"] = {"anyOf": [{"allOf": [{"$ref": "#/$defs/ExtraBody"}], "title": "body"}]}

    def reshape(doc: dict[str, Any]) -> None:  # the same, but the fields changed on the way
        move(doc)
        defs(doc)["ExtraBody"] = {"type": "object", "properties": {"x": {"type": "integer"}}}

    assert ("def-kind-changed", "Extra", "nobody", "stable",
            "Extra is an alias of ExtraBody (was a class)") in records(move, add_def)
    assert ("def-kind-changed", "Extra", "both", "stable", "Extra is an alias (was a class)") in records(reshape, add_def)
