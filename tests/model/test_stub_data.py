"""What a v2 draft's stubs read from its schema (``StubFlows.data``, printed as ``_stub_data.py``):
the draft's names and differences, as the model finds them, for the first v2 draft and the
TypeScript SDK's."""

from __future__ import annotations

import pytest
from support import CORPUS, DATA

from acpgen.pipeline import Options, build_spec


def data_of(schema, **options) -> dict[str, object]:
    flows = build_spec(Options(schema=schema, **options))[0].stub_flows
    assert flows is not None
    return {v.name: v.type_name or v.value for v in flows.data}


@pytest.mark.parametrize(
    ("schema", "options", "expected"),
    [
        (CORPUS / "v0.13.8--v2-schema.json", {}, {
            "UpdateParams": "SessionNotification", "REQUEST_INFO": "clientInfo", "RESPONSE_INFO": "agentInfo",
            "MCP_SERVERS_REQUIRED": True, "PROMPT_MESSAGE_ID": False, "PERMISSION_TITLE": False,
            "LOGIN": "authenticate", "LOGIN_HANDLER": "authenticate", "LOGIN_PARAMS": "AuthenticateRequest",
            "LOGIN_ID": "id", "LOGOUT": "logout", "LOGOUT_HANDLER": "logout"}),
        (DATA / "sdk-schemas" / "v2-schema.json", {"protocol_version": 2}, {
            "UpdateParams": "UpdateSessionNotification", "REQUEST_INFO": "info", "RESPONSE_INFO": "info",
            "MCP_SERVERS_REQUIRED": False, "PROMPT_MESSAGE_ID": True, "PERMISSION_TITLE": True,
            "LOGIN": "auth/login", "LOGIN_HANDLER": "auth_login", "LOGIN_PARAMS": "LoginAuthRequest",
            "LOGIN_ID": "methodId", "LOGOUT": "auth/logout", "LOGOUT_HANDLER": "auth_logout"}),
    ],
)
def test_the_data_names_what_each_draft_names_differently(schema, options, expected):
    data = data_of(schema, **options)
    assert {name: data[name] for name in expected} == expected
    assert data["PERMISSION"] is True and data["PERMISSION_PARAMS"] == "RequestPermissionRequest"


def _values(spec_data) -> dict[str, object]:
    return {v.name: dict(v.entries) if v.entries is not None else v.type_name or v.value for v in spec_data}


@pytest.mark.parametrize(
    ("schema", "options", "expected"),
    [
        (CORPUS / "v0.13.8--v2-schema.json", {}, {
            "load": ["session", "load"], "list": ["session", "list"], "resume": ["session", "resume"],
            "close": ["session", "close"], "delete": ["session", "delete"],
            "additional-directories": ["session", "additionalDirectories"]}),
        (DATA / "sdk-schemas" / "v2-schema.json", {"protocol_version": 2}, {
            "list": ["session"], "resume": ["session"], "close": ["session"], "delete": ["session", "delete"],
            "additional-directories": ["session", "additionalDirectories"]}),
    ],
)
def test_a_v2_drafts_session_features_are_advertised_by_their_own_capability_or_by_session_itself(
        schema, options, expected):
    data = _values(build_spec(Options(schema=schema, **options))[0].stub_data)
    assert data["SESSION_FEATURES"] == expected


@pytest.mark.parametrize(
    ("schema", "features", "advertised", "flags"),
    [
        (CORPUS / "v0.2.0--schema.json", {"load": "session/load"}, {"load": ["loadSession"]}, ["load"]),
        (CORPUS / "v0.4.1--schema.json", {"load": "session/load", "modes": "session/set_mode"},
         {"load": ["loadSession"]}, ["load"]),
        (CORPUS / "v0.13.6--schema.json", {
            "load": "session/load", "resume": "session/resume", "list": "session/list", "close": "session/close",
            "delete": "session/delete", "additional-directories": "", "modes": "session/set_mode",
            "config-options": "session/set_config_option", "logout": "logout"}, {
            "load": ["loadSession"], "resume": ["sessionCapabilities", "resume"],
            "list": ["sessionCapabilities", "list"], "close": ["sessionCapabilities", "close"],
            "delete": ["sessionCapabilities", "delete"],
            "additional-directories": ["sessionCapabilities", "additionalDirectories"],
            "logout": ["auth", "logout"]}, ["load"]),
    ],
)
def test_a_v1_schema_gives_its_stub_agent_the_features_it_defines(schema, features, advertised, flags):
    """Each feature where the schema has its request, the capability that advertises it and the
    field of session/new's answer that offers it: v0.2.0 offers modes but has no session/set_mode."""
    spec = build_spec(Options(schema=schema))[0]
    assert spec.stub_flows is None
    data = _values(spec.stub_data)
    assert data["FEATURES"] == features and data["ADVERTISED"] == advertised and data["FLAGS"] == flags
    assert data["AUTH"] is True
