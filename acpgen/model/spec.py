"""The intermediate representation: plain frozen data that templates render.

Everything here is immutable, ordered and free of raw schema dicts, so output order comes
from the data and two runs over the same schema build equal values.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import builders, calls, session
from .agent_defaults import AgentDefaults
from .classes import ClassDef
from .decisions import ByKind, Dispatch, Leaf, TryEach
from .literals import py_literal
from .naming import import_order, with_article
from .typedefs import DefKind, TypeDef, type_aliases, type_classes, type_helpers
from .types import ListOf, Ref, TypeExpr
from .wire import NO_BATCHES, WireRules


class Side(str, enum.Enum):
    """The side that handles a method. ``x-side`` values acpgen knows."""

    AGENT = "agent"
    CLIENT = "client"
    PROTOCOL = "protocol"
    PROXY = "proxy"  # proxy chains: proxy/initialize, proxy/successor (newer unstable schemas)


#: ``x-side: both`` expands into one entry per side.
BOTH = "both"
KNOWN_SIDES = frozenset(s.value for s in Side)


class Kind(str, enum.Enum):
    REQUEST = "request"
    NOTIFICATION = "notification"


@dataclass(frozen=True)
class Method:
    """One method of the protocol as one side handles it."""

    wire_name: str  # "session/prompt"
    id: str  # "session_prompt": the upstream meta.json id (the same for a request and a notification)
    py_name: str  # "session_prompt": the handler's (and proxy method's) name, unique per side
    side: str  # a Side value, or an x-side value acpgen does not know (kept, with a warning)
    kind: Kind
    params_type: str  # Python name of the params type (its $def name, made a usable class name)
    result_type: str | None  # Python name of the result type; None for notifications
    unstable: bool
    summary: str  # one line from the schema's description
    pointer: str  # JSON pointer of the params type

    @property
    def is_request(self) -> bool:
        return self.kind is Kind.REQUEST

    @property
    def returns(self) -> str:
        """What its handler and proxy method return: the result type, ``Any`` (the plain JSON) for
        a request whose result the schema leaves untyped, ``None`` for a notification."""
        if not self.is_request:
            return "None"
        return self.result_type or "Any"

    def as_json(self) -> dict[str, object]:
        """The documented JSON form used by ``acpgen methods --format json``."""
        return {
            "method": self.wire_name,
            "id": self.id,
            "py_name": self.py_name,
            "side": self.side,
            "kind": self.kind.value,
            "params": self.params_type,
            "result": self.result_type,
            "unstable": self.unstable,
        }


#: Names the generated handler bases and proxies use for themselves.
HANDLER_RESERVED = frozenset({"agent", "client", "peer", "on_connect", "ext_method", "ext_notification"})


@dataclass(frozen=True)
class Role:
    """One side as the generated runtime serves it (see ``roles.py``)."""

    side: str  # "agent": the side whose methods the base class handles
    module: str  # "agent": the module (agent.py) and the prefix of its routes (AGENT_ROUTES)
    base_class: str  # "Agent"
    connection_class: str  # "AgentSideConnection"
    peer_side: str  # "client"
    peer_attr: str  # "client": the proxy's attribute on the connection and the base class
    proxy_class: str  # "ClientProxy": calls the peer's methods
    handles: tuple[Method, ...]  # methods this side handles
    calls: tuple[Method, ...]  # methods of the peer, called through the proxy
    model_names: tuple[str, ...]  # params and result types of both, sorted
    stub: bool = False  # the schema has every method the side's stub server is written against
    defaults: AgentDefaults | None = None  # the agent's: what its base does by default

    @property
    def exports(self) -> tuple[str, ...]:
        """The side module's classes, in the order isort and ruff sort them."""
        return import_order((self.base_class, self.connection_class, self.proxy_class))

    @property
    def doc(self) -> str:
        """The handler base's docstring."""
        if self.peer_side == self.side:
            what = f"Handles the ``{self.side}`` methods (``x-side: {self.side}``), called by the peer."
            peer = "peer"
        else:
            what = f"Handles the methods {with_article(self.peer_side)} calls on {with_article(self.side)}."
            peer = self.peer_side
        return (
            f"{what}\n\nSubclass it and override the methods you support. A request whose method is not "
            "overridden is answered with -32601 (method not found); a notification nobody handles is ignored "
            "(logged at debug level). Raise :class:`RequestError` to answer with your own error code. Call the "
            f"{peer} through ``self.{self.peer_attr}`` once connected."
            + (self.defaults.doc if self.defaults is not None else "")
        )


@dataclass(frozen=True)
class LoginFlow:
    """How the v2 stubs log in. The client, when ``session/new`` answers -32000 (authentication
    required), sends ``method`` with the ``methodId`` of an advertised ``authMethods`` entry whose
    ``tag`` field is ``login_type``; the agent, given ``--auth-method ID``, advertises such entries
    and requires that login (``logout`` undoes it)."""

    method: str  # the login request's wire name: "auth/login", or "authenticate" in earlier drafts
    id_field: str  # the field holding an advertised method's id: "methodId", or "id" in earlier drafts
    tag: str  # the field holding an advertised method's type: "type"
    login_type: str  # the type of a method the agent handles itself through the login request: "agent"
    logout: str | None = None  # the logout request's wire name: "auth/logout" ("logout" earlier); None: none
    named: bool = False  # an advertised method has a ``name`` (every draft requires one)


@dataclass(frozen=True)
class StubValue:
    """One value of the ``_stub_data`` module the runtime's stubs and v2 session state read: its
    name, the comment above it (none: it continues the one before) and its value, a literal, or
    a type of the models (``models.<type_name>``)."""

    name: str
    doc: str
    value: str | bool | list[str] | None = None
    type_name: str = ""  # the value is this type of the models: an alias, ``name = models.X``
    #: the value is a dict of these (key, value) pairs, written one a line
    entries: tuple[tuple[str, str | list[str]], ...] | None = None
    annotation: str = ""  # the name's annotation, when its value could be another kind (``str | None``)


@dataclass(frozen=True)
class StubFlows:
    """The flows a schema's stubs run when turns end through state updates (ACP v2)."""

    params: Mapping[str, str]  # wire name -> params type, from the method table
    handlers: Mapping[str, str]  # wire name -> the handler's and the proxy method's Python name
    results: Mapping[str, str]  # wire name -> result type
    request_info: str  # the wire name of initialize's Implementation: "info" (v2) or "clientInfo"
    request_capabilities: str  # "capabilities" or "clientCapabilities"
    response_info: str  # "info" or "agentInfo"
    response_capabilities: str  # "capabilities" or "agentCapabilities"
    prompt_message_id: bool  # the prompt's response names the inserted user message (``messageId``)
    chunk_message_id: bool  # every message chunk names its message (``messageId``)
    echoes_user_message: bool  # the schema has the ``user_message`` update the agent echoes a prompt with
    mcp_servers_required: bool  # ``session/new`` must carry ``mcpServers``
    permission: bool  # the client can answer ``session/request_permission``
    permission_title: bool  # a permission request has a ``title`` (later drafts), not a ``toolCall``
    requires_action: bool  # the agent can report ``requires_action`` while it waits for the user
    login: LoginFlow | None = None  # how the client logs in when ``session/new`` needs it; None: it cannot
    #: The session features beyond the baseline the stub agent serves (``list``, ``resume``, ...), each
    #: with where ``initialize`` advertises it, below its capabilities: ``("session", "list")``, or
    #: ``("session",)`` in a draft where the ``session`` capability itself commits to the method.
    session_features: tuple[tuple[str, tuple[str, ...]], ...] = ()
    session_info: tuple[str, ...] = ()  # the fields of a session ``session/list`` lists
    #: the ``session`` capability has ``prompt`` (the prompt capabilities: images, audio, ...)
    prompt_capabilities: bool = False
    #: What ``_stub_data`` holds of all this, as the runtime reads it (see :func:`.stubs.stub_data`).
    data: tuple[StubValue, ...] = ()

    def params_type(self, wire_name: str) -> str:
        return self.params[wire_name]

    def result_type(self, wire_name: str) -> str:
        return self.results[wire_name]

    def handler(self, wire_name: str) -> str:
        return self.handlers[wire_name]


@dataclass(frozen=True)
class DispatchTable:
    """The table a tagged union's decoder looks the tag's value up in."""

    fn: str  # the decoder that uses it; the table is ``_T<fn>``
    union: str  # the union's name: what every entry's decoder returns
    entries: tuple[tuple[str, str], ...]  # (the tag value as a literal, the decoder of that variant)


@dataclass(frozen=True)
class InlineDispatch:
    """A list of a tagged union decoded by looking each item's tag up in the union's table, not
    through the union's decoder; anything else (an item that is no object, a missing or unknown
    tag, a bad item) goes through the general decoder, which says what is wrong."""

    table: str  # the union's dispatch table, ``_T<fn>``
    key: str  # the tag's wire name, as a literal


@dataclass(frozen=True)
class SchemaSource:
    name: str  # file name of the schema
    sha256: str


@dataclass(frozen=True)
class Spec:
    """Everything generation needs to know about one schema."""

    source: SchemaSource
    protocol_version: int
    methods: tuple[Method, ...]  # sorted by (side, wire name, kind)
    side: str = "both"  # which side the generated package serves: a handling side, or "both" (every one)
    roles: tuple[Role, ...] = ()  # one per served side: agent, client, then the others by name
    test_peers: tuple[Role, ...] = ()  # a one-side package's peer, carried so it can test itself
    types: tuple[TypeDef, ...] = ()  # every named type, sorted by name (see acpgen.model.types)
    names: Mapping[str, str] = field(default_factory=dict)  # the names lock's record (acpgen.model.namelock)
    capabilities: tuple[tuple[str, str], ...] = ()  # (wire name, pointer): see acpgen.model.capabilities
    variant_hints: tuple[tuple[str, str, str], ...] = ()  # (union, class, variant extending it): acpgen.model.calls
    stub_flows: StubFlows | None = None  # the stubs' flows when turns end through state updates (ACP v2)
    wire: WireRules = NO_BATCHES  # the draft's batches and unsupported-version error (acpgen.model.wire)
    #: What the package's ``_stub_data`` module holds: ``stub_flows.data`` (v2), else what the v1 stub
    #: agent serves beyond the baseline (see acpgen.model.stub_features).
    stub_data: tuple[StubValue, ...] = ()
    session_updates: session.SessionUpdates = session.NONE  # what the session module folds and sends
    #: The runtime modules the package imports from its parent package, which has them for the
    #: versions of a package of several (``{"_rpc", ...}``; see acpgen.versioned).
    runtime_parent: frozenset[str] = frozenset()
    #: Where the runtime modules in rooms are, from the package's root (``("_rpc",
    #: "_runtime.connection._rpc")``): the modules the templates name by their own name.
    runtime_modules: tuple[tuple[str, str], ...] = ()
    #: The models' constructors take ``extra`` (the dataclass flavour's); the pydantic flavour's
    #: take each unknown property as a keyword of its own, so builders and flat calls leave it out.
    extra_keyword: bool = True

    def serves(self, side: str) -> bool:
        return any(r.side == side for r in self.roles)

    @property
    def stub_sides(self) -> frozenset[str]:
        """The sides whose stub server the package has (its own or its test peer's)."""
        return frozenset(r.side for r in (*self.roles, *self.test_peers) if r.stub)

    def carries(self, side: str) -> bool:
        """The package has ``side``'s module: it serves it, or carries it as its test peer."""
        return any(r.side == side for r in (*self.roles, *self.test_peers))

    def role(self, side: str) -> Role:
        """A served side's role, or a test peer's."""
        return next(r for r in (*self.roles, *self.test_peers) if r.side == side)

    @property
    def other_roles(self) -> tuple[Role, ...]:
        """The served sides beyond agent and client (``proxy``): each in a module of its own."""
        return tuple(r for r in self.roles if r.side not in (Side.AGENT.value, Side.CLIENT.value))

    @property
    def classes(self) -> tuple[ClassDef, ...]:
        return type_classes(self.types)

    @functools.cached_property
    def builder_groups(self) -> tuple[builders.BuilderGroup, ...]:
        """The builders module's namespaces: one per tagged union (see acpgen.model.builders)."""
        return builders.builder_groups(self.types, self.extra_keyword)

    @property
    def builder_imports(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return builders.builder_imports(self.builder_groups)

    @functools.cached_property
    def checked_unions(self) -> dict[str, tuple[str, ...]]:
        """The unions of classes whose values constructors check (see acpgen.model.calls)."""
        return calls.checked_unions(self.types)

    def variant_checks(self, cls: ClassDef) -> tuple[calls.VariantCheck, ...]:
        return calls.variant_checks(cls, self.checked_unions)

    @property
    def variant_table_entries(self) -> tuple[str, ...]:
        return calls.table_entries(self.checked_unions)

    @property
    def variant_hint_entries(self) -> tuple[str, ...]:
        return calls.hint_entries(self.variant_hints)

    @functools.cached_property
    def _classes_by_name(self) -> dict[str, ClassDef]:
        return {c.name: c for c in self.classes}

    def flat_calls(self, role: Role) -> bool:
        """Some method of ``role``'s proxy takes its params' fields as keywords (``@overload``)."""
        return any(self.flat_parameters(m) is not None for m in role.calls)

    def _flat_uses(self, role: Role) -> frozenset[str]:
        return frozenset(n for m in role.calls for p in self.flat_parameters(m) or () for n in p.uses)

    def side_model_names(self, role: Role) -> tuple[str, ...]:
        """What a side module imports from ``models``: the params and result types of its methods
        and the types its proxy's keyword parameters name."""
        return import_order(set(role.model_names) | (self._flat_uses(role) - calls.TYPING_NAMES))

    def side_typing_names(self, role: Role) -> str:
        """What a side module imports from ``typing``, in ``from typing import ...`` order."""
        names = ["Any", "final"]
        if "Literal" in self._flat_uses(role):
            names.insert(1, "Literal")
        if self.flat_calls(role):
            names.append("overload")
        return ", ".join(names)

    def flat_parameters(self, method: Method) -> tuple[calls.Parameter, ...] | None:
        """The keyword parameters a proxy method takes besides a params object: its params
        class's constructor's; None when the params type is not a class (a union)."""
        cls = self._classes_by_name.get(method.params_type)
        return None if cls is None or cls.union is not None else calls.keyword_parameters(cls, self.extra_keyword)

    @property
    def aliases(self) -> tuple[TypeDef, ...]:
        return type_aliases(self.types)

    @property
    def type_helpers(self) -> tuple[TypeExpr, ...]:
        return type_helpers(self.types)

    @property
    def type_names(self) -> tuple[str, ...]:
        """Every name the models module exports: the types and their variant classes."""
        return tuple(sorted({t.name for t in self.types} | {c.name for c in self.classes}))

    @property
    def type_imports(self) -> tuple[str, ...]:
        """``type_names`` in the order the package root imports them."""
        return import_order(self.type_names)

    @functools.cached_property
    def lenient(self) -> bool:
        """Some value may be repaired (``x-deserialize-*``): a union decoder that tries its options
        then takes back the repairs of an option that fails."""
        fields = (f for c in self.classes for f in c.fields)
        return any(f.salvage_with is not None or f.null_reads_as is not None for f in fields) or any(
            getattr(h, "skip_invalid", False) for h in self.type_helpers
        )

    @property
    def uses_patterns(self) -> bool:
        """Some string is checked against a ``pattern`` (the models module imports ``re``)."""
        return any(getattr(h, "pattern", None) is not None for h in self.type_helpers)

    @property
    def codec_uses_literal(self) -> bool:
        """Some field or field type is an inline literal set: the models' codec, whose
        constructors and decoders are annotated with it, imports ``Literal``."""
        annotations = [f.annotation for c in self.classes for f in c.fields]
        return any("Literal[" in a for a in (*annotations, *(h.annotation for h in self.type_helpers)))

    @property
    def dispatch_tables(self) -> tuple[DispatchTable, ...]:
        """One per tag dispatch of every union. A variant class whose one tag is the dispatched
        one is decoded by its ``_du_`` decoder, which trusts the tag the dispatch already read."""
        tagged = {c.name: c.tags[0].wire_name for c in self.classes if len(c.tags) == 1}
        tables = []
        for t in self.aliases:
            for node in t.helpers if t.kind is DefKind.UNION else ():
                if isinstance(node, Dispatch):
                    entries = tuple(
                        (
                            py_literal(value),
                            f"_du_{d.label}" if isinstance(d, Leaf) and tagged.get(d.label) == node.key else d.fn,
                        )
                        for value, d in node.cases
                    )
                    tables.append(DispatchTable(node.fn, t.name, entries))
        return tuple(tables)

    def inline_dispatch(self, helper: TypeExpr) -> InlineDispatch | None:
        """How a list helper dispatches its items inline, or a field of a union type its value,
        if it does: a union whose decoder dispatches on a tag with no default, when no decode
        repairs anything (a repair made before the general decoder took over would be made twice)."""
        item = helper.item if isinstance(helper, ListOf) and not helper.skip_invalid else helper
        if not isinstance(item, Ref) or self.lenient:
            return None
        root = self._union_roots.get(item.name)
        if not isinstance(root, Dispatch) or root.default is not None:
            return None
        return InlineDispatch(f"_T{root.fn}", py_literal(root.key))

    @functools.cached_property
    def _union_roots(self) -> dict[str, Dispatch | TryEach | ByKind]:
        return {t.name: t.helpers[0] for t in self.aliases if t.kind is DefKind.UNION and t.helpers}

    @property
    def decoded_types(self) -> tuple[str, ...]:
        """The types ``decode`` knows by name: every class, then every union and literal set."""
        kinds = (DefKind.UNION, DefKind.LITERALS)
        return (*(c.name for c in self.classes), *(t.name for t in self.aliases if t.kind in kinds))

    @property
    def runtime_exports(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """What the package root re-exports from the runtime, as (module, names) pairs, in import
        order. The root imports them on first use, so the models alone import no asyncio."""
        found: list[tuple[str, tuple[str, ...]]] = [
            ("_rpc", ("DEFAULT_MAX_MESSAGE_SIZE", "ConnectionClosed", "RequestError"))
        ]
        if self.serves(Side.AGENT.value):
            found.append(("agent", ("Agent", "AgentSideConnection", "ClientProxy", "asgi_app", "run_agent")))
        if self.serves(Side.CLIENT.value):
            found.append(("client", ("AgentProxy", "Client", "ClientSideConnection", "connect_agent", "spawn_agent")))
        found += [(r.module, r.exports) for r in self.other_roles]
        if self.carries(Side.AGENT.value) and self.carries(Side.CLIENT.value):
            found.append(("pair", ("in_memory_pair",)))
        return tuple(found)

    def runtime_path(self, module: str) -> str:
        """The relative import of one of the package's modules: ``._rpc`` (or
        ``._runtime.connection._rpc``, where it is in a room of the runtime), or ``.._rpc`` when
        the parent package has it."""
        dotted = dict(self.runtime_modules).get(module, module)
        return (".." if dotted in self.runtime_parent else ".") + dotted

    @property
    def runtime_imports(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """:attr:`runtime_exports` in the order isort and ruff sort their imports."""
        return tuple(sorted(self.runtime_exports, key=lambda export: (self.runtime_path(export[0]), export)))

    @property
    def root_exports(self) -> tuple[str, ...]:
        """The package root's ``__all__`` entries between the constants and the functions."""
        return tuple(sorted((*self.type_names, "DecodeError", "MethodInfo", "Salvage")))
