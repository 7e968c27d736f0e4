"""Every requirement of the agent kit at the level its text gives the agent.

Each check records the sentence it rests on, in v1's docs and in v2's: its section, the peer it
binds, its keyword of RFC 2119 and what it asks, in the kit's words. The level a verdict carries is
read from that record; here it is held to it, each cited heading is one the docs of ACP v1.7.0
have (``tests/data/spec_anchors_v1.7.0.json``: the pages' heading anchors, no text), and the
levels the text gives are the ones the kit says (a MUST where the cited sentence binds the
client is advice).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from support import BINDINGS, ROOT
from support.kit import kit_module
from support.versions import v2_package

from acpgen.runtime._runtime.kits._kit_report import (
    ADVICE,
    KEYWORDS,
    MUST,
    PEERS,
    SHOULD,
    level_for,
)

ANCHORS = json.loads((ROOT / "tests" / "data" / "spec_anchors_v1.7.0.json").read_text())


def _kits() -> dict[str, Any]:
    folder, package = v2_package("v1.7.0")
    return {"v1": kit_module("acp_bindings", BINDINGS), "v2": kit_module(package, folder)}


def _checks(module: Any) -> list[Any]:
    return list(importlib.import_module(f"{module.__package__}._runtime.kits._kit_checks").requirements(module.TARGET))


@pytest.fixture(scope="module")
def requirements() -> list[tuple[str, Any, Any]]:
    """(kit, check, requirement) for every check of the bundled schema's kit and the v2 draft's."""
    return [(name, check, check.requirement(module.TARGET))
            for name, module in _kits().items() for check in _checks(module)]


def test_every_level_is_the_one_its_record_gives(requirements):
    for kit, check, requirement in requirements:
        cite = check.cite(2 if kit == "v2" else 1)
        assert cite.binds in PEERS and cite.keyword in KEYWORDS and cite.says, (kit, check.id, cite)
        assert (requirement.binds, requirement.keyword, requirement.says) == (cite.binds, cite.keyword, cite.says)
        assert requirement.level == level_for(cite.binds, cite.keyword, "agent"), (kit, check.id)
        # MUST and SHOULD only where the sentence binds the agent (or either peer) with that keyword
        if requirement.level in (MUST, SHOULD):
            assert cite.binds in ("agent", "either") and KEYWORDS[cite.keyword] == requirement.level
        else:
            assert cite.binds == "client" or KEYWORDS[cite.keyword] == ADVICE, (kit, check.id)


def test_every_cited_heading_is_one_the_docs_have(requirements):
    for kit, _, requirement in requirements:
        page, _, heading = requirement.section.partition("#")
        assert page in ANCHORS, (kit, requirement.id, page)
        assert heading == "" and page.startswith("protocol/") or heading in ANCHORS[page], (
            kit, requirement.id, requirement.section)


def test_the_anchors_are_anchors_only():
    """The list holds headings' anchors, no sentence of the docs."""
    for page, anchors in ANCHORS.items():
        if page.startswith("_"):
            continue
        assert all(isinstance(a, str) and " " not in a and len(a) < 60 for a in anchors), page


@pytest.mark.parametrize(("binds", "keyword", "level"), [
    ("agent", "MUST", MUST), ("agent", "MUST NOT", MUST), ("either", "MUST NOT", MUST),
    ("agent", "SHOULD", SHOULD), ("either", "SHOULD", SHOULD),
    ("client", "MUST NOT", ADVICE), ("client", "SHOULD", ADVICE),
    ("agent", "MAY", ADVICE), ("agent", "", ADVICE),
])
def test_a_level_is_the_keyword_of_a_sentence_that_binds_the_peer_under_test(binds, keyword, level):
    assert level_for(binds, keyword, "agent") == level
    # the same sentence held against the other peer
    other = {"agent": "client", "client": "agent", "either": "either"}[binds]
    assert level_for(other, keyword, "client") == level


def test_a_record_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="should"):
        level_for("agent", "should", "agent")
    with pytest.raises(ValueError, match="server"):
        level_for("server", "MUST", "agent")


#: What the text gives the agent, read in the docs of ACP v1.7.0 (and JSON-RPC 2.0's), for the
#: requirements whose level changed from what the kit said before: each a MUST or SHOULD it said,
#: that no sentence binding the agent with that keyword supports.
ADVICE_NOW = {
    "session.unknown-session",  # an error for a session that does not exist: the agent MAY
    "capabilities.modes",  # no keyword binds the agent in session-modes
    "auth.unknown-method",  # no keyword asks to refuse a method not advertised
    "session-list.omitted-params",  # the client sends a params object
    "jsonrpc.invalid-params",  # JSON-RPC names -32602; nothing asks to check a param's type
    "jsonrpc.invalid-request",  # a line the client MUST NOT write
    "jsonrpc.parse-error",  # a line the client MUST NOT write
    "extensibility.meta",  # _meta is on every type; no keyword asks to accept it
    "extensibility.method-not-found",  # a lower-case "should" (its answer, a MUST, is unknown-request)
    "transports.shutdown",  # no keyword asks the agent to exit
}


def test_the_requirements_the_text_does_not_place_on_the_agent_are_advice(requirements):
    levels = {(kit, r.id): r.level for kit, _, r in requirements}
    for name in ADVICE_NOW:
        assert levels[("v1", name)] == ADVICE, name
    unadvertised = {(kit, r.id) for kit, _, r in requirements if r.id.endswith(".unadvertised")}
    assert unadvertised and all(levels[k] == ADVICE for k in unadvertised)
    assert all(levels[(kit, r.id.removesuffix(".unadvertised"))] == MUST for kit, r in
               [(kit, r) for kit, _, r in requirements if r.id.endswith(".unadvertised")])
    assert levels[("v1", "initialization.implementation-info")] == SHOULD
    assert levels[("v2", "initialization.implementation-info")] == MUST
    assert levels[("v1", "initialization.version-negotiation")] == MUST
    assert levels[("v1", "session-load.replay-first")] == levels[("v1", "extensibility.unknown-request")] == MUST


def test_the_content_a_prompt_carries_is_what_it_says():
    """The image is a PNG a decoder reads (one pixel, each chunk's CRC right), the sound a WAV."""
    import base64
    import io
    import struct
    import wave
    import zlib

    from acpgen.runtime._runtime.kits import _kit_features

    png = base64.b64decode(_kit_features._CONTENT["image"]["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(png):
        (size,) = struct.unpack(">I", png[at:at + 4])
        kind, data = png[at + 4:at + 8], png[at + 8:at + 8 + size]
        assert struct.unpack(">I", png[at + 8 + size:at + 12 + size])[0] == zlib.crc32(kind + data), kind
        chunks[kind], at = data, at + 12 + size
    assert list(chunks) == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBB", chunks[b"IHDR"][:10]) == (1, 1, 8, 2)
    assert zlib.decompress(chunks[b"IDAT"]) == b"\x00\xff\xff\xff"  # one row: a white pixel
    with wave.open(io.BytesIO(base64.b64decode(_kit_features._CONTENT["audio"]["data"]))) as sound:
        assert (sound.getnchannels(), sound.getframerate(), sound.getnframes()) == (1, 8000, 800)
    assert _kit_features._CONTENT["image"] == _kit_features._CONTENT["image"] | {"data": _kit_features._png()}
