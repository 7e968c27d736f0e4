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
