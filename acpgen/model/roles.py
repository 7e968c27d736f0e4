"""The runtime's view of the method table: one role per side the generated package serves.

A role is what one side of a connection needs: the handler base class for the methods it
handles, the typed proxy for the methods of the other side, and the connection class that
ties them together. Names are decided here, so templates only print them.
"""

from __future__ import annotations

from .naming import import_order
from .spec import Method, Role, Side

_NAMES = {
    Side.AGENT.value: ("Agent", "AgentSideConnection", "client", "ClientProxy"),
    Side.CLIENT.value: ("Client", "ClientSideConnection", "agent", "AgentProxy"),
}
_OTHER = {Side.AGENT.value: Side.CLIENT.value, Side.CLIENT.value: Side.AGENT.value}

_AGENT_STUB = {
    "initialize": ("InitializeRequest", "InitializeResponse"),
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/prompt": ("PromptRequest", "PromptResponse"),
    "session/cancel": ("CancelNotification", None),
    "session/update": ("SessionNotification", None),
    "fs/read_text_file": ("ReadTextFileRequest", "ReadTextFileResponse"),
}
#: The methods (wire name -> params and result type) each stub server is written against. A
#: package gets a side's stub only when its schema has all of them, with these types.
STUB_METHODS: dict[str, dict[str, tuple[str, str | None]]] = {
    Side.AGENT.value: _AGENT_STUB,
    Side.CLIENT.value: {
        **_AGENT_STUB,
        "fs/write_text_file": ("WriteTextFileRequest", "WriteTextFileResponse"),
        "session/request_permission": ("RequestPermissionRequest", "RequestPermissionResponse"),
        "terminal/create": ("CreateTerminalRequest", "CreateTerminalResponse"),
        "terminal/output": ("TerminalOutputRequest", "TerminalOutputResponse"),
        "terminal/wait_for_exit": ("WaitForTerminalExitRequest", "WaitForTerminalExitResponse"),
        "terminal/kill": ("KillTerminalRequest", "KillTerminalResponse"),
        "terminal/release": ("ReleaseTerminalRequest", "ReleaseTerminalResponse"),
    },
}


def served_sides(side: str) -> tuple[str, ...]:
    """The sides a package generated with ``--side`` serves, in a fixed order."""
    return (Side.AGENT.value, Side.CLIENT.value) if side == "both" else (side,)


def build_roles(methods: tuple[Method, ...], side: str) -> tuple[Role, ...]:
    roles = []
    for served in served_sides(side):
        if served not in _NAMES:
            continue  # an unknown --side value; option checking reports it
        base_class, connection_class, peer_attr, proxy_class = _NAMES[served]
        handles = tuple(m for m in methods if m.side == served)
        calls = tuple(m for m in methods if m.side == _OTHER[served])
        types = {m.params_type for m in handles + calls} | {m.result_type for m in handles + calls if m.result_type}
        roles.append(
            Role(
                side=served,
                base_class=base_class,
                connection_class=connection_class,
                peer_side=_OTHER[served],
                peer_attr=peer_attr,
                proxy_class=proxy_class,
                handles=handles,
                calls=calls,
                model_names=import_order(types),
                stub=_has_stub_methods(handles + calls, STUB_METHODS[served]),
            )
        )
    return tuple(roles)


def _has_stub_methods(methods: tuple[Method, ...], needed: dict[str, tuple[str, str | None]]) -> bool:
    table = {m.wire_name: (m.params_type, m.result_type) for m in methods}
    return all(table.get(wire_name) == types for wire_name, types in needed.items())
