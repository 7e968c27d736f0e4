"""The pydantic flavour's package is clean under ruff, and its codec decides as the dataclass
flavour does where pydantic alone would decide otherwise: a union acpgen tries in turn takes the
first class that decodes, and a Python name on the wire is an unknown property, not the field."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import ROOT, bindings
from support.flavours import PYDANTIC_PACKAGE, pydantic_bindings, pydantic_folder


def test_ruff_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--target-version", "py310", str(pydantic_folder() / PYDANTIC_PACKAGE)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


TEXT = {"uri": "file:///a.py", "text": "print(1)"}
BLOB = {"uri": "file:///a.png", "blob": "iVBORw0KGgo="}


@pytest.mark.parametrize(
    "resource",
    [
        TEXT,
        BLOB,
        {**TEXT, "blob": "iVBORw0KGgo="},  # both classes decode it: the first acpgen tries wins
        {**TEXT, "blob": 5},  # the first fails, the next decodes it (the blob an unknown property)
        {**BLOB, "text": 5},
    ],
)
def test_a_union_tried_in_turn_picks_the_class_the_dataclass_flavour_picks(resource):
    ours, dataclasses = pydantic_bindings(), bindings()
    wire = {"type": "resource", "resource": resource}
    value = ours.decode(ours.ContentBlock, wire)
    assert type(value.resource).__name__ == type(dataclasses.decode(dataclasses.ContentBlock, wire).resource).__name__
    assert ours.encode(value) == wire
    assert ours.decode(ours.ContentBlock, ours.encode(value)) == value


@pytest.mark.parametrize("resource", [{"uri": "file:///a"}, {"text": "t"}, [], "text"])
def test_a_union_tried_in_turn_refuses_what_no_class_decodes(resource):
    ours, dataclasses = pydantic_bindings(), bindings()
    wire = {"type": "resource", "resource": resource}
    with pytest.raises(dataclasses.DecodeError):
        dataclasses.decode(dataclasses.ContentBlock, wire)
    with pytest.raises(ours.DecodeError) as caught:
        ours.decode(ours.ContentBlock, wire)
    assert caught.value.path.startswith("/resource")


def test_a_python_name_on_the_wire_is_an_unknown_property():
    ours, dataclasses = pydantic_bindings(), bindings()
    wire = {"sessionId": "s", "session_id": "other", "prompt": [{"type": "text", "text": "hi"}]}
    value = ours.decode(ours.PromptRequest, wire)
    assert value.session_id == dataclasses.decode(dataclasses.PromptRequest, wire).session_id == "s"
    assert value.extra == {"session_id": "other"}
    assert ours.encode(value) == wire
    with pytest.raises(ours.DecodeError) as caught:
        ours.decode(ours.PromptRequest, {"session_id": "s", "prompt": []})
    assert caught.value.path == "/sessionId"


def test_constructors_still_take_python_names():
    ours = pydantic_bindings()
    built = ours.PromptRequest(session_id="s", prompt=[ours.Text(text="hi")])
    assert ours.encode(built) == {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
