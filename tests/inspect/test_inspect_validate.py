"""`acpgen validate` over recorded transcripts: clean as recorded, and each planted fault found.

The transcript is recorded once, by the inspector between the official TypeScript SDK client and
the stub agent. Each fault is planted in a copy; validate must find it once: by the generated
models (``source: model``), and by jsonschema against the schema only where that adds a problem
(a model stops at a value's first problem; jsonschema finds them all).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest
from support import CORPUS, schema_instances
from support.runtime import INTEROP, STUB_AGENT, child_env, make_workspace

from acpgen.pipeline import Options, build_spec

INSPECT = (sys.executable, "-m", "acp_bindings.inspect")
TS_CLIENT = ("node", str(INTEROP / "ts_client.mjs"))
C, A = "client-to-agent", "agent-to-client"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[dict]:
    tmp_path = tmp_path_factory.mktemp("recorded")
    cwd = make_workspace(tmp_path)
    transcript = tmp_path / "transcript.ndjson"
    done = subprocess.run(
        [*TS_CLIENT, str(cwd), *INSPECT, "--transcript", str(transcript), "--", *STUB_AGENT],
        check=False, cwd=cwd, env=child_env(), capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in transcript.read_text().splitlines()]


def write(path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def validate(cli, path, *options: str) -> tuple[int, dict]:
    result = cli("validate", "--format", "json", *options, path)
    return result.exit_code, json.loads(result.stdout)


def first(records: list[dict], method: str, direction: str | None = None) -> dict:
    return next(r for r in records if r["message"].get("method") == method and direction in (None, r["direction"]))


def response_to(records: list[dict], method: str) -> dict:
    request = first(records, method)
    return next(
        r for r in records
        if "method" not in r["message"] and r["message"]["id"] == request["message"]["id"] and r["direction"] != request["direction"]
    )


def _drop_tag(records):
    del first(records, "session/update")["message"]["params"]["update"]["sessionUpdate"]


def _two_wrong_values(records):
    params = first(records, "session/prompt")["message"]["params"]
    params["prompt"], params["sessionId"] = "hello", 7


def _wrong_result(records):
    response_to(records, "session/prompt")["message"]["result"]["stopReason"] = 42


def _unknown_id(records):
    response_to(records, "session/new")["message"]["id"] = 999


def _reused_id(records):
    request = first(records, "fs/read_text_file")
    records.insert(records.index(request) + 1, copy.deepcopy(request))


def _second_response(records):
    response = response_to(records, "session/new")
    records.insert(records.index(response) + 1, copy.deepcopy(response))


def _no_capability(records):
    first(records, "initialize")["message"]["params"]["clientCapabilities"]["fs"]["readTextFile"] = False


def _other_version(records):
    response_to(records, "initialize")["message"]["result"]["protocolVersion"] = 2


def _unknown_session(records):
    first(records, "session/update")["message"]["params"]["sessionId"] = "nobody-made-this"


def _wrong_direction(records):
    first(records, "session/update")["direction"] = C


def _notification_with_id(records):
    first(records, "session/update")["message"]["id"] = 4242


def _unknown_method(records):
    first(records, "session/update")["message"]["method"] = "session/updat"


def _not_jsonrpc(records):
    first(records, "session/new")["message"]["jsonrpc"] = "1.0"


#: fault -> (plant it, the model's (kind, pointer) findings, the pointers jsonschema reports)
FAULTS: dict[str, tuple[Callable[[list[dict]], None], list[tuple[str, str]], list[str]]] = {
    # jsonschema's "not valid under any of the given schemas" at /params/update only restates it
    "update-missing-its-tag": (_drop_tag, [("invalid-params", "/params/update/sessionUpdate")], []),
    "wrong-result-type": (_wrong_result, [("invalid-result", "/result/stopReason")], []),
    # the model stops at the first wrong value; jsonschema adds the second
    "two-wrong-values": (_two_wrong_values, [("invalid-params", "/params/prompt")], ["/params/sessionId"]),
    # the request whose response went to another id, and the copy of a request, go unanswered
    "response-to-unknown-id": (_unknown_id, [("unknown-response", "/id"), ("unanswered", "")], []),
    "reused-id": (_reused_id, [("reused-id", "/id"), ("unanswered", "")], []),
    "second-response": (_second_response, [("duplicate-response", "/id")], []),
    "capability-not-advertised": (_no_capability, [("capability", "/method")], []),
    "another-protocol-version": (_other_version, [("protocol-version", "/result/protocolVersion")], []),
    "unknown-session": (_unknown_session, [("unknown-session", "/params/sessionId")], []),
    "wrong-direction": (_wrong_direction, [("wrong-direction", "/method")], []),
    "notification-with-an-id": (_notification_with_id, [("wrong-kind", "/id")], []),
    "unknown-method": (_unknown_method, [("unknown-method", "/method")], []),
    "not-json-rpc-2": (_not_jsonrpc, [("invalid-message", "/jsonrpc")], []),
}


def test_the_recorded_transcript_is_clean(tmp_path, cli, recorded):
    write(tmp_path / "t.ndjson", recorded)
    status, report = validate(cli, tmp_path / "t.ndjson")
    assert (status, report["problems"], report["errors"]) == (0, [], 0)
    assert report["messages"] == len(recorded)
    methods = report["methods"]
    assert methods["initialize"] == {"messages": 2, "problems": 0}
    assert methods["session/update"]["messages"] == sum(r["message"].get("method") == "session/update" for r in recorded)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_planted_fault_is_found(tmp_path, cli, recorded, fault):
    plant, model, schema = FAULTS[fault]
    records = copy.deepcopy(recorded)
    plant(records)
    write(tmp_path / "t.ndjson", records)
    status, report = validate(cli, tmp_path / "t.ndjson")
    assert status == 1
    assert [(p["kind"], p["pointer"]) for p in report["problems"] if p["source"] == "model"] == model
    assert sorted({p["pointer"] for p in report["problems"] if p["source"] == "schema"}) == schema
    assert report["kinds"] == dict(sorted(Counter([k for k, _ in model] + ["schema"] * len(schema)).items()))
    assert report["errors"] == len([k for k, _ in model if k != "unanswered"]) + len(schema)


def test_the_text_report_names_file_line_and_pointer_and_sums_up(tmp_path, cli, recorded):
    records = copy.deepcopy(recorded)
    _drop_tag(records)
    write(tmp_path / "t.ndjson", records)
    line = 1 + records.index(first(records, "session/update"))
    result = cli("validate", tmp_path / "t.ndjson")
    assert result.exit_code == 1
    out = result.stdout.splitlines()
    assert out[0].startswith(f"t.ndjson:{line}: error: agent-to-client session/update id=- #/params/update/sessionUpdate: ")
    assert out[1] == ""  # reported once: jsonschema's vaguer finding at /params/update is left out
    assert any(row.split() == ["session/update", str(sum(r["message"].get("method") == "session/update" for r in records)), "1"] for row in out)
    assert ["invalid-params", "1"] in [row.split() for row in out]
    assert out[-1] == f"t.ndjson: {len(records)} messages, 1 errors, 0 warnings"


def test_the_other_forms_of_a_transcript(tmp_path, cli, recorded):
    # a direction field inside each message
    write(tmp_path / "inline.ndjson", [{"direction": r["direction"], **r["message"]} for r in recorded])
    assert validate(cli, tmp_path / "inline.ndjson")[1]["problems"] == []
    # plain captures of one direction: the direction given, or read from the methods
    for direction in (C, A):
        plain = [r["message"] for r in recorded if r["direction"] == direction]
        write(tmp_path / "plain.ndjson", plain)
        for options in ((), ("--direction", direction)):
            status, report = validate(cli, tmp_path / "plain.ndjson", *options)
            assert (status, report["problems"], report["messages"]) == (0, [], len(plain))
        # a fault in a plain capture is found all the same
        broken = copy.deepcopy(plain)
        target = next(m for m in broken if m.get("method") in ("session/prompt", "session/update"))
        target["params"]["sessionId"] = 7
        write(tmp_path / "plain.ndjson", broken)
        status, report = validate(cli, tmp_path / "plain.ndjson")
        assert status == 1
        assert ("invalid-params", "/params/sessionId") in [(p["kind"], p["pointer"]) for p in report["problems"]]


def test_bad_input_is_one_line_and_status_2(tmp_path, cli, write_schema):
    cases = {}
    cases["missing file"] = (tmp_path / "nothing.ndjson", "error: cannot read")
    (tmp_path / "latin1.ndjson").write_bytes(b'{"x": "\xe9"}\n')
    cases["not UTF-8"] = (tmp_path / "latin1.ndjson", "error: latin1.ndjson: not UTF-8 text (byte 7)")
    (tmp_path / "way.ndjson").write_text('{"direction": "sideways", "message": {}}\n')
    cases["unknown direction"] = (tmp_path / "way.ndjson", 'error: way.ndjson:1: direction "sideways" is not one of')
    (tmp_path / "responses.ndjson").write_text('{"jsonrpc": "2.0", "id": 1, "result": {}}\n')
    cases["no direction"] = (tmp_path / "responses.ndjson", "error: responses.ndjson:1: a message without a direction")
    for name, (path, start) in cases.items():
        result = cli("validate", path)
        assert result.exit_code == 2, name
        assert result.stderr.startswith(start) and result.stderr.count("\n") == 1, (name, result.stderr)
        assert result.stdout == "", name
    broken = write_schema("{not json")
    result = cli("validate", "--schema", broken, tmp_path / "responses.ndjson")
    assert result.exit_code == 2
    assert result.stderr == f"{broken}:1:2: error: not valid JSON: Expecting property name enclosed in double quotes\n"


@pytest.mark.parametrize(
    "release",
    ["v0.4.7--schema.json", "v0.11.0--schema.unstable.json", "v1.6.0--v2-schema.json", "v1.7.0--v1-schema.unstable.json"],
)
def test_validate_works_on_other_releases(tmp_path, cli, monkeypatch, release):
    """Every method of the release, with params and results built from its own schema: clean;
    one required property taken away: found by the models and by the schema."""
    document = json.loads((CORPUS / release).read_text())
    monkeypatch.setattr(schema_instances, "_document", lambda: document)
    spec, _ = build_spec(Options(schema=CORPUS / release))
    records, next_id = [], 0
    for method in spec.methods:
        if method.side not in ("agent", "client") or method.wire_name == "initialize":
            continue  # without initialize, no capability and no session is judged
        direction = C if method.side == "agent" else A
        message = {"jsonrpc": "2.0", "method": method.wire_name, "params": schema_instances.minimal(method.params_type)}
        if method.is_request:
            message = {"jsonrpc": "2.0", "id": next_id, **message}
        records.append({"direction": direction, "message": message})
        if method.is_request:
            result = schema_instances.minimal(method.result_type) if method.result_type else {}
            records.append({"direction": A if direction == C else C, "message": {"jsonrpc": "2.0", "id": next_id, "result": result}})
            next_id += 1
    write(tmp_path / "t.ndjson", records)
    status, report = validate(cli, tmp_path / "t.ndjson", "--schema", CORPUS / release)
    assert (status, report["problems"]) == (0, [])
    assert len(report["methods"]) > 10
    victim = next(r for r in records if "method" in r["message"] and r["message"]["params"])
    dropped = min(victim["message"]["params"])
    del victim["message"]["params"][dropped]
    write(tmp_path / "t.ndjson", records)
    status, report = validate(cli, tmp_path / "t.ndjson", "--schema", CORPUS / release)
    assert status == 1
    assert [(p["source"], p["kind"]) for p in report["problems"]] == [("model", "invalid-params")]  # once
