"""What the stub agent and the stub client of a schema can do, and the names they use.

The stubs of protocol version 1 are written against v1's methods (see ``roles.STUB_METHODS``).
ACP's v2 drafts differ in ways a stub must follow: ``session/prompt`` answers once the prompt is
inserted (its response has no ``stopReason``) and the turn ends with a ``state_update`` whose
state is ``idle``; message chunks carry a ``messageId``; ``initialize`` names its parts ``info``
and ``capabilities``; a permission request has a ``title`` and a ``subject``; types are renamed
(``UpdateSessionNotification``). Each of these is read here from the method table and the types,
so a draft that moves gets stubs that follow it, and a schema that has no way to end a turn the
stubs know gets none. Logging in follows the draft too: ``auth/login`` (``authenticate`` before
v2's rename) with the id of an advertised method of the type the agent handles itself, and
``auth/logout`` (``logout``) to undo it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .classes import ClassDef
from .decisions import Dispatch
from .spec import LoginFlow, Method, StubFlows, StubValue
from .typedefs import DefKind, TypeDef
from .types import ListOf, Nullable, Ref, TypeExpr

#: The methods both state-turn stubs use, by wire name; the client's stub also answers permission requests.
CORE_METHODS = ("initialize", "session/new", "session/prompt", "session/cancel", "session/update")
PERMISSION_METHOD = "session/request_permission"
#: The requests a client logs in with, newest first (v2 drafts renamed ``authenticate``).
LOGIN_METHODS = ("auth/login", "authenticate")
#: The requests that undo a login, newest first (v2 drafts renamed ``logout``).
LOGOUT_METHODS = ("auth/logout", "logout")
#: The type of the auth methods the agent handles itself, through the login request; a client runs
#: the others (``terminal``: the agent in a terminal) or does not know them.
LOGIN_TYPE = "agent"


def stub_flows(methods: tuple[Method, ...], types: tuple[TypeDef, ...]) -> StubFlows | None:
    """The state-turn flows of the schema; None when it lacks one the stubs need (its v1 stubs, if
    any, are decided by ``roles.STUB_METHODS``)."""
    table = {m.wire_name: m for m in methods if m.side in ("agent", "client")}
    if not all(name in table for name in CORE_METHODS):
        return None
    classes = {c.name: c for t in types for c in t.classes if t.kind is DefKind.CLASS}
    unions = {t.name: t for t in types if t.kind is DefKind.UNION}
    params = {name: m.params_type for name, m in table.items()}
    results = {name: m.result_type for name, m in table.items() if m.result_type}
    initialize, initialized = classes.get(params["initialize"]), classes.get(results.get("initialize", ""))
    prompted, update = classes.get(results.get("session/prompt", "")), classes.get(params["session/update"])
    if initialize is None or initialized is None or prompted is None or update is None:
        return None
    if _required(prompted, "stopReason"):  # turns end with the prompt's response: the v1 flow
        return None
    variants = update_variants(update, unions)
    if not _ends_turns(update, unions) or "agent_message_chunk" not in variants:
        return None
    chunk = variants["agent_message_chunk"]
    new_session = classes.get(params["session/new"])
    permission = classes.get(params.get(PERMISSION_METHOD, ""))
    flows = StubFlows(
        params=params,
        handlers={name: m.py_name for name, m in table.items()},
        results=results,
        request_info=_first_of(initialize, "info", "clientInfo"),
        request_capabilities=_first_of(initialize, "capabilities", "clientCapabilities"),
        response_info=_first_of(initialized, "info", "agentInfo"),
        response_capabilities=_first_of(initialized, "capabilities", "agentCapabilities"),
        prompt_message_id=_required(prompted, "messageId"),
        chunk_message_id=_has(chunk, "messageId"),
        echoes_user_message="user_message" in variants and _has(variants["user_message"], "messageId"),
        mcp_servers_required=new_session is not None and _required(new_session, "mcpServers"),
        permission=permission is not None and _has(permission, "options"),
        permission_title=permission is not None and _required(permission, "title"),
        requires_action=_has_state(update, unions, "requires_action"),
        login=_login(table, classes, unions, initialized),
        session_features=_session_features(table, field_class(initialized, _first_of(initialized, "capabilities",
                                                                                      "agentCapabilities"), classes),
                                           classes),
        session_info=_session_info(table, classes),
        prompt_capabilities=_has_prompt_capabilities(initialized, classes),
    )
    return replace(flows, data=stub_data(flows))


#: The types ``_stub_data`` names for the runtime, by the method they belong to: (alias, wire name,
#: its params (True) or its result).
_TYPES = (
    ("InitializeParams", "initialize", True),
    ("InitializeResult", "initialize", False),
    ("NewSessionParams", "session/new", True),
    ("NewSessionResult", "session/new", False),
    ("PromptParams", "session/prompt", True),
    ("PromptResult", "session/prompt", False),
    ("CancelParams", "session/cancel", True),
    ("UpdateParams", "session/update", True),
)


def stub_data(f: StubFlows) -> tuple[StubValue, ...]:
    """What the ``_stub_data`` module of a schema with the flows ``f`` holds, in its order: the
    types the runtime's stubs and session state annotate with, then each difference of the draft
    they follow, as a value they read. A new difference is a field of :class:`StubFlows`, a row
    here and the runtime module that reads it."""
    types = [StubValue(alias, "", type_name=f.params[wire] if params else f.results[wire]) for alias, wire, params in _TYPES]
    if f.permission:
        types += [StubValue("PermissionParams", "", type_name=f.params[PERMISSION_METHOD]),
                  StubValue("PermissionResult", "", type_name=f.results[PERMISSION_METHOD])]
    types[0] = replace(types[0], doc="The params and result types of the methods every such draft has, which the stubs"
                                     " answer and call.")
    login, logout = f.login, f.login.logout if f.login else None
    return (
        *types,
        StubValue("REQUEST_INFO", "The fields of ``initialize``'s params naming the client and its capabilities, and"
                  " of its result naming the agent and its capabilities.", f.request_info),
        StubValue("REQUEST_CAPABILITIES", "", f.request_capabilities),
        StubValue("RESPONSE_INFO", "", f.response_info),
        StubValue("RESPONSE_CAPABILITIES", "", f.response_capabilities),
        StubValue("MCP_SERVERS_REQUIRED", "``session/new`` must carry ``mcpServers``.", f.mcp_servers_required),
        StubValue("PROMPT_MESSAGE_ID", "The prompt's response names the inserted user message (``messageId``).",
                  f.prompt_message_id),
        StubValue("CHUNK_MESSAGE_ID", "Every message chunk names its message (``messageId``).", f.chunk_message_id),
        StubValue("ECHOES_USER_MESSAGE", "The draft has the ``user_message`` update the agent echoes a prompt with.",
                  f.echoes_user_message),
        StubValue("PERMISSION", "A client can answer ``session/request_permission`` (its params type), whose"
                  " requests have a ``title`` (later drafts) rather than a ``toolCall``.", f.permission),
        StubValue("PERMISSION_PARAMS", "", f.params[PERMISSION_METHOD] if f.permission else ""),
        StubValue("PERMISSION_TITLE", "", f.permission_title),
        StubValue("REQUIRES_ACTION", "The agent can report ``requires_action`` while it waits for the user.",
                  f.requires_action),
        StubValue("LOGIN", "The request a client logs in with (None: it cannot log in), its handler, params and"
                  " result types.", login.method if login else None, annotation="str | None"),
        StubValue("LOGIN_HANDLER", "", f.handlers[login.method] if login else ""),
        StubValue("LOGIN_PARAMS", "", f.params[login.method] if login else ""),
        StubValue("LOGIN_RESULT", "", f.results[login.method] if login else ""),
        StubValue("LOGIN_ID", "The fields of an advertised auth method holding its id and its type, the type of a"
                  " method the agent handles itself (through the login request), and whether an advertised one has"
                  " a ``name``.", login.id_field if login else ""),
        StubValue("LOGIN_TAG", "", login.tag if login else ""),
        StubValue("LOGIN_TYPE", "", login.login_type if login else ""),
        StubValue("LOGIN_NAMED", "", login.named if login else False),
        StubValue("LOGOUT", "The request that undoes a login (None: none), its handler and result type.", logout,
                  annotation="str | None"),
        StubValue("LOGOUT_HANDLER", "", f.handlers[logout] if logout else ""),
        StubValue("LOGOUT_RESULT", "", f.results[logout] if logout else ""),
        StubValue("SESSION_FEATURES", "The session features beyond the baseline the draft defines, by the name"
                  " ``--disable`` takes: where ``initialize`` advertises each, below its capabilities.",
                  entries=tuple((name, list(path)) for name, path in f.session_features),
                  annotation="dict[str, list[str]]"),
        StubValue("SESSION_INFO", "The fields of a session ``session/list`` lists.", list(f.session_info),
                  annotation="list[str]"),
        StubValue("PROMPT_CAPABILITIES", "The ``session`` capability has ``prompt``: the prompt capabilities the agent"
                  " advertises.", f.prompt_capabilities),
    )


def _login(table: Mapping[str, Method], classes: Mapping[str, ClassDef], unions: Mapping[str, TypeDef],
           initialized: ClassDef) -> LoginFlow | None:
    """The login of the schema: its login request takes a ``methodId``, and ``initialize``'s
    ``authMethods`` is a list of a union with a variant of type :data:`LOGIN_TYPE`; else None."""
    method = next((name for name in LOGIN_METHODS if name in table), None)
    request = classes.get(table[method].params_type) if method is not None else None
    if method is None or request is None or not _required(request, "methodId"):
        return None
    listed = next((f.type.item for f in initialized.fields
                   if f.wire_name == "authMethods" and isinstance(f.type, ListOf)), None)
    union = unions.get(listed.name) if isinstance(listed, Ref) else None
    variant = next((c for c in union.classes if c.tags and c.tags[0].value == LOGIN_TYPE), None) if union else None
    if variant is None or not any(_has(variant, name) for name in ("methodId", "id")):
        return None
    logout = next((name for name in LOGOUT_METHODS if name in table and table[name].is_request), None)
    return LoginFlow(method=method, id_field=_first_of(variant, "methodId", "id"), tag=variant.tags[0].wire_name,
                     login_type=LOGIN_TYPE, logout=logout, named=_has(variant, "name"))


#: The session methods beyond the baseline the v2 stub agent serves, by the name of the feature
#: (``--disable``) and of the capability that advertises each where the draft has one.
SESSION_METHODS = (("load", "session/load"), ("list", "session/list"), ("resume", "session/resume"),
                   ("close", "session/close"), ("delete", "session/delete"))


def _session_features(table: Mapping[str, Method], capabilities: ClassDef | None,
                      classes: Mapping[str, ClassDef]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each session method of :data:`SESSION_METHODS` the draft has, and where it is advertised: by
    a capability of its name in the ``session`` capability, or else by the ``session`` capability
    itself (later drafts: ``session: {}`` commits to ``session/list``, ``resume`` and ``close``);
    then additional directories, where the ``session`` capability has them."""
    session = field_class(capabilities, "session", classes)
    if session is None:
        return ()
    found: list[tuple[str, tuple[str, ...]]] = [
        (name, ("session", name) if _has(session, name) else ("session",))
        for name, method in SESSION_METHODS if method in table and table[method].is_request]
    if _has(session, "additionalDirectories"):
        found.append(("additional-directories", ("session", "additionalDirectories")))
    return tuple(found)


def _has_prompt_capabilities(initialized: ClassDef, classes: Mapping[str, ClassDef]) -> bool:
    capabilities = field_class(initialized, _first_of(initialized, "capabilities", "agentCapabilities"), classes)
    session = field_class(capabilities, "session", classes)
    return session is not None and _has(session, "prompt")


def _session_info(table: Mapping[str, Method], classes: Mapping[str, ClassDef]) -> tuple[str, ...]:
    listed = classes.get(table["session/list"].result_type or "") if "session/list" in table else None
    info = field_class(listed, "sessions", classes)
    return tuple(f.wire_name for f in info.fields if not f.wire_name.startswith("_")) if info else ()


def field_class(cls: ClassDef | None, wire_name: str, classes: Mapping[str, ClassDef]) -> ClassDef | None:
    """The class of ``cls``'s field ``wire_name`` (of its items, for a list; None: not a class)."""
    field = next((f for f in cls.fields if f.wire_name == wire_name), None) if cls is not None else None
    kind: TypeExpr | None = field.type if field is not None else None
    while isinstance(kind, (Nullable, ListOf)):
        kind = kind.inner if isinstance(kind, Nullable) else kind.item
    return classes.get(kind.name) if isinstance(kind, Ref) else None


def _has(cls: ClassDef, wire_name: str) -> bool:
    return any(f.wire_name == wire_name for f in cls.fields)


def _required(cls: ClassDef, wire_name: str) -> bool:
    return any(f.wire_name == wire_name and f.required for f in cls.fields)


def _first_of(cls: ClassDef, *wire_names: str) -> str:
    """The first of ``wire_names`` the class has (the last when it has none: the older name)."""
    return next((name for name in wire_names if _has(cls, name)), wire_names[-1])


def update_variants(update: ClassDef, unions: Mapping[str, TypeDef]) -> dict[str, ClassDef]:
    """The variants of the notification's ``update`` union, by their ``sessionUpdate`` tag (a
    variant of a nested union, ``state_update``'s states, by its first)."""
    union = next((unions.get(f.type.name) for f in update.fields if f.wire_name == "update" and isinstance(f.type, Ref)),
                 None)
    if union is None or not isinstance(union.decision, Dispatch):
        return {}
    found: dict[str, ClassDef] = {}
    for cls in union.classes:
        if cls.tags and cls.tags[0].wire_name == "sessionUpdate":
            found.setdefault(str(cls.tags[0].value), cls)
    return found


def _ends_turns(update: ClassDef, unions: Mapping[str, TypeDef]) -> bool:
    """The update union has a ``state_update`` whose state is ``idle``: what ends a turn."""
    return _has_state(update, unions, "idle")


def _has_state(update: ClassDef, unions: Mapping[str, TypeDef], state: str) -> bool:
    """The update union has a ``state_update`` to ``state``."""
    union = next((unions.get(f.type.name) for f in update.fields if f.wire_name == "update" and isinstance(f.type, Ref)),
                 None)
    return union is not None and any(
        {(t.wire_name, t.value) for t in cls.tags} >= {("sessionUpdate", "state_update"), ("state", state)}
        for cls in union.classes
    )
