"""JSON-RPC batches as the package's draft says. The spec's v2 draft at v1.7.0 defines them (its
schema's ``AgentBatchCall`` / ``ClientBatchCall`` and their responses; its ``transports.mdx``,
"JSON-RPC Batch Messages"); the TypeScript SDK's v2 draft and every v1 schema define none, and a
batch gets one ``-32600`` there, as it always has. Real pipes to the stub agent, real sockets to
its app under uvicorn, and our client's ``batch`` over each transport.

The sentences of v1.7.0's ``docs/protocol/v2/transports.mdx`` each test pins:

* "An empty array receives a single `Invalid Request` response (`code: -32600`) with `id:
  null`, not a response array."
* "The receiver **MAY** process batch entries as concurrent tasks" (we do: each request at once).
* "The receiver **SHOULD** respond with an array containing the corresponding Response objects
  after all batch Request objects have been processed."
* "The receiver **MUST NOT** reply to a Notification, including a Notification within a batch."
* "If there are no Response objects to send, such as for an all-notification batch, the receiver
  **MUST NOT** return an empty array and should return nothing."
* "Invalid entries in a non-empty batch produce their own `Invalid Request` responses (`code:
  -32600`) with `id: null`; they do not make the entire batch fail."
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import httpx
import pytest
from support import BINDINGS
from support.remote import running
from support.versions import env_for, stub, v2_package
from websockets.sync.client import connect as ws_connect

from acpgen.model.wire import wire_rules

V17, SDK = "v1.7.0", "sdk"  # the spec's v2 draft at v1.7.0 (batches), the TypeScript SDK's (none)
INIT_V2 = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
           "params": {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}}
INIT_V1 = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def new(request_id: int) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": {"cwd": "/tmp"}}


def note(method: str = "_note") -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": {}}


def stdio(command: list[str], env: dict[str, str], lines: list) -> list:
    """Write ``lines`` to the agent, close its input, and read everything it answers."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(command, input=text, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def v2_stdio(release: str, lines: list) -> list:
    folder, package = v2_package(release)
    return stdio(stub(package, "agent"), env_for(folder), lines)


def invalid_request(answer: dict) -> bool:
    return answer.get("id") is None and answer.get("error", {}).get("code") == -32600


def test_which_drafts_define_batches_and_their_own_version_error():
    from support import CORPUS, DATA

    assert wire_rules(json.loads((CORPUS / "v1.7.0--v2-schema.json").read_text())).batches
    assert not wire_rules(json.loads((DATA / "sdk-schemas" / "v2-schema.json").read_text())).batches
    assert not wire_rules(json.loads((CORPUS / "v1.7.0--v1-schema.json").read_text())).batches
    assert wire_rules(json.loads((DATA / "sdk-schemas" / "v2-schema.json").read_text())).unsupported_version_error == -32022
    assert wire_rules(json.loads((CORPUS / "v1.7.0--v2-schema.json").read_text())).unsupported_version_error is None


def test_a_v1_7_0_package_answers_batches_over_stdio_as_its_transports_doc_says():
    marker = {"jsonrpc": "2.0", "id": 99, "method": "_last"}
    answers = v2_stdio(V17, [
        INIT_V2,
        [new(1), new(2)],  # two requests: one array with both answers
        [note(), note("session/cancel")],  # notifications only: nothing at all
        [],  # empty: one -32600, not an array
        [1, {"foo": 1}, {"jsonrpc": "2.0", "id": 7, "method": "_unknown"}, note()],  # invalid entries
        marker,
    ])
    arrays = [a for a in answers if isinstance(a, list)]
    singles = {json.dumps(a.get("id")): a for a in answers if isinstance(a, dict)}
    assert len(answers) == 5, answers  # initialize, two arrays, the empty batch's error, the marker
    assert set(singles) == {"0", "null", "99"}
    assert invalid_request(singles["null"])
    two, mixed = sorted(arrays, key=len)
    assert sorted(a["id"] for a in two) == [1, 2]
    assert len({a["result"]["sessionId"] for a in two}) == 2
    assert len(mixed) == 3
    assert sum(invalid_request(a) for a in mixed) == 2  # each invalid entry, with id null
    assert [a["error"]["code"] for a in mixed if a.get("id") == 7] == [-32601]  # the batch did not fail


@pytest.mark.parametrize(("package", "init"), [("sdk", INIT_V2), ("v1", INIT_V1)])
def test_where_the_draft_has_no_batches_a_batch_gets_one_invalid_request_as_today(package, init):
    if package == "v1":
        answers = stdio([sys.executable, "-m", "acp_bindings.stub_agent"], env_for(BINDINGS),
                        [init, [new(1), new(2)], [note()], []])
    else:
        answers = v2_stdio(SDK, [init, [new(1), new(2)], [note()], []])
    refused = [a for a in answers if a.get("id") is None]
    assert len(answers) == 4 and len(refused) == 3
    assert all(invalid_request(a) and a["error"]["data"] == {"details": "batches are not supported"} for a in refused)


CONCURRENT = textwrap.dedent("""
    import asyncio, sys
    from {package} import Agent, Client, RequestError
    from {package}.pair import in_memory_pair

    class Waits(Agent):
        def __init__(self):
            self.event = asyncio.Event()
        async def ext_method(self, method, params):
            if method == "_wait":  # answered only once _set has run: entries run at once
                await self.event.wait()
                return {{"waited": True}}
            if method == "_set":
                self.event.set()
                return {{"set": True}}
            raise RequestError.method_not_found(method)

    async def main():
        async with in_memory_pair(Waits(), Client()) as (_, client):
            answers = await asyncio.wait_for(
                client.agent.batch([("_wait", {{}}), ("_set", {{}}), ("_nope", {{}})]), 10)
            print(answers[0], answers[1], type(answers[2]).__name__, answers[2].code)
            try:
                await client.rpc.batch([])
            except ValueError as exc:
                print("empty:", exc)

    asyncio.run(main())
""")


def test_a_batchs_requests_run_at_once_and_the_client_gets_each_answer_in_order():
    folder, package = v2_package(V17)
    done = subprocess.run([sys.executable, "-c", CONCURRENT.format(package=package)], env=env_for(folder),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "{'waited': True} {'set': True} RequestError -32601", "empty: a batch must not be empty"]


def test_a_package_without_batches_refuses_to_send_one():
    folder, package = v2_package(SDK)
    code = CONCURRENT.format(package=package)
    done = subprocess.run([sys.executable, "-c", code], env=env_for(folder), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0 and "this protocol's draft defines no JSON-RPC batches" in done.stderr


@pytest.fixture(scope="module")
def served():
    """The v1.7.0 and the TypeScript SDK's v2 stub agents' apps under uvicorn: release -> port."""
    (ours_folder, ours_package), (sdk_folder, sdk_package) = v2_package(V17), v2_package(SDK)
    with (running("uvicorn", f"{ours_package}.stub_agent:app", env=env_for(ours_folder)) as ours,
          running("uvicorn", f"{sdk_package}.stub_agent:app", env=env_for(sdk_folder)) as sdk):
        yield {V17: ours, SDK: sdk}


def test_a_websocket_message_may_be_a_batch(served):
    with ws_connect(f"ws://127.0.0.1:{served[V17]}/acp") as socket:
        socket.send(json.dumps(INIT_V2))
        assert json.loads(socket.recv(timeout=10))["result"]["protocolVersion"] == 2
        socket.send(json.dumps([note()]))  # nothing comes back for it
        socket.send(json.dumps([new(1), new(2), 3]))
        socket.send(json.dumps([]))
        answers = [json.loads(socket.recv(timeout=10)), json.loads(socket.recv(timeout=10))]
    array = next(a for a in answers if isinstance(a, list))
    assert sorted(json.dumps(a.get("id")) for a in array) == ["1", "2", "null"]
    assert invalid_request(next(a for a in answers if isinstance(a, dict)))
    with ws_connect(f"ws://127.0.0.1:{served[SDK]}/acp") as socket:
        socket.send(json.dumps(INIT_V2))
        socket.recv(timeout=10)
        socket.send(json.dumps([new(1), new(2)]))
        refused = json.loads(socket.recv(timeout=10))
    assert invalid_request(refused) and refused["error"]["data"] == {"details": "batches are not supported"}


def events(response: httpx.Response, count: int) -> list:
    """The first ``count`` events of a Streamable HTTP stream, as JSON."""
    found, data = [], []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            found.append(json.loads("\n".join(data)))
            data = []
            if len(found) == count:
                return found
    return found


def test_a_streamable_http_post_may_carry_a_batch(served):
    url = f"http://127.0.0.1:{served[V17]}/acp"
    with httpx.Client(timeout=10) as http:
        opened = http.post(url, json=INIT_V2)
        assert opened.status_code == 200
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        with http.stream("GET", url, headers={**connection, "Accept": "text/event-stream"}) as stream:
            assert http.post(url, json=[note()], headers=connection).status_code == 202
            assert http.post(url, json=[new(1), new(2), 3], headers=connection).status_code == 202
            assert http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "_last"}, headers=connection).status_code == 202
            first, last = events(stream, 2)  # nothing came for the notification
        assert sorted(json.dumps(a.get("id")) for a in first) == ["1", "2", "null"]
        assert last["id"] == 9
        empty = http.post(url, json=[], headers=connection)
        assert empty.status_code == 400 and invalid_request(empty.json())
        session = first[0]["result"]["sessionId"] if first[0].get("id") == 1 else first[1]["result"]["sessionId"]
        prompt = {"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
                  "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}}
        # a batch is refused as its entry alone would be: a session-scoped one needs Acp-Session-Id
        assert http.post(url, json=[prompt], headers=connection).status_code == 400
    sdk = f"http://127.0.0.1:{served[SDK]}/acp"
    with httpx.Client(timeout=10) as http:
        opened = http.post(sdk, json=INIT_V2)
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        assert http.post(sdk, json=[new(1)], headers=connection).status_code == 501


REMOTE = textwrap.dedent("""
    import asyncio, sys
    from {package} import Client, models
    from {package}.client import connect_agent

    async def main(url):
        async with connect_agent(Client(), url) as conn:
            await conn.agent.initialize(protocol_version=2, info=models.Implementation(name="t", version="1"))
            answers = await asyncio.wait_for(conn.agent.batch(
                [("session/new", {{"cwd": "/tmp"}}), ("_nope", {{}})], notifications=[("_note", {{}})]), 10)
            print(sorted(answers[0]), type(answers[1]).__name__, answers[1].code)

    asyncio.run(main(sys.argv[1]))
""")


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_our_client_sends_a_batch_over_each_remote_profile(served, scheme):
    folder, package = v2_package(V17)
    done = subprocess.run([sys.executable, "-c", REMOTE.format(package=package), f"{scheme}://127.0.0.1:{served[V17]}/acp"],
                          env=env_for(folder), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['configOptions', 'sessionId'] RequestError -32601"]


def test_a_request_may_leave_out_params_that_have_no_required_field_alone_and_in_a_batch():
    """JSON-RPC 2.0: params "MAY be omitted"; session/list's fields are all optional, so its
    params left out are ``{}``, alone and in a batch; session/new's are not (``cwd``): -32602."""
    listing = {"jsonrpc": "2.0", "id": "a", "method": "session/list"}
    answers = v2_stdio(V17, [INIT_V2, listing, [{**listing, "id": "b"}, {**listing, "id": "c", "method": "session/new"}]])
    assert answers[1] == {"jsonrpc": "2.0", "id": "a", "result": {"sessions": []}}
    batch = {answer["id"]: answer for answer in answers[2]}
    assert batch["b"]["result"] == {"sessions": []}
    assert batch["c"]["error"]["code"] == -32602
