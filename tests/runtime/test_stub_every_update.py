"""A stub agent's turn asked for everything (the prompt word ``everything``, or ``--all-updates``)
sends one ``session/update`` of every kind its schema defines, and a permission request; a plain
turn still only echoes. The kinds are read from the package's own copy of its schema (the tags
of its ``SessionUpdate`` union), so a kind a new release adds fails here until the stubs send it.

Our stub client drives each stub agent over real pipes and prints every update it receives: the
bundled schema's v1 package with pydantic models, the TypeScript SDK's unstable v2 draft and the
spec's v2 draft at v1.7.0 (with ``--all-updates``) with dataclasses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.flavours import PYDANTIC_PACKAGE, pydantic_folder
from support.versions import env_for, v2_package

#: The kinds a v2 turn sends of itself (running, requires_action, idle), whatever it is asked.
TURN_KINDS = {"state_update"}


def schema_kinds(folder: Path, package: str) -> set[str]:
    """The ``sessionUpdate`` tags of the package's schema copy."""
    schema = json.loads((folder / package / "acpgen-schema.json").read_text())
    variants = schema["$defs"]["SessionUpdate"].get("oneOf") or schema["$defs"]["SessionUpdate"]["anyOf"]
    return {v["properties"]["sessionUpdate"]["const"] for v in variants
            if "const" in v.get("properties", {}).get("sessionUpdate", {})}


def turn(folder: Path, package: str, tmp_path: Path, prompt: str, *agent_args: str) -> tuple[list[dict], str]:
    """The updates our stub client receives in one turn of ``prompt``, and its stderr."""
    agent = [sys.executable, "-m", f"{package}.stub_agent", *agent_args]
    if package == PYDANTIC_PACKAGE:
        agent += ["--delay", "0"]
    done = subprocess.run([sys.executable, "-m", f"{package}.stub_client", "--prompt", prompt, "--", *agent],
                          cwd=tmp_path, env=env_for(folder), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [line["update"] for line in lines if "update" in line], done.stderr


def packages() -> dict[str, tuple[Path, str]]:
    return {"v1 pydantic": (pydantic_folder(), PYDANTIC_PACKAGE), "v2 v1.7.0": v2_package("v1.7.0"),
            "v2 sdk unstable": v2_package("sdk unstable")}


@pytest.mark.parametrize("which", ["v1 pydantic", "v2 sdk unstable"])  # v1.7.0's draft: with the flag, below
def test_the_prompt_word_everything_sends_every_update_kind_of_the_schema(which, tmp_path):
    folder, package = packages()[which]
    updates, stderr = turn(folder, package, tmp_path, "show me Everything, please")
    sent = {u["sessionUpdate"] for u in updates}
    expected = schema_kinds(folder, package)
    assert len(expected) >= 11
    assert expected - sent == set(), f"{which} sent no {sorted(expected - sent)}"
    assert sent <= expected
    assert "repaired" not in stderr and "WARNING" not in stderr, stderr
    tool_calls = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert any(u.get("locations") and u.get("content") for u in tool_calls) or which != "v1 pydantic"
    # the permission request came (the stub client answers it) and the prompt was still echoed
    assert updates[-1 if which.startswith("v1") else -2]["content"]["text"] == "please"


def test_a_plain_turn_only_echoes_and_the_flag_sends_everything_on_every_turn(tmp_path):
    folder, package = v2_package("v1.7.0")
    plain, _ = turn(folder, package, tmp_path, "hello")
    assert {u["sessionUpdate"] for u in plain} <= TURN_KINDS | {"user_message", "agent_message_chunk"}
    flagged, _ = turn(folder, package, tmp_path, "hello", "--all-updates")
    assert {u["sessionUpdate"] for u in flagged} == schema_kinds(folder, package)
