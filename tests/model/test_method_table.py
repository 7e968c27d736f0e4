"""The method table derived from x-method / x-side, checked against every release's meta file."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from support import BUNDLED, CORPUS, corpus_index, load_corpus

from acpgen.model.method_table import build_method_table
from acpgen.model.spec import Kind
from acpgen.schema.loader import load_schema

SECTIONS = {"agent": "agentMethods", "client": "clientMethods", "protocol": "protocolMethods"}

# The meta files of these releases disagree with their own schemas (not acpgen's doing):
TERMINAL_UNANNOTATED = {  # meta lists terminal/* methods the schema does not annotate
    "v0.1.3-alpha.0", "v0.2.0-alpha.3", "v0.2.0-alpha.4", "v0.2.0-alpha.6", "v0.2.0-alpha.7", "v0.2.0-alpha.8",
}
SET_MODE_UNANNOTATED = {"v0.2.0", "v0.2.0-alpha.8", "v0.2.1"}  # meta lists session/set_mode, schema does not
MODEL_SELECT_ID = {"v0.4.1", "v0.4.2"}  # meta names session/set_model "model_select"
META_DISAGREES = TERMINAL_UNANNOTATED | SET_MODE_UNANNOTATED | MODEL_SELECT_ID


def table_as_meta(methods) -> dict[str, dict[str, str]]:
    """The rows of ``acpgen methods --format json`` as a meta file lists them: id -> wire name per side.
    A wire name one side handles as a request and as a notification (mcp/message) is one entry: both
    rows carry the upstream id; only their ``py_name`` (the handler's name) tells them apart."""
    found: dict[str, dict[str, str]] = {section: {} for section in SECTIONS.values()}
    for row in (m.as_json() for m in methods):
        section = found[SECTIONS[row["side"]]]
        assert section.setdefault(row["id"], row["method"]) == row["method"], row
    return found


def meta_of(row) -> dict[str, dict[str, str]]:
    meta = json.loads((CORPUS / row["meta_file"]).read_text())
    return {section: meta.get(section, {}) for section in SECTIONS.values()}


@pytest.mark.parametrize("row", corpus_index(), ids=lambda r: r["file"])
def test_method_table_matches_meta_file(row):
    methods, warnings = build_method_table(load_corpus(row["file"]))
    assert warnings == ()
    assert len(methods) == len({(m.wire_name, m.side, m.kind) for m in methods})
    assert len(methods) == len({(m.side, m.py_name) for m in methods})
    got, expected = table_as_meta(methods), meta_of(row)
    if row["release_tag"] not in META_DISAGREES:
        assert got == expected
        return
    only_meta = {(s, i, w) for s in SECTIONS.values() for i, w in expected[s].items() if got[s].get(i) != w}
    only_schema = {(s, i, w) for s in SECTIONS.values() for i, w in got[s].items() if expected[s].get(i) != w}
    allowed_meta, allowed_schema = set(), set()
    if row["release_tag"] in TERMINAL_UNANNOTATED:
        allowed_meta |= {e for e in only_meta if e[0] == "clientMethods" and e[2].startswith("terminal/")}
    if row["release_tag"] in SET_MODE_UNANNOTATED:
        allowed_meta |= {("agentMethods", "session_set_mode", "session/set_mode")}
    if row["release_tag"] in MODEL_SELECT_ID:
        allowed_meta |= {("agentMethods", "model_select", "session/set_model")}
        allowed_schema |= {("agentMethods", "session_set_model", "session/set_model")}
    assert only_meta and only_meta == allowed_meta
    assert only_schema == allowed_schema


def test_the_ten_disagreeing_releases_are_in_the_corpus():
    tags = {row["release_tag"] for row in corpus_index()}
    assert META_DISAGREES <= tags and len(META_DISAGREES) == 10


def _pairs():
    files = {row["file"] for row in corpus_index()}
    return sorted(f for f in files if f.endswith("schema.unstable.json") and f.replace(".unstable", "") in files)


def test_thirty_releases_publish_stable_and_unstable():
    assert len(_pairs()) == 30


@pytest.mark.parametrize("unstable_file", _pairs())
def test_unstable_marker_marks_exactly_what_the_stable_schema_lacks(unstable_file):
    unstable, _ = build_method_table(load_corpus(unstable_file))
    stable, _ = build_method_table(load_corpus(unstable_file.replace(".unstable", "")))
    in_stable = {(m.wire_name, m.side, m.kind) for m in stable}
    marked = {(m.wire_name, m.side, m.kind) for m in unstable if m.unstable}
    assert marked == {(m.wire_name, m.side, m.kind) for m in unstable} - in_stable
    assert not any(m.unstable for m in stable)


def test_bundled_schema_table():
    methods, warnings = build_method_table(load_schema(BUNDLED))
    assert warnings == ()
    assert len(methods) == 39
    assert Counter(m.side for m in methods) == {"agent": 27, "client": 11, "protocol": 1}
    assert Counter(m.side for m in methods if m.unstable) == {"agent": 16, "client": 2, "protocol": 1}
    by_name = {(m.side, m.wire_name): m for m in methods}
    cancel = by_name[("protocol", "$/cancel_request")]
    assert (cancel.id, cancel.kind, cancel.result_type, cancel.unstable) == (
        "cancel_request", Kind.NOTIFICATION, None, True
    )
    prompt = by_name[("agent", "session/prompt")]
    assert (prompt.id, prompt.params_type, prompt.result_type, prompt.unstable) == (
        "session_prompt", "PromptRequest", "PromptResponse", False
    )
    assert by_name[("agent", "document/didOpen")].id == "document_did_open"
    assert prompt.summary == "Processes a user prompt within a session."
    assert [(m.side, m.wire_name) for m in methods] == sorted((m.side, m.wire_name) for m in methods)


def test_side_both_yields_an_entry_per_side():
    row = next(r for r in corpus_index() if r["file"] == "v1.7.0--v1-schema.unstable.json")
    methods, _ = build_method_table(load_corpus(row["file"]))
    mcp = sorted((m.side, m.kind.value, m.params_type, m.result_type) for m in methods if m.wire_name == "mcp/message")
    assert mcp == [
        ("agent", "notification", "MessageMcpNotification", None),
        ("agent", "request", "MessageMcpRequest", "MessageMcpResponse"),
        ("client", "notification", "MessageMcpNotification", None),
        ("client", "request", "MessageMcpRequest", "MessageMcpResponse"),
    ]
