"""A value the schema's x-deserialize-* rules let a peer repair is a warning, an error with --strict."""

from __future__ import annotations

import json

from support import DATA

SCHEMA = DATA / "sdk-schemas" / "v1-schema.unstable.json"


def transcript(update: dict) -> str:
    messages = [
        ("client-to-agent", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        ("agent-to-client", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        ("client-to-agent", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        ("agent-to-client", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}),
        ("agent-to-client", {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}),
    ]
    return "".join(json.dumps({"direction": d, **m}) + "\n" for d, m in messages)


def test_a_repairable_value_is_a_warning_and_strict_makes_it_an_error(cli, tmp_path):
    path = tmp_path / "t.ndjson"
    path.write_text(transcript({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "bogus"}))
    lenient = cli("validate", "--schema", SCHEMA, "--format", "json", path)
    assert lenient.exit_code == 0, lenient.stdout
    problems = json.loads(lenient.stdout)["problems"]
    model = [p for p in problems if p["source"] == "model"]
    assert [(p["severity"], p["kind"], p["pointer"]) for p in model] == [
        ("warning", "repaired", "/params/update/status")
    ]
    strict = cli("validate", "--schema", SCHEMA, "--format", "json", "--strict", path)
    assert strict.exit_code == 1
    assert [p["severity"] for p in json.loads(strict.stdout)["problems"] if p["kind"] == "repaired"] == ["error"]


def test_a_valid_update_is_clean(cli, tmp_path):
    path = tmp_path / "t.ndjson"
    path.write_text(transcript({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}))
    result = cli("validate", "--schema", SCHEMA, "--format", "json", "--strict", path)
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["problems"] == []
