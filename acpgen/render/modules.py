"""The modules of a generated package: which there are, in what order, which a side needs, and
which are runtime source copied as it is rather than rendered from a template."""

from __future__ import annotations

#: The generated package: one template per module, named ``<module>.jinja``.
OUTPUT_MODULES = (
    "__init__.py",
    "_decode_errors.py",
    "_leniency.py",
    "_codec.py",
    "methods.py",
    "models.py",
    "builders.py",
    "session.py",
    # the connection runtime, in its layers (lower first), and the facade the other modules import
    "_errors.py",
    "_framing.py",
    "_transports.py",
    "_memory.py",
    "_sender.py",
    "_incoming.py",
    "_connection.py",
    "_typed.py",
    "_process.py",
    "_rpc.py",
    "_versions.py",
    "agent.py",
    "client.py",
    "pair.py",
    "stub_agent.py",
    "stub_client.py",
    "_checks.py",
    "_session_page.py",
    "inspect.py",
    "_guard.py",
    "_http_connection.py",
    "_asgi.py",
    "_remote.py",
)

#: Modules only some packages need: the sides that must all be served for the module to be emitted.
#: A module not listed here is emitted for every ``--side``.
MODULE_SIDES = {
    "agent.py": ("agent",),
    "_versions.py": ("agent",),
    "stub_agent.py": ("agent",),
    "client.py": ("client",),
    "stub_client.py": ("client",),
    "pair.py": ("agent", "client"),
    "_guard.py": ("agent",),
    "_http_connection.py": ("agent",),
    "_asgi.py": ("agent",),
    "_remote.py": ("client",),
    "_checks.py": ("agent", "client"),
    "_session_page.py": ("agent", "client"),
    "inspect.py": ("agent", "client"),
}
#: What a package for one side carries of the other (its test peer), so that it can drive itself
#: end to end: an agent package has the client module, ``in_memory_pair`` and the stub client; a
#: client package the agent module, ``in_memory_pair`` and the stub agent. They are not exported
#: from the package root (``from <package>.client import Client``).
TEST_PEERS = {"agent": "client", "client": "agent"}
#: The remote transports, in their layers: who may connect, a Streamable HTTP connection, the ASGI
#: app serving both profiles (agent side), and the WebSocket and HTTP clients (client side).
REMOTE_MODULES = ("_guard.py", "_http_connection.py", "_asgi.py", "_remote.py")
#: The modules a package carries for its test peer too (see ``TEST_PEERS``); ``_versions`` is the
#: agent side's router and the client's ``connect_versions``.
PEER_MODULES = frozenset(
    {"agent.py", "client.py", "pair.py", "stub_agent.py", "stub_client.py", "_versions.py", *REMOTE_MODULES}
)

#: The template of the module of each side beyond agent and client (``proxy.py``), given its ``role``.
OTHER_SIDE_TEMPLATE = "side.py.jinja"

#: The stub servers, each emitted only when the schema has the methods it is written against.
STUB_MODULES = {"stub_agent.py": "agent", "stub_client.py": "client"}

#: Modules with no schema-dependent text: ordinary source files in ``acpgen/runtime/``, copied
#: into the package behind the header. A user's template of the same name (``_rpc.py.jinja``)
#: still overrides one.
CONNECTION_MODULES = (
    "_errors.py", "_framing.py", "_transports.py", "_memory.py", "_sender.py", "_incoming.py",
    "_connection.py", "_typed.py", "_process.py", "_rpc.py",
)
CODEC_MODULES = ("_decode_errors.py", "_leniency.py", "_codec.py")
RUNTIME_MODULES = frozenset(
    {
        *CODEC_MODULES,
        *CONNECTION_MODULES,
        "_versions.py",
        "pair.py",
        "_checks.py",
        "_session_page.py",
        "inspect.py",
        *REMOTE_MODULES,
    }
)
#: The runtime modules that import a version's own modules (``agent``, ``models``, ...): a package
#: of several protocol versions has them in each version's subpackage. Every other runtime module
#: is shared: the package has one copy, at its root (see :mod:`acpgen.render.relocate`).
PER_VERSION_RUNTIME = frozenset({"pair.py", "inspect.py"})
SHARED_RUNTIME = RUNTIME_MODULES - PER_VERSION_RUNTIME
