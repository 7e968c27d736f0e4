"""The modules of a generated package: one table, a row per module, in the package's order.

A row says where the module's text comes from, which packages have it (the sides they serve, the
stub servers the schema supports, the flavour of the models) and where a package of several
protocol versions keeps it. Writing (:mod:`acpgen.pipeline`), a package of several versions
(:mod:`acpgen.versioned`, :mod:`acpgen.render.relocate`) and the tests read this table and
nothing else; a new module is one new row.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass


class Source(enum.Enum):
    """Where a module's text comes from."""

    TEMPLATE = "template"  # rendered from ``templates/<name>.jinja``: it varies with the schema
    RUNTIME = "runtime"  # ``acpgen/runtime/<name>``, ordinary Python copied behind the header


class Layer(enum.Enum):
    """The runtime's layers, lowest first: a module imports only the modules of its own layer
    before it in the table, and those of lower layers (``tests/test_layers.py``)."""

    CODEC = 1  # decode errors, leniency, the codec
    PYDANTIC = 2  # the pydantic flavour's: pydantic's errors as decode errors, the models' base and decoders
    CONNECTION = 3  # errors, framing, transports, ..., ``_rpc``: the facade the generated modules import
    VERSIONS = 4  # the router of several protocol versions, above the facade
    REMOTE = 5  # the remote transports: who may connect, Streamable HTTP, the ASGI app, the clients
    #: the conformance kits' report (requirements, verdicts and their forms), which imports nothing
    #: of the package: the kits and the stub agent's checking mode print with it
    REPORT = 6
    #: the session state of a version, under its entry module (``session``), beside its version's
    #: own modules (``_session_data``, ``_stub_data``)
    SESSION = 7
    #: the stub servers, on top of all, beside their version's own modules (``client``, ``models``,
    #: ``_stub_data``) and under their entry modules (``stub_client``)
    STUBS = 8
    #: the agent kit (its client, its requirements, its command line), on top of all: it imports the
    #: report, the connection's transports and the remote clients, never a version's own modules
    KIT = 9


@dataclass(frozen=True)
class Module:
    """One module of a generated package."""

    name: str  # "_rpc.py"
    source: Source
    #: The sides that must all be served for a package to have it; () for every package.
    sides: tuple[str, ...] = ()
    #: A package of one side also has it for its test peer (see ``TEST_PEERS``): then the sides
    #: it needs count as served when the package carries them.
    peer: bool = False
    #: A stub server: a package has it only when the schema has the methods each of its sides'
    #: stub is written against (see ``Role.stub``); with no sides, the stub of some side.
    stub: bool = False
    #: Only for the turns of this kind (None: either): ``True``, turns that end through state
    #: updates (ACP v2, ``Spec.stub_flows``); ``False``, turns that end with the prompt's response.
    turns: bool | None = None
    #: In a package of several protocol versions, one copy at the package's root that every
    #: version imports (it imports no version's own modules); otherwise each version has its own.
    shared: bool = False
    layer: Layer | None = None  # a runtime module's layer
    flavour: str | None = None  # only with this flavour of models (``--models``)
    #: The room of the private runtime package it lives in (see ``ROOMS``); None: at the package's
    #: root, beside the public modules.
    room: str | None = None

    @property
    def stem(self) -> str:
        """The module's own name: ``_rpc``."""
        return self.name.removesuffix(".py")

    @property
    def path(self) -> str:
        """Where it is in a package (and its source in ``acpgen/runtime/``), relative to the
        package's root: ``_runtime/connection/_rpc.py``, or ``models.py`` at the root."""
        return self.name if self.room is None else f"{RUNTIME_PACKAGE}/{self.room}/{self.name}"

    @property
    def dotted(self) -> str:
        """The name it is imported by, relative to the package's root: ``_runtime.connection._rpc``."""
        return self.path.removesuffix(".py").replace("/", ".")

    def emitted(
        self, served: Collection[str], carried: Collection[str], stubs: Collection[str], models: str, turns: bool
    ) -> bool:
        """A package serving the sides ``served`` and carrying ``carried`` (its test peer too),
        with the stub servers of ``stubs``, the models of the flavour ``models`` and turns of the
        kind ``turns`` (see :attr:`turns`), has it."""
        have = carried if self.peer else served
        return (
            all(side in have for side in self.sides)
            and (not self.stub or (all(side in stubs for side in self.sides) if self.sides else bool(stubs)))
            and self.flavour in (None, models)
            and self.turns in (None, turns)
        )


#: The private package of a generated package that holds its runtime, in rooms: one subpackage per
#: concept, each with an ``__init__`` saying what it holds and what it may import.
RUNTIME_PACKAGE = "_runtime"


@dataclass(frozen=True)
class Room:
    """A subpackage of the private runtime package: one concept of the runtime."""

    name: str  # the folder: ``connection``
    holds: str  # what it holds, in a few words
    #: The modules of a version at the package's root it may import (``models``, ``agent``): the
    #: rooms a version's own modules are in, beside the version. Every room may import the rooms
    #: before it in ``ROOMS``, and none after it.
    beside: tuple[str, ...] = ()


#: The rooms of the runtime, lowest first: a room's modules import only its own room's and the
#: rooms' before it (``tests/test_layers.py``); the public modules at the root import any.
ROOMS = (
    Room("wire", "JSON text, framing, the JSON-RPC errors and the codecs (both flavours)"),
    Room("tracing", "trace context in _meta, and spans where OpenTelemetry is installed"),
    Room("transports", "the MessageTransport seam, byte streams, memory pipes, stdio and child processes"),
    Room("connection", "the JSON-RPC connection: sending, request tasks, batches, typed routes, the facade _rpc"),
    Room("remote", "remote serving and connecting: the ASGI app, Streamable HTTP, WebSocket, --listen"),
    Room("versions", "the router of several protocol versions"),
    Room("inspector", "the checks of a transcript and the page of a session"),
    Room("session", "the session state a client keeps of its updates", ("_session_data", "_stub_data")),
    Room("kits", "the conformance kits: the agent kit, the client kit (a stub agent's checking mode), their report"),
    Room(
        "stubs",
        "the stub agents and clients, their sessions, sandbox and terminals",
        ("agent", "client", "methods", "models", "_stub_data", "versions"),
    ),
)
#: The rooms by name.
ROOM_BY_NAME = {r.name: r for r in ROOMS}

TEMPLATE, RUNTIME = Source.TEMPLATE, Source.RUNTIME
AGENT, CLIENT, BOTH = ("agent",), ("client",), ("agent", "client")


def _runtime(
    name: str,
    layer: Layer | None = None,
    sides: tuple[str, ...] = (),
    peer: bool = False,
    flavour: str | None = None,
    room: str | None = None,
) -> Module:
    """A shared runtime module."""
    return Module(name, RUNTIME, sides=sides, peer=peer, shared=True, layer=layer, flavour=flavour, room=room)


#: The package, in its order (the order of its files).
MODULES = (
    Module("__init__.py", TEMPLATE),
    _runtime("_decode_errors.py", Layer.CODEC, room="wire"),
    _runtime("_leniency.py", Layer.CODEC, room="wire"),
    _runtime("_codec.py", Layer.CODEC, room="wire"),
    Module("methods.py", TEMPLATE),
    # the pydantic flavour's: pydantic's errors read as DecodeError, the models' base and decoders
    _runtime("_pydantic_errors.py", Layer.PYDANTIC, flavour="pydantic", room="wire"),
    _runtime("_pydantic.py", Layer.PYDANTIC, flavour="pydantic", room="wire"),
    Module("models.py", TEMPLATE),
    # the dataclass flavour's codec: each class's methods and every decoder, which ``models`` wires in
    Module("_models_codec.py", TEMPLATE, flavour="dataclasses"),
    Module("builders.py", TEMPLATE),
    Module("session.py", TEMPLATE),
    _runtime("_errors.py", Layer.CONNECTION, room="wire"),
    _runtime("_framing.py", Layer.CONNECTION, room="wire"),
    _runtime("_tracing.py", Layer.CONNECTION, room="tracing"),  # trace context in _meta, and spans, with OpenTelemetry
    _runtime("_transports.py", Layer.CONNECTION, room="transports"),
    _runtime("_memory.py", Layer.CONNECTION, room="transports"),
    _runtime("_sender.py", Layer.CONNECTION, room="connection"),
    _runtime("_incoming.py", Layer.CONNECTION, room="connection"),
    _runtime("_observing.py", Layer.CONNECTION, room="connection"),  # the observer of a connection's messages
    _runtime("_batches.py", Layer.CONNECTION, room="connection"),  # sending a batch, answering one
    _runtime("_fast_reader.py", Layer.CONNECTION, room="connection"),  # reading with msgspec or orjson, lines at once
    _runtime("_connection.py", Layer.CONNECTION, room="connection"),
    _runtime("_typed.py", Layer.CONNECTION, room="connection"),
    _runtime("_process.py", Layer.CONNECTION, room="transports"),
    _runtime("_rpc.py", Layer.CONNECTION, room="connection"),
    # the agent side's router of versions, and the client's ``connect_versions``
    _runtime("_versions.py", Layer.VERSIONS, AGENT, peer=True, room="versions"),
    Module("agent.py", TEMPLATE, AGENT, peer=True),
    Module("client.py", TEMPLATE, CLIENT, peer=True),
    Module("pair.py", RUNTIME, BOTH, peer=True),  # imports a version's agent and client
    # what the stubs take from the schema: what a draft whose turns end through state updates names
    # differently, for its stubs and its session state; the features a v1 stub agent serves
    Module("_stub_data.py", TEMPLATE),
    # what the session state of a draft whose turns end with the prompt's response takes from its
    # schema: the variants it folds, the wire names an update replaces, its types
    Module("_session_data.py", TEMPLATE, turns=False),
    Module("stub_agent.py", TEMPLATE, AGENT, peer=True, stub=True),
    Module("stub_client.py", TEMPLATE, CLIENT, peer=True, stub=True),
    _runtime("_checks.py", sides=BOTH, room="inspector"),
    _runtime("_session_page.py", sides=BOTH, room="inspector"),
    Module("inspect.py", RUNTIME, BOTH),  # imports a version's models
    _runtime("_guard.py", Layer.REMOTE, AGENT, peer=True, room="remote"),
    _runtime("_http_connection.py", Layer.REMOTE, AGENT, peer=True, room="remote"),
    _runtime("_asgi_messages.py", Layer.REMOTE, AGENT, peer=True, room="remote"),  # a request's ASGI events and responses
    _runtime("_event_stream.py", Layer.REMOTE, AGENT, peer=True, room="remote"),  # a GET's server-sent events
    _runtime("_asgi.py", Layer.REMOTE, AGENT, peer=True, room="remote"),
    _runtime("_remote.py", Layer.REMOTE, CLIENT, peer=True, room="remote"),
    # the public face of several versions on one connection: the router, its ASGI app, the
    # client's connect (``serve_versions``, ``asgi_app``, ``spawn_versions``, ...)
    _runtime("versions.py", Layer.REMOTE, BOTH, peer=True),
    # the conformance kits' report: every package with a stub server has it
    Module("_kit_report.py", RUNTIME, stub=True, shared=True, layer=Layer.REPORT, room="kits"),
    # the session state and the tool-call tracker of a draft whose turns end with the prompt's
    # response, which ``session`` runs
    Module("_session_state.py", RUNTIME, layer=Layer.SESSION, turns=False, room="session"),
    # the session state of a draft whose turns end through state updates, which ``session`` runs
    Module("_session_turns.py", RUNTIME, layer=Layer.SESSION, turns=True, room="session"),
    # the stub servers' runtime, which their entry modules (``stub_agent``, ``stub_client``) run:
    # the network, the echo, the stub agents' sessions, file access confined to a folder and
    # terminals (shared); the stub agents and clients (a version's own)
    Module("_listen.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="remote"),
    Module("_echo.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="stubs"),
    Module("_everything.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="stubs"),
    Module("_client_rules.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="kits"),
    Module("_client_kit.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="kits"),
    Module("_checking.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="kits"),
    Module("_stub_sessions.py", RUNTIME, AGENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="stubs"),
    Module("_stub_agent.py", RUNTIME, AGENT, peer=True, stub=True, layer=Layer.STUBS, turns=False, room="stubs"),
    Module("_turns_offers.py", RUNTIME, AGENT, peer=True, stub=True, layer=Layer.STUBS, turns=True, room="stubs"),
    Module("_turns_agent.py", RUNTIME, AGENT, peer=True, stub=True, layer=Layer.STUBS, turns=True, room="stubs"),
    # what the stub clients' command lines share: the parser's head, the exit status of a turn
    Module("_client_cli.py", RUNTIME, CLIENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, room="stubs"),
    Module("_sandbox.py", RUNTIME, CLIENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, turns=False, room="stubs"),
    Module("_terminal.py", RUNTIME, CLIENT, peer=True, stub=True, shared=True, layer=Layer.STUBS, turns=False, room="stubs"),
    Module("_stub_client.py", RUNTIME, CLIENT, peer=True, stub=True, layer=Layer.STUBS, turns=False, room="stubs"),
    Module("_turns_client.py", RUNTIME, CLIENT, peer=True, stub=True, layer=Layer.STUBS, turns=True, room="stubs"),
    # the agent kit: a raw JSON-RPC client, the requirements and their checks, the command line
    # (shared), and its entry module, which reads the version's method table and stub data
    Module("_kit_peer.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("_kit_agent.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("_kit_features.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("_kit_wire.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("_kit_checks.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("_kit_cli.py", RUNTIME, stub=True, shared=True, layer=Layer.KIT, room="kits"),
    Module("conformance.py", RUNTIME, stub=True),
)
#: The rows by module name.
BY_NAME = {m.name: m for m in MODULES}
#: The rows by path in a package.
BY_PATH = {m.path: m for m in MODULES}
assert len(BY_NAME) == len(BY_PATH) == len(MODULES), "two rows of one module"
assert all(m.room is None or (m.room in ROOM_BY_NAME and m.source is RUNTIME) for m in MODULES), "a room no ROOMS row names"


def room_inits(paths: Collection[str]) -> tuple[str, ...]:
    """The ``__init__.py`` of the private runtime package and of each room the modules at
    ``paths`` (relative to a package's root) are in, in the order of ``ROOMS``."""
    rooms = {path.split("/")[1] for path in paths if path.startswith(f"{RUNTIME_PACKAGE}/") and path.count("/") == 2}
    if not rooms:
        return ()
    return (f"{RUNTIME_PACKAGE}/__init__.py", *(f"{RUNTIME_PACKAGE}/{r.name}/__init__.py" for r in ROOMS if r.name in rooms))
#: The modules a module wires in at import, which a render limited to it (``only``) makes too:
#: the dataclass flavour's ``models`` imports its codec.
COMPANIONS = {"models.py": ("_models_codec.py",)}


def module_names(
    *, source: Source | None = None, layer: Layer | None = None, shared: bool | None = None
) -> tuple[str, ...]:
    """The names of the modules with the given source, layer and sharing (None: any), in order."""
    return tuple(
        m.name
        for m in MODULES
        if source in (None, m.source) and layer in (None, m.layer) and shared in (None, m.shared)
    )


#: What a package for one side carries of the other (its test peer), so that it can drive itself
#: end to end: an agent package has the client module, ``in_memory_pair`` and the stub client; a
#: client package the agent module, ``in_memory_pair`` and the stub agent. They are not exported
#: from the package root (``from <package>.client import Client``).
TEST_PEERS = {"agent": "client", "client": "agent"}

#: The template of the module of each side beyond agent and client (``proxy.py``), given its ``role``.
OTHER_SIDE_TEMPLATE = "side.py.jinja"
