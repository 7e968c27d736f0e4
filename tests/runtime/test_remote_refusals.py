"""A refused WebSocket upgrade ends the handshake as the ASGI spec asks (a denial response, which
says why: 401 for the token, 403 for an Origin), under every ASGI server the app runs in: the
client sees the refusal, and the server logs no error (uvicorn's default implementation logs
``ASGI callable returned without completing handshake.`` for an app that returns without one)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.remote import environment, running
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

#: The servers, each with its own WebSocket implementation.
SERVERS = ["uvicorn", "uvicorn-websockets", "hypercorn", "granian"]
#: Each refusal: the request's headers and Origin, and the status and reason it is answered with
#: (every server here offers the denial response, which says why).
REFUSED = {
    "no-token": ({}, None, 401, b"Unauthorized"),
    "wrong-token": ({"Authorization": "Bearer wrong"}, None, 401, b"Unauthorized"),
    "foreign-origin": ({"Authorization": "Bearer s3cret"}, "http://evil.example", 403, b"Origin not allowed"),
}
ERROR = re.compile(r"error|exception|traceback", re.IGNORECASE)


@pytest.mark.parametrize("server", SERVERS)
def test_a_refused_upgrade_is_closed_without_a_server_error(tmp_path: Path, server: str) -> None:
    log = tmp_path / "server.log"
    with running(server, "acp_bindings.stub_agent:app", env=environment(ACP_TOKEN="s3cret"), log=log) as port:
        url = f"ws://127.0.0.1:{port}/acp"
        for name, (headers, origin, status, reason) in REFUSED.items():
            with pytest.raises(InvalidStatus) as refused:
                ws_connect(url, additional_headers=headers, origin=origin, open_timeout=10)
            assert (refused.value.response.status_code, bytes(refused.value.response.body or b"")) == (status, reason), name
        with ws_connect(url, additional_headers={"Authorization": "Bearer s3cret"}, open_timeout=10) as socket:
            assert socket.response.status_code == 101  # and the right token gets in
    errors = [line for line in log.read_text(errors="replace").splitlines() if ERROR.search(line)]
    assert errors == []
