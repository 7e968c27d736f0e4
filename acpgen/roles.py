"""The runtime's view of the method table: one role per side the generated package serves.

A role is what one side of a connection needs: the handler base class for the methods it
handles, the typed proxy for the methods of the other side, and the connection class that
ties them together. Names are decided here, so templates only print them.
"""

from __future__ import annotations

from .ir import Method, Role, Side

_NAMES = {
    Side.AGENT.value: ("Agent", "AgentSideConnection", "client", "ClientProxy"),
    Side.CLIENT.value: ("Client", "ClientSideConnection", "agent", "AgentProxy"),
}
_OTHER = {Side.AGENT.value: Side.CLIENT.value, Side.CLIENT.value: Side.AGENT.value}


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
                model_names=tuple(sorted(types, key=lambda n: (n.lower(), n))),  # isort's order
            )
        )
    return tuple(roles)

