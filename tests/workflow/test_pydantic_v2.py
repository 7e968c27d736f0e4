"""The pydantic flavour of the ACP v2 drafts: mypy --strict (without pydantic's plugin, as a
user's mypy sees a vendored package) and ruff pass on the packages, and v2 messages, an open
union's "other" variant among them, decode to the class the dataclass flavour picks and go back
out exactly."""

from __future__ import annotations

import asyncio
import functools
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support import CORPUS, DATA, ROOT, write_package
from support.agent_defaults import (
    check_an_override_replaces_each,
    check_the_defaults_hold,
)
from support.typecheck import mypy_strict

from acpgen.pipeline import Options, generate

#: package -> the v2 draft it is made from: the newest release's, stable and unstable.
SCHEMAS = {
    "acp_v2_draft": DATA / "sdk-schemas" / "v2-schema.json",
    "acp_v2_draft_unstable": DATA / "sdk-schemas" / "v2-schema.unstable.json",
    "acp_v2_corpus": CORPUS / "v1.7.0--v2-schema.json",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("pydantic-v2"))


@functools.cache
def _folder(where: Path) -> Path:
    for package, schema in SCHEMAS.items():
        write_package(generate(Options(schema=schema, package=package, models="pydantic", protocol_version=2)).files, where)
        write_package(generate(Options(schema=schema, package=f"{package}_dc", protocol_version=2)).files, where)
    return where


def test_mypy_strict_without_the_pydantic_plugin(folder: Path) -> None:
    # one run over every package, so pydantic's own modules are read once
    result = mypy_strict("--config-file", "", *SCHEMAS, cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_is_clean(folder: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310", *(str(folder / p) for p in SCHEMAS)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


CHUNK = {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hi"}}
STATE = {"sessionUpdate": "state_update", "state": "idle"}
#: (type, message): each valid under every schema of SCHEMAS (the test checks), unknown variants
#: of open unions (a ``_``-prefixed tag is an extension's) among them.
MESSAGES = [
    ("UpdateSessionNotification", {"sessionId": "s1", "update": CHUNK}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "_acme_progress", "percent": 40}}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {**CHUNK, "content": {"type": "_acme_chart", "points": [1]}}}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {**STATE, "stopReason": "end_turn"}, "x-trace": "t"}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {**STATE, "stopReason": "_acme_paused"}}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {**STATE, "state": "_acme_sleeping"}}),
    ("InitializeResponse", {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "authMethods": [
        {"type": "terminal", "methodId": "t", "name": "Terminal", "args": ["--login"]},
        {"type": "_acme_sso", "methodId": "sso", "name": "SSO", "realm": "x"}]}),
    ("PromptRequest", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}, {"type": "_acme_sketch", "svg": "<svg/>"}]}),
]


def _package(folder: Path, name: str) -> ModuleType:
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def _classes(value: Any) -> Any:
    """The classes of a decoded value and of every value in it, by attribute, flavour-neutral."""
    if isinstance(value, list):
        return [_classes(item) for item in value]
    fields = getattr(type(value), "model_fields", None) or getattr(type(value), "__dataclass_fields__", None)
    if fields is None:
        return value
    return type(value).__name__, {name: _classes(getattr(value, name)) for name in fields}


@pytest.mark.parametrize("package", SCHEMAS)
def test_messages_round_trip_through_the_variant_the_dataclass_flavour_picks(folder: Path, package: str) -> None:
    import json

    import jsonschema

    defs = json.loads(SCHEMAS[package].read_text())["$defs"]
    ours, dataclasses = _package(folder, package), _package(folder, f"{package}_dc")
    for name, wire in MESSAGES:
        jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs}).validate(wire)
        value = ours.decode(getattr(ours, name), wire)
        assert _classes(value) == _classes(dataclasses.decode(getattr(dataclasses, name), wire)), wire
        assert ours.encode(value) == wire
        assert json.loads(ours.encode_text(value)) == wire
    other = ours.decode(ours.SessionUpdate, MESSAGES[1][1]["update"])
    assert type(other).__name__ == "OtherSessionUpdate" and other.extra == {"percent": 40}


@pytest.mark.parametrize("package", SCHEMAS)
def test_builders_send_only_what_they_are_given(folder: Path, package: str) -> None:
    ours = _package(folder, package)
    builders = importlib.import_module(f"{package}.builders")
    update = builders.session_update.agent_message_chunk(message_id="m1", content=builders.content_block.text("hi"))
    assert ours.encode(update) == CHUNK
    method = builders.auth_method.terminal(method_id="t", name="Terminal")
    assert ours.encode(method) == {"type": "terminal", "methodId": "t", "name": "Terminal"}


def test_the_agent_bases_defaults_hold_and_give_way_to_overrides(folder: Path) -> None:
    """As tests/runtime/test_agent_defaults.py holds the other flavours and versions: here the
    pydantic package of v1.7.0's v2 draft."""
    package = _package(folder, "acp_v2_corpus")
    asyncio.run(check_the_defaults_hold(package))
    asyncio.run(check_an_override_replaces_each(package))


def test_a_small_schema_imports_what_its_modules_use(tmp_path: Path) -> None:
    """Without ``extra``, a pydantic package's builders of string fields need nothing of typing;
    its models import ``Annotated`` for the template's ``NotNull`` though no field has an alias."""
    schema = ROOT / "tests" / "golden" / "cases" / "tagged_union_default" / "schema.json"
    files = generate(Options(schema=schema, package="tiny", models="pydantic")).files
    assert "from typing import" not in files["tiny/builders.py"]
    assert "from typing import Any\n" in generate(Options(schema=schema, package="tiny")).files["tiny/builders.py"]
    write_package(files, tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310",
         *(str(tmp_path / "tiny" / name) for name in ("models.py", "builders.py"))],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    tiny, builders = _package(tmp_path, "tiny"), importlib.import_module("tiny.builders")
    assert builders.mcp_server.http("https://x").to_json() == {"type": "http", "url": "https://x"}
    assert tiny.decode(tiny.McpServer, {"command": "run"}).to_json() == {"command": "run"}


#: (type, message, the JSON pointer both flavours refuse it at): a known tag with a broken body is
#: that variant's error, not the open union's "other" variant. (Both decode strictly: a lenient
#: decode repairs the bad ``_meta``, as ``x-deserialize-*`` lets it.)
BROKEN = [
    ("ContentBlock", {"type": "text"}, "/text"),
    ("SessionUpdate", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}, "/messageId"),
    ("SessionUpdate", {**CHUNK, "content": {"type": "image", "data": 1, "mimeType": "image/png"}}, "/content/data"),
    ("AuthMethod", {"type": "terminal", "methodId": "t"}, "/name"),
    ("StateUpdate", {"state": "idle", "stopReason": "end_turn", "_meta": 5}, "/_meta"),
]


@pytest.mark.parametrize("package", SCHEMAS)
def test_a_known_tag_with_a_broken_body_is_refused_as_that_variant(folder: Path, package: str) -> None:
    ours, dataclasses = _package(folder, package), _package(folder, f"{package}_dc")
    for name, wire, path in BROKEN:
        with pytest.raises(dataclasses.DecodeError) as expected:
            dataclasses.decode(getattr(dataclasses, name), wire, strict=True)
        with pytest.raises(ours.DecodeError) as caught:
            ours.decode(getattr(ours, name), wire, strict=True)
        assert caught.value.path == expected.value.path == path, wire


@pytest.mark.parametrize("package", SCHEMAS)
def test_constructors_take_variants_told_apart_by_nested_tags(folder: Path, package: str) -> None:
    ours = _package(folder, package)
    builders = importlib.import_module(f"{package}.builders")
    for update, wire in [
        (builders.session_update.state_update_running(), {**STATE, "state": "running"}),
        (builders.session_update.state_update_other("_acme_sleeping"), {**STATE, "state": "_acme_sleeping"}),
        (ours.OtherSessionUpdate(session_update="_acme_progress", percent=40), MESSAGES[1][1]["update"]),
    ]:
        note = ours.UpdateSessionNotification(session_id="s1", update=update)
        assert note.update is update
        assert ours.encode(note) == {"sessionId": "s1", "update": wire}
