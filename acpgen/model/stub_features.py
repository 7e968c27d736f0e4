"""What the stub agent of a schema whose turns end with the prompt's response (ACP v1) serves
beyond the baseline, read from the schema.

The baseline (``initialize``, ``session/new``, ``session/prompt``, ``session/cancel``) is in every
release the stub runs on (``roles.STUB_METHODS``). The rest came release by release: loading a
session, modes, listing, resuming, closing, forking and deleting sessions, additional
directories, config options, logging out. A feature is served where the schema has all it takes:
the agent's request that serves it, the place in ``initialize``'s ``agentCapabilities`` that
advertises it, the field of ``session/new``'s result that offers it. The runtime's stub agent
(``_stub_agent``) reads the features of its package from ``_stub_data``, so an older release gets
a stub agent that advertises and serves what that release defines, and answers the rest -32601.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .classes import ClassDef
from .spec import Method, StubValue
from .stubs import field_class as _field_class
from .stubs import update_variants
from .typedefs import DefKind, TypeDef


@dataclass(frozen=True)
class Feature:
    """One optional feature of the v1 stub agent: its name (``--disable NAME``), the agent's
    request that serves it (``""``: none), where ``agentCapabilities`` advertises it (``()``:
    not there) and the field of ``session/new``'s result that offers it (``""``: none)."""

    name: str
    method: str
    advertised: tuple[str, ...] = ()
    offered: str = ""


#: Every feature the runtime's v1 stub agent knows, in the order its ``--help`` lists them.
FEATURES = (
    Feature("load", "session/load", ("loadSession",)),
    Feature("resume", "session/resume", ("sessionCapabilities", "resume")),
    Feature("list", "session/list", ("sessionCapabilities", "list")),
    Feature("close", "session/close", ("sessionCapabilities", "close")),
    Feature("delete", "session/delete", ("sessionCapabilities", "delete")),
    Feature("fork", "session/fork", ("sessionCapabilities", "fork")),
    Feature("additional-directories", "", ("sessionCapabilities", "additionalDirectories")),
    Feature("modes", "session/set_mode", offered="modes"),
    Feature("config-options", "session/set_config_option", offered="configOptions"),
    Feature("logout", "logout", ("auth", "logout")),
)


def v1_stub_data(methods: tuple[Method, ...], types: tuple[TypeDef, ...]) -> tuple[StubValue, ...]:
    """The values of the ``_stub_data`` module of a schema whose turns end with the prompt's
    response: the features it defines, where each is advertised, and the shapes they answer with."""
    agent = {m.wire_name: m for m in methods if m.side == "agent" and m.is_request}
    classes = {c.name: c for t in types for c in t.classes if t.kind is DefKind.CLASS}
    unions = {t.name: t for t in types if t.kind is DefKind.UNION}
    initialized = classes.get(agent["initialize"].result_type or "") if "initialize" in agent else None
    created = classes.get(agent["session/new"].result_type or "") if "session/new" in agent else None
    capabilities = _field_class(initialized, "agentCapabilities", classes)
    found = [f for f in FEATURES if _defines(f, agent, capabilities, created, classes)]
    listed = classes.get(agent["session/list"].result_type or "") if "session/list" in agent else None
    info = _field_class(listed, "sessions", classes)
    update = next((classes.get(m.params_type) for m in methods if m.wire_name == "session/update"), None)
    variants = update_variants(update, unions) if update is not None else {}
    login = classes.get(agent["authenticate"].params_type) if "authenticate" in agent else None
    return (
        StubValue("FEATURES", "The optional features the schema defines, by the name ``--disable`` takes: the"
                  " agent's request each serves (empty: none).", entries=tuple((f.name, f.method) for f in found),
                  annotation="dict[str, str]"),
        StubValue("ADVERTISED", "Where ``initialize``'s ``agentCapabilities`` advertises each (the others are"
                  " offered in ``session/new``'s result).",
                  entries=tuple((f.name, list(f.advertised)) for f in found if f.advertised),
                  annotation="dict[str, list[str]]"),
        StubValue("FLAGS", "The features advertised by a boolean (the others by an object, ``{}``).",
                  [f.name for f in found if f.advertised and _leaf_class(f, capabilities, classes) is None],
                  annotation="list[str]"),
        StubValue("MODE_UPDATE", "The session updates that report a new current mode, new config options.",
                  "current_mode_update" in variants),
        StubValue("CONFIG_UPDATE", "", "config_option_update" in variants),
        StubValue("SESSION_INFO", "The fields of a session ``session/list`` lists.",
                  [f.wire_name for f in info.fields if not f.wire_name.startswith("_")] if info else [],
                  annotation="list[str]"),
        StubValue("AUTH", "``initialize`` lists auth methods and ``authenticate`` names one (``methodId``).",
                  initialized is not None and _has(initialized, "authMethods") and login is not None
                  and _has(login, "methodId")),
    )


def _defines(feature: Feature, agent: Mapping[str, Method], capabilities: ClassDef | None, created: ClassDef | None,
             classes: Mapping[str, ClassDef]) -> bool:
    if feature.method and feature.method not in agent:
        return False
    if feature.offered and (created is None or not _has(created, feature.offered)):
        return False
    holder = _holder(feature, capabilities, classes)
    return not feature.advertised or (holder is not None and _has(holder, feature.advertised[-1]))


def _holder(feature: Feature, capabilities: ClassDef | None, classes: Mapping[str, ClassDef]) -> ClassDef | None:
    """The class of ``agentCapabilities`` (or of a group in it) that holds the feature's capability."""
    holder = capabilities
    for name in feature.advertised[:-1]:
        holder = _field_class(holder, name, classes)
    return holder


def _leaf_class(feature: Feature, capabilities: ClassDef | None, classes: Mapping[str, ClassDef]) -> ClassDef | None:
    """The class of the feature's capability (None: a boolean)."""
    return _field_class(_holder(feature, capabilities, classes), feature.advertised[-1], classes)


def _has(cls: ClassDef, wire_name: str) -> bool:
    return any(f.wire_name == wire_name for f in cls.fields)
