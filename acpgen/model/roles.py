"""The runtime's view of the method table: one role per side the generated package serves.

A role is what one side of a connection needs: the handler base class for the methods it
handles, the typed proxy for the methods of the other side, and the connection class that
ties them together. Names are decided here, so templates only print them.

Agent and client call each other. Every other side the method table has (``x-side: proxy``) gets
the same, named after it (``Proxy``, ``ProxySideConnection``, in ``proxy.py``), with the side
itself as the peer: both ends of a proxy-chain link handle and call its methods, so the typed
proxy that calls the peer is its peer (``ProxyPeer``). Those names are recorded in the names lock
(``sides/<side>#<role>``): a regeneration keeps the ones a package has.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..diagnostics import DiagnosticError, error
from .agent_defaults import AgentDefaults
from .names import RUNTIME_NAMES, pascal_case
from .naming import import_order, python_identifier, snake_case
from .spec import KNOWN_SIDES, Method, Role, Side, StubFlows

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


def handling_sides(methods: tuple[Method, ...]) -> tuple[str, ...]:
    """The sides a package can serve: agent and client always, then every other side of the table
    by name (``proxy``). Not ``protocol``: its one method, ``$/cancel_request``, is the runtime's."""
    others = sorted({m.side for m in methods} - {Side.AGENT.value, Side.CLIENT.value, Side.PROTOCOL.value})
    return (Side.AGENT.value, Side.CLIENT.value, *others)


def served_sides(side: str, methods: tuple[Method, ...] = ()) -> tuple[str, ...]:
    """The sides a package generated with ``--side`` serves, in a fixed order."""
    return handling_sides(methods) if side == "both" else (side,)


def build_roles(
    methods: tuple[Method, ...],
    side: str,
    taken: frozenset[str] = frozenset(),
    where: str = "--side",
    flows: StubFlows | None = None,
    defaults: AgentDefaults | None = None,
    locked: Mapping[str, str] | None = None,
) -> tuple[Role, ...]:
    """One role per served side. ``taken``: the type names, which a side's own names must not meet;
    ``where``: where ``side`` came from, for the error; ``flows``: the stubs' flows of a schema
    whose turns end through state updates (ACP v2), whose agent and client get stubs written
    against them rather than against ``STUB_METHODS``; ``defaults``: what the agent's base does by
    default (see ``agent_duties.py``); ``locked``: the names lock, whose names of a side's classes
    (:func:`side_names`) are kept.

    Raises :class:`DiagnosticError` for a ``--side`` the schema does not declare, and for a side
    whose names cannot be made (an x-side named like a module, or whose class names are a type's).
    """
    sides = handling_sides(methods)
    if side != "both" and side not in sides:
        raise DiagnosticError([error(None, f"{where} {side!r} is not one of {', '.join((*sides, 'both'))}")])
    roles = []
    for served in served_sides(side, methods):
        if served in _NAMES:
            base_class, connection_class, peer_attr, proxy_class = _NAMES[served]
            module, peer_side = served, _OTHER[served]
        else:
            module, base_class, connection_class, proxy_class = _other_side_names(served, taken, locked or {})
            peer_attr = "peer"
            peer_side = served  # both ends of a proxy chain's link call proxy/successor on each other
        handles = tuple(m for m in methods if m.side == served)
        calls = tuple(m for m in methods if m.side == peer_side)
        types = {m.params_type for m in handles + calls} | {m.result_type for m in handles + calls if m.result_type}
        if served == Side.AGENT.value and defaults is not None and defaults.initialize is not None:
            types.add(defaults.initialize[2])  # the default initialize names the agent with it
        roles.append(
            Role(
                side=served,
                module=module,
                base_class=base_class,
                connection_class=connection_class,
                peer_side=peer_side,
                peer_attr=peer_attr,
                proxy_class=proxy_class,
                handles=handles,
                calls=calls,
                model_names=import_order(types),
                stub=served in STUB_METHODS
                and (_has_stub_methods(handles + calls, STUB_METHODS[served]) or _has_flows(served, flows)),
                defaults=defaults if served == Side.AGENT.value else None,
            )
        )
    return tuple(roles)


#: The modules every package may have whose name does not start with ``_`` (no side's module
#: does): an x-side that would take one of their names cannot be served. The table of modules
#: (``acpgen/render/modules.py``) has no other (a test holds them together).
FIXED_MODULES = frozenset(
    {"models", "methods", "agent", "client", "pair", "stub_agent", "stub_client", "builders", "session", "inspect",
     "conformance", "versions"}
)


#: What the names lock records of a side beyond agent and client, by the key's part after ``#``.
SIDE_CLASSES = ("handler", "connection", "peer")


def side_key(side: str, what: str) -> str:
    """The names lock's key of one of a side's classes (``what``: one of :data:`SIDE_CLASSES`)."""
    return f"sides/{side}#{what}"


def side_names(roles: tuple[Role, ...]) -> dict[str, str]:
    """What the names lock records of the sides a package serves: their classes' names (agent's and
    client's are fixed; recorded, they tell a lock made before sides' names were recorded)."""
    return {
        side_key(r.side, what): name
        for r in roles
        for what, name in zip(SIDE_CLASSES, (r.base_class, r.connection_class, r.proxy_class))
    }


def _other_side_names(side: str, taken: frozenset[str], locked: Mapping[str, str]) -> tuple[str, str, str, str]:
    """The module, handler base class, connection class and typed proxy of its peer of a side
    beyond agent and client: ``proxy``, ``Proxy``, ``ProxySideConnection``, ``ProxyPeer`` (the peer
    of such a side is the same side), or the names the lock records for them; a lock from before
    the lock recorded them keeps the name the typed proxy had then (``ProxyProxy``)."""
    module = python_identifier(snake_case(side))
    base_class = python_identifier(pascal_case(side) or "Side")
    where = f"x-side {side!r}"
    if module in FIXED_MODULES or module.startswith("_"):
        raise DiagnosticError([error("", f"{where} cannot be served: its module {module}.py is one acpgen writes")])
    # a lock made before the lock recorded sides' names: the typed proxy had the side's name twice
    before = bool(locked) and not any(key.startswith("sides/") for key in locked)
    rules = (base_class, f"{base_class}SideConnection", f"{base_class}Proxy" if before else f"{base_class}Peer")
    handler, connection, peer = (locked.get(side_key(side, what), rule) for what, rule in zip(SIDE_CLASSES, rules))
    clashes = sorted({handler, connection, peer, module} & (taken | RUNTIME_NAMES))
    if clashes and side not in KNOWN_SIDES:  # a known side's names are reserved: no type has them
        raise DiagnosticError([error("", f"{where} cannot be served: {', '.join(clashes)} would be a type's name too")])
    return module, handler, connection, peer


def _has_flows(side: str, flows: StubFlows | None) -> bool:
    """The state-turn stub of ``side`` can run: the client's also answers permission requests."""
    return flows is not None and (side == Side.AGENT.value or flows.permission)


def _has_stub_methods(methods: tuple[Method, ...], needed: dict[str, tuple[str, str | None]]) -> bool:
    table = {m.wire_name: (m.params_type, m.result_type) for m in methods}
    return all(table.get(wire_name) == types for wire_name, types in needed.items())
