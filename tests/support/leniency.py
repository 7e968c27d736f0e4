"""Bad inputs the schema's ``x-deserialize-*`` annotations let a decoder repair: the cases the
leniency tests feed the dataclass flavour, the official TypeScript SDK and the pydantic flavour."""

from __future__ import annotations

from support import DATA

#: The schema the TypeScript SDK's v1 unstable decoders are made from.
SCHEMA = DATA / "sdk-schemas" / "v1-schema.unstable.json"

LOCATION = {"path": "/src/main.py", "line": 3}
#: (type, bad input, what the repaired value encodes to, the pointers repaired)
CASES = [
    (  # default-on-error on an optional field: the bad value becomes absent
        "SessionNotification",
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "bogus"}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t"}},
        ["/update/status"],
    ),
    (  # skip-invalid-items: one bad location is dropped, the good one kept
        "SessionNotification",
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t",
                                      "locations": [LOCATION, {"path": 7}], "title": 5}},
        {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "locations": [LOCATION]}},
        ["/update/locations/1/path", "/update/title"],
    ),
    (  # default-on-null on a required field: null reads as []
        "NewSessionRequest",
        {"cwd": "/work", "mcpServers": None},
        {"cwd": "/work", "mcpServers": []},
        ["/mcpServers"],
    ),
    (  # default-on-error on a required array: not an array at all, so the empty array
        "SessionNotification",
        {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": "soon"}},
        {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": []}},
        ["/update/entries"],
    ),
    (  # a bad _meta (default-on-error) is dropped
        "RequestPermissionRequest",
        {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": [], "_meta": "not an object"},
        {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": []},
        ["/_meta"],
    ),
]
