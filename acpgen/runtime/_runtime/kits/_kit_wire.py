"""The agent kit's checks of the JSON-RPC envelope, of extensibility and of the transport.

A bad line, a request that is not one, an unknown method, params of the wrong type, ids of each
type, an unknown notification; extension methods and ``_meta``; and, on stdio, nothing but
JSON-RPC on stdout and an exit once stdin ends (the last checks: they close the connection).
"""

from __future__ import annotations

import json

from ._kit_agent import (
    JSONRPC,
    STOP_REASONS,
    Check,
    Kit,
    NotApplicable,
    cites,
    error_code,
    no_stray_answer_so_far,
    no_stray_answers,
    still_serves,
)
from ._kit_peer import Broken, quote

__all__ = ["CLOSING", "ENVELOPE"]


# -- the JSON-RPC envelope ----------------------------------------------------------------------------


async def parse_error(kit: Kit) -> None:
    peer = await kit.live()
    if not peer.link.raw:
        raise NotApplicable(
            "this transport carries only JSON (Streamable HTTP answers a bad body itself)"
        )
    start = len(peer.messages)
    await peer.send_bytes(b'{"jsonrpc": "2.0", "id": ')
    # a request after it: once it is answered, the bad line was read (and its answer is due)
    later = await peer.request("session/new", kit.session_params())
    answer = await peer.wait_for(
        lambda m: "method" not in m and m.get("id") is None, start, timeout=1.0
    )
    if answer is None or error_code(answer) != -32700:
        raise Broken(
            f"a line that is not JSON was answered {quote(answer) if answer else 'nothing'}, not -32700"
        )
    if not isinstance(later.get("result"), dict):
        kit.refused("session/new", later)  # refused from the first: it never served one
        raise Broken(
            f"after a line that is not JSON the agent no longer serves: session/new answered {quote(later)}"
        )


async def invalid_request(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    await peer.send(peer.asking(42, request_id="kit-bad-request"))  # a method that is a number
    # JSON-RPC 2.0 answers an invalid Request with the id null when it cannot read the id
    answer = await peer.response(
        "kit-bad-request", "a request whose method is a number", unread_from=start
    )
    if error_code(answer) != -32600:
        raise Broken(f"a request whose method is a number was answered {quote(answer)}, not -32600")
    await still_serves(kit, "an invalid request")


async def method_not_found(kit: Kit) -> None:
    answer = await (await kit.live()).request("kit/no_such_method", {})
    if error_code(answer) is None:
        raise Broken(
            f"a method the protocol does not have was answered {quote(answer)}, not an error"
        )


async def invalid_params(kit: Kit) -> None:
    answer = await (await kit.live()).request("session/new", {"cwd": 42, "mcpServers": "none"})
    if error_code(answer) != -32602:
        raise Broken(f"session/new with a number for cwd was answered {quote(answer)}, not -32602")


async def ids_echoed(kit: Kit) -> None:
    no_stray_answer_so_far(kit)  # an id mangled may have left no connection to test on
    peer = await kit.live()
    start = len(peer.messages)
    for request_id in (7, "echo-7", 2**40):
        answer = await peer.request("session/new", kit.session_params(), request_id=request_id)
        if "id" not in answer or json.dumps(answer["id"]) != json.dumps(request_id):
            raise Broken(f"the request of id {json.dumps(request_id)} was answered {quote(answer)}")
    no_stray_answers(peer, start)


async def notification_no_reply(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    await peer.notify("kit/no_such_notification", {})
    await still_serves(kit, "an unknown notification")
    no_stray_answers(peer, start)


# -- extensibility ---------------------------------------------------------------------------------------


async def extension_answered(kit: Kit) -> None:
    answer = await (await kit.live()).request("_conformance/ping", {"asked": True})
    if "result" not in answer and "error" not in answer:
        raise Broken(f"an extension request it does not know was answered {quote(answer)}")


async def extension_request(kit: Kit) -> None:
    try:
        answer = await (await kit.live()).request("_conformance/ping", {"asked": True})
    except Broken as exc:  # not answered at all: extensibility.unknown-request's to fail
        raise NotApplicable(str(exc)) from None
    if error_code(answer) != -32601:
        raise Broken(
            f"an extension request it does not know was answered {quote(answer)}, not -32601"
        )


async def extension_notification(kit: Kit) -> None:
    peer = await kit.live()
    start = len(peer.messages)
    await peer.notify("_conformance/note", {"noted": True})
    await still_serves(kit, "an unknown extension notification")
    no_stray_answers(peer, start)


async def meta_accepted(kit: Kit) -> None:
    meta = {
        "traceparent": "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01",
        "example.com/flag": True,
    }
    session_id = await kit.new_session(_meta=meta)
    params = kit.prompt(session_id, "hello meta")
    params["_meta"] = meta
    params["prompt"][0]["_meta"] = {"example.com/block": 1}
    end = await kit.turn(session_id, prompt=params)
    if end.get("stopReason") not in STOP_REASONS:
        raise Broken(f"a prompt with _meta ended with {quote(end)}")


# -- the transport -------------------------------------------------------------------------------------


async def stdout_hygiene(kit: Kit) -> None:
    if not any(peer.link.stdio for peer in kit.peers):
        raise NotApplicable("the agent is remote: there is no stdout to read")
    if not any(peer.lines for peer in kit.peers):
        raise NotApplicable("the agent wrote nothing on stdout")
    for peer in kit.peers:
        if not peer.ended:
            await peer.close()
        for number, line in enumerate(peer.lines, 1):
            try:
                message = json.loads(line)
            except ValueError:
                raise Broken(f"stdout line {number} is not JSON: {quote(line)}") from None
            if (
                not isinstance(message, dict)
                or message.get("jsonrpc") != "2.0"
                or not ("method" in message or ("result" in message) != ("error" in message))
            ):
                raise Broken(f"stdout line {number} is not a JSON-RPC 2.0 message: {quote(line)}")


async def shutdown(kit: Kit) -> None:
    peer = await kit.live()
    if not peer.link.stdio:
        raise NotApplicable("the agent is remote: there is no stdin to close")
    grace = min(5.0, peer.patience)
    status = await peer.close(grace)
    if status is None:
        raise Broken(f"the agent did not exit within {grace:g} s of its stdin's end")


#: The sentences of JSON-RPC 2.0 the envelope's requirements rest on; its server is the peer that
#: receives a request, so its rules bind either peer.
_RESPONSE = f"{JSONRPC}#response_object"
#: The lines a client never writes (it writes nothing but valid ACP messages on the agent's stdin):
#: what an agent does with one is advice.
_NEVER_SENT = "the client writes nothing on the agent's stdin but valid ACP messages"

ENVELOPE = (
    Check(
        "jsonrpc.ids-echoed",
        cites(
            _RESPONSE,
            "either",
            "MUST",
            "the server's response carries the id of the request it answers",
        ),
        "a response carries its request's id, of the same type, once",
        ids_echoed,
    ),
    Check(
        "jsonrpc.method-not-found",
        cites(
            _RESPONSE,
            "either",
            "MUST",
            "the server answers every request with a response, an error where the call failed "
            "(a method that does not exist is an error of JSON-RPC 2.0's)",
        ),
        "a request for a method it does not have is answered with an error, not a result",
        method_not_found,
    ),
    Check(
        "jsonrpc.invalid-params",
        cites(
            f"{JSONRPC}#error_object",
            "either",
            "",
            "JSON-RPC 2.0 names the code -32602 for invalid params; no keyword asks a server to "
            "check a param's type",
        ),
        "params of the wrong type (a number for cwd) are answered -32602",
        invalid_params,
    ),
    Check(
        "jsonrpc.invalid-request",
        cites("transports#stdio", "client", "MUST NOT", _NEVER_SENT),
        "a request whose method is a number (no valid Request object) is answered -32600",
        invalid_request,
    ),
    Check(
        "jsonrpc.notification-no-reply",
        cites(
            f"{JSONRPC}#notification",
            "either",
            "MUST NOT",
            "the server replies to no notification",
        ),
        "a notification, even an unknown one, gets no reply",
        notification_no_reply,
    ),
    Check(
        "jsonrpc.parse-error",
        cites("transports#stdio", "client", "MUST NOT", _NEVER_SENT),
        "a line that is not JSON is answered -32700 (id null), and the agent serves on",
        parse_error,
    ),
    Check(
        "extensibility.meta",
        cites(
            "extensibility#the-_meta-field",
            "either",
            "",
            "every type of the protocol has a _meta field (no keyword asks a peer to accept it)",
        ),
        "_meta in a request's params and in a content block is accepted",
        meta_accepted,
    ),
    Check(
        "extensibility.unknown-request",
        cites(
            "extensibility#custom-requests",
            "either",
            "MUST",
            "the receiver of a custom request answers it, with its id",
        ),
        "an extension request it does not know is answered (a response with its id)",
        extension_answered,
    ),
    Check(
        "extensibility.method-not-found",
        cites(
            "extensibility#custom-requests",
            "either",
            "",
            'a custom request the receiver does not know "should" (lower case: no keyword of '
            "RFC 2119) be answered Method not found",
        ),
        "an extension request it does not know is answered -32601",
        extension_request,
    ),
    Check(
        "extensibility.unknown-notification",
        cites(
            "extensibility#custom-notifications",
            "either",
            "SHOULD",
            "a peer ignores the custom notifications it does not know",
        ),
        "an extension notification it does not know is ignored",
        extension_notification,
    ),
)
CLOSING = (
    Check(
        "transports.shutdown",
        cites(
            "transports#stdio",
            "agent",
            "",
            "the agent reads stdin and writes stdout; no keyword asks it to exit when stdin ends",
        ),
        "the agent exits once its stdin ends",
        shutdown,
        closing=True,
    ),
    Check(
        "transports.stdout-hygiene",
        cites(
            "transports#stdio",
            "agent",
            "MUST NOT",
            "the agent writes nothing on stdout but valid ACP messages",
        ),
        "the agent writes nothing on stdout but JSON-RPC 2.0 messages, one a line",
        stdout_hygiene,
        closing=True,
    ),
)
