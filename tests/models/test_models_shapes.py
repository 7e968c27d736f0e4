"""Hand-written tests of each shape the codecs must get exactly right, with real ACP messages."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import jsonschema
import pytest
from support import bindings, bundled_document

acp = bindings()
DEFS = bundled_document()["$defs"]


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS})


def round_trip(name: str, message: Any) -> Any:
    """Decode ``message`` (valid against the schema), check it encodes back exactly, return the value."""
    tp = getattr(acp, name)
    _validator(name).validate(message)
    before = copy.deepcopy(message)
    value = acp.decode(tp, message)
    assert acp.encode(value) == before
    assert message == before  # decoding does not change its input
    return value


# 1. tagged unions


def test_session_update_agent_message_chunk_from_the_spec():
    message = {
        "sessionId": "sess_abc123def456",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "I'll analyze your code for potential issues. Let me examine it..."},
        },
    }
    note = round_trip("SessionNotification", message)
    assert isinstance(note.update, acp.AgentMessageChunk)
    assert isinstance(note.update.content, acp.Text)
    assert note.session_id == "sess_abc123def456"
    assert note.update.session_update == "agent_message_chunk"


def test_session_update_tool_call_and_update_from_the_spec():
    call = {
        "sessionId": "sess_abc123def456",
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_001",
            "title": "Reading configuration file",
            "kind": "read",
            "status": "pending",
            "locations": [{"path": "/home/user/project/src/config.json", "line": 12}],
            "rawInput": {"path": "/home/user/project/src/config.json"},
        },
    }
    value = round_trip("SessionNotification", call)
    assert isinstance(value.update, acp.ToolCallSessionUpdate)
    assert value.update.kind == "read" and value.update.locations[0].line == 12
    update = {
        "sessionId": "sess_abc123def456",
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_001",
            "status": "completed",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "Found 3 configuration files..."}},
                {"type": "diff", "path": "/home/user/project/src/config.json", "oldText": "{}", "newText": "{\"a\": 1}"},
                {"type": "terminal", "terminalId": "term_xyz789"},
            ],
        },
    }
    value = round_trip("SessionNotification", update)
    kinds = [type(c) for c in value.update.content]
    assert kinds == [acp.ContentToolCallContent, acp.DiffToolCallContent, acp.TerminalToolCallContent]


def test_session_update_plan():
    message = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Check for syntax errors", "priority": "high", "status": "pending"},
                {"content": "Identify potential type issues", "priority": "medium", "status": "in_progress"},
            ],
        },
    }
    value = round_trip("SessionNotification", message)
    assert [e.priority for e in value.update.entries] == ["high", "medium"]


def test_content_blocks_of_every_kind():
    blocks = [
        {"type": "text", "text": "hello", "annotations": {"audience": ["user"], "priority": 0.5}},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
        {"type": "resource_link", "uri": "file:///a.py", "name": "a.py", "size": 12},
        {"type": "resource", "resource": {"uri": "file:///b.py", "text": "print(1)", "mimeType": "text/x-python"}},
        {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAEC"}},
    ]
    request = round_trip("PromptRequest", {"sessionId": "s", "prompt": blocks})
    assert [type(b) for b in request.prompt] == [
        acp.Text, acp.Image, acp.Audio, acp.ResourceLinkContentBlock, acp.Resource, acp.Resource,
    ]
    assert isinstance(request.prompt[4].resource, acp.TextResourceContents)
    assert isinstance(request.prompt[5].resource, acp.BlobResourceContents)


def test_request_permission_outcome_variants_one_without_fields():
    cancelled = round_trip("RequestPermissionResponse", {"outcome": {"outcome": "cancelled"}})
    assert isinstance(cancelled.outcome, acp.Cancelled)
    assert acp.Cancelled().to_json() == {"outcome": "cancelled"}
    selected = round_trip("RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "allow-once"}})
    assert isinstance(selected.outcome, acp.Selected) and selected.outcome.option_id == "allow-once"


def test_request_permission_request_from_the_spec():
    message = {
        "sessionId": "sess_abc123def456",
        "toolCall": {"toolCallId": "call_001"},
        "options": [
            {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
        ],
    }
    value = round_trip("RequestPermissionRequest", message)
    assert [o.kind for o in value.options] == ["allow_once", "reject_once"]


def test_nes_suggestions_and_elicitation_property_schemas():
    suggestions = {
        "suggestions": [
            {"kind": "edit", "id": "e1", "uri": "file:///a", "edits": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "newText": "x"}]},
            {"kind": "jump", "id": "j1", "uri": "file:///a", "position": {"line": 3, "character": 4}},
        ]
    }
    value = round_trip("SuggestNesResponse", suggestions)
    assert [type(s) for s in value.suggestions] == [acp.Edit, acp.Jump]
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "ok": {"type": "boolean", "default": True},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    }, "required": ["name"]}
    value = round_trip("ElicitationSchema", schema)
    assert type(value.properties["ok"]) is acp.BooleanElicitationPropertySchema
    assert type(value.properties["tags"]) is acp.Array


# 2. tagged unions with a default variant


def test_new_session_with_mcp_servers_of_all_three_transports():
    message = {
        "cwd": "/home/user/project",
        "mcpServers": [
            {"name": "filesystem", "command": "/path/to/mcp-server", "args": ["--stdio"],
             "env": [{"name": "API_KEY", "value": "secret123"}]},
            {"type": "http", "name": "api-server", "url": "https://api.example.com/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer token123"}]},
            {"type": "sse", "name": "event-stream", "url": "https://events.example.com/mcp", "headers": []},
        ],
    }
    value = round_trip("NewSessionRequest", message)
    assert [type(s) for s in value.mcp_servers] == [acp.McpServerStdio, acp.Http, acp.Sse]
    assert "type" not in acp.encode(value.mcp_servers[0])


def test_auth_method_without_type_is_the_agent_variant():
    methods = {"protocolVersion": 1, "authMethods": [
        {"id": "oauth", "name": "Log in"},
        {"type": "env_var", "id": "key", "name": "API key", "vars": [{"name": "OPENAI_API_KEY"}]},
        {"type": "terminal", "id": "tty", "name": "Terminal login"},
    ]}
    value = round_trip("InitializeResponse", methods)
    assert [type(m) for m in value.auth_methods] == [acp.AuthMethodAgent, acp.EnvVar, acp.TerminalAuthMethod]


def test_set_config_option_without_type_is_the_value_id_form():
    plain = round_trip("SetSessionConfigOptionRequest",
                       {"sessionId": "s", "configId": "model", "value": "gpt-5"})
    assert type(plain) is acp.ValueId and plain.value == "gpt-5"
    boolean = round_trip("SetSessionConfigOptionRequest",
                         {"sessionId": "s", "configId": "fast", "type": "boolean", "value": True})
    assert type(boolean) is acp.BooleanSetSessionConfigOptionRequest and boolean.value is True


# 3. unions flattened into an object with shared properties


def test_session_config_option_select_and_boolean():
    select = {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "a",
              "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]}
    value = round_trip("SessionConfigOption", select)
    assert type(value) is acp.Select and value.category == "model" and value.current_value == "a"
    grouped = dict(select, options=[{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}])
    value = round_trip("SessionConfigOption", grouped)
    assert type(value.options[0]) is acp.SessionConfigSelectGroup
    boolean = {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": True}
    assert type(round_trip("SessionConfigOption", boolean)) is acp.BooleanSessionConfigOption


def test_create_elicitation_request_mode_and_scope():
    form = {"message": "Who?", "mode": "form", "sessionId": "s", "requestedSchema": {"type": "object"}}
    assert type(round_trip("CreateElicitationRequest", form)) is acp.FormSession
    by_request = {"message": "Who?", "mode": "form", "requestId": 7, "requestedSchema": {}}
    assert type(round_trip("CreateElicitationRequest", by_request)) is acp.FormRequest
    url = {"message": "Open", "mode": "url", "sessionId": "s", "elicitationId": "e", "url": "https://x.test/"}
    assert type(round_trip("CreateElicitationRequest", url)) is acp.UrlSession


def test_create_elicitation_response_actions():
    accept = round_trip("CreateElicitationResponse", {"action": "accept", "content": {"name": "Ann", "n": 3}})
    assert type(accept) is acp.Accept and accept.content == {"name": "Ann", "n": 3}
    assert type(round_trip("CreateElicitationResponse", {"action": "decline"})) is acp.Decline
    assert type(round_trip("CreateElicitationResponse", {"action": "cancel", "_meta": None})) is acp.Cancel


# 4. untagged unions told apart by shape


@pytest.mark.parametrize("value", [None, 0, -1, 2**63 - 1, "req-1", ""])
def test_request_id_null_integer_or_string(value):
    assert round_trip("RequestId", value) == value


@pytest.mark.parametrize("value", ["x", 3, 2.5, True, ["a", "b"], []])
def test_elicitation_content_value_by_shape(value):
    decoded = round_trip("ElicitationContentValue", value)
    assert decoded == value and type(decoded) is type(value)


def test_session_config_select_options_arrays_of_different_items():
    flat = round_trip("SessionConfigSelectOptions", [{"value": "a", "name": "A"}])
    assert type(flat[0]) is acp.SessionConfigSelectOption
    grouped = round_trip("SessionConfigSelectOptions", [{"group": "g", "name": "G", "options": []}])
    assert type(grouped[0]) is acp.SessionConfigSelectGroup


def test_multi_select_items_titled_and_untitled():
    untitled = round_trip("MultiSelectItems", {"type": "string", "enum": ["a"]})
    assert type(untitled) is acp.UntitledMultiSelectItems
    titled = round_trip("MultiSelectItems", {"anyOf": [{"const": "a", "title": "A"}]})
    assert type(titled) is acp.TitledMultiSelectItems and titled.any_of[0].const == "a"


# 5. open and closed enums


def test_open_enums_keep_unknown_values():
    assert round_trip("SessionConfigOptionCategory", "thought_level") == "thought_level"
    assert round_trip("SessionConfigOptionCategory", "_custom") == "_custom"
    assert round_trip("LlmProtocol", "mistral") == "mistral"
    error = round_trip("Error", {"code": -32099, "message": "server specific"})
    assert error.code == -32099
    assert round_trip("Error", {"code": -32601, "message": "Method not found"}).code == -32601


def test_closed_enums_are_literals_and_reject_unknown_values():
    assert round_trip("PromptResponse", {"stopReason": "end_turn"}).stop_reason == "end_turn"
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(acp.PromptResponse, {"stopReason": "bored"})
    assert caught.value.path == "/stopReason"
    assert "'end_turn'" in caught.value.message


# 6. nullability, defaults, format bounds


def test_absent_null_and_defaults_stay_as_they_came():
    absent = round_trip("InitializeRequest", {"protocolVersion": 1})
    assert absent.client_capabilities is None  # the schema default is documented, not filled in
    explicit = round_trip("InitializeRequest", {"protocolVersion": 1, "clientInfo": None, "_meta": None})
    assert explicit.client_info is None and explicit.meta is None
    caps = round_trip("ClientCapabilities", {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True})
    assert caps.fs.read_text_file is True and caps.terminal is True


def test_tool_call_raw_values_keep_null_apart_from_absent():
    with_null = {"toolCallId": "c", "rawInput": None, "rawOutput": {"a": [1, None]}}
    value = round_trip("ToolCallUpdate", with_null)
    assert value.raw_input is None and value.raw_output == {"a": [1, None]}
    assert "rawInput" not in acp.encode(acp.decode(acp.ToolCallUpdate, {"toolCallId": "c"}))


@pytest.mark.parametrize(("tp", "field", "value"), [
    ("InitializeRequest", "protocolVersion", 65536),
    ("InitializeRequest", "protocolVersion", -1),
    ("UsageUpdate", "used", 2**64),
    ("ReadTextFileRequest", "line", 2**32),
])
def test_format_bounds_are_checked_on_decode(tp, field, value):
    base = {
        "InitializeRequest": {"protocolVersion": 1},
        "UsageUpdate": {"used": 1, "size": 2},
        "ReadTextFileRequest": {"sessionId": "s", "path": "/p"},
    }[tp]
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(getattr(acp, tp), {**base, field: value})
    assert caught.value.path == f"/{field}"
    assert "in [" in caught.value.message


def test_read_text_file_request_and_response():
    request = round_trip("ReadTextFileRequest", {"sessionId": "s", "path": "/a.txt", "line": 10, "limit": 50})
    assert (request.line, request.limit) == (10, 50)
    assert round_trip("ReadTextFileResponse", {"content": "text\n"}).content == "text\n"


# 7. unknown fields are kept


def test_unknown_fields_are_kept_at_every_level():
    message = {
        "sessionId": "s",
        "x-top": {"deep": [1, 2]},
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "x-newer-peer": True,
            "content": {"type": "text", "text": "hi", "x-block": None},
        },
    }
    value = acp.decode(acp.SessionNotification, message)
    assert value.extra == {"x-top": {"deep": [1, 2]}}
    assert value.update.content.extra == {"x-block": None}
    assert acp.encode(value) == message


def test_a_value_built_with_keyword_constructors_is_valid_wire_json():
    note = acp.SessionNotification(
        session_id="s1",
        update=acp.AgentMessageChunk(content=acp.Text(text="hi")),
    )
    wire = note.to_json()
    assert wire == {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                                                   "content": {"type": "text", "text": "hi"}}}
    _validator("SessionNotification").validate(wire)
    json.dumps(wire)
    response = acp.RequestPermissionResponse(outcome=acp.Selected(option_id="allow"))
    _validator("RequestPermissionResponse").validate(response.to_json())
    server = acp.NewSessionRequest(cwd="/p", mcp_servers=[
        acp.McpServerStdio(name="fs", command="srv", args=[], env=[acp.EnvVariable(name="K", value="v")]),
        acp.Http(name="h", url="https://x.test", headers=[]),
    ])
    _validator("NewSessionRequest").validate(server.to_json())
    assert acp.NewSessionRequest.from_json(server.to_json()) == server


def test_decode_accepts_generic_forms():
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "x", "mimeType": "image/png"}]
    assert [type(b) for b in acp.decode(list[acp.ContentBlock], blocks)] == [acp.Text, acp.Image]
    assert acp.decode(acp.SessionId, "s") == "s"
    assert acp.decode(acp.SessionUpdate | None, None) is None
    assert acp.decode(dict[str, acp.ElicitationContentValue], {"a": 1}) == {"a": 1}
    with pytest.raises(acp.DecodeError) as caught:
        acp.decode(list[acp.ContentBlock], [{"type": "text", "text": "a"}, {"type": "text"}])
    assert caught.value.path == "/1/text"


def test_values_are_dataclasses_with_extra_equality_and_repr():
    import dataclasses

    text = acp.Text(text="hi")
    assert dataclasses.is_dataclass(text)
    assert [f.name for f in dataclasses.fields(text)] == ["meta", "annotations", "text"]
    assert text.extra == {} and text.to_json() == {"type": "text", "text": "hi"}
    text.extra["x-later"] = 1
    assert text.to_json() == {"x-later": 1, "type": "text", "text": "hi"}
    assert text == acp.Text(text="hi", extra={"x-later": 1}) != acp.Text(text="hi")
    assert repr(acp.Text(text="hi")) == "Text(annotations=None, meta=None, text='hi')"
    assert acp.decode(acp.Text, {"type": "text", "text": "a", "_meta": None}) == acp.Text(text="a")
    assert acp.Text.from_json({"type": "text", "text": "a"}) == acp.Text(text="a")
    with pytest.raises(acp.DecodeError) as caught:
        acp.Text.from_json({"type": "image", "text": "a"})
    assert caught.value.path == "/type"
