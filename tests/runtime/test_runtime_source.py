"""The runtime modules as the source files they are (acpgen/runtime/): type-checked, linted and
exercised where they live, before any package is generated from them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import ROOT

from acpgen.runtime._runtime.connection import _rpc
from acpgen.runtime._runtime.wire import _codec

RUNTIME = ROOT / "acpgen" / "runtime"


def test_the_schema_free_runtime_modules_pass_mypy_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "--follow-imports", "silent", "--cache-dir", str(tmp_path),
         *(str(path) for path in sorted(RUNTIME.rglob("_*.py")) if path.name != "__init__.py")],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_runtime_modules_pass_ruff():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", str(RUNTIME)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_decode_error_names_the_json_pointer_of_the_bad_value():
    with pytest.raises(_codec.DecodeError) as caught:
        _codec.decode(dict[str, list[int]], {"a/b": [1, 2], "c~d": [3, "x"]})
    assert caught.value.path == "/c~0d/1"
    assert str(caught.value) == "at /c~0d/1: expected an integer, got the string 'x'"


def test_decode_takes_builtin_generics_and_encode_inverts_it():
    data = {"xs": [1, 2], "y": None}
    assert _codec.decode(dict[str, list[int] | None], data) == data
    assert _codec.encode(data) == data
    with pytest.raises(_codec.DecodeError):
        _codec.decode(list[str], "not a list")


def test_unknown_keeps_only_the_properties_a_type_does_not_know():
    assert _codec.unknown({"a": 1, "b": 2}, frozenset({"a"})) == {"b": 2}
    assert _codec.unknown({"a": 1}, frozenset({"a"})) is None


def test_request_errors_round_trip_through_their_json_form():
    error = _rpc.RequestError.resource_not_found("file:///x")
    again = _rpc.RequestError.from_json(error.to_json())
    assert (again.code, again.message, again.data) == (error.code, error.message, error.data)
    assert _rpc.RequestError.method_not_found("x/y").code == -32601
